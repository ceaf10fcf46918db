package spawn

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// AwaitExit blocks until the child pid has exited, without reaping it
// (waitid with WNOWAIT): its pid, the id of the process group it leads,
// stays reserved until it is reaped. It reports whether it saw the exit;
// false means nothing is known.
func AwaitExit(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}

// killGroup sends SIGKILL to the process group pgid. A variable for the
// tests (SetKillGroup).
var killGroup = func(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// Pinned is a process held by a pidfd: signalling it never reaches
// another process that was given its pid after it was reaped.
type Pinned struct{ fd int }

// Pin returns a handle on process pid, or false when it is gone or the
// kernel has no pidfds (before Linux 5.3). Once pinned, pid stays this
// process; whatever identifies it (its /proc entries) is to be checked
// after Pin, and Running checked after that. Release the handle when done.
func Pin(pid int) (Pinned, bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return Pinned{}, false
	}
	return Pinned{fd}, true
}

// Running reports whether the process has not exited (a pidfd polls
// readable once it has).
func (p Pinned) Running() bool {
	fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n == 0
}

// Kill sends the process SIGKILL.
func (p Pinned) Kill() error { return unix.PidfdSendSignal(p.fd, unix.SIGKILL, nil, 0) }

// Release closes the handle.
func (p Pinned) Release() { unix.Close(p.fd) }

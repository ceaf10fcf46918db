package conform

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// childProcAttr puts a worker under test in its own process group and
// has the kernel kill it if the kit dies first. The signal follows the
// thread that forked the worker, so startProc forks on the spawner's
// thread (internal/spawn).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup sends SIGKILL to the process group pgid, whose leader must
// not have been reaped yet (or the id could name an unrelated group). A
// variable for the tests, which check when it is called.
var killGroup = func(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// awaitExit blocks until the child pid has exited, without reaping it
// (waitid with WNOWAIT): its pid, the id of its process group, stays
// reserved until it is reaped. It reports whether it saw the exit.
func awaitExit(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}

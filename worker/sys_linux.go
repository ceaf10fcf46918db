package worker

import (
	"os"
	"syscall"
	"unsafe"
)

// pipeSize is the capacity asked for the frame pipes (the kernel default
// is 64 KiB). A large frame then crosses in a few big reads instead of
// one context switch per 64 KiB; unprivileged processes may go up to
// /proc/sys/fs/pipe-max-size (1 MiB by default).
const pipeSize = 1 << 20

// fSetPipeSz is fcntl's F_SETPIPE_SZ.
const fSetPipeSz = 1031

// blockingPipe returns a pipe whose ends stay in blocking mode, so reads
// and writes are plain system calls that bypass Go's poller.
func blockingPipe() (r, w *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	// Best effort: a smaller pipe only costs speed.
	syscall.Syscall(syscall.SYS_FCNTL, uintptr(fds[1]), fSetPipeSz, pipeSize)
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}

// sysProcAttr puts the child in its own process group (a terminal's
// Ctrl-C is for the host to handle) and has the kernel kill it if the
// parent dies, so a wedged worker never outlives its host.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// pipeReadable reports whether f (a pipe's read end) holds unread bytes,
// using the FIONREAD ioctl.
func pipeReadable(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	rc.Control(func(fd uintptr) {
		var avail int32
		_, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&avail)))
		if e == 0 {
			n = int(avail)
		}
	})
	return n > 0
}

package spinwait

import (
	"syscall"
	"time"
	"unsafe"
)

// pollFd is struct pollfd.
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

// pollIn is POLLIN; POLLHUP and POLLERR are reported whatever is asked.
const pollIn = 0x1

func readable(fd uintptr, d time.Duration) bool {
	var start time.Time
	for i := 0; ; i++ {
		if ready(fd) {
			return true
		}
		if i == 0 {
			start = time.Now()
		} else if time.Since(start) >= d {
			return false
		}
		// Through Syscall, not RawSyscall: the yield may hand the CPU to
		// another process for a whole time slice, during which the
		// runtime must be free to use this thread's P elsewhere.
		syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
	}
}

// ready polls fd once with a zero timeout. A zero-timeout ppoll never
// blocks, so it is a raw system call that leaves the scheduler alone.
func ready(fd uintptr) bool {
	pfd := pollFd{fd: int32(fd), events: pollIn}
	var zero syscall.Timespec
	n, _, errno := syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1,
		uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	// An error (EINTR, or a descriptor that cannot be polled) ends the
	// spin: the caller's ordinary read reports whatever is wrong.
	return n > 0 || errno != 0
}

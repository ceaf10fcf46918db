package spinwait

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
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
	var sp spinner
	for {
		if ready(fd) {
			return true
		}
		if !sp.next(d) {
			return false
		}
	}
}

// spinner paces a spin's attempts: after each failed one, next yields
// (see yield) and reports whether the budget d, counted from the first
// failed attempt, allows another. The clock is read, and GOMAXPROCS
// looked at, only once an attempt has failed.
type spinner struct {
	start   time.Time
	one     bool
	started bool
}

func (s *spinner) next(d time.Duration) bool {
	if !s.started {
		s.started = true
		s.start, s.one = time.Now(), runtime.GOMAXPROCS(0) == 1
	} else if time.Since(s.start) >= d {
		return false
	}
	yield(s.one)
	return true
}

// yield gives the CPU to other processes (the peer the spin waits for,
// when it shares this CPU) and, when one is true (GOMAXPROCS is 1), to
// the other goroutines too: the spin's raw attempts never leave the runtime's
// scheduler, so a spinning goroutine keeps its P from every other
// goroutine for as long as it spins, and with a single P that stalls the
// whole program. With more Ps the others run elsewhere, and a Gosched
// would cost more than it gives: the runtime wakes a thread to look for
// the yielded goroutine, on the CPU the peer needs (the relay's host
// calls went from 40-49 ms per 1,000 to 61-70 ms with it).
func yield(one bool) {
	// Through Syscall, not RawSyscall: the yield may hand the CPU to
	// another process for a whole time slice, during which the runtime
	// must be free to use this thread's P elsewhere.
	syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
	if one {
		runtime.Gosched()
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

// noWait is cleared once the kernel refuses a read without waiting
// (pipes support RWF_NOWAIT on recent kernels only); Read then spins on
// polls and leaves the read to its caller.
var noWait atomic.Bool

func init() { noWait.Store(true) }

func read(fd uintptr, b []byte, d time.Duration) (int, syscall.Errno, bool) {
	if !noWait.Load() {
		readable(fd, d)
		return 0, 0, false
	}
	iov := unix.Iovec{Base: unsafe.SliceData(b)}
	iov.SetLen(min(len(b), 1<<30))
	var sp spinner
	for {
		// Offset -1: the file's own position, as read uses (a pipe has
		// none). It never waits, so it is a raw system call.
		n, _, errno := syscall.RawSyscall6(unix.SYS_PREADV2, fd, uintptr(unsafe.Pointer(&iov)), 1,
			^uintptr(0), ^uintptr(0), unix.RWF_NOWAIT)
		switch errno {
		case 0:
			return int(n), 0, true
		case syscall.EINTR, syscall.EAGAIN:
			// A signal, or nothing to read yet (or the writer held the
			// pipe): try again, within the budget.
		case syscall.EOPNOTSUPP, syscall.EINVAL, syscall.ENOSYS:
			// This kernel cannot: spin on polls only from now on, and
			// leave the read to the caller.
			noWait.Store(false)
			return 0, 0, false
		default:
			return 0, errno, true
		}
		if !sp.next(d) {
			return 0, 0, false
		}
	}
}

// noWaitWrite is cleared once the kernel refuses a write without waiting.
var noWaitWrite atomic.Bool

func init() { noWaitWrite.Store(true) }

func write(fd uintptr, b []byte) (int, syscall.Errno, bool) {
	if !noWaitWrite.Load() {
		return 0, 0, false
	}
	iov := unix.Iovec{Base: unsafe.SliceData(b)}
	iov.SetLen(min(len(b), 1<<30))
	for {
		n, _, errno := syscall.RawSyscall6(unix.SYS_PWRITEV2, fd, uintptr(unsafe.Pointer(&iov)), 1,
			^uintptr(0), ^uintptr(0), unix.RWF_NOWAIT)
		switch errno {
		case 0:
			return int(n), 0, true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return 0, 0, false
		case syscall.EOPNOTSUPP, syscall.EINVAL, syscall.ENOSYS:
			noWaitWrite.Store(false)
			return 0, 0, false
		}
		return 0, errno, true
	}
}

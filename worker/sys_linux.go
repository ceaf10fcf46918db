package worker

import (
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gomonty/monty/internal/spawn"
	"github.com/gomonty/monty/internal/spinwait"
)

// pipeSize is the capacity asked for the frame pipes (the kernel default
// is 64 KiB). A large frame then crosses in a few big reads instead of
// one context switch per 64 KiB; unprivileged processes may go up to
// /proc/sys/fs/pipe-max-size (1 MiB by default).
const pipeSize = 1 << 20

// Every pipe an unprivileged user holds counts against one budget,
// /proc/sys/fs/pipe-user-pages-soft (64 MiB by default); past it the
// kernel gives every pipe that user creates, in any of its processes, the
// smallest capacity. Thirty-two workers' 1 MiB pipes would spend it all.
// So a process enlarges at most half the budget's worth of frame pipes at
// a time (bigPipes counts them; growPipe and shrinkPipes keep the count),
// and the rest keep the kernel's default.
var (
	bigPipes    atomic.Int64
	maxBigPipes = sync.OnceValue(func() int64 {
		pages := int64(16384) // the kernel's default
		if b, err := os.ReadFile("/proc/sys/fs/pipe-user-pages-soft"); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
				pages = n
			}
		}
		if pages == 0 { // no soft limit
			return math.MaxInt64
		}
		return pages * int64(os.Getpagesize()) / 2 / pipeSize
	})
)

// growPipe enlarges the pipe of w to pipeSize when the process's share of
// the user's pipe budget allows it, and reports whether it did.
func growPipe(w *os.File) bool {
	if bigPipes.Add(1) > maxBigPipes() {
		bigPipes.Add(-1)
		return false
	}
	// Best effort: a smaller pipe only costs speed.
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), fSetPipeSz, pipeSize); e != 0 {
		bigPipes.Add(-1)
		return false
	}
	return true
}

// shrinkPipes gives back n enlarged pipes once they are closed.
func shrinkPipes(n int) { bigPipes.Add(-int64(n)) }

// fSetPipeSz is fcntl's F_SETPIPE_SZ.
const fSetPipeSz = 1031

// blockingPipe returns a pipe whose ends stay in blocking mode, so reads
// and writes are plain system calls that bypass Go's poller.
func blockingPipe() (r, w *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}

// stderrPipe returns a pipe for the child's stderr: the parent's read end
// non-blocking, so its drain parks in the poller; the child's write end
// blocking and never registered with the poller (os.Pipe would register
// both and then switch the child's back).
func stderrPipe() (r, w *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}

// sysProcAttr puts the child in its own process group (a terminal's
// Ctrl-C is for the host to handle, and Kill and the reaper signal the
// group, so a wrapper's descendants go with it) and has the kernel kill it
// if the parent dies, so a wedged worker never outlives its host. The kernel
// stores a pidfd for the child in *pidfd (-1 where pidfds are not
// supported); os/exec keeps a duplicate of its own.
func sysProcAttr(pidfd *int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, PidFD: pidfd}
}

// A goroutine blocked in a read or waitid system call keeps its P in the
// syscall state, and while any P is not idle the runtime's monitor thread
// wakes every 20 µs or so. A worker takes milliseconds to start, and on a
// small machine those wake-ups take CPU the worker could use. The waits
// below park the goroutine in the runtime's poller instead, so the parent
// goes fully idle. Any failure ends a wait early: the blocking call that
// follows it is correct either way, only not idle.

// awaitReadable parks the calling goroutine until fd is readable or hung
// up. fd itself stays as it is, blocking and unregistered, so later reads
// of it are plain system calls: it is watched through a private epoll
// instance, and the poller watches that instance.
func awaitReadable(fd int) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
	if syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev) != nil || syscall.SetNonblock(ep, true) != nil {
		syscall.Close(ep)
		return
	}
	parkUntil(os.NewFile(uintptr(ep), "|epoll"), func(ep uintptr) bool {
		var evs [1]syscall.EpollEvent
		n, err := syscall.EpollWait(int(ep), evs[:], 0)
		return n > 0 || (err != nil && err != syscall.EINTR)
	})
}

// awaitExit parks the calling goroutine until the process behind pidfd
// (pid) has exited (a pidfd polls readable then), and closes pidfd. Where
// there is no pidfd (a negative one), or the poller could not watch it, it
// blocks in waitid instead. It leaves the process unreaped, so its pid (the
// id of its process group) cannot be reused yet, and reports whether the
// exit was seen; false means nothing is known.
func awaitExit(pidfd, pid int) bool {
	if pidfd >= 0 {
		exited := false
		if syscall.SetNonblock(pidfd, true) != nil {
			syscall.Close(pidfd)
		} else {
			parkUntil(os.NewFile(uintptr(pidfd), "|pidfd"), func(fd uintptr) bool {
				pfd := [1]pollFd{{fd: int32(fd), events: pollIn}}
				var zero syscall.Timespec
				n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd[0])), 1,
					uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
				exited = n > 0
				return n > 0 || (errno != 0 && errno != syscall.EINTR)
			})
		}
		if exited {
			return true
		}
	}
	return spawn.AwaitExit(pid)
}

// pollFd is struct pollfd.
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

// pollIn is POLLIN.
const pollIn = 0x1

// parkUntil calls ready with f's descriptor until it returns true, parking
// in the poller between calls until f polls readable, then closes f. If f
// could not be registered with the poller, it returns after the first call.
func parkUntil(f *os.File, ready func(fd uintptr) bool) {
	defer f.Close()
	if rc, err := f.SyscallConn(); err == nil {
		rc.Read(ready)
	}
}

// firstRead is the child's stdout as the frame reader reads it. Before the
// first read it waits for the worker's first bytes in the poller (see
// awaitReadable): the worker takes milliseconds to start, every later
// reply comes within microseconds and is read with a plain blocking read,
// after a spin of up to spin (Config.SpinWait) when that is set, which
// reads a reply that comes within it itself (spinwait.Read).
type firstRead struct {
	*os.File
	waited bool
	spin   time.Duration
	sole   bool // spin only while liveWorkers is 1

	// Made once by raw, so that the calls on every read allocate nothing.
	rc     syscall.RawConn
	spinFn func(fd uintptr) // spins for up to spin, reading into rb
	pendFn func(fd uintptr) // FIONREAD into avail, 0 on failure
	avail  int32

	// spinFn's argument and results.
	rb   []byte
	rn   int
	rerr syscall.Errno
	rok  bool
}

// raw returns the File's RawConn, or nil.
func (r *firstRead) raw() syscall.RawConn {
	if r.rc == nil {
		rc, err := r.File.SyscallConn()
		if err != nil {
			return nil
		}
		r.rc = rc
		r.spinFn = func(fd uintptr) { r.rn, r.rerr, r.rok = spinwait.Read(fd, r.rb, r.spin) }
		r.pendFn = func(fd uintptr) {
			// FIONREAD never blocks: a raw system call, which skips the
			// scheduler's bookkeeping around a call that might.
			_, _, e := syscall.RawSyscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&r.avail)))
			if e != 0 {
				r.avail = 0
			}
		}
	}
	return r.rc
}

func (r *firstRead) Read(b []byte) (int, error) {
	switch {
	case !r.waited:
		r.waited = true
		if rc := r.raw(); rc != nil {
			rc.Control(func(fd uintptr) { awaitReadable(int(fd)) })
		}
	case len(b) > 0 && r.spins():
		// The spin reads what comes within it itself (raw read
		// attempts); past it, the ordinary blocking read.
		if rc := r.raw(); rc != nil {
			r.rb, r.rok = b, false
			err := rc.Control(r.spinFn)
			r.rb = nil
			if err == nil && r.rok {
				return spinwait.Result(r.Name(), r.rn, r.rerr)
			}
		}
	}
	return r.File.Read(b)
}

// spins reports whether a read now spins: when it has a spin, and for
// the two-CPU default (sole) only while its worker is this process's one
// live worker.
func (r *firstRead) spins() bool {
	return r.spin > 0 && (!r.sole || liveWorkers.Load() == 1)
}

// Pending reports whether bytes are waiting in the child's stdout pipe
// (the FIONREAD ioctl) without blocking; the Stream asks it for
// Conn.Pending. Call it from the reading goroutine only.
func (r *firstRead) Pending() bool {
	rc := r.raw()
	if rc == nil {
		return false
	}
	r.avail = 0
	if rc.Control(r.pendFn) != nil {
		return false
	}
	return r.avail > 0
}

// pipeInode returns the inode number of the pipe f is an end of (both
// ends share it), or 0 when f cannot be examined.
func pipeInode(f *os.File) uint64 {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// stillHeld reports whether the other end of f's pipe is still open in
// some process: a read end has writers (no POLLHUP), a write end readers
// (no POLLERR). A closed f is not held.
func stillHeld(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	held := false
	rc.Control(func(fd uintptr) {
		pfd := [1]pollFd{{fd: int32(fd)}} // no events: hang-up and error only
		var zero syscall.Timespec
		n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd[0])), 1,
			uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
		held = errno == 0 && n == 0
	})
	return held
}

// maxStrayRounds bounds killStrays' scans of /proc: each round kills
// every holder it finds, so only what those forked before their kill can
// be left for the next.
const maxStrayRounds = 100

// killStrays sends SIGKILL to every process other than this one that holds
// one of the pipes whose inodes are given (0 for none): descendants of a
// worker that left its process group (setsid, setpgid), which the group's
// kill does not reach, and which would keep a blocked read of the worker's
// stdout (or a write to its stdin) from ever ending. Nobody else can hold
// them: the parent's ends are close-on-exec, and syscall.ForkLock, held
// here, keeps this process from forking a child that has copies of them
// but has not executed yet. A process is signalled through a pidfd opened
// before its descriptors are read, so a recycled pid is never signalled. A
// process whose descriptors this one may not read (another user's, or a
// non-dumpable one: prctl PR_SET_DUMPABLE 0) is not found.
func killStrays(inodes [3]uint64) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	self := os.Getpid()
	done := map[int]bool{self: true}
	for range maxStrayRounds {
		found := false
		for _, pid := range procPids() {
			if done[pid] {
				continue
			}
			c, ok := spawn.Pin(pid)
			if !ok {
				continue // gone, or no pidfds (before Linux 5.3)
			}
			if holdsPipe(pid, inodes) && c.Kill() == nil {
				done[pid], found = true, true
			}
			c.Release()
		}
		if !found {
			return
		}
	}
}

// procPids lists the processes in /proc.
func procPids() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	pids := make([]int, 0, len(names))
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// holdsPipe reports whether process pid has a descriptor on one of the
// pipes whose inodes are given.
func holdsPipe(pid int, inodes [3]uint64) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	fds, _ := d.Readdirnames(-1)
	d.Close()
	for _, fd := range fds {
		link, err := os.Readlink(dir + fd)
		if err != nil {
			continue
		}
		ino, ok := strings.CutPrefix(link, "pipe:[")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSuffix(ino, "]"), 10, 64)
		if err == nil && n != 0 && (n == inodes[0] || n == inodes[1] || n == inodes[2]) {
			return true
		}
	}
	return false
}

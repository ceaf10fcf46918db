//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"

	"github.com/gomonty/monty/internal/spinwait"
)

// pollableStdin returns stdin as a reader whose reads park in Go's poller
// when stdin is a pipe or a socket (what every parent gives a worker),
// and a function restoring the descriptor's mode. With spin > 0 a read
// that finds nothing waiting first busy-polls for up to spin (see
// spinReader), then parks.
//
// A blocking read keeps its thread in the kernel and its P busy while
// montygo waits for the parent's next request; the runtime's monitor
// thread then keeps waking, and on a 2-CPU machine those wake-ups compete
// with the parent and the inner worker, which are what the hop waits for.
// Parked in the poller, montygo is fully idle between requests. Measured
// over the relay benchmarks (docs/PERFORMANCE.md) this cut the warm feed
// through `montygo subprocess` from about 3× to about 1× the direct worker.
// The inner worker's pipes keep their blocking reads (package worker):
// there the wait is one round trip inside a turn.
//
// Terminals and regular files are left alone: O_NONBLOCK on a terminal
// would leak to the shell that shares it.
func pollableStdin(r io.Reader, spin time.Duration) (io.Reader, func()) {
	f, ok := r.(*os.File)
	if !ok {
		return r, func() {}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return r, func() {}
	}
	if m := st.Mode & syscall.S_IFMT; m != syscall.S_IFIFO && m != syscall.S_IFSOCK {
		return r, func() {}
	}
	fd := int(f.Fd())
	// A duplicate, owned by the returned File, so that closing (or
	// finalizing) it never closes the caller's descriptor. O_NONBLOCK
	// belongs to the open file description the two share.
	syscall.ForkLock.RLock()
	nfd, err := syscall.Dup(fd)
	if err == nil {
		syscall.CloseOnExec(nfd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return r, func() {}
	}
	if err := syscall.SetNonblock(nfd, true); err != nil {
		syscall.Close(nfd)
		return r, func() {}
	}
	// NewFile on a non-blocking descriptor returns a pollable File.
	pf := os.NewFile(uintptr(nfd), f.Name())
	restore := func() {
		pf.Close()
		syscall.SetNonblock(fd, false)
	}
	if spin > 0 {
		if rc, err := pf.SyscallConn(); err == nil {
			return &spinReader{File: pf, rc: rc, spin: spin}, restore
		}
	}
	return pf, restore
}

// spinReader reads a non-blocking, pollable File. A read that finds
// nothing waiting busy-polls for up to spin (package spinwait) before it
// parks in the poller: montygo answers its parent and the parent's next
// request (a host call's result, typically) follows within microseconds,
// so the poll saves the thread's sleep and wake-up, which on a small
// virtual machine cost more than the whole hop. Past spin the read parks
// as the File's own would, so an idle montygo is idle again after one
// spin. Close is the File's (it wakes a parked read).
type spinReader struct {
	*os.File
	rc   syscall.RawConn
	spin time.Duration

	// readFn is made once, so that a read allocates nothing; rb, rn,
	// rerr and spun are its argument, results and state.
	readFn func(fd uintptr) bool
	rb     []byte
	rn     int
	rerr   syscall.Errno
	spun   bool
}

// Read reads into b what is waiting, after at most one spin and then
// the poller's wait for it; 0 bytes and io.EOF at the end of the stream.
func (r *spinReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if r.readFn == nil {
		r.readFn = r.tryRead
	}
	r.rb, r.rn, r.rerr, r.spun = b[:min(len(b), 1<<30)], 0, 0, false
	rerr := r.rc.Read(r.readFn)
	r.rb = nil
	if rerr != nil {
		// The File is closing (Close wakes a parked read): its own Read
		// reports that the way os does (os.ErrClosed), and anything else
		// by reading the ordinary way.
		return r.File.Read(b)
	}
	return spinwait.Result(r.Name(), r.rn, r.rerr)
}

// tryRead reads what is waiting into rb, spinning once for it (the spin
// reads what it finds itself: spinwait.Read); false sends the read to
// wait in the poller. The descriptor is non-blocking, so the read is a
// raw system call (it never blocks), which skips the scheduler's
// bookkeeping around one that might.
func (r *spinReader) tryRead(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(r.rb))), uintptr(len(r.rb)))
		switch {
		case e == syscall.EINTR:
			continue
		case e != syscall.EAGAIN:
			r.rn, r.rerr = int(n), e
			return true
		case !r.spun:
			r.spun = true
			if n, e, ok := spinwait.Read(fd, r.rb, r.spin); ok {
				r.rn, r.rerr = n, e
				return true
			}
			// Past the spin (or spinning on polls: a last read).
			continue
		}
		return false // wait in the poller
	}
}

//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
	"time"

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
}

// Read reads into b what is waiting, after at most one spin and then
// the poller's wait for it; 0 bytes and io.EOF at the end of the stream.
func (r *spinReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var (
		n     int
		err   error
		spun  bool
		limit = min(len(b), 1<<30)
	)
	rerr := r.rc.Read(func(fd uintptr) bool {
		for {
			n, err = syscall.Read(int(fd), b[:limit])
			switch {
			case err == syscall.EINTR:
				continue
			case err != syscall.EAGAIN:
				return true
			case !spun:
				spun = true
				if spinwait.Readable(fd, r.spin) {
					continue
				}
			}
			return false // wait in the poller
		}
	})
	switch {
	case rerr != nil:
		// The File is closing (Close wakes a parked read): its own Read
		// reports that the way os does (os.ErrClosed), and anything else
		// by reading the ordinary way.
		return r.File.Read(b)
	case err != nil:
		return 0, &os.PathError{Op: "read", Path: r.Name(), Err: err}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

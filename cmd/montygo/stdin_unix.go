//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// pollableStdin returns stdin as a reader whose reads park in Go's poller
// when stdin is a pipe or a socket (what every parent gives a worker),
// and a function restoring the descriptor's mode.
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
func pollableStdin(r io.Reader) (io.Reader, func()) {
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
	return pf, func() {
		pf.Close()
		syscall.SetNonblock(fd, false)
	}
}

//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gomonty/monty/internal/spinwait"
)

// stdinReader returns stdin as the reader `montygo subprocess` serves
// its parent from, and a function restoring the descriptor, when stdin is
// a pipe or a socket (what every parent gives a worker).
//
// With spin > 0 (the default) a read that finds nothing waiting first
// busy-polls for up to spin (package spinwait), then blocks in read(2)
// (spinStdin). With spin 0 it parks in Go's poller instead, through a
// non-blocking duplicate of the descriptor, so that montygo is fully idle
// between requests without keeping a thread in the kernel.
//
// After a spin the blocking read is the faster wait: a read parked in the
// poller is woken by the runtime's network poller, which readies the
// goroutine on a spinning M and wakes a second thread to look for more
// work (on a 2-CPU machine that thread takes the CPU the parent or the
// inner worker needs), where a thread blocked in read(2) is woken by the
// pipe itself and takes its P back. Measured over the relay benchmarks
// (docs/PERFORMANCE.md, "The relay"), 1,000 relayed host calls took
// 43–45 ms with the blocking wait against 56–72 ms parked in the poller.
//
// Terminals and regular files are left alone: O_NONBLOCK on a terminal
// would leak to the shell that shares it.
func stdinReader(r io.Reader, spin time.Duration) (io.Reader, func()) {
	f, ok := r.(*os.File)
	if !ok {
		return r, func() {}
	}
	if !isPipeOrSocket(f) {
		return r, func() {}
	}
	if spin > 0 {
		return &spinStdin{f: f, fd: f.Fd(), spin: spin}, func() {}
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

// spinStdout returns the writer montygo answers its parent through: with
// a spin, when stdout is a pipe or a socket, a spinwait.Writer, whose
// writes skip the scheduler's bookkeeping around a system call when they
// cannot wait (a parent reads each answer at once, so the pipe is rarely
// full).
func spinStdout(w io.Writer, spin time.Duration) io.Writer {
	if f, ok := w.(*os.File); ok && spin > 0 && isPipeOrSocket(f) {
		return spinwait.NewWriter(f)
	}
	return w
}

// isPipeOrSocket reports whether f is a pipe or a socket.
func isPipeOrSocket(f *os.File) bool {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	m := st.Mode & syscall.S_IFMT
	return m == syscall.S_IFIFO || m == syscall.S_IFSOCK
}

// spinStdin reads stdin with a spin, then a blocking read. A read that
// finds nothing waiting busy-polls for up to spin (package spinwait)
// before it blocks: montygo answers its parent and the parent's next
// request (a host call's result, typically) follows within microseconds,
// so the poll saves the thread's sleep and wake-up, which on a small
// virtual machine cost more than the whole hop. Past spin the read blocks
// in the kernel; the runtime hands the thread's P to others meanwhile, so
// an idle montygo is idle again after one spin.
type spinStdin struct {
	f    *os.File // held, so that a finalizer never closes fd under us
	fd   uintptr
	spin time.Duration
}

// Read reads into b what is waiting, after at most one spin and then a
// blocking read; 0 bytes and io.EOF at the end of the stream.
func (r *spinStdin) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	b = b[:min(len(b), 1<<30)]
	if n, e, ok := spinwait.Read(r.fd, b, r.spin); ok {
		return spinwait.Result(r.f.Name(), n, e)
	}
	for {
		n, err := syscall.Read(int(r.fd), b)
		switch err {
		case nil:
			return spinwait.Result(r.f.Name(), n, 0)
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			// A parent that made the pipe non-blocking: wait for it to
			// become readable, then read again.
			waitReadable(r.fd)
			continue
		}
		return 0, &os.PathError{Op: "read", Path: r.f.Name(), Err: err}
	}
}

// waitReadable blocks until fd is readable or hung up (or the wait is
// interrupted: the caller reads again either way).
func waitReadable(fd uintptr) {
	unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, -1)
}

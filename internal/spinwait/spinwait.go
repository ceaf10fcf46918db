// Package spinwait busy-waits, for a bounded time, for a descriptor to
// become readable.
//
// A process that relays frames between two others (montygo subprocess
// between its parent and the inner worker) waits twice per round trip, and
// each wait that sleeps costs a wake-up: on a virtual machine with two
// CPUs a cross-CPU wake-up of a sleeping thread takes tens of
// microseconds, several times the work of the hop. When the answer is
// known to come within microseconds, polling for it with the CPU kept is
// cheaper than sleeping. [Readable] polls with a zero timeout and yields
// the CPU between polls, so a process the kernel queued on the same CPU
// (the woken peer, typically) runs at once instead of waiting for the
// spinner's time slice to end.
//
// Every wait is bounded: past its budget the caller falls back to its
// ordinary blocking read or poller wait, so an idle process is idle again
// after at most one budget.
package spinwait

import (
	"io"
	"os"
	"syscall"
	"time"
)

// Readable polls fd until it is readable or hung up, or until d has
// passed, yielding the CPU between polls. It reports true when a read of
// fd will not block (data, end of stream, or a descriptor that cannot be
// polled, whose read then reports what is wrong), and false when d passed
// first, d <= 0, or polling is not supported (off Linux); the caller then
// waits the ordinary way. It spins for at most one poll and one yield
// past d.
func Readable(fd uintptr, d time.Duration) bool {
	if d <= 0 {
		return false
	}
	return readable(fd, d)
}

// Read reads into b what fd holds, spinning for up to d while it holds
// nothing: it attempts reads that never wait, even on a blocking
// descriptor (preadv2 with RWF_NOWAIT), yielding the CPU between
// attempts as [Readable] does between polls. Each attempt is a raw system
// call that skips the scheduler's bookkeeping around one that might
// block, and a frame that arrives costs one system call, not a poll and
// a read (on the relay's host calls that is 0.4 µs of a 13.6 µs round
// trip; docs/PERFORMANCE.md, "The relay"). It returns the bytes read (0
// at the end of the stream) or the read's error, with ok; ok is false
// when d passed first, d <= 0, or spinning is not supported (off Linux):
// the caller then reads the ordinary way, which may wait. On a kernel
// whose pipes cannot read without waiting it spins as Readable does and
// returns ok false, leaving the read to the caller. b must not be empty.
// With GOMAXPROCS 1 the spin also yields to the program's other
// goroutines between attempts (its attempts bypass the runtime's
// scheduler, so it would otherwise keep the only P from them); with more
// Ps they run elsewhere.
func Read(fd uintptr, b []byte, d time.Duration) (n int, errno syscall.Errno, ok bool) {
	if d <= 0 || len(b) == 0 {
		return 0, 0, false
	}
	return read(fd, b, d)
}

// Result is what a reader's Read returns for the bytes and error of a
// read of the file named path that Read did itself: the error as an
// *os.PathError, io.EOF for 0 bytes, else n.
func Result(path string, n int, errno syscall.Errno) (int, error) {
	switch {
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: path, Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes b to fd if it can without waiting (pwritev2 with
// RWF_NOWAIT, a raw system call, even on a blocking descriptor), and
// reports ok with the bytes written or the write's error. ok is false
// when the write would wait (a full pipe), the kernel cannot write without
// waiting, or off Linux: the caller then writes the ordinary way. A
// partial write is reported as such.
func Write(fd uintptr, b []byte) (n int, errno syscall.Errno, ok bool) {
	if len(b) == 0 {
		return 0, 0, true
	}
	return write(fd, b)
}

// Writer writes to a File with [Write] where the write cannot wait, the
// File's own way otherwise. The raw write runs under the File's write
// lock (RawConn.Write), so a concurrent Close never lets it reach a
// reused descriptor. Close closes the File. A Writer is for one writing
// goroutine at a time, like the File it wraps.
type Writer struct {
	f  *os.File
	rc syscall.RawConn

	// fn is made once, so that a write allocates nothing; b, n, errno and
	// ok are its argument and results.
	fn    func(fd uintptr) bool
	b     []byte
	n     int
	errno syscall.Errno
	ok    bool
}

// NewWriter returns a Writer of f.
func NewWriter(f *os.File) *Writer {
	w := &Writer{f: f}
	if rc, err := f.SyscallConn(); err == nil {
		w.rc = rc
		w.fn = func(fd uintptr) bool {
			w.n, w.errno, w.ok = Write(fd, w.b)
			return true
		}
	}
	return w
}

// Write writes b.
func (w *Writer) Write(b []byte) (int, error) {
	if w.rc == nil {
		return w.f.Write(b)
	}
	done := 0
	for done < len(b) {
		w.b, w.ok = b[done:], false
		err := w.rc.Write(w.fn)
		w.b = nil
		switch {
		case err != nil || !w.ok || (w.errno == 0 && w.n == 0):
			// Closed, or the write would wait (or made no progress): the
			// File's own write.
			m, err := w.f.Write(b[done:])
			return done + m, err
		case w.errno != 0:
			return done, &os.PathError{Op: "write", Path: w.f.Name(), Err: w.errno}
		}
		done += w.n
	}
	return done, nil
}

// Close closes the File.
func (w *Writer) Close() error { return w.f.Close() }

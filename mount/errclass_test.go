package mount

import (
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/gomonty/monty/value"
)

// A host errno whose PEP 3151 class the worker does not know (EAGAIN's
// BlockingIOError, EINTR's InterruptedError, EPIPE's BrokenPipeError) is
// raised as OSError with the same "[Errno N] ..." text: the worker rejects
// an answer naming an exception type it does not know, which aborted the
// feed where the sandbox expected a catchable OSError. Errnos with a
// class it knows keep theirs.
func TestErrnoClassesAreKnownToTheWorker(t *testing.T) {
	for e, want := range map[syscall.Errno]string{
		syscall.EAGAIN:    "OSError",
		syscall.EINTR:     "OSError",
		syscall.EPIPE:     "OSError",
		syscall.ESHUTDOWN: "OSError",
		syscall.ENOENT:    "FileNotFoundError",
		syscall.EISDIR:    "IsADirectoryError",
		syscall.ETIMEDOUT: "TimeoutError",
	} {
		exc := toPy(&fs.PathError{Op: "read", Path: "/host/x", Err: e}, "/data/x").exception()
		if exc.Type != want || !value.KnownExceptionType(exc.Type) {
			t.Errorf("errno %d: %s, want %s", int(e), exc.Type, want)
		}
		if msg := fmt.Sprintf("[Errno %d] %s: '/data/x'", int(e), strerror(e)); exc.Msg() != msg {
			t.Errorf("errno %d: message %q, want %q", int(e), exc.Msg(), msg)
		}
	}
}

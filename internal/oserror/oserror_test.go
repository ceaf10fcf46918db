package oserror

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/gomonty/monty/value"
)

// Every class named is one the worker accepts (an unknown one makes it
// reject the answer that carries it), and each errno with a PEP 3151
// subclass the worker knows gets that subclass.
func TestClassIsCPythonsAndKnown(t *testing.T) {
	for e, want := range map[syscall.Errno]string{
		syscall.ENOENT:       "FileNotFoundError",
		syscall.EEXIST:       "FileExistsError",
		syscall.EISDIR:       "IsADirectoryError",
		syscall.ENOTDIR:      "NotADirectoryError",
		syscall.EACCES:       "PermissionError",
		syscall.EPERM:        "PermissionError",
		syscall.ETIMEDOUT:    "TimeoutError",
		syscall.EAGAIN:       "OSError", // BlockingIOError, unknown to the worker
		syscall.EINTR:        "OSError", // InterruptedError
		syscall.EPIPE:        "OSError", // BrokenPipeError
		syscall.ECONNREFUSED: "OSError", // ConnectionRefusedError
		syscall.ECHILD:       "OSError", // ChildProcessError
		syscall.ESRCH:        "OSError", // ProcessLookupError
		syscall.EIO:          "OSError",
	} {
		got := Class(e)
		if got != want {
			t.Errorf("Class(%d %v) = %s, want %s", int(e), e, got, want)
		}
		if !value.KnownExceptionType(got) {
			t.Errorf("Class(%v) = %s, which the worker does not know", e, got)
		}
	}
}

func TestClassOfReadsTheChain(t *testing.T) {
	path := &fs.PathError{Op: "open", Path: "/x", Err: syscall.EISDIR}
	for _, c := range []struct {
		err  error
		want string
		ok   bool
	}{
		{path, "IsADirectoryError", true},
		{fmt.Errorf("loading: %w", path), "IsADirectoryError", true},
		{&os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.EXDEV}, "OSError", true},
		{os.NewSyscallError("connect", syscall.ECONNREFUSED), "OSError", true},
		{fs.ErrNotExist, "FileNotFoundError", true},
		{fmt.Errorf("x: %w", fs.ErrPermission), "PermissionError", true},
		{fs.ErrExist, "FileExistsError", true},
		{errors.New("disk on fire"), "", false},
		{fs.ErrClosed, "", false},
	} {
		got, ok := ClassOf(c.err)
		if got != c.want || ok != c.ok {
			t.Errorf("ClassOf(%v) = %q, %v; want %q, %v", c.err, got, ok, c.want, c.ok)
		}
	}
}

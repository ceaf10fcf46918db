// Package oserror names the Python exception class for a Go error from
// the operating system: the OSError subclass CPython raises for its errno
// (PEP 3151), limited to the classes the worker knows. Package session
// (every host error raised in the sandbox) and package mount (its
// filesystem answers) share it, so that the same errno is the same
// exception on every path.
package oserror

import (
	"errors"
	"io/fs"
	"syscall"
)

// Class returns the exception class for errno e. PEP 3151 gives each of
// these errnos its own subclass of OSError; those the worker does not
// know (BlockingIOError, ChildProcessError, the ConnectionError family,
// InterruptedError, ProcessLookupError) would make it reject the whole
// answer, so their errnos are the base class OSError, which the
// sandbox's `except OSError` still catches.
func Class(e syscall.Errno) string {
	switch e {
	case syscall.ENOENT:
		return "FileNotFoundError"
	case syscall.EEXIST:
		return "FileExistsError"
	case syscall.EISDIR:
		return "IsADirectoryError"
	case syscall.ENOTDIR:
		return "NotADirectoryError"
	case syscall.EACCES, syscall.EPERM:
		return "PermissionError"
	case syscall.ETIMEDOUT:
		return "TimeoutError"
	}
	return "OSError"
}

// Errno returns the errno in err's chain (a syscall.Errno, as inside an
// *fs.PathError, *os.LinkError or *os.SyscallError), or for an error that
// only matches one of fs.ErrNotExist, fs.ErrExist and fs.ErrPermission,
// the errno that sentinel stands for. It reports false for any other
// error.
func Errno(err error) (syscall.Errno, bool) {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e, true
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return syscall.ENOENT, true
	case errors.Is(err, fs.ErrExist):
		return syscall.EEXIST, true
	case errors.Is(err, fs.ErrPermission):
		return syscall.EACCES, true
	}
	return 0, false
}

// ClassOf returns the exception class for the errno of err (see [Errno]
// and [Class]), and false when err carries none.
func ClassOf(err error) (string, bool) {
	e, ok := Errno(err)
	if !ok {
		return "", false
	}
	if c := Class(e); c != "OSError" {
		return c, true
	}
	// An errno of the host's own numbering (Windows error codes are
	// syscall.Errno too) may still match a sentinel: ERROR_FILE_NOT_FOUND
	// is fs.ErrNotExist.
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "FileNotFoundError", true
	case errors.Is(err, fs.ErrExist):
		return "FileExistsError", true
	case errors.Is(err, fs.ErrPermission):
		return "PermissionError", true
	}
	return "OSError", true
}

package mount

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/gomonty/monty/internal/oserror"
	"github.com/gomonty/monty/message"
)

// pyError is an exception to raise in the sandbox.
type pyError struct {
	typ, msg string
	data     message.ExcData
}

// Error renders the exception as "Type: message".
func (e *pyError) Error() string { return e.typ + ": " + e.msg }

// exception converts the error into the wire's RaisedException.
func (e *pyError) exception() *message.RaisedException {
	x := message.NewException(e.typ, e.msg)
	x.Data = e.data
	return x
}

// raise builds an exception of type typ with a formatted message.
func raise(typ, format string, args ...any) *pyError {
	return &pyError{typ: typ, msg: fmt.Sprintf(format, args...)}
}

// Sentinel errors produced by the host and overlay layers; toPy turns them
// into exceptions naming the sandbox's path.
var (
	// errEscape: a symlink or name that would leave the mount's root.
	errEscape = errors.New("mount: path escapes the mount")
	// errSpecial: a FIFO, socket or device where a regular file is needed.
	errSpecial = errors.New("mount: not a regular file")
	// errHardLink: a write to a file with more than one hard link.
	errHardLink = errors.New("mount: file has several hard links")
	// errSymlink: an overlay path that traverses a host symlink.
	errSymlink = errors.New("mount: overlay mounts do not follow symlinks")
	// errMountRoot: an attempt to remove or rename a mount's root.
	errMountRoot = errors.New("mount: the mount root cannot be removed or renamed")
	// errTimeout: the host did not answer within OpTimeout.
	errTimeout = errors.New("mount: operation timed out")
	// errReadOnly: a change on a read-only mount.
	errReadOnly = errors.New("mount: read-only mount")
	// errWriteLimit: the session's write budget is spent.
	errWriteLimit = errors.New("mount: write limit exceeded")
)

// tooLargeError: a read or listing over the mount's memory bound.
type tooLargeError struct{ limit int64 }

// Error describes the refusal (never shown to the sandbox).
func (e *tooLargeError) Error() string { return "mount: result too large" }

// memoryError: overlay memory exhausted.
type memoryError struct{ limit int64 }

// Error describes the refusal (never shown to the sandbox).
func (e *memoryError) Error() string { return "mount: overlay memory limit exceeded" }

// canceledError wraps a context error; HandleOS returns it as a Go error
// instead of answering.
type canceledError struct {
	err error
	// notStarted is set when the operation was never started (ctx was
	// done before it), so that nothing it would have done happened.
	notStarted bool
}

// Error names the context error.
func (e *canceledError) Error() string { return "mount: " + e.err.Error() }

// Unwrap returns the context error, for errors.Is(err, context.Canceled).
func (e *canceledError) Unwrap() error { return e.err }

// strerror is the C library's text for errno: Go's text with a capital.
func strerror(e syscall.Errno) string {
	s := e.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// errnoError is CPython's OSError for errno on one path:
// "[Errno 2] No such file or directory: '/x'".
func errnoError(e syscall.Errno, p string) *pyError {
	return raise(oserror.Class(e), "[Errno %d] %s: %s", int(e), strerror(e), shown(p))
}

// errnoError2 is CPython's two-path form used by rename:
// "[Errno 2] No such file or directory: '/a' -> '/b'".
func errnoError2(e syscall.Errno, src, dst string) *pyError {
	return raise(oserror.Class(e), "[Errno %d] %s: %s -> %s", int(e), strerror(e), shown(src), shown(dst))
}

// permissionDenied is the refusal for escapes and paths outside every
// mount.
func permissionDenied(p string) *pyError { return errnoError(syscall.EACCES, p) }

// isEscape reports whether err is os.Root refusing a path that leaves the
// root (a ".." past the root, or an absolute or escaping symlink). os.Root
// does not export this error, so its fixed text is matched.
func isEscape(err error) bool {
	if errors.Is(err, errEscape) {
		return true
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// renameErrno is the errno a failed rename reports with both paths, as
// os.rename does: the host's errno, and EACCES for the table's own
// refusals (an escape, a special file, an
// overlay symlink, a mount root). It reports false for the failures that
// are not an errno (a timeout, a memory limit, a cancellation).
func renameErrno(err error) (syscall.Errno, bool) {
	switch {
	case errors.Is(err, errEscape), errors.Is(err, errSpecial), errors.Is(err, errHardLink),
		errors.Is(err, errSymlink), errors.Is(err, errMountRoot), isEscape(err):
		return syscall.EACCES, true
	case errors.Is(err, errTimeout), errors.Is(err, errWriteLimit), errors.Is(err, errReadOnly):
		return 0, false
	}
	var pe *pyError
	var tl *tooLargeError
	var me *memoryError
	var ce *canceledError
	if errors.As(err, &pe) || errors.As(err, &tl) || errors.As(err, &me) || errors.As(err, &ce) {
		return 0, false
	}
	if e, ok := oserror.Errno(err); ok {
		if e == syscall.ENXIO || e == syscall.ENODEV {
			return syscall.EACCES, true
		}
		return e, true
	}
	return 0, false
}

// toPy converts an error from a filesystem operation on the sandbox path p
// into the exception the sandbox sees. It never includes host paths or Go
// error texts. A nil result means err was a canceledError (no answer).
func toPy(err error, p string) *pyError {
	var pe *pyError
	var tl *tooLargeError
	var me *memoryError
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.As(err, new(*canceledError)):
		return nil
	case errors.Is(err, errTimeout):
		return raise("OSError", "operation timed out: %s", shown(p))
	case errors.Is(err, errReadOnly):
		return raise("PermissionError", "[Errno 30] Read-only file system: %s", shown(p))
	case errors.Is(err, errWriteLimit):
		return raise("OSError", "[Errno 122] Disk quota exceeded: %s", shown(p))
	case errors.As(err, &tl):
		return raise("MemoryError", "file too large: %s exceeds the mount's %d-byte read limit", shown(p), tl.limit)
	case errors.As(err, &me):
		return raise("MemoryError", "overlay memory limit of %d bytes exceeded writing %s", me.limit, shown(p))
	case errors.Is(err, errEscape), errors.Is(err, errSpecial), errors.Is(err, errHardLink),
		errors.Is(err, errSymlink), errors.Is(err, errMountRoot), isEscape(err):
		return permissionDenied(p)
	}
	if e, ok := oserror.Errno(err); ok {
		if e == syscall.ENXIO || e == syscall.ENODEV {
			// Opening a socket or a device with no driver: a special file.
			return permissionDenied(p)
		}
		return errnoError(e, p)
	}
	if os.IsTimeout(err) {
		return raise("OSError", "operation timed out: %s", shown(p))
	}
	return errnoError(syscall.EIO, p)
}

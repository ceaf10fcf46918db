package mount

import (
	"path"
	"strings"
	"unicode/utf8"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// Path limits, as on Linux.
const (
	// maxPathLen is PATH_MAX less its terminating NUL: a path of this many
	// bytes or more is ENAMETOOLONG.
	maxPathLen = 4096
	// maxNameLen is NAME_MAX, the longest path component.
	maxNameLen = 255
	// maxShownPath bounds how much of a path an error message repeats.
	maxShownPath = 512
)

// pathTooLong reports whether p would be refused with ENAMETOOLONG.
func pathTooLong(p string) bool {
	if len(p) >= maxPathLen {
		return true
	}
	for len(p) > 0 {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			return len(p) > maxNameLen
		}
		if i > maxNameLen {
			return true
		}
		p = p[i+1:]
	}
	return false
}

// nulMessage is CPython's ValueError text for a path with a NUL byte in it;
// it depends on which layer of CPython first sees the path.
func nulMessage(op message.OsOp, dst bool) string {
	switch op {
	case message.OpStat:
		return "stat: embedded null character in path"
	case message.OpMkdir:
		return "mkdir: embedded null character in path"
	case message.OpUnlink:
		return "unlink: embedded null character in path"
	case message.OpRmdir:
		return "rmdir: embedded null character in path"
	case message.OpIterdir:
		return "scandir: embedded null character in path"
	case message.OpResolve:
		return "lstat: embedded null character in path"
	case message.OpRename:
		if dst {
			return "rename: embedded null character in dst"
		}
		return "rename: embedded null character in src"
	}
	return "embedded null byte"
}

// virtualAbs joins p to cwd when it is relative and cleans it lexically.
// The result is absolute and free of ".", ".." and empty components.
func virtualAbs(cwd, p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	return path.Clean(cwd + "/" + p)
}

// pyPath renders p the way str(pathlib.PurePosixPath(p)) does: empty and
// "." components are dropped, ".." is kept, and the empty path is ".".
func pyPath(p string) string {
	abs := strings.HasPrefix(p, "/")
	var parts []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			parts = append(parts, c)
		}
	}
	s := strings.Join(parts, "/")
	switch {
	case abs:
		return "/" + s
	case s == "":
		return "."
	}
	return s
}

// childPath joins name to the directory path dir the way Path.iterdir
// builds its results (dir / name), keeping a relative dir relative.
func childPath(dir, name string) string {
	d := pyPath(dir)
	switch d {
	case ".":
		return name
	case "/":
		return "/" + name
	}
	return d + "/" + name
}

// pyRepr renders s as CPython's repr() of a str (value.StrRepr: printable
// characters by the worker's Unicode edition, invalid UTF-8 as surrogate
// escapes).
func pyRepr(s string) string { return value.StrRepr(s) }

// shown is the repr of a path as error messages show it, clipped to
// maxShownPath bytes (on a rune boundary) so that a hostile path is never
// echoed in full.
func shown(p string) string {
	if len(p) > maxShownPath {
		cut := maxShownPath
		for cut > 0 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		return pyRepr(p[:cut]) + "..."
	}
	return pyRepr(p)
}

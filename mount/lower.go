package mount

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"
)

// lower is what a mount shows beneath any change of the session: a host
// directory (hostLower, through its os.Root) or a Go file system
// (fsLower). Every read of a mount goes through it, so that the host and
// fs.FS answers come from one code path: the predicates, reads, stat,
// listings and resolve of ReadOnly mounts, the read-only refusals' lookups,
// and the lower side of Overlay mounts. Only ReadWrite mounts, which are
// host mounts, change anything, and they do so through the os.Root itself.
//
// Names are slash-separated, relative to the lower's directory, and
// cleaned ("." is the directory itself); they never hold "..".
type lower interface {
	// Stat describes name, following symlinks.
	Stat(name string) (fs.FileInfo, error)
	// Lstat describes name itself: a symlink is not followed.
	Lstat(name string) (fs.FileInfo, error)
	// Readlink returns the target of the symlink name.
	Readlink(name string) (string, error)
	// OpenRoot returns the directory name as a lower of its own, confined
	// to it; the caller closes it.
	OpenRoot(name string) (lower, error)
	// Close releases what the lower holds.
	Close() error

	// open opens name for reading, as a directory when dir is set, and
	// returns the handle with its own description. It does not check the
	// type: the callers do.
	open(name string, dir bool) (lowerFile, fs.FileInfo, error)
	// sameFile reports whether a, from Lstat, and b, from the opened
	// handle, describe one file.
	sameFile(a, b fs.FileInfo) bool
	// statOf gives stat's fields for a FileInfo of this lower.
	statOf(fi fs.FileInfo) statInfo
}

// lowerFile is an opened file or directory of a lower.
type lowerFile interface {
	io.Reader
	ReadDir(n int) ([]fs.DirEntry, error)
	Close() error
}

// hostLower is a host directory, through the os.Root opened on it.
type hostLower struct{ root *os.Root }

// Stat is os.Root.Stat.
func (h hostLower) Stat(name string) (fs.FileInfo, error) { return h.root.Stat(name) }

// Lstat is os.Root.Lstat.
func (h hostLower) Lstat(name string) (fs.FileInfo, error) { return h.root.Lstat(name) }

// Readlink is os.Root.Readlink.
func (h hostLower) Readlink(name string) (string, error) { return h.root.Readlink(name) }

// OpenRoot is os.Root.OpenRoot.
func (h hostLower) OpenRoot(name string) (lower, error) {
	sub, err := h.root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	return hostLower{sub}, nil
}

// Close closes the os.Root.
func (h hostLower) Close() error { return h.root.Close() }

// open opens name with O_NONBLOCK (so a FIFO never blocks), and
// O_DIRECTORY for a directory, and fstats the handle.
func (h hostLower) open(name string, dir bool) (lowerFile, fs.FileInfo, error) {
	flags := os.O_RDONLY | oNonblock
	if dir {
		flags |= oDirectory
	}
	f, err := h.root.OpenFile(name, flags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// sameFile is os.SameFile: the same device and inode.
func (hostLower) sameFile(a, b fs.FileInfo) bool { return os.SameFile(a, b) }

// statOf reports the host's values.
func (hostLower) statOf(fi fs.FileInfo) statInfo { return statOf(fi) }

// fsLower is a directory of a Go file system: the whole fs.FS at prefix
// ".", or a sub-directory a walk entered. It is a pointer so that walks
// can compare lowers (an fs.FS may be a map, which == cannot compare).
type fsLower struct {
	fsys   fs.FS
	prefix string
}

// full is name below the lower's prefix, checked with fs.ValidPath so that
// the fs.FS is never handed "..", a leading "/" or an empty element.
func (l *fsLower) full(op, name string) (string, error) {
	p := path.Join(l.prefix, name)
	if !fs.ValidPath(p) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return p, nil
}

// fix turns the fs.ErrNotExist of a lookup of p into ENOTDIR when an
// ancestor of p is not a directory, as a host lookup reports it (an fs.FS
// says only that the name does not exist).
func (l *fsLower) fix(p string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		fi, serr := fs.Stat(l.fsys, d)
		if serr == nil {
			if !fi.IsDir() {
				return &fs.PathError{Op: "stat", Path: p, Err: syscall.ENOTDIR}
			}
			break // the nearest ancestor that exists is a directory
		}
	}
	return err
}

// Stat is fs.Stat, which follows symlinks where the fs.FS does.
func (l *fsLower) Stat(name string) (fs.FileInfo, error) {
	p, err := l.full("stat", name)
	if err != nil {
		return nil, err
	}
	fi, err := fs.Stat(l.fsys, p)
	if err != nil {
		return nil, l.fix(p, err)
	}
	return fi, nil
}

// Lstat is fs.Lstat: an fs.FS without fs.ReadLinkFS has no symlinks, and
// Lstat is Stat there.
func (l *fsLower) Lstat(name string) (fs.FileInfo, error) {
	p, err := l.full("lstat", name)
	if err != nil {
		return nil, err
	}
	fi, err := fs.Lstat(l.fsys, p)
	if err != nil {
		return nil, l.fix(p, err)
	}
	return fi, nil
}

// Readlink is fs.ReadLink.
func (l *fsLower) Readlink(name string) (string, error) {
	p, err := l.full("readlink", name)
	if err != nil {
		return "", err
	}
	return fs.ReadLink(l.fsys, p)
}

// OpenRoot checks that name is a directory and returns the lower below it.
func (l *fsLower) OpenRoot(name string) (lower, error) {
	fi, err := l.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "openat", Path: name, Err: syscall.ENOTDIR}
	}
	p, _ := l.full("openat", name)
	return &fsLower{fsys: l.fsys, prefix: p}, nil
}

// Close does nothing: the fs.FS belongs to the caller of New.
func (*fsLower) Close() error { return nil }

// open opens name in the fs.FS and stats the handle. A directory must be
// an fs.ReadDirFile to be listed.
func (l *fsLower) open(name string, dir bool) (lowerFile, fs.FileInfo, error) {
	p, err := l.full("open", name)
	if err != nil {
		return nil, nil, err
	}
	f, err := l.fsys.Open(p)
	if err != nil {
		return nil, nil, l.fix(p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if dir && !fi.IsDir() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOTDIR}
	}
	return fsFile{f}, fi, nil
}

// sameFile compares the kinds only: an fs.FS has no inode numbers.
func (*fsLower) sameFile(a, b fs.FileInfo) bool { return a.Mode().Type() == b.Mode().Type() }

// statOf reports what an fs.FileInfo has: the type and permission bits,
// the size, and the modification time as all three times (0, the Unix
// epoch, when it is the zero time, as embed.FS reports); st_ino, st_dev,
// st_uid and st_gid are 0 and st_nlink is 1 (see genericStat). The value
// of the FileInfo's Sys method is never used: an fs.FS over the host
// (os.DirFS) would give the host's inode and owner away.
func (*fsLower) statOf(fi fs.FileInfo) statInfo {
	st := genericStat(fi)
	if fi.ModTime().IsZero() {
		st.atime, st.mtime, st.ctime = 0, 0, 0
	}
	return st
}

// fsFile is an opened fs.File; a directory that is not an fs.ReadDirFile
// cannot be listed.
type fsFile struct{ fs.File }

// errNoReadDir is the listing of an fs.FS directory whose handle is not an
// fs.ReadDirFile.
var errNoReadDir = &fs.PathError{Op: "readdir", Err: syscall.ENOTSUP}

// ReadDir is fs.ReadDirFile's.
func (f fsFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if d, ok := f.File.(fs.ReadDirFile); ok {
		return d.ReadDir(n)
	}
	return nil, errNoReadDir
}

// rootWalk descends a lower one directory at a time through sub-roots
// (OpenRoot), so that each step and each lookup in the current directory
// is one system call whatever the depth (looking up each prefix from the
// root instead costs work quadratic in the depth). Every sub-root stays
// confined to its directory, itself inside the root. R is *os.Root for the
// ReadWrite mounts' changes and lower for every read.
type rootWalk[R interface {
	comparable
	Close() error
}] struct {
	root R
	cur  R // root, or a sub-root the walk owns
	sub  func(R, string) (R, error)
}

// hostWalk walks a host root, for ReadWrite changes.
func hostWalk(root *os.Root) rootWalk[*os.Root] {
	return rootWalk[*os.Root]{root: root, cur: root, sub: (*os.Root).OpenRoot}
}

// lowerWalk walks a lower.
func lowerWalk(root lower) rootWalk[lower] {
	return rootWalk[lower]{root: root, cur: root, sub: lower.OpenRoot}
}

// enter makes the directory name, in the current directory, current.
func (w *rootWalk[R]) enter(name string) error {
	sub, err := w.sub(w.cur, name)
	if err != nil {
		return err
	}
	w.reset()
	w.cur = sub
	return nil
}

// reset closes the current sub-root and makes the root current again.
func (w *rootWalk[R]) reset() {
	if w.cur != w.root {
		w.cur.Close()
	}
	w.cur = w.root
}

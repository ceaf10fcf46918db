package mount

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// maxSymlinkHops bounds symlink resolution in resolve(), like the kernel's
// MAXSYMLINKS.
const maxSymlinkHops = 40

// listEntryCost is what one directory entry is charged against a mount's
// memory bound on top of its name.
const listEntryCost = 64

// hostOp answers a filesystem call on a ReadOnly or ReadWrite mount, a
// host directory or (ReadOnly) an FS: reads go through m.low, changes
// (ReadWrite, a host directory) through m.root. Writes on ReadOnly mounts
// were refused by the caller.
func (t *Table) hostOp(ctx context.Context, call *message.OsCall, m *mnt, rel string) (reply, error) {
	low := m.low
	switch call.Op {
	case message.OpExists, message.OpIsFile, message.OpIsDir:
		fi, err := run(ctx, t, "stat", func() (fs.FileInfo, error) { return low.Stat(rel) })
		if err != nil {
			return reply{}, err
		}
		switch call.Op {
		case message.OpIsFile:
			return ret(value.Bool(fi.Mode().IsRegular())), nil
		case message.OpIsDir:
			return ret(value.Bool(fi.IsDir())), nil
		}
		return ret(value.Bool(true)), nil

	case message.OpIsSymlink:
		fi, err := run(ctx, t, "lstat", func() (fs.FileInfo, error) { return low.Lstat(rel) })
		if err != nil {
			return reply{}, err
		}
		return ret(value.Bool(fi.Mode()&fs.ModeSymlink != 0)), nil

	case message.OpReadText, message.OpReadBytes:
		data, err := run(ctx, t, "read", func() ([]byte, error) { return readRegular(low, rel, m.memLimit) })
		if err != nil {
			return reply{}, err
		}
		if call.Op == message.OpReadText {
			return textReply(data), nil
		}
		return ret(value.Bytes(data)), nil

	case message.OpStat:
		fi, err := run(ctx, t, "stat", func() (fs.FileInfo, error) { return low.Stat(rel) })
		if err != nil {
			return reply{}, err
		}
		return statReply(low.statOf(fi)), nil

	case message.OpIterdir:
		names, err := run(ctx, t, "readdir", func() ([]string, error) { return listDir(low, rel, m.memLimit, false) })
		if err != nil {
			return reply{}, err
		}
		return pathListReply(call.Path, names), nil

	case message.OpResolve:
		// A path as long as PATH_MAX fails realpath's lstat: the rest is kept.
		maxRel := maxPathLen - 1 - len(m.vpath)
		res, err := run(ctx, t, "resolve", func() (string, error) { return resolveIn(low, rel, maxRel), nil })
		if err != nil {
			return reply{}, err
		}
		return ret(value.Path(joinVirtual(m.vpath, res))), nil

	case message.OpUnlink, message.OpRmdir:
		if rel == "." {
			return reply{}, errMountRoot
		}
		dir := call.Op == message.OpRmdir
		err := run0(ctx, t, "remove", func() error {
			err := removeEntry(m.root, rel, dir)
			if err == nil {
				m.uncreate() // one entry fewer on the host
			}
			return err
		})
		if err != nil {
			return reply{}, err
		}
		return ret(value.None()), nil

	case message.OpWriteText, message.OpWriteBytes, message.OpAppendText, message.OpAppendBytes:
		appendMode := call.Op == message.OpAppendText || call.Op == message.OpAppendBytes
		if _, err := t.hostWrite(ctx, m, rel, payload(call), appendMode, true); err != nil {
			return reply{}, err
		}
		return ret(value.Int(writtenCount(call))), nil

	case message.OpOpen:
		var pos int64
		switch call.Mode {
		case "r", "rb":
			err := run0(ctx, t, "open", func() error {
				f, _, err := openRead(low, rel)
				if err == nil {
					f.Close()
				}
				return err
			})
			if err != nil {
				return reply{}, err
			}
		case "w", "wb":
			if _, err := t.hostWrite(ctx, m, rel, nil, false, true); err != nil {
				return reply{}, err
			}
		case "a", "ab":
			size, err := t.hostWrite(ctx, m, rel, nil, true, false)
			if err != nil {
				return reply{}, err
			}
			pos = size
		}
		return handleReply(call.Path, call.Mode, pos), nil

	case message.OpMkdir:
		err := run0(ctx, t, "mkdir", func() error { return m.mkdirIn(rel, call.Parents, call.ExistOK) })
		var ae *ancestorError
		if errors.As(err, &ae) {
			return fail(toPy(ae.err, writtenAncestor(call.Path, ae.up))), nil
		}
		if err != nil {
			return reply{}, err
		}
		return ret(value.None()), nil
	}
	return reply{notHandled: true}, nil
}

// hostRename renames within one ReadWrite mount. renameat(2) replaces a
// symlink at the destination rather than following it.
func (t *Table) hostRename(ctx context.Context, m *mnt, srcRel, dstRel string) error {
	if srcRel == "." || dstRel == "." {
		return errMountRoot
	}
	return run0(ctx, t, "rename", func() error { return renameEntry(m.root, srcRel, dstRel) })
}

// hostWrite writes data to rel through one checked handle: truncating
// first unless appendMode, or only creating the file when truncate is
// false and appendMode is set (open 'a'). It returns the file's size after
// the write. The bytes are charged to the mount's write budget before the
// host is touched and refunded when nothing was written. The operation
// itself decides the refund, once it knows: a write abandoned on timeout or
// cancellation goes on and, when it reaches the file, stays charged.
func (t *Table) hostWrite(ctx context.Context, m *mnt, rel string, data []byte, appendMode, truncate bool) (int64, error) {
	if rel == "." {
		return 0, syscall.EISDIR
	}
	n := int64(len(data))
	if !m.reserve(n) {
		return 0, errWriteLimit
	}
	size, err := run(ctx, t, "write", func() (int64, error) {
		flags := os.O_WRONLY | os.O_CREATE
		if appendMode {
			flags |= os.O_APPEND
		}
		f, fi, err := openRegular(m.root, rel, flags, m)
		if err == nil && statOf(fi).nlink > 1 {
			f.Close()
			err = errHardLink
		}
		if err != nil {
			m.refund(n) // the file was not touched
			return 0, err
		}
		defer f.Close()
		if truncate && !appendMode {
			if err := f.Truncate(0); err != nil {
				return 0, err
			}
		}
		if len(data) > 0 {
			if _, err := f.Write(data); err != nil {
				return 0, err
			}
		}
		fi, err = f.Stat()
		if err != nil {
			return 0, err
		}
		return fi.Size(), nil
	})
	var ce *canceledError
	if errors.As(err, &ce) && ce.notStarted {
		m.refund(n)
	}
	return size, err
}

// openRegular opens rel with flags (plus O_NONBLOCK; os.Root adds
// O_NOFOLLOW and resolves any symlink inside the root) and returns the
// handle and its fstat. Directories give EISDIR; FIFOs, sockets and
// devices errSpecial. The type is checked with stat before opening, so
// that a special file is normally not even opened, and again on the opened
// handle, which is what the caller then uses. A file that O_CREATE would
// create is charged to m's entry budget (when m is not nil) first.
func openRegular(root *os.Root, rel string, flags int, m *mnt) (*os.File, fs.FileInfo, error) {
	creating := false
	if fi, err := root.Stat(rel); err == nil {
		if err := regularOrErr(fi); err != nil {
			return nil, nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) || flags&os.O_CREATE == 0 {
		return nil, nil, err
	} else if m != nil {
		switch err := m.createEntry(root, rel, true); {
		case err == nil:
			creating = true
		case !errors.Is(err, fs.ErrExist):
			// Made meanwhile: opened below like any existing file.
			return nil, nil, err
		}
	}
	f, err := root.OpenFile(rel, flags|oNonblock, 0o666)
	if err != nil {
		if creating {
			m.uncreate()
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = regularOrErr(fi)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// regularOrErr accepts only regular files.
func regularOrErr(fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return syscall.EISDIR
	case !fi.Mode().IsRegular():
		return errSpecial
	}
	return nil
}

// openRead opens the regular file rel of low for reading, as openRegular
// does with O_RDONLY: the type is checked with stat before opening (a
// special file is normally not even opened) and again on the handle,
// which is what the caller then reads.
func openRead(low lower, rel string) (lowerFile, fs.FileInfo, error) {
	fi, err := low.Stat(rel)
	if err != nil {
		return nil, nil, err
	}
	if err := regularOrErr(fi); err != nil {
		return nil, nil, err
	}
	f, fi, err := low.open(rel, false)
	if err != nil {
		return nil, nil, err
	}
	if err := regularOrErr(fi); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// readRegular reads the whole regular file rel, refusing more than limit
// bytes (whatever the metadata claims, at most limit+1 bytes are read).
func readRegular(low lower, rel string, limit int64) ([]byte, error) {
	f, fi, err := openRead(low, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, fi.Size(), limit)
}

// readLimited reads f to the end, refusing more than limit bytes; size is
// the size the handle's stat claims, used to refuse early and to size the
// buffer, never trusted as a bound: an fs.FS file may be endless.
func readLimited(f io.Reader, size, limit int64) ([]byte, error) {
	if size > limit {
		return nil, &tooLargeError{limit}
	}
	buf := make([]byte, 0, max(size, 0)+1)
	buf, err := readAllInto(io.LimitReader(f, limit+1), buf)
	if err != nil {
		return nil, err
	}
	if int64(len(buf)) > limit {
		return nil, &tooLargeError{limit}
	}
	return buf, nil
}

// readAllInto is io.ReadAll appending to buf.
func readAllInto(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// listDir lists the directory rel, sorted by name, charging each name to
// limit. A symlink whose target leaves the root is left out, so listings
// never advertise a way out; in overlay mode (noLinks) every symlink is
// left out. The directory is opened with O_DIRECTORY|O_NONBLOCK, so a FIFO
// in its place fails at once with ENOTDIR.
func listDir(low lower, rel string, limit int64, noLinks bool) ([]string, error) {
	d, fi, err := low.open(rel, true)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if !fi.IsDir() {
		return nil, syscall.ENOTDIR
	}
	return readNames(d, limit, func(e fs.DirEntry) bool {
		if e.Type()&fs.ModeSymlink == 0 {
			return true
		}
		if noLinks {
			return false
		}
		_, err := low.Stat(path.Join(rel, e.Name()))
		return !isEscape(err)
	})
}

// maxScanned is how many directory entries one listing under the memory
// bound limit reads at most, those it leaves out included: twice what
// limit can hold, so that no listing a host directory passes is refused,
// while a directory whose listing never ends (an fs.FS may hold one) is
// refused once it is read that far.
func maxScanned(limit int64) int64 { return 2*(limit/listEntryCost) + 256 }

// readNames reads the entries of d in batches, keeping those keep accepts.
// Names that are not valid UTF-8 are left out: the wire carries str and
// Path values as UTF-8 only, and such a name could not be used again.
// At most maxScanned(limit) entries are read.
func readNames(d lowerFile, limit int64, keep func(fs.DirEntry) bool) ([]string, error) {
	var names []string
	var used, scanned int64
	for {
		ents, err := d.ReadDir(256)
		if scanned += int64(len(ents)); scanned > maxScanned(limit) {
			return nil, &tooLargeError{limit}
		}
		for _, e := range ents {
			if !utf8.ValidString(e.Name()) || !keep(e) {
				continue
			}
			used += int64(len(e.Name())) + listEntryCost
			if used > limit {
				return nil, &tooLargeError{limit}
			}
			names = append(names, e.Name())
		}
		if err == io.EOF || (err == nil && len(ents) == 0) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(names)
	return names, nil
}

// ancestorError is the failure of Path.mkdir(parents=True) on an
// ancestor of the path, up levels above it: CPython's exception names that
// ancestor.
type ancestorError struct {
	err error
	up  int
}

// Error describes the failure (never shown to the sandbox).
func (e *ancestorError) Error() string { return e.err.Error() }

// Unwrap returns the ancestor's error.
func (e *ancestorError) Unwrap() error { return e.err }

// dirPrefix probes the components of rel, whose own lookup failed: it
// returns how many leading components resolve (symlinks inside the root
// followed) to directories, at most len(comps)-1, and, when that is fewer,
// the stat and the lstat errors of the next prefix (a dangling symlink:
// ENOENT, then nil). Resolving a prefix as a directory resolves every
// shorter one as a directory, so a binary search finds it in O(log n)
// lookups.
func dirPrefix(root statter, comps []string) (dirs int, statErr, lstatErr error) {
	lo, hi := 0, len(comps)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fi, err := root.Stat(strings.Join(comps[:mid], "/")); err == nil && fi.IsDir() {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo < len(comps)-1 {
		next := strings.Join(comps[:lo+1], "/")
		_, statErr = root.Stat(next)
		_, lstatErr = root.Lstat(next)
	}
	return lo, statErr, lstatErr
}

// statter is what dirPrefix looks up with: an *os.Root or a lower.
type statter interface {
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
}

// mkdirIn follows Path.mkdir: try mkdir; when the parent is missing and
// parents is set, make each missing ancestor in turn (one directory at a
// time, never through a symlink: an ancestor that exists but is not a
// directory, such as a dangling symlink, is FileExistsError on that
// ancestor, as its mkdir is in CPython), then retry; an existing directory
// is accepted when existOK is set. A failure on an ancestor is an
// *ancestorError. Each directory made is charged to the entry budget.
func (m *mnt) mkdirIn(rel string, parents, existOK bool) error {
	err := m.mkdirOne(m.root, rel)
	if err == nil {
		return nil
	}
	if parents && rel != "." && errors.Is(err, fs.ErrNotExist) {
		err = m.mkdirParents(splitRel(rel))
		var ae *ancestorError
		if err == nil || errors.As(err, &ae) {
			return err
		}
	}
	if existOK && errors.Is(err, fs.ErrExist) {
		if fi, serr := m.root.Stat(rel); serr == nil && fi.IsDir() {
			return nil
		}
	}
	return err
}

// mkdirOne makes the directory name in dir, charged to the entry budget.
func (m *mnt) mkdirOne(dir *os.Root, name string) error {
	if err := m.createEntry(dir, name, false); err != nil {
		return err
	}
	err := dir.Mkdir(name, 0o777)
	if err != nil {
		m.uncreate()
	}
	return err
}

// mkdirParents makes the missing ancestors of the path comps, then the
// path itself, walking down from the deepest existing ancestor through
// sub-roots, so that a path k components deep costs O(k) work.
func (m *mnt) mkdirParents(comps []string) error {
	root := m.root
	last := len(comps) - 1
	dirs, _, nextErr := dirPrefix(root, comps)
	switch {
	case dirs < last && nextErr == nil:
		return &ancestorError{syscall.EEXIST, last - dirs}
	case dirs < last && !errors.Is(nextErr, fs.ErrNotExist):
		return &ancestorError{nextErr, last - dirs}
	}
	w := hostWalk(root)
	defer w.reset()
	if dirs > 0 {
		sub, err := root.OpenRoot(strings.Join(comps[:dirs], "/"))
		if err != nil {
			return err
		}
		w.cur = sub
	}
	for j := dirs; j < last; j++ {
		err := m.mkdirOne(w.cur, comps[j])
		if err != nil && errors.Is(err, fs.ErrExist) {
			// Made meanwhile: fine if it is a directory (exist_ok).
			if fi, serr := w.cur.Stat(comps[j]); serr == nil && fi.IsDir() {
				err = nil
			}
		}
		if err == nil {
			err = w.enter(comps[j])
		}
		if err != nil {
			return &ancestorError{err, last - j}
		}
	}
	return m.mkdirOne(w.cur, comps[last])
}

// resolveIn resolves symlinks in rel the way Path.resolve() (strict=False)
// does, but only inside the root: a symlink with an absolute target, one
// whose target climbs out of the root, a loop, or a missing component ends
// the resolution, and the rest of the path is kept as written. Host paths
// are never revealed. A candidate of maxLen bytes or more is not looked
// up, as lstat would refuse it with ENAMETOOLONG.
func resolveIn(low lower, rel string, maxLen int) string {
	w := lowerWalk(low)
	defer w.reset()
	var done []string
	doneLen := -1 // len(strings.Join(done, "/"))
	todo := splitRel(rel)
	for hops := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		var fi fs.FileInfo
		var err error = syscall.ENAMETOOLONG
		if doneLen+1+len(c) < maxLen {
			fi, err = w.cur.Lstat(c)
		}
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			doneLen += 1 + len(c)
			if err == nil && len(todo) > 0 {
				// One step down; a file here fails like the next lstat would.
				err = syscall.ENOTDIR
				if fi.IsDir() {
					err = w.enter(c)
				}
			}
			if err != nil {
				done = append(done, todo...)
				break
			}
			continue
		}
		target, err := w.cur.Readlink(c)
		hops++
		if err != nil || path.IsAbs(target) || hops > maxSymlinkHops {
			done = append(done, c)
			done = append(done, todo...)
			break
		}
		next := path.Clean(path.Join(strings.Join(done, "/"), target))
		if next == ".." || strings.HasPrefix(next, "../") {
			done = append(done, c)
			done = append(done, todo...)
			break
		}
		todo = append(splitRel(next), todo...)
		done, doneLen = nil, -1
		w.reset()
	}
	if len(done) == 0 {
		return "."
	}
	return strings.Join(done, "/")
}

// splitRel splits a cleaned relative path into components; "." has none.
func splitRel(rel string) []string {
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

// joinVirtual maps a root-relative path back to the virtual path.
func joinVirtual(vp, rel string) string {
	if rel == "." {
		return vp
	}
	if vp == "/" {
		return "/" + rel
	}
	return vp + "/" + rel
}

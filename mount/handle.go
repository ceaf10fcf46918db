package mount

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"path"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// reply is an answer under construction: a value in g, an exception, or
// not_handled.
type reply struct {
	g          value.Graph
	root       value.NodeID
	exc        *pyError
	notHandled bool
}

// ret answers with the single node n.
func ret(n value.Node) reply {
	var r reply
	r.root = r.g.Add(n)
	return r
}

// fail answers with an exception.
func fail(e *pyError) reply { return reply{exc: e} }

// resume wraps the answer in the ResumeCall for callID.
func (r *reply) resume(callID uint32) *message.ResumeCall {
	rc := &message.ResumeCall{CallID: callID}
	switch {
	case r.notHandled:
		rc.Result = &message.ExtResult{Kind: message.ResultNotHandled}
	case r.exc != nil:
		rc.Result = &message.ExtResult{Kind: message.ResultError, Error: r.exc.exception()}
	default:
		rc.Result = &message.ExtResult{Kind: message.ResultReturn, Value: r.root}
		rc.Values = r.g
	}
	return rc
}

// HandleOS answers one OS call: it returns the complete ResumeCall
// (CallID = call.CallID, the result, and the value graph the result's root
// indexes). Failures the sandbox should see are answers too: they come
// back as a ResultError carrying the Python exception, never as a Go
// error. The Go error is non-nil only when call is nil or malformed, or
// when ctx ended before or during a host operation (no answer is built
// then, and nothing is started once ctx is done).
//
// Filesystem arms are answered from the mount table; getenv and
// get_environ from Options.Env; date_today, date_time_now and protocol 5's
// time arm from Options.Clock; urandom from Options.Rand. Any other arm
// (the sleeps among them) gets not_handled.
func (t *Table) HandleOS(ctx context.Context, call *message.OsCall) (*message.ResumeCall, error) {
	if call == nil {
		return nil, errors.New("mount: nil OsCall")
	}
	if err := ctx.Err(); err != nil {
		return nil, &canceledError{err: err}
	}
	var (
		r   reply
		err error
	)
	switch call.Op {
	case message.OpGetenv:
		r, err = t.getenv(call)
	case message.OpGetEnviron:
		r = t.environ()
	case message.OpDateToday:
		r = t.dateToday(t.zone(ctx))
	case message.OpDateTimeNow:
		r = t.dateTimeNow(call.TZ, t.zone(ctx))
	case message.OpUrandom:
		r = t.urandom(call.Size)
	case message.OpTime:
		r = t.timeCall(call.Caller)
	default:
		if call.Op.IsFilesystem() {
			r, err = t.filesystem(ctx, call)
		} else {
			r.notHandled = true
		}
	}
	if err != nil {
		return nil, err
	}
	return r.resume(call.CallID), nil
}

// isPredicate reports whether op is one of pathlib's four predicates, which
// answer False where other calls raise.
func isPredicate(op message.OsOp) bool {
	switch op {
	case message.OpExists, message.OpIsFile, message.OpIsDir, message.OpIsSymlink:
		return true
	}
	return false
}

// isWrite reports whether the call changes the filesystem.
func isWrite(call *message.OsCall) bool {
	switch call.Op {
	case message.OpUnlink, message.OpRmdir, message.OpWriteText, message.OpAppendText,
		message.OpWriteBytes, message.OpAppendBytes, message.OpMkdir, message.OpRename:
		return true
	case message.OpOpen:
		return call.Mode != "r" && call.Mode != "rb"
	}
	return false
}

// checkPaths applies the checks that run before a call's paths are
// mapped, in CPython's order: every path argument is converted first (a
// NUL byte is ValueError, for rename the source's before the target's),
// then the system call may fail with ENAMETOOLONG (for rename naming both
// paths). resolve() refuses only the NUL byte: os.path.realpath(strict=
// False) ignores its lstat's OSError and keeps the rest of the path as
// written. The empty path is FileNotFoundError, as the kernel's lookup
// makes it, in the arms the os functions and open() reach (see
// osReachable). It returns nil when the paths may be used.
func checkPaths(call *message.OsCall) *pyError {
	if strings.IndexByte(call.Path, 0) >= 0 {
		return raise("ValueError", "%s", nulMessage(call.Op, false))
	}
	switch call.Op {
	case message.OpResolve:
		return nil
	case message.OpRename:
		if strings.IndexByte(call.Dst, 0) >= 0 {
			return raise("ValueError", "%s", nulMessage(call.Op, true))
		}
		// Linux looks up the source's parent (an empty name is ENOENT, a
		// long one or a long directory component ENAMETOOLONG), then the
		// target's, and only then the last components.
		for _, p := range []string{call.Path, call.Dst} {
			switch {
			case p == "":
				return errnoError2(syscall.ENOENT, call.Path, call.Dst)
			case len(p) >= maxPathLen || pathTooLong(p[:max(strings.LastIndexByte(p, '/'), 0)]):
				return errnoError2(syscall.ENAMETOOLONG, call.Path, call.Dst)
			}
		}
		if pathTooLong(call.Path) || pathTooLong(call.Dst) {
			return errnoError2(syscall.ENAMETOOLONG, call.Path, call.Dst)
		}
		return nil
	}
	if call.Path == "" && osReachable(call.Op) {
		// No name at all: the kernel's lookup refuses it, where the
		// lexical cleaning would make it the working directory.
		return errnoError(syscall.ENOENT, call.Path)
	}
	if pathTooLong(call.Path) {
		return errnoError(syscall.ENAMETOOLONG, call.Path)
	}
	return nil
}

// osReachable reports whether the sandbox's os functions (os.listdir,
// os.stat, os.unlink, os.remove, os.rmdir, os.mkdir, os.makedirs,
// os.rename, os.replace) or open() reach op. The worker passes the path
// as written there, and CPython refuses the empty one with
// FileNotFoundError. The other arms come from pathlib alone, where the
// worker sends Path("") as "" although CPython makes it Path("."): there
// "" is the working directory.
func osReachable(op message.OsOp) bool {
	switch op {
	case message.OpStat, message.OpIterdir, message.OpUnlink, message.OpRmdir, message.OpMkdir,
		message.OpRename, message.OpOpen:
		return true
	}
	return false
}

// filesystem answers arms 2–20.
func (t *Table) filesystem(ctx context.Context, call *message.OsCall) (reply, error) {
	p := call.Path
	cwd := t.Cwd()
	if call.Op == message.OpAbsolute {
		// Pure string work, as in CPython: no mount is consulted, and no
		// NUL byte or length is refused.
		if path.IsAbs(p) {
			return ret(value.Path(pyPath(p))), nil
		}
		return ret(value.Path(pyPath(cwd + "/" + p))), nil
	}
	if e := checkPaths(call); e != nil {
		if isPredicate(call.Op) {
			return ret(value.Bool(false)), nil
		}
		return fail(e), nil
	}
	abs := virtualAbs(cwd, p)
	m, rel := t.find(abs)
	if m == nil {
		switch call.Op {
		case message.OpResolve:
			// Nothing to resolve outside the mounts: the lexical answer.
			return ret(value.Path(abs)), nil
		case message.OpRename:
			return fail(errnoError2(syscall.EACCES, p, call.Dst)), nil
		}
		return fail(permissionDenied(p)), nil
	}

	var mode string
	if call.Op == message.OpOpen {
		var err error
		if mode, err = value.NormalizeFileMode(call.Mode); err != nil {
			return fail(raise("ValueError", "invalid mode: %s", pyRepr(call.Mode))), nil
		}
		call = shallowWithMode(call, mode)
	}
	// Before the read-only refusal, as in Linux's rmdir and rename.
	if e, err := t.checkDots(ctx, call, cwd, m); err != nil {
		return reply{}, err
	} else if e != nil {
		return fail(e), nil
	}
	if m.mode == ReadOnly && isWrite(call) {
		if call.Op == message.OpMkdir {
			return t.readOnlyMkdir(ctx, call, m, rel)
		}
		if e, err := t.readOnlyLookups(ctx, call, cwd, m, rel); err != nil {
			return reply{}, err
		} else if e != nil {
			return fail(e), nil
		}
		if call.Op == message.OpRename {
			e := errnoError2(syscall.EROFS, p, call.Dst)
			e.typ = "PermissionError" // as for every read-only refusal
			return fail(e), nil
		}
		return fail(toPy(errReadOnly, p)), nil
	}

	if e, err := t.checkSlash(ctx, call, m, rel); err != nil {
		return reply{}, err
	} else if e != nil {
		return fail(e), nil
	}

	if call.Op == message.OpRename {
		return t.rename(ctx, call, cwd, m, rel)
	}

	var r reply
	var err error
	if m.ov != nil {
		r, err = t.overlayOp(ctx, call, m, rel)
	} else {
		r, err = t.hostOp(ctx, call, m, rel)
	}
	if err != nil {
		if isPredicate(call.Op) && !errors.Is(err, errTimeout) {
			var ce *canceledError
			if !errors.As(err, &ce) {
				return ret(value.Bool(false)), nil
			}
		}
		e := toPy(err, p)
		if e == nil {
			return reply{}, err
		}
		return fail(e), nil
	}
	return r, nil
}

// readOnlyMkdir answers mkdir on a ReadOnly mount as Path.mkdir does on a
// read-only file system, where Linux's mkdir reports a failed lookup of
// the parent (ENOENT, ENOTDIR) first, then an existing path (EEXIST, or
// success for a directory with exist_ok), and only then EROFS. So the
// common Path(d).mkdir(parents=True, exist_ok=True) works when d already
// exists, and with parents a missing parent makes Path.mkdir climb to the
// first missing ancestor, whose EEXIST (a dangling symlink) or EROFS
// names that ancestor as written.
func (t *Table) readOnlyMkdir(ctx context.Context, call *message.OsCall, m *mnt, rel string) (reply, error) {
	type probe struct {
		fi    fs.FileInfo
		err   error // rel's stat error, nil when rel exists
		dirs  int   // how many leading components of rel are directories
		nextS error // the stat error of the component after them
		nextL error // its lstat error
	}
	comps := splitRel(rel)
	pr, err := run(ctx, t, "stat", func() (probe, error) {
		var pr probe
		if pr.fi, pr.err = m.low.Stat(rel); pr.err == nil || len(comps) == 0 {
			return pr, nil
		}
		if _, err := m.low.Lstat(rel); err == nil {
			// A symlink mkdir would not follow (its target missing, or
			// out of the root): the name exists.
			pr.fi, pr.err = nil, nil
			return pr, nil
		}
		pr.dirs, pr.nextS, pr.nextL = dirPrefix(m.low, comps)
		return pr, nil
	})
	var ce *canceledError
	up := len(comps) - pr.dirs - 1 // the ancestor after the directories
	switch {
	case errors.As(err, &ce):
		return reply{}, err
	case err != nil:
		return fail(toPy(err, call.Path)), nil
	case len(comps) == 0 && pr.err != nil:
		return fail(toPy(pr.err, call.Path)), nil
	case pr.err == nil && call.ExistOK && pr.fi != nil && pr.fi.IsDir():
		return ret(value.None()), nil
	case pr.err == nil:
		return fail(errnoError(syscall.EEXIST, call.Path)), nil
	case up == 0:
		// The parent is a directory: the mkdir itself is refused.
		return fail(toPy(errReadOnly, call.Path)), nil
	case pr.nextS == nil:
		// A non-directory on the way.
		return fail(errnoError(syscall.ENOTDIR, call.Path)), nil
	case !errors.Is(pr.nextS, fs.ErrNotExist):
		return fail(toPy(pr.nextS, call.Path)), nil
	case !call.Parents:
		return fail(errnoError(syscall.ENOENT, call.Path)), nil
	case pr.nextL == nil:
		// Path.mkdir(parents=True) retries on each parent in turn, with
		// exist_ok: a dangling symlink there exists, not as a directory.
		return fail(errnoError(syscall.EEXIST, writtenAncestor(call.Path, up))), nil
	}
	// The first missing ancestor is the one refused.
	return fail(toPy(errReadOnly, writtenAncestor(call.Path, up))), nil
}

// readOnlyLookups applies what Linux checks before a read-only file
// system's EROFS, for a change other than mkdir on a ReadOnly mount: a
// rename to another mount is refused as on any mount (EXDEV); the parent
// of each path (for rename the source's, then the target's when it is in
// this mount) is looked up, a
// missing one FileNotFoundError and a non-directory NotADirectoryError;
// then a write or an open for writing of a directory, or of a name
// written with a trailing slash, is IsADirectoryError. A nil result lets
// the caller refuse with EROFS.
func (t *Table) readOnlyLookups(ctx context.Context, call *message.OsCall, cwd string, m *mnt, rel string) (*pyError, error) {
	rename := call.Op == message.OpRename
	fail := func(e syscall.Errno) *pyError {
		if rename {
			return errnoError2(e, call.Path, call.Dst)
		}
		return errnoError(e, call.Path)
	}
	paths := []string{call.Path}
	if rename {
		switch dm, _ := t.find(virtualAbs(cwd, call.Dst)); {
		case dm == m:
			paths = append(paths, call.Dst)
		case dm != nil:
			return fail(syscall.EXDEV), nil
		}
	}
	for _, p := range paths {
		pm, prel := t.find(path.Dir(virtualAbs(cwd, p)))
		if pm != m {
			continue // the parent of the mount's root
		}
		kind, err := t.kindOf(ctx, m, prel, true)
		if err != nil {
			return nil, err
		}
		switch kind {
		case kindMissing:
			return fail(syscall.ENOENT), nil
		case kindNotDir, kindOther:
			return fail(syscall.ENOTDIR), nil
		}
	}
	switch call.Op {
	case message.OpUnlink, message.OpRmdir, message.OpRename:
		return nil, nil
	}
	if slashDir(call.Path) {
		return fail(syscall.EISDIR), nil
	}
	if kind, err := t.kindOf(ctx, m, rel, true); err != nil {
		return nil, err
	} else if kind == kindDir {
		return fail(syscall.EISDIR), nil
	}
	return nil, nil
}

// writtenAncestor is pathlib's parent of the path p as written, taken up
// times (PurePosixPath(p).parents[up-1]). When one of the components it
// drops is "..", the ancestor would not map to the cleaned path's prefix,
// and p is returned as written.
func writtenAncestor(p string, up int) string {
	q := pyPath(p)
	for range up {
		i := strings.LastIndexByte(q, '/')
		if q[i+1:] == ".." || q == "/" || q == "." {
			return p
		}
		switch {
		case i < 0:
			q = "."
		case i == 0:
			q = "/"
		default:
			q = q[:i]
		}
	}
	return q
}

// slashDir reports whether p, as written, ends in "/" or "/.": POSIX then
// requires its last component to be a directory. pathlib drops a trailing
// slash, but open() and the os functions pass the path as written.
func slashDir(p string) bool {
	return strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.")
}

// The kinds checkSlash and checkDots tell apart.
const (
	kindUnknown = iota // an error other than ENOENT or ENOTDIR: the operation reports it
	kindMissing
	kindNotDir // ENOTDIR: a file on the way to rel
	kindDir
	kindOther
)

// kindOf classifies rel. follow says whether a symlink in its last
// component is followed on the host, as the lookup of "name/" does for
// most calls; unlink and rename look at the entry itself, to which a
// symlink is not a directory (in an overlay, where symlinks are never
// followed, a symlink is then kindOther too). Only a cancellation is
// returned as an error.
func (t *Table) kindOf(ctx context.Context, m *mnt, rel string, follow bool) (int, error) {
	if m.ov != nil {
		if err := m.ov.lock(ctx); err != nil {
			return 0, err
		}
		defer m.ov.unlock()
		n, err := t.ovStat(ctx, m, rel)
		var ce *canceledError
		switch {
		case errors.As(err, &ce):
			return 0, err
		case errors.Is(err, syscall.ENOTDIR):
			return kindNotDir, nil
		case err != nil:
			return kindUnknown, nil
		}
		switch n.kind {
		case nkMissing:
			return kindMissing, nil
		case nkDir:
			return kindDir, nil
		case nkFile, nkSpecial:
			return kindOther, nil
		case nkLink:
			if !follow {
				return kindOther, nil
			}
		}
		return kindUnknown, nil
	}
	stat := m.low.Stat
	if !follow {
		stat = m.low.Lstat
	}
	fi, err := run(ctx, t, "stat", func() (fs.FileInfo, error) { return stat(rel) })
	var ce *canceledError
	switch {
	case errors.As(err, &ce):
		return 0, err
	case errors.Is(err, fs.ErrNotExist):
		return kindMissing, nil
	case errors.Is(err, syscall.ENOTDIR):
		return kindNotDir, nil
	case err != nil:
		return kindUnknown, nil
	case fi.IsDir():
		return kindDir, nil
	}
	return kindOther, nil
}

// checkSlash applies POSIX's rule for a path written with a trailing
// slash, before the operation runs on the cleaned path (which has lost
// it): reading, stat, unlink or rename of a non-directory "f/" is
// NotADirectoryError (as is renaming a non-directory to "d/"), and
// creating or writing "f/" is IsADirectoryError, so that nothing is
// removed, renamed or created where CPython would refuse. A nil result
// lets the operation run.
func (t *Table) checkSlash(ctx context.Context, call *message.OsCall, m *mnt, rel string) (*pyError, error) {
	src := slashDir(call.Path) && rel != "."
	dst := call.Op == message.OpRename && slashDir(call.Dst)
	if !src && !dst {
		return nil, nil
	}
	creating := false
	switch call.Op {
	case message.OpReadText, message.OpReadBytes, message.OpStat, message.OpUnlink, message.OpRename:
	case message.OpWriteText, message.OpWriteBytes, message.OpAppendText, message.OpAppendBytes:
		creating = true
	case message.OpOpen:
		creating = call.Mode != "r" && call.Mode != "rb"
	default:
		// mkdir, rmdir and iterdir want a directory anyway.
		return nil, nil
	}
	// unlink and rename look at the entry itself: "link/" is not a
	// directory there, even when the link leads to one.
	follow := call.Op != message.OpUnlink && call.Op != message.OpRename
	kind, err := t.kindOf(ctx, m, rel, follow)
	if err != nil {
		return nil, err
	}
	switch {
	case call.Op == message.OpRename:
		if kind == kindOther {
			return errnoError2(syscall.ENOTDIR, call.Path, call.Dst), nil
		}
	case creating && (kind == kindDir || kind == kindOther):
		return errnoError(syscall.EISDIR, call.Path), nil
	case creating && kind == kindMissing:
		// Where the parent is a directory; otherwise the operation fails
		// on the parent without creating anything.
		if pk, err := t.kindOf(ctx, m, path.Dir(rel), true); err != nil {
			return nil, err
		} else if pk == kindDir {
			return errnoError(syscall.EISDIR, call.Path), nil
		}
	case kind == kindOther:
		return errnoError(syscall.ENOTDIR, call.Path), nil
	}
	return nil, nil
}

// dotLast reports whether p, as written, ends (trailing slashes aside) in
// a "." or ".." component, and returns that component and the path before
// it, the directory Linux looks the component up in. A p of slashes
// alone is the root: last "/", before "/".
func dotLast(p string) (before, last string, ok bool) {
	q := strings.TrimRight(p, "/")
	if q == "" && p != "" {
		// "/" (or "//"): the root, which Linux treats as it does a dot
		// (its last component is not a name).
		return "/", "/", true
	}
	i := strings.LastIndexByte(q, '/')
	last = q[i+1:]
	if last != "." && last != ".." {
		return "", "", false
	}
	if i < 0 {
		return ".", last, true
	}
	return q[:i+1], last, true
}

// checkDots applies Linux's rule for a change to a path whose last
// component, as written, is "." or "..": the directory before that
// component must be found (FileNotFoundError or NotADirectoryError
// otherwise; mkdir with parents makes it instead), then rmdir refuses "."
// with EINVAL and ".." with ENOTEMPTY, rename refuses either end with
// EBUSY, unlink, a write or open for writing refuses with EISDIR, and
// mkdir runs on the cleaned path (an existing directory:
// FileExistsError). "/" itself (with a mount there) counts as such a
// component, as it does in Linux: rmdir refuses it with EBUSY, the rest
// as for a dot. The path is cleaned lexically before it is used, so
// without this check os.rmdir('d/.') would remove d,
// Path('a/b/..').rmdir() would remove a, os.unlink('link/.') would remove
// the symlink, and os.mkdir('new/.') would make new. A nil result lets the
// operation run.
func (t *Table) checkDots(ctx context.Context, call *message.OsCall, cwd string, m *mnt) (*pyError, error) {
	paths := []string{call.Path}
	switch call.Op {
	case message.OpRmdir, message.OpMkdir, message.OpUnlink, message.OpWriteText, message.OpWriteBytes,
		message.OpAppendText, message.OpAppendBytes:
	case message.OpOpen:
		if call.Mode == "r" || call.Mode == "rb" {
			return nil, nil
		}
	case message.OpRename:
		if dm, _ := t.find(virtualAbs(cwd, call.Dst)); dm != m {
			return nil, nil // refused as a cross-mount rename first
		}
		paths = append(paths, call.Dst)
	default:
		return nil, nil
	}
	fail := func(e syscall.Errno) *pyError {
		if call.Op == message.OpRename {
			return errnoError2(e, call.Path, call.Dst)
		}
		return errnoError(e, call.Path)
	}
	// rename(2) looks up both parents before its own refusals, so with a
	// dot or a slash on either end (checkSlash's refusal comes next) a
	// plain end's parent is looked up here too.
	parents := false
	for _, p := range paths {
		if _, _, ok := dotLast(p); ok || slashDir(p) {
			parents = call.Op == message.OpRename
		}
	}
	var dotErr syscall.Errno
	for _, p := range paths {
		before, last, ok := dotLast(p)
		if !ok && !parents {
			continue
		}
		dir := before
		if !ok {
			dir = path.Dir(virtualAbs(cwd, p))
		}
		if bm, rel := t.find(virtualAbs(cwd, dir)); bm == m {
			kind, err := t.kindOf(ctx, m, rel, true)
			if err != nil {
				return nil, err
			}
			switch {
			case kind == kindMissing && call.Op == message.OpMkdir && call.Parents:
				return nil, nil
			case kind == kindMissing:
				return fail(syscall.ENOENT), nil
			case kind == kindOther, kind == kindNotDir:
				return fail(syscall.ENOTDIR), nil
			}
		}
		switch {
		case !ok, dotErr != 0:
		case call.Op == message.OpMkdir:
			return nil, nil
		case call.Op != message.OpRename && call.Op != message.OpRmdir:
			dotErr = syscall.EISDIR
		case call.Op == message.OpRename:
			dotErr = syscall.EBUSY
		case last == "/":
			dotErr = syscall.EBUSY
		case last == ".":
			dotErr = syscall.EINVAL
		default:
			dotErr = syscall.ENOTEMPTY
		}
	}
	if dotErr == 0 {
		return nil, nil
	}
	return fail(dotErr), nil
}

// shallowWithMode returns a copy of call with its open mode normalized.
func shallowWithMode(call *message.OsCall, mode string) *message.OsCall {
	c := *call
	c.Mode = mode
	return &c
}

// rename answers arm 20: both ends must map into the same mount.
func (t *Table) rename(ctx context.Context, call *message.OsCall, cwd string, m *mnt, srcRel string) (reply, error) {
	src, dst := call.Path, call.Dst
	dm, dstRel := t.find(virtualAbs(cwd, dst))
	switch {
	case dm == nil:
		return fail(errnoError2(syscall.EACCES, src, dst)), nil
	case dm != m:
		return fail(errnoError2(syscall.EXDEV, src, dst)), nil
	}
	var err error
	if m.ov != nil {
		err = t.ovRename(ctx, m, srcRel, dstRel)
	} else {
		err = t.hostRename(ctx, m, srcRel, dstRel)
	}
	if err != nil {
		var ce *canceledError
		if errors.As(err, &ce) {
			return reply{}, err
		}
		if e, ok := renameErrno(err); ok {
			return fail(errnoError2(e, src, dst)), nil
		}
		return fail(toPy(err, src)), nil
	}
	// Path.rename returns the target as a new Path, as the caller wrote it.
	return ret(value.Path(pyPath(dst))), nil
}

// Answer builders shared by the two backends.

// textReply answers a text read with the decoded file, or its
// UnicodeDecodeError.
func textReply(data []byte) reply {
	s, e := decodeText(data)
	if e != nil {
		return fail(e)
	}
	return ret(value.Str(s))
}

// pathListReply answers iterdir: one Path per name, joined with dir as
// the sandbox wrote it.
func pathListReply(dir string, names []string) reply {
	var r reply
	ids := make([]value.NodeID, len(names))
	for i, n := range names {
		ids[i] = r.g.Add(value.Path(childPath(dir, n)))
	}
	r.root = r.g.Add(value.List(ids...))
	return r
}

// statReply answers stat with an os.stat_result named tuple.
func statReply(s statInfo) reply {
	var r reply
	r.root = s.node(&r.g)
	return r
}

// handleReply answers open with a file handle at position pos.
func handleReply(p, mode string, pos int64) reply {
	if pos < 0 {
		pos = 0
	}
	return ret(value.FileHandleNode(value.FileHandle{Path: p, Mode: mode, Position: uint64(pos)}))
}

// written is the count write_text/append_text (characters) or
// write_bytes/append_bytes (bytes) return.
func writtenCount(call *message.OsCall) int64 {
	if call.Op == message.OpWriteText || call.Op == message.OpAppendText {
		return int64(utf8.RuneCountInString(call.Text))
	}
	return int64(len(call.Data))
}

// payload is the bytes a write call stores.
func payload(call *message.OsCall) []byte {
	if call.Op == message.OpWriteText || call.Op == message.OpAppendText {
		return []byte(call.Text)
	}
	return call.Data
}

// Non-filesystem arms.

// getenv answers os.getenv(key, default): the value from Options.Env, or
// the default node copied into the answer.
func (t *Table) getenv(call *message.OsCall) (reply, error) {
	if v, ok := t.env[call.Key]; ok {
		return ret(value.Str(v)), nil
	}
	if int(call.Default) >= call.Values.Len() {
		if call.Values.Len() == 0 && call.Default == 0 {
			return ret(value.None()), nil
		}
		return reply{}, fmt.Errorf("mount: getenv default root %d out of range (%d nodes)", call.Default, call.Values.Len())
	}
	// copySubgraph relies on the arena's order (children below parents).
	if err := call.Values.CheckStructure(call.Default); err != nil {
		return reply{}, fmt.Errorf("mount: getenv default: %w", err)
	}
	var r reply
	root, ok := copySubgraph(&r.g, &call.Values, call.Default)
	if !ok {
		return fail(raise("TypeError", "the default of os.getenv() cannot be passed back to the sandbox")), nil
	}
	r.root = root
	return r, nil
}

// environ answers os.environ: a dict of Options.Env in key order.
func (t *Table) environ() reply {
	var r reply
	pairs := make([]value.Pair, 0, len(t.envKeys))
	for _, k := range t.envKeys {
		kid := r.g.Add(value.Str(k))
		vid := r.g.Add(value.Str(t.env[k]))
		pairs = append(pairs, value.Pair{Key: kid, Value: vid})
	}
	r.root = r.g.Add(value.Dict(pairs...))
	return r
}

// dateToday answers date.today() in loc.
func (t *Table) dateToday(loc *time.Location) reply {
	now := t.clock.Now().In(loc)
	if now.Year() < 1 || now.Year() > 9999 {
		return fail(raise("OverflowError", "date value out of range"))
	}
	return ret(value.DateNode(value.Date{Year: int32(now.Year()), Month: uint32(now.Month()), Day: uint32(now.Day())}))
}

// dateTimeNow answers datetime.now([tz]): naive in loc when tz is nil,
// otherwise aware at tz's fixed offset, carrying its name.
func (t *Table) dateTimeNow(tz *value.TimeZone, loc *time.Location) reply {
	now := t.clock.Now()
	var off *int32
	var name *string
	if tz == nil {
		now = now.In(loc)
	} else {
		if tz.Offset <= -86400 || tz.Offset >= 86400 {
			return fail(raise("ValueError", "offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24)."))
		}
		now = now.In(time.FixedZone("", int(tz.Offset)))
		o := tz.Offset
		off = &o
		if tz.Name != nil {
			n := *tz.Name
			name = &n
		}
	}
	if now.Year() < 1 || now.Year() > 9999 {
		return fail(raise("OverflowError", "date value out of range"))
	}
	return ret(value.DateTimeNode(value.DateTime{
		Year: int32(now.Year()), Month: uint32(now.Month()), Day: uint32(now.Day()),
		Hour: uint32(now.Hour()), Minute: uint32(now.Minute()), Second: uint32(now.Second()),
		Microsecond: uint32(now.Nanosecond() / 1000),
		Offset:      off, TZName: name,
	}))
}

// timeCall answers protocol 5's time arm, a time-module clock read under
// datetime=call_host, from Options.Clock: time.time as float Unix seconds
// and time.time_ns as int nanoseconds; time.monotonic and
// time.perf_counter (and their _ns forms) as the time elapsed on the clock
// since New, never negative (with the real clock, Go's monotonic reading).
// Any other caller is not handled.
func (t *Table) timeCall(caller string) reply {
	now := t.clock.Now()
	switch caller {
	case "time.time", "time.time_ns":
		// Exact at any date a Clock may give, beyond int64's 2262 too;
		// time.time divides the nanoseconds as CPython does.
		ns := new(big.Int).Mul(big.NewInt(now.Unix()), big.NewInt(1e9))
		ns.Add(ns, big.NewInt(int64(now.Nanosecond())))
		if caller == "time.time" {
			f, _ := new(big.Float).SetInt(ns).Float64()
			return ret(value.Float(f / 1e9))
		}
		return ret(value.BigIntNode(ns)) // an int node while it fits
	case "time.monotonic", "time.perf_counter":
		return ret(value.Float(max(now.Sub(t.start), 0).Seconds()))
	case "time.monotonic_ns", "time.perf_counter_ns":
		return ret(value.Int(int64(max(now.Sub(t.start), 0))))
	}
	return reply{notHandled: true}
}

// urandom answers os.urandom(n) from Options.Rand, up to MaxUrandom bytes.
func (t *Table) urandom(n uint64) reply {
	if n > MaxUrandom {
		return fail(raise("ValueError", "os.urandom(%d) exceeds the sandbox limit of %d bytes", n, MaxUrandom))
	}
	buf := make([]byte, n)
	t.randMu.Lock()
	_, err := io.ReadFull(t.rand, buf)
	t.randMu.Unlock()
	if err != nil {
		return fail(raise("OSError", "[Errno 5] Input/output error: os.urandom"))
	}
	return ret(value.Bytes(buf))
}

// copySubgraph copies the nodes reachable from root in src into dst and
// returns the new root. It reports false when a reachable node may not be
// sent to the worker (repr or cycle).
func copySubgraph(dst, src *value.Graph, root value.NodeID) (value.NodeID, bool) {
	reach := make(map[value.NodeID]bool)
	stack := []value.NodeID{root}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if reach[id] || int(id) >= src.Len() {
			continue
		}
		reach[id] = true
		src.Node(id).Children(func(c value.NodeID) { stack = append(stack, c) })
	}
	remap := make(map[value.NodeID]value.NodeID, len(reach))
	// Children have lower ids than their parents, so ascending order keeps
	// the copy in post-order.
	for id := value.NodeID(0); int(id) < src.Len(); id++ {
		if !reach[id] {
			continue
		}
		n := *src.Node(id)
		if n.Kind.OutputOnly() {
			return 0, false
		}
		n = n.MapRefs(func(c value.NodeID) value.NodeID { return remap[c] })
		remap[id] = dst.Add(n)
	}
	return remap[root], true
}

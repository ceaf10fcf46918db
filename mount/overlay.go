package mount

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The overlay's semantics are described in the package documentation
// ("Overlay mounts").

// entKind is the kind of an overlay entry.
type entKind uint8

// The entry kinds.
const (
	entFile entKind = iota + 1
	entDir
	entGone
)

// ovEntry is one overlay entry. Entries are immutable once stored: a change
// stores a new entry, so a content slice handed to a reply never changes.
type ovEntry struct {
	kind  entKind
	data  []byte
	mtime time.Time
}

// What overlay entries cost against MemoryLimit besides their paths and
// contents: each entry entryOverhead, and the index by parent directory
// indexLinkCost for each name it links and indexMapCost for each
// directory it holds names of (measured at up to 0.8 of these charges).
// A deep entry links the directories on its way too: a whiteout nine
// components deep in a host tree holds some 2.7 KB, where a flat 64
// bytes an entry was once charged.
const (
	entryOverhead = 192
	indexLinkCost = 64
	indexMapCost  = 320
)

// entryCost is what the entry stored at key costs against MemoryLimit,
// the index aside.
func entryCost(key string, e *ovEntry) int64 {
	if e == nil {
		return 0
	}
	return int64(len(key)) + entryOverhead + int64(len(e.data))
}

// overlay is an Overlay mount's in-memory state. Its lock (sem, see
// lock) serializes every overlay operation on the mount, host reads
// included (each bounded by OpTimeout); a call waiting for it gives up
// when its context ends.
type overlay struct {
	sem     chan struct{} // holds a token while the lock is held
	entries map[string]*ovEntry
	// kids indexes entries by parent: kids[dir] holds the names of the
	// entries directly in dir, and of the directories on the way to
	// deeper entries (a link dir→name exists while dir/name is an entry
	// or has linked names below it), so that a listing or a removal of a
	// tree costs what it touches rather than a scan of every entry.
	kids map[string]map[string]struct{}
	used int64
}

// newOverlay returns an empty overlay.
func newOverlay() *overlay {
	return &overlay{sem: make(chan struct{}, 1), entries: make(map[string]*ovEntry), kids: make(map[string]map[string]struct{})}
}

// index links the new entry key, and its ancestors, into kids, and
// returns what the new links and maps cost.
func (o *overlay) index(key string) int64 {
	var cost int64
	for p := key; p != "."; {
		dir, name := path.Dir(p), path.Base(p)
		k := o.kids[dir]
		if k == nil {
			k = make(map[string]struct{})
			o.kids[dir] = k
			cost += indexMapCost
		}
		if _, ok := k[name]; ok {
			break // so are the ancestors
		}
		k[name] = struct{}{}
		cost += indexLinkCost
		p = dir
	}
	return cost
}

// unindex unlinks the deleted entry key from kids, and each ancestor
// left with neither an entry nor links below it, and returns what the
// links and maps removed cost.
func (o *overlay) unindex(key string) int64 {
	var cost int64
	for p := key; p != "."; {
		if _, ok := o.entries[p]; ok || len(o.kids[p]) > 0 {
			break
		}
		dir := path.Dir(p)
		if k := o.kids[dir]; k != nil {
			if _, ok := k[path.Base(p)]; ok {
				delete(k, path.Base(p))
				cost += indexLinkCost
			}
			if len(k) == 0 {
				delete(o.kids, dir)
				cost += indexMapCost
			}
		}
		p = dir
	}
	return cost
}

// childKey is the entry key of name in the directory dir.
func childKey(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// ovState is what the overlay says about a path.
type ovState uint8

// The overlay states.
const (
	stHost    ovState = iota // no entry: ask the host
	stEntry                  // a file or directory entry
	stMissing                // removed, or below a removed or session-made directory
	stNotDir                 // below a file entry
)

// look reports what the overlay says about rel. The lock must be held. Each
// ancestor is a slice of rel, not a new string: a path k components deep
// costs k map lookups and no allocation.
func (o *overlay) look(rel string) (*ovEntry, ovState) {
	if len(o.entries) == 0 {
		return nil, stHost
	}
	hidden := false
	if rel != "." {
		for i := 0; i < len(rel); i++ {
			if rel[i] != '/' {
				continue
			}
			if e := o.entries[rel[:i]]; e != nil {
				switch e.kind {
				case entGone:
					return nil, stMissing
				case entFile:
					return nil, stNotDir
				case entDir:
					hidden = true
				}
			}
		}
	}
	if e := o.entries[rel]; e != nil {
		if e.kind == entGone {
			return nil, stMissing
		}
		return e, stEntry
	}
	if hidden {
		return nil, stMissing
	}
	return nil, stHost
}

// hostHidden reports whether an ancestor of rel is a directory entry,
// which hides whatever the host has at and below it. The lock must be held.
func (o *overlay) hostHidden(rel string) bool {
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		if e := o.entries[rel[:i]]; e != nil && e.kind == entDir {
			return true
		}
	}
	return false
}

// ovForget records in b the removal of rel, whose node is n: a whiteout
// when the host may have something at rel for the overlay to hide, and no
// entry at all when rel is only the session's (an entry the host lacks,
// or one under a session-made directory), so that what the session made
// and removed is not charged against MemoryLimit for the rest of the
// session. Only a cancellation is returned as an error; a host that cannot
// tell keeps the whiteout. The lock must be held.
func (t *Table) ovForget(ctx context.Context, m *mnt, b *batch, rel string, n ovNode) error {
	if n.entry == nil {
		b.set(rel, &ovEntry{kind: entGone}) // the host's
		return nil
	}
	if m.ov.hostHidden(rel) {
		b.del(rel)
		return nil
	}
	_, err := run(ctx, t, "lstat", func() (fs.FileInfo, error) { return lstatNoLinks(m.low, rel) })
	var ce *canceledError
	switch {
	case errors.As(err, &ce):
		return err
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		b.del(rel)
	default:
		b.set(rel, &ovEntry{kind: entGone})
	}
	return nil
}

// batch is a set of overlay changes applied together, after their memory
// cost was checked.
type batch struct {
	o   *overlay
	ops []batchOp
}

// batchOp stores (or, with a nil entry, deletes) the entry at key.
type batchOp struct {
	key string
	e   *ovEntry // nil deletes
}

// set stores e at key.
func (b *batch) set(key string, e *ovEntry) { b.ops = append(b.ops, batchOp{key, e}) }

// del deletes the entry at key.
func (b *batch) del(key string) { b.ops = append(b.ops, batchOp{key, nil}) }

// delTree deletes every entry strictly below key, found through kids.
func (b *batch) delTree(key string) {
	for name := range b.o.kids[key] {
		child := childKey(key, name)
		if _, ok := b.o.entries[child]; ok {
			b.del(child)
		}
		b.delTree(child)
	}
}

// commit applies the batch if the mount's memory stays within limit, and
// otherwise leaves the overlay as it was. The charge is taken from the
// batch applied, the index's growth included, and the batch undone when
// it is over the limit (what the batch unlinks from the index counts
// too, so that renaming a tree near the limit is not refused).
func (b *batch) commit(limit int64) error {
	before := b.o.used
	olds := make([]*ovEntry, len(b.ops))
	for i, op := range b.ops {
		olds[i] = b.o.entries[op.key]
		b.o.put(op.key, op.e)
	}
	if b.o.used > limit && b.o.used > before {
		for i := len(b.ops) - 1; i >= 0; i-- {
			b.o.put(b.ops[i].key, olds[i])
		}
		b.o.used = before // as it is, the same entries being back
		return &memoryError{limit}
	}
	return nil
}

// put stores e at key, or deletes the entry at key when e is nil, keeping
// the index and the charge up to date.
func (o *overlay) put(key string, e *ovEntry) {
	old, had := o.entries[key]
	o.used += entryCost(key, e) - entryCost(key, old)
	switch {
	case e == nil && had:
		delete(o.entries, key)
		o.used -= o.unindex(key)
	case e != nil:
		if !had {
			o.used += o.index(key)
		}
		o.entries[key] = e
	}
}

// nodeKind classifies a path in the merged view.
type nodeKind uint8

// The node kinds.
const (
	nkMissing nodeKind = iota
	nkFile
	nkDir
	nkLink
	nkSpecial
)

// ovNode is a path in the merged view: an overlay entry, or host metadata.
type ovNode struct {
	kind  nodeKind
	entry *ovEntry    // nil when the host answers
	fi    fs.FileInfo // host lstat, when the host answers
}

// ovStat classifies rel in the merged view. The lock must be held.
func (t *Table) ovStat(ctx context.Context, m *mnt, rel string) (ovNode, error) {
	e, st := m.ov.look(rel)
	switch st {
	case stEntry:
		if e.kind == entDir {
			return ovNode{kind: nkDir, entry: e}, nil
		}
		return ovNode{kind: nkFile, entry: e}, nil
	case stMissing:
		return ovNode{kind: nkMissing}, nil
	case stNotDir:
		return ovNode{}, syscall.ENOTDIR
	}
	fi, err := run(ctx, t, "lstat", func() (fs.FileInfo, error) { return lstatNoLinks(m.low, rel) })
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ovNode{kind: nkMissing}, nil
		}
		return ovNode{}, err
	}
	n := ovNode{fi: fi}
	switch mode := fi.Mode(); {
	case mode&fs.ModeSymlink != 0:
		n.kind = nkLink
	case mode.IsDir():
		n.kind = nkDir
	case mode.IsRegular():
		n.kind = nkFile
	default:
		n.kind = nkSpecial
	}
	return n, nil
}

// lstatNoLinks lstats rel after checking, component by component, that
// none of its ancestors is a symlink (errSymlink) or a non-directory
// (ENOTDIR). The last component is not followed.
func lstatNoLinks(low lower, rel string) (fs.FileInfo, error) {
	comps := splitRel(rel)
	if len(comps) < 2 {
		return low.Lstat(rel)
	}
	w := lowerWalk(low)
	defer w.reset()
	for _, c := range comps[:len(comps)-1] {
		fi, err := w.cur.Lstat(c)
		if err != nil {
			return nil, err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return nil, errSymlink
		case !fi.IsDir():
			return nil, syscall.ENOTDIR
		}
		if err := w.enter(c); err != nil {
			return nil, err
		}
	}
	return w.cur.Lstat(comps[len(comps)-1])
}

// openNoLinks opens rel (which must not be, or pass through, a symlink)
// for reading, as a directory when dir is set, and verifies that the
// handle is the very file that was checked.
func openNoLinks(low lower, rel string, dir bool) (lowerFile, fs.FileInfo, error) {
	fi, err := lstatNoLinks(low, rel)
	if err != nil {
		return nil, nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, nil, errSymlink
	}
	if !dir {
		if err := regularOrErr(fi); err != nil {
			return nil, nil, err
		}
	} else if !fi.IsDir() {
		return nil, nil, syscall.ENOTDIR
	}
	f, ffi, err := low.open(rel, dir)
	if err != nil {
		return nil, nil, err
	}
	if !low.sameFile(fi, ffi) {
		f.Close()
		return nil, nil, errSymlink // swapped since the check
	}
	return f, ffi, nil
}

// ovHostRead reads a host file in an overlay mount.
func (t *Table) ovHostRead(ctx context.Context, m *mnt, rel string) ([]byte, error) {
	return run(ctx, t, "read", func() ([]byte, error) {
		f, fi, err := openNoLinks(m.low, rel, false)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readLimited(f, fi.Size(), m.memLimit)
	})
}

// ovHostList lists a host directory in an overlay mount, without symlinks.
func (t *Table) ovHostList(ctx context.Context, m *mnt, rel string) ([]string, error) {
	return run(ctx, t, "readdir", func() ([]string, error) {
		d, _, err := openNoLinks(m.low, rel, true)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		return readNames(d, m.memLimit, func(e fs.DirEntry) bool { return e.Type()&fs.ModeSymlink == 0 })
	})
}

// ovHostHidden lists what a host directory in an overlay mount holds that
// its listing leaves out: the symlinks, which it returns, and names that
// are not valid UTF-8, which it reports as odd (the sandbox can neither
// see nor remove them). It reads at most maxScanned entries, as a listing
// does.
func (t *Table) ovHostHidden(ctx context.Context, m *mnt, rel string) (links []string, odd bool, err error) {
	type hidden struct {
		links []string
		odd   bool
	}
	h, err := run(ctx, t, "readdir", func() (hidden, error) {
		d, _, err := openNoLinks(m.low, rel, true)
		if err != nil {
			return hidden{}, err
		}
		defer d.Close()
		var h hidden
		var used, scanned int64
		for {
			ents, err := d.ReadDir(256)
			if scanned += int64(len(ents)); scanned > maxScanned(m.memLimit) {
				return hidden{}, &tooLargeError{m.memLimit}
			}
			for _, e := range ents {
				switch {
				case !utf8.ValidString(e.Name()):
					return hidden{odd: true}, nil
				case e.Type()&fs.ModeSymlink != 0:
					used += int64(len(e.Name())) + listEntryCost
					if used > m.memLimit {
						return hidden{}, &tooLargeError{m.memLimit}
					}
					h.links = append(h.links, e.Name())
				}
			}
			if err == io.EOF || (err == nil && len(ents) == 0) {
				return h, nil
			}
			if err != nil {
				return hidden{}, err
			}
		}
	})
	return h.links, h.odd, err
}

// ovDirEmpty reports whether the directory rel, whose node is n, is empty
// in the merged view and, when the host's directory shows through, holds
// nothing the listing leaves out (a symlink the session has not unlinked,
// a name that is not valid UTF-8): removing or replacing such a directory
// would hide host data the sandbox never saw, where the host would refuse
// with ENOTEMPTY. The lock must be held.
func (t *Table) ovDirEmpty(ctx context.Context, m *mnt, rel string, n ovNode) (bool, error) {
	names, err := t.ovList(ctx, m, rel)
	switch {
	case err != nil || len(names) > 0:
		return false, err
	case n.entry != nil:
		return true, nil // the session's directory hides the host's
	}
	unseen, err := t.ovUnseen(ctx, m, rel)
	return !unseen && err == nil, err
}

// ovUnseen reports whether the host directory rel, shown through the
// overlay, holds an entry the session can neither see nor remove: a
// symlink it has not unlinked, or a name that is not valid UTF-8. The lock
// must be held.
func (t *Table) ovUnseen(ctx context.Context, m *mnt, rel string) (bool, error) {
	links, odd, err := t.ovHostHidden(ctx, m, rel)
	if err != nil || odd {
		return odd, err
	}
	for _, name := range links {
		if m.ov.entries[childKey(rel, name)] == nil {
			return true, nil
		}
	}
	return false, nil
}

// ovList lists rel in the merged view. The lock must be held.
func (t *Table) ovList(ctx context.Context, m *mnt, rel string) ([]string, error) {
	n, err := t.ovStat(ctx, m, rel)
	if err != nil {
		return nil, err
	}
	switch n.kind {
	case nkMissing:
		return nil, syscall.ENOENT
	case nkLink:
		return nil, errSymlink
	case nkFile, nkSpecial:
		return nil, syscall.ENOTDIR
	}
	set := make(map[string]bool)
	if n.entry == nil {
		names, err := t.ovHostList(ctx, m, rel)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			set[name] = true
		}
	}
	for name := range m.ov.kids[rel] {
		e := m.ov.entries[childKey(rel, name)]
		if e == nil {
			continue
		}
		if e.kind == entGone {
			delete(set, name)
		} else {
			set[name] = true
		}
	}
	names := make([]string, 0, len(set))
	var used int64
	for name := range set {
		used += int64(len(name)) + listEntryCost
		if used > m.memLimit {
			return nil, &tooLargeError{m.memLimit}
		}
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

// ovContent returns the content of a file node (an entry, or the host file
// read now).
func (t *Table) ovContent(ctx context.Context, m *mnt, rel string, n ovNode) ([]byte, error) {
	if n.entry != nil {
		// Clipped to its length: the spare capacity belongs to the entry
		// (see appendContent), never to an answer or another entry.
		d := n.entry.data
		return d[:len(d):len(d)], nil
	}
	return t.ovHostRead(ctx, m, rel)
}

// appendContent returns base followed by data. When base has the room,
// data is copied into its spare capacity and base's backing array is
// reused: no slice of the first len(base) bytes sees a change, and only
// the entry that base came from may hold that spare capacity. Otherwise
// the result is a new array with a quarter of spare capacity, so that a
// file written by many small appends (f.write on a handle, one OsCall per
// write) is copied an amortized constant number of times instead of once
// per write.
func appendContent(base, data []byte) []byte {
	need := len(base) + len(data)
	if need <= cap(base) {
		out := base[:need]
		copy(out[len(base):], data)
		return out
	}
	out := make([]byte, need, need+need/4)
	copy(out, base)
	copy(out[len(base):], data)
	return out
}

// fileErr is the error for using node n as a regular file.
func fileErr(n ovNode) error {
	switch n.kind {
	case nkMissing:
		return syscall.ENOENT
	case nkDir:
		return syscall.EISDIR
	case nkLink:
		return errSymlink
	case nkSpecial:
		return errSpecial
	}
	return nil
}

// ovParentDir checks that rel's parent is a directory in the merged view.
func (t *Table) ovParentDir(ctx context.Context, m *mnt, rel string) error {
	pn, err := t.ovStat(ctx, m, path.Dir(rel))
	if err != nil {
		return err
	}
	switch pn.kind {
	case nkDir:
		return nil
	case nkMissing:
		return syscall.ENOENT
	case nkLink:
		return errSymlink
	}
	return syscall.ENOTDIR
}

// overlayOp answers a filesystem call (other than rename) on an Overlay
// mount.
func (t *Table) overlayOp(ctx context.Context, call *message.OsCall, m *mnt, rel string) (reply, error) {
	o := m.ov
	if err := o.lock(ctx); err != nil {
		return reply{}, err
	}
	defer o.unlock()

	switch call.Op {
	case message.OpExists, message.OpIsFile, message.OpIsDir, message.OpIsSymlink:
		n, err := t.ovStat(ctx, m, rel)
		if err != nil {
			return reply{}, err
		}
		var b bool
		switch call.Op {
		case message.OpExists:
			b = n.kind != nkMissing && n.kind != nkLink
		case message.OpIsFile:
			b = n.kind == nkFile
		case message.OpIsDir:
			b = n.kind == nkDir
		case message.OpIsSymlink:
			b = n.kind == nkLink
		}
		return ret(value.Bool(b)), nil

	case message.OpReadText, message.OpReadBytes:
		n, err := t.ovStat(ctx, m, rel)
		if err != nil {
			return reply{}, err
		}
		if err := fileErr(n); err != nil {
			return reply{}, err
		}
		data, err := t.ovContent(ctx, m, rel, n)
		if err != nil {
			return reply{}, err
		}
		if call.Op == message.OpReadText {
			return textReply(data), nil
		}
		return ret(value.Bytes(data)), nil

	case message.OpStat:
		n, err := t.ovStat(ctx, m, rel)
		if err != nil {
			return reply{}, err
		}
		switch {
		case n.kind == nkMissing:
			return reply{}, syscall.ENOENT
		case n.kind == nkLink:
			return reply{}, errSymlink
		case n.entry != nil:
			return statReply(syntheticStat(n.kind == nkDir, int64(len(n.entry.data)), n.entry.mtime)), nil
		}
		return statReply(m.low.statOf(n.fi)), nil

	case message.OpIterdir:
		names, err := t.ovList(ctx, m, rel)
		if err != nil {
			return reply{}, err
		}
		return pathListReply(call.Path, names), nil

	case message.OpResolve:
		// Symlinks are not followed in overlay mounts: the lexical answer.
		return ret(value.Path(joinVirtual(m.vpath, rel))), nil

	case message.OpUnlink, message.OpRmdir:
		if rel == "." {
			return reply{}, errMountRoot
		}
		n, err := t.ovStat(ctx, m, rel)
		if err != nil {
			return reply{}, err
		}
		b := &batch{o: o}
		if call.Op == message.OpUnlink {
			switch n.kind {
			case nkMissing:
				return reply{}, syscall.ENOENT
			case nkDir:
				return reply{}, syscall.EISDIR
			}
		} else {
			switch n.kind {
			case nkMissing:
				return reply{}, syscall.ENOENT
			case nkDir:
			default:
				return reply{}, syscall.ENOTDIR
			}
			if empty, err := t.ovDirEmpty(ctx, m, rel, n); err != nil {
				return reply{}, err
			} else if !empty {
				return reply{}, syscall.ENOTEMPTY
			}
			b.delTree(rel)
		}
		if err := t.ovForget(ctx, m, b, rel, n); err != nil {
			return reply{}, err
		}
		if err := b.commit(m.memLimit); err != nil {
			return reply{}, err
		}
		return ret(value.None()), nil

	case message.OpWriteText, message.OpWriteBytes, message.OpAppendText, message.OpAppendBytes:
		appendMode := call.Op == message.OpAppendText || call.Op == message.OpAppendBytes
		if _, err := t.ovWrite(ctx, m, rel, payload(call), appendMode); err != nil {
			return reply{}, err
		}
		return ret(value.Int(writtenCount(call))), nil

	case message.OpOpen:
		var pos int64
		switch call.Mode {
		case "r", "rb":
			n, err := t.ovStat(ctx, m, rel)
			if err != nil {
				return reply{}, err
			}
			if err := fileErr(n); err != nil {
				return reply{}, err
			}
		case "w", "wb":
			if _, err := t.ovWrite(ctx, m, rel, nil, false); err != nil {
				return reply{}, err
			}
		case "a", "ab":
			size, err := t.ovWrite(ctx, m, rel, nil, true)
			if err != nil {
				return reply{}, err
			}
			pos = size
		}
		return handleReply(call.Path, call.Mode, pos), nil

	case message.OpMkdir:
		if err := t.ovMkdir(ctx, m, rel, call.Parents, call.ExistOK); err != nil {
			return reply{}, err
		}
		return ret(value.None()), nil
	}
	return reply{notHandled: true}, nil
}

// ovWrite stores data at rel (appended to the current content when
// appendMode), copying a host file into memory on the first append. It
// returns the new size. The lock must be held.
func (t *Table) ovWrite(ctx context.Context, m *mnt, rel string, data []byte, appendMode bool) (int64, error) {
	if rel == "." {
		return 0, syscall.EISDIR
	}
	if err := t.ovParentDir(ctx, m, rel); err != nil {
		return 0, err
	}
	n, err := t.ovStat(ctx, m, rel)
	if err != nil {
		return 0, err
	}
	if n.kind != nkMissing {
		if err := fileErr(n); err != nil {
			return 0, err
		}
	}
	var base []byte
	switch {
	case !appendMode || n.kind != nkFile:
	case n.entry != nil:
		// The entry's own array, spare capacity included: the entry is
		// replaced below, and its content stays as it was.
		base = n.entry.data
	default:
		if base, err = t.ovContent(ctx, m, rel, n); err != nil {
			return 0, err
		}
	}
	if !m.reserve(int64(len(data))) {
		return 0, errWriteLimit
	}
	var content []byte
	if appendMode {
		content = appendContent(base, data)
	} else {
		content = append([]byte(nil), data...)
	}
	b := &batch{o: m.ov}
	b.set(rel, &ovEntry{kind: entFile, data: content, mtime: t.clock.Now()})
	if err := b.commit(m.memLimit); err != nil {
		m.refund(int64(len(data)))
		return 0, err
	}
	return int64(len(content)), nil
}

// ovMkdir follows Path.mkdir in the merged view. The lock must be held.
func (t *Table) ovMkdir(ctx context.Context, m *mnt, rel string, parents, existOK bool) error {
	err := t.ovMkdirOne(ctx, m, rel)
	if err == nil {
		return nil
	}
	if parents && rel != "." && errors.Is(err, syscall.ENOENT) {
		if err = t.ovMkdirParents(ctx, m, rel); err == nil {
			err = t.ovMkdirOne(ctx, m, rel)
		}
	}
	if existOK && errors.Is(err, syscall.EEXIST) {
		if n, serr := t.ovStat(ctx, m, rel); serr == nil && n.kind == nkDir {
			return nil
		}
	}
	return err
}

// ovMkdirParents makes the missing ancestors of rel, in one batch. It
// walks down the ancestors once (the overlay's entries, then the host
// through a rootWalk), so that a path k components deep costs O(k) work;
// making each ancestor with ovMkdirOne, which looks up the whole path
// each time, cost work cubic in the depth. The lock must be held.
func (t *Table) ovMkdirParents(ctx context.Context, m *mnt, rel string) error {
	o := m.ov
	comps := splitRel(rel)
	anc := len(comps) - 1 // rel's ancestors are prefixes 0 .. anc-1
	ends := make([]int, anc)
	end := -1
	for j := range anc {
		end += 1 + len(comps[j])
		ends[j] = end
	}
	prefix := func(j int) string { return rel[:ends[j]] }

	// The ancestors before the first overlay entry are the host's.
	s := anc
	for j := range anc {
		if o.entries[prefix(j)] != nil {
			s = j
			break
		}
	}
	hostComps := comps[:s]
	missing, err := run(ctx, t, "lstat", func() (int, error) {
		w := lowerWalk(m.low)
		defer w.reset()
		for i, c := range hostComps {
			fi, err := w.cur.Lstat(c)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return i, nil
			case err != nil:
				return 0, err
			case fi.Mode()&fs.ModeSymlink != 0:
				return 0, errSymlink
			case !fi.IsDir():
				return 0, syscall.ENOTDIR
			}
			if err := w.enter(c); err != nil {
				return 0, err
			}
		}
		return -1, nil
	})
	if err != nil {
		return err
	}
	first := missing
	if first < 0 {
		// Below the first entry, look's rules: a removed or file entry
		// ends the walk, a directory entry hides the host below it.
		first = anc
		for j := s; j < anc; j++ {
			e := o.entries[prefix(j)]
			if e == nil || e.kind == entGone {
				first = j
				break
			}
			if e.kind == entFile {
				return syscall.ENOTDIR
			}
		}
	}
	b := &batch{o: o}
	now := t.clock.Now()
	for j := first; j < anc; j++ {
		switch e := o.entries[prefix(j)]; {
		case e == nil || e.kind == entGone:
			b.set(prefix(j), &ovEntry{kind: entDir, mtime: now})
		case e.kind == entFile:
			return syscall.ENOTDIR
		}
	}
	return b.commit(m.memLimit)
}

// ovMkdirOne makes the single directory rel, whose parent must exist.
// The lock must be held.
func (t *Table) ovMkdirOne(ctx context.Context, m *mnt, rel string) error {
	if rel == "." {
		return syscall.EEXIST
	}
	if err := t.ovParentDir(ctx, m, rel); err != nil {
		return err
	}
	n, err := t.ovStat(ctx, m, rel)
	if err != nil {
		return err
	}
	if n.kind != nkMissing {
		return syscall.EEXIST
	}
	b := &batch{o: m.ov}
	b.set(rel, &ovEntry{kind: entDir, mtime: t.clock.Now()})
	return b.commit(m.memLimit)
}

// snapItem is one entry of a directory tree copied for a rename.
type snapItem struct {
	sub string // path below the renamed directory
	e   *ovEntry
}

// ovSnapshot copies the merged tree below rel, whose node is n (host
// files are read now), bounded by the mount's memory limit. A host
// directory in the tree that holds an entry the copy cannot (see
// ovUnseen) fails with errSymlink. The lock must be held.
func (t *Table) ovSnapshot(ctx context.Context, m *mnt, rel string, n ovNode, sub string, out *[]snapItem, used *int64) error {
	names, err := t.ovList(ctx, m, rel)
	if err != nil {
		return err
	}
	if n.entry == nil {
		if unseen, err := t.ovUnseen(ctx, m, rel); err != nil {
			return err
		} else if unseen {
			return errSymlink
		}
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return &canceledError{err: err}
		}
		child := path.Join(rel, name)
		csub := path.Join(sub, name)
		n, err := t.ovStat(ctx, m, child)
		if err != nil {
			return err
		}
		switch n.kind {
		case nkDir:
			*out = append(*out, snapItem{csub, &ovEntry{kind: entDir, mtime: t.clock.Now()}})
			if err := t.ovSnapshot(ctx, m, child, n, csub, out, used); err != nil {
				return err
			}
		case nkFile:
			data, err := t.ovContent(ctx, m, child, n)
			if err != nil {
				return err
			}
			mt := t.clock.Now()
			if n.entry != nil {
				mt = n.entry.mtime
			}
			*out = append(*out, snapItem{csub, &ovEntry{kind: entFile, data: data, mtime: mt}})
			*used += int64(len(data))
		case nkSpecial:
			return errSpecial
		}
		*used += int64(len(csub)) + entryOverhead
		if *used > m.memLimit {
			return &memoryError{m.memLimit}
		}
	}
	return nil
}

// ovRename renames in the merged view, with rename(2)'s rules.
func (t *Table) ovRename(ctx context.Context, m *mnt, src, dst string) error {
	if src == "." || dst == "." {
		return errMountRoot
	}
	o := m.ov
	if err := o.lock(ctx); err != nil {
		return err
	}
	defer o.unlock()

	// rename(2)'s order: both parents are looked up before either last
	// component, so a bad target directory wins over a missing source.
	if err := t.ovParentDir(ctx, m, src); err != nil {
		return err
	}
	if err := t.ovParentDir(ctx, m, dst); err != nil {
		return err
	}
	sn, err := t.ovStat(ctx, m, src)
	if err != nil {
		return err
	}
	switch sn.kind {
	case nkMissing:
		return syscall.ENOENT
	case nkLink:
		return errSymlink
	case nkSpecial:
		return errSpecial
	}
	if src == dst {
		return nil
	}
	if strings.HasPrefix(src, dst+"/") {
		// A target that holds the source is not empty; rename(2) says so
		// before it compares their types.
		return syscall.ENOTEMPTY
	}
	dn, err := t.ovStat(ctx, m, dst)
	if err != nil {
		return err
	}
	b := &batch{o: o}
	if sn.kind == nkFile {
		if dn.kind == nkDir {
			return syscall.EISDIR
		}
		data, err := t.ovContent(ctx, m, src, sn)
		if err != nil {
			return err
		}
		mt := t.clock.Now()
		if sn.entry != nil {
			mt = sn.entry.mtime
		}
		b.set(dst, &ovEntry{kind: entFile, data: data, mtime: mt})
		if err := t.ovForget(ctx, m, b, src, sn); err != nil {
			return err
		}
		return b.commit(m.memLimit)
	}

	// A directory.
	if strings.HasPrefix(dst, src+"/") {
		return syscall.EINVAL
	}
	switch dn.kind {
	case nkMissing:
	case nkDir:
		if empty, err := t.ovDirEmpty(ctx, m, dst, dn); err != nil {
			return err
		} else if !empty {
			return syscall.ENOTEMPTY
		}
	default:
		return syscall.ENOTDIR
	}
	var items []snapItem
	var used int64
	if err := t.ovSnapshot(ctx, m, src, sn, "", &items, &used); err != nil {
		return err
	}
	b.delTree(dst)
	b.set(dst, &ovEntry{kind: entDir, mtime: t.clock.Now()})
	for _, it := range items {
		b.set(dst+"/"+it.sub, it.e)
	}
	b.delTree(src)
	if err := t.ovForget(ctx, m, b, src, sn); err != nil {
		return err
	}
	return b.commit(m.memLimit)
}

// MemoryUsed reports the bytes the overlay mount at virtual path vp has
// charged against its MemoryLimit (see "Overlay mounts" in the package
// documentation: spare capacity of appended files is not charged), and
// false when no overlay mount has that virtual path.
func (t *Table) MemoryUsed(vp string) (int64, bool) {
	vp = path.Clean(vp)
	for _, m := range t.mounts {
		if m.vpath == vp && m.ov != nil {
			m.ov.sem <- struct{}{}
			defer m.ov.unlock()
			return m.ov.used, true
		}
	}
	return 0, false
}

// lock takes the overlay's lock, or gives up with a not-started
// *canceledError when ctx ends first: a call waiting behind another
// session's slow host read is canceled with its own context.
func (o *overlay) lock(ctx context.Context) error {
	select {
	case o.sem <- struct{}{}:
		return nil
	default:
	}
	select {
	case o.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &canceledError{err: ctx.Err(), notStarted: true}
	}
}

// unlock releases the lock lock took.
func (o *overlay) unlock() { <-o.sem }

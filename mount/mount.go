package mount

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Mode is a mount's access mode.
//
// It is a plain value, safe for concurrent use.
type Mode int

// The access modes.
const (
	// ReadOnly mounts answer reads from the host directory (or the FS)
	// and refuse every change with PermissionError.
	ReadOnly Mode = iota
	// ReadWrite mounts read and change the host directory. An FS cannot
	// be mounted ReadWrite.
	ReadWrite
	// Overlay mounts read the host directory (or the FS) and keep every
	// change in memory, never touching the host (or the FS). Symlinks
	// there are not followed.
	Overlay
)

// String returns the mode's spec spelling: "ro", "rw" or "overlay".
func (m Mode) String() string {
	switch m {
	case ReadOnly:
		return "ro"
	case ReadWrite:
		return "rw"
	case Overlay:
		return "overlay"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Default limits and sizes.
const (
	// DefaultWriteLimit is the per-session write budget of a mount whose
	// WriteLimit is 0.
	DefaultWriteLimit int64 = 64 << 20
	// DefaultEntryLimit is the number of files and directories a ReadWrite
	// mount whose EntryLimit is 0 lets a session add to the host.
	DefaultEntryLimit int64 = 10000
	// DefaultMemoryLimit is the overlay memory budget (and the largest single
	// read) of a mount whose MemoryLimit is 0.
	DefaultMemoryLimit int64 = 64 << 20
	// DefaultOpTimeout bounds each host filesystem operation when
	// Options.OpTimeout is 0.
	DefaultOpTimeout = 10 * time.Second
	// MaxUrandom is the largest os.urandom request answered; larger ones
	// raise ValueError.
	MaxUrandom = 1 << 20
)

// Mount maps a host directory, or a Go file system, to a virtual path in
// the sandbox.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type Mount struct {
	// HostDir is the host directory. It must exist and be a directory when
	// the table is built; it is opened once, then used through its handle.
	// Exactly one of HostDir and FS is set.
	HostDir string
	// FS is a Go file system (an embed.FS, a testing/fstest.MapFS, a
	// *zip.Reader, or any fs.FS) shown at VirtualPath in place of a host
	// directory; its root "." is the mount's root. Exactly one of HostDir
	// and FS is set. Its Mode is ReadOnly or Overlay (the session's
	// changes in memory over it); ReadWrite is refused with
	// ErrReadWriteFS, as an fs.FS cannot be written. The FS is only read,
	// from the goroutines of concurrent OS calls, so it must be safe for
	// concurrent reads (the standard library's are). See "Go file
	// systems" in the package documentation for what it answers.
	FS fs.FS
	// VirtualPath is the absolute path at which the sandbox sees HostDir
	// or FS.
	VirtualPath string
	// Mode is the access mode.
	Mode Mode
	// WriteLimit bounds the bytes written through this mount per session
	// (per Table). 0 means DefaultWriteLimit; there is no unlimited setting.
	WriteLimit int64
	// EntryLimit bounds the entries a ReadWrite mount adds to the host
	// per session (per Table): each directory made (Path.mkdir with
	// parents counts every one) and each file a write or open for writing
	// creates counts one, and each file or directory removed gives one
	// back, so that the host directory never holds more than EntryLimit
	// entries beyond what it held. Once spent, creating raises OSError
	// "[Errno 122] Disk quota exceeded", as an inode quota does, after the
	// refusals Linux reports first (a missing parent, an existing name).
	// 0 means DefaultEntryLimit; there is no unlimited setting. ReadOnly
	// mounts create nothing, and Overlay mounts keep what they create in
	// memory, bounded by MemoryLimit.
	EntryLimit int64
	// MemoryLimit bounds the memory an Overlay mount keeps for the session's
	// changes, and the size of any single read or listing on any mount.
	// 0 means DefaultMemoryLimit.
	MemoryLimit int64
}

// Clock tells the time for date.today() and datetime.now().
//
// A Table calls Now from the goroutines of concurrent OS calls: an
// implementation must be safe for concurrent use.
type Clock interface {
	Now() time.Time
}

// realClock is the system clock.
type realClock struct{}

// Now returns time.Now().
func (realClock) Now() time.Time { return time.Now() }

// fixedClock is a Clock stopped at one instant.
type fixedClock time.Time

// Now returns the fixed instant.
func (c fixedClock) Now() time.Time { return time.Time(c) }

// FixedClock returns a Clock that always reports t. It is safe for
// concurrent use.
func FixedClock(t time.Time) Clock { return fixedClock(t) }

// Options configures the non-filesystem arms and the table's behaviour.
//
// Options is plain data, safe to share; New copies it (Env included).
type Options struct {
	// Env is the whole environment the sandbox sees through os.getenv and
	// os.environ. nil means an empty environment; the host environment is
	// never consulted. Invalid UTF-8 is replaced with U+FFFD; when keys
	// collide once repaired, the last in byte order of the original keys
	// wins.
	Env map[string]string
	// Clock answers date.today() and datetime.now(); nil means the real
	// clock.
	Clock Clock
	// Location is the zone of naive dates and datetimes (date.today() and
	// datetime.now() without a tz), which should be the sandbox's local
	// zone. nil means the zone of the OsPolicy the call's context carries
	// (a session passes its own, see message.PolicyFromContext; for a
	// protocol-5 session whose policy hands the clock to the parent, that
	// is its timezone, read by [ZoneLocation]), or UTC when there is none
	// (protocols 2 and 4, a session with no policy, or after a Load). A
	// non-nil Location is used for every call.
	Location *time.Location
	// Rand supplies os.urandom bytes; nil means crypto/rand. Reads are
	// serialized, so the reader need not be safe for concurrent use.
	Rand io.Reader
	// OpTimeout bounds every host filesystem operation; 0 means
	// DefaultOpTimeout.
	OpTimeout time.Duration
	// Cwd is the absolute virtual directory relative paths are joined to;
	// "" means "/".
	Cwd string
}

// Errors of New for a mount's source. New wraps them with the mount's
// index and virtual path; test with errors.Is.
var (
	// ErrReadWriteFS refuses a Mount with FS set and Mode ReadWrite: an
	// fs.FS has no way to be written. Use Overlay to let the session
	// change what it sees, in memory.
	ErrReadWriteFS = errors.New("mount: a Go file system (Mount.FS) cannot be mounted ReadWrite; use ReadOnly or Overlay")
	// ErrSource refuses a Mount with both HostDir and FS set, or neither.
	ErrSource = errors.New("mount: exactly one of HostDir and FS must be set")
)

// Table answers the OS calls of one session. Build it with [New]; release
// its directory handles with [Table.Close]. A Table is safe for concurrent
// use by multiple goroutines.
type Table struct {
	mounts    []*mnt // sorted by virtual path, longest first
	env       map[string]string
	envKeys   []string
	clock     Clock
	start     time.Time // the clock's reading at New: the monotonic clocks' zero
	loc       *time.Location
	opTimeout time.Duration

	randMu sync.Mutex
	rand   io.Reader

	cwdMu sync.RWMutex
	cwd   string

	// hook, when set (by tests), runs on the operation goroutine before
	// each host filesystem operation; it may block to simulate a stuck
	// filesystem.
	hook atomic.Pointer[func(op string)]
}

// setHook installs (or, with nil, removes) the test hook.
func (t *Table) setHook(f func(op string)) {
	if f == nil {
		t.hook.Store(nil)
		return
	}
	t.hook.Store(&f)
}

// mnt is one mount's runtime state.
type mnt struct {
	vpath   string // cleaned absolute virtual path
	hostDir string // absolute host directory, for diagnostics only ("" for an FS)
	fsys    fs.FS  // the mounted Go file system, or nil
	mode    Mode
	root    *os.Root // the host directory's root, nil for an FS; changed only in ReadWrite mode
	low     lower    // what every read goes through: root's hostLower, or the FS's

	writeLimit int64
	entryLimit int64
	memLimit   int64

	wmu     sync.Mutex
	written int64
	created int64 // entries added to the host (created less removed), against entryLimit

	ov *overlay // non-nil for Overlay mounts
}

// New builds a table from mounts. It fails when a virtual path is not
// absolute, when two virtual paths overlap (one equals or contains the
// other on a path-component boundary), when a mount sets both HostDir and
// FS or neither ([ErrSource]), when an FS mount is ReadWrite
// ([ErrReadWriteFS]), when a host directory is missing or
// not a directory, when a writable (ReadWrite) mount's host directory
// overlaps another mount's host directory (the weaker mode would then
// apply to the other's files), or when a limit is negative.
func New(mounts []Mount, opts Options) (_ *Table, err error) {
	t := &Table{
		env:       make(map[string]string, len(opts.Env)),
		clock:     opts.Clock,
		loc:       opts.Location,
		rand:      opts.Rand,
		opTimeout: opts.OpTimeout,
		cwd:       "/",
	}
	// In the original keys' byte order, so that keys that become one once
	// repaired give the same value every time (the last one's).
	raw := make([]string, 0, len(opts.Env))
	for k := range opts.Env {
		raw = append(raw, k)
	}
	sort.Strings(raw)
	for _, rk := range raw {
		// The wire carries str values as UTF-8 only.
		k, v := strings.ToValidUTF8(rk, "\uFFFD"), strings.ToValidUTF8(opts.Env[rk], "\uFFFD")
		if _, dup := t.env[k]; !dup {
			t.envKeys = append(t.envKeys, k)
		}
		t.env[k] = v
	}
	sort.Strings(t.envKeys)
	if t.clock == nil {
		t.clock = realClock{}
	}
	t.start = t.clock.Now()
	if t.rand == nil {
		t.rand = rand.Reader
	}
	switch {
	case t.opTimeout < 0:
		return nil, errors.New("mount: negative OpTimeout")
	case t.opTimeout == 0:
		t.opTimeout = DefaultOpTimeout
	}
	if opts.Cwd != "" {
		if err := t.SetCwd(opts.Cwd); err != nil {
			return nil, err
		}
	}

	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	type hostInfo struct {
		real string
		m    *mnt
	}
	var hosts []hostInfo
	for i, m := range mounts {
		vp, err := checkVirtualMountPath(m.VirtualPath)
		if err != nil {
			return nil, fmt.Errorf("mount %d: %w", i, err)
		}
		if m.Mode != ReadOnly && m.Mode != ReadWrite && m.Mode != Overlay {
			return nil, fmt.Errorf("mount %d (%s): unknown mode %d", i, vp, int(m.Mode))
		}
		if m.WriteLimit < 0 || m.MemoryLimit < 0 || m.EntryLimit < 0 {
			return nil, fmt.Errorf("mount %d (%s): negative limit", i, vp)
		}
		for _, o := range t.mounts {
			if within(vp, o.vpath) || within(o.vpath, vp) {
				return nil, fmt.Errorf("mount %d: virtual path %s overlaps mount at %s", i, vp, o.vpath)
			}
		}
		switch {
		case m.HostDir == "" && m.FS == nil:
			return nil, fmt.Errorf("mount %d (%s): empty host directory and no FS: %w", i, vp, ErrSource)
		case m.HostDir != "" && m.FS != nil:
			return nil, fmt.Errorf("mount %d (%s): both a host directory and an FS: %w", i, vp, ErrSource)
		}
		if m.FS != nil {
			if m.Mode == ReadWrite {
				return nil, fmt.Errorf("mount %d (%s): %w", i, vp, ErrReadWriteFS)
			}
			t.mounts = append(t.mounts, newMnt(m, vp, "", nil, &fsLower{fsys: m.FS, prefix: "."}))
			continue
		}
		abs, err := filepath.Abs(m.HostDir)
		if err != nil {
			return nil, fmt.Errorf("mount %d (%s): %w", i, vp, err)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("mount %d (%s): host directory: %w", i, vp, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("mount %d (%s): host path %s is not a directory", i, vp, abs)
		}
		root, err := os.OpenRoot(abs)
		if err != nil {
			return nil, fmt.Errorf("mount %d (%s): %w", i, vp, err)
		}
		mm := newMnt(m, vp, abs, root, hostLower{root})
		t.mounts = append(t.mounts, mm)

		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			real = abs
		}
		for _, h := range hosts {
			if (mm.mode == ReadWrite || h.m.mode == ReadWrite) &&
				(hostWithin(real, h.real) || hostWithin(h.real, real)) {
				return nil, fmt.Errorf("mount %d (%s): host directory %s overlaps the host directory of the mount at %s, and one of them is read-write",
					i, vp, abs, h.m.vpath)
			}
		}
		hosts = append(hosts, hostInfo{real, mm})
	}
	sort.SliceStable(t.mounts, func(i, j int) bool { return len(t.mounts[i].vpath) > len(t.mounts[j].vpath) })
	return t, nil
}

// newMnt builds the runtime state of the checked mount m at the cleaned
// virtual path vp, reading through low.
func newMnt(m Mount, vp, hostDir string, root *os.Root, low lower) *mnt {
	mm := &mnt{
		vpath:      vp,
		hostDir:    hostDir,
		fsys:       m.FS,
		mode:       m.Mode,
		root:       root,
		low:        low,
		writeLimit: m.WriteLimit,
		entryLimit: m.EntryLimit,
		memLimit:   m.MemoryLimit,
	}
	if mm.writeLimit == 0 {
		mm.writeLimit = DefaultWriteLimit
	}
	if mm.entryLimit == 0 {
		mm.entryLimit = DefaultEntryLimit
	}
	if mm.memLimit == 0 {
		mm.memLimit = DefaultMemoryLimit
	}
	if m.Mode == Overlay {
		mm.ov = newOverlay()
	}
	return mm
}

// checkVirtualMountPath validates and cleans a mount's virtual path.
func checkVirtualMountPath(vp string) (string, error) {
	if vp == "" {
		return "", errors.New("empty virtual path")
	}
	if strings.IndexByte(vp, 0) >= 0 {
		return "", errors.New("virtual path contains a NUL byte")
	}
	if !strings.HasPrefix(vp, "/") {
		return "", fmt.Errorf("virtual path %q is not absolute", vp)
	}
	return path.Clean(vp), nil
}

// within reports whether the cleaned absolute virtual path p is base or
// lies under it.
func within(p, base string) bool {
	if base == "/" {
		return true
	}
	return p == base || strings.HasPrefix(p, base+"/")
}

// hostWithin is within for host paths.
func hostWithin(p, base string) bool {
	if p == base {
		return true
	}
	if !strings.HasSuffix(base, string(filepath.Separator)) {
		base += string(filepath.Separator)
	}
	return strings.HasPrefix(p, base)
}

// SetCwd changes the virtual working directory that relative paths are
// joined to (for example when a protocol-4 Feed carries a cwd). It must be
// absolute; it is cleaned. It is safe to call concurrently with HandleOS.
func (t *Table) SetCwd(cwd string) error {
	if !strings.HasPrefix(cwd, "/") || strings.IndexByte(cwd, 0) >= 0 {
		return fmt.Errorf("mount: cwd %q is not an absolute path", cwd)
	}
	t.cwdMu.Lock()
	t.cwd = path.Clean(cwd)
	t.cwdMu.Unlock()
	return nil
}

// Cwd returns the virtual working directory.
func (t *Table) Cwd() string {
	t.cwdMu.RLock()
	defer t.cwdMu.RUnlock()
	return t.cwd
}

// Mounts returns the table's mounts, with cleaned virtual paths, absolute
// host directories (or the FS as given) and the effective limits, longest
// virtual path first.
func (t *Table) Mounts() []Mount {
	out := make([]Mount, len(t.mounts))
	for i, m := range t.mounts {
		out[i] = Mount{HostDir: m.hostDir, FS: m.fsys, VirtualPath: m.vpath, Mode: m.mode,
			WriteLimit: m.writeLimit, EntryLimit: m.entryLimit, MemoryLimit: m.memLimit}
	}
	return out
}

// Close releases the host directory handles (an FS mount holds none: its
// fs.FS is the caller's). Calls still running may fail afterwards; the
// table must not be used after Close.
func (t *Table) Close() error {
	var first error
	for _, m := range t.mounts {
		if m.low != nil {
			if err := m.low.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// find returns the mount whose virtual path contains the cleaned absolute
// path p, with p relative to the mount root ("." for the root itself).
func (t *Table) find(p string) (*mnt, string) {
	for _, m := range t.mounts {
		if !within(p, m.vpath) {
			continue
		}
		rel := strings.TrimPrefix(p, m.vpath)
		rel = strings.TrimPrefix(rel, "/")
		if rel == "" {
			rel = "."
		}
		return m, rel
	}
	return nil, ""
}

// reserve charges n bytes against the mount's write budget.
func (m *mnt) reserve(n int64) bool {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	if n < 0 || m.written+n > m.writeLimit || m.written+n < m.written {
		return false
	}
	m.written += n
	return true
}

// refund returns n bytes of a reservation whose write never happened.
func (m *mnt) refund(n int64) {
	m.wmu.Lock()
	m.written -= n
	m.wmu.Unlock()
}

// createEntry charges one entry against the mount's entry budget before
// name is created in dir (by the caller, which calls uncreate when nothing
// was created). With the budget spent it returns the error Linux reports
// before a quota: the lookup of name's parent (a missing parent, a
// non-directory on the way), then an existing name (fs.ErrExist; with
// follow, what a symlink there leads to, as open creates a dangling
// symlink's target; without, as mkdir, the name itself); and otherwise
// errWriteLimit.
func (m *mnt) createEntry(dir *os.Root, name string, follow bool) error {
	m.wmu.Lock()
	ok := m.created < m.entryLimit
	if ok {
		m.created++
	}
	m.wmu.Unlock()
	if ok {
		return nil
	}
	if parent := path.Dir(name); parent != "." {
		fi, err := dir.Stat(parent)
		switch {
		case err != nil:
			return err
		case !fi.IsDir():
			return syscall.ENOTDIR
		}
	}
	lookup := dir.Lstat
	if follow {
		lookup = dir.Stat
	}
	if _, err := lookup(name); err == nil {
		return &fs.PathError{Op: "mkdir", Path: name, Err: syscall.EEXIST}
	}
	return errWriteLimit
}

// uncreate returns an entry to the budget: the one createEntry charged
// for a creation that failed, or one the session removed.
func (m *mnt) uncreate() {
	m.wmu.Lock()
	m.created--
	m.wmu.Unlock()
}

// Written reports the bytes written through the mount at virtual path vp
// this session, and false when no mount has that virtual path.
func (t *Table) Written(vp string) (int64, bool) {
	vp = path.Clean(vp)
	for _, m := range t.mounts {
		if m.vpath == vp {
			m.wmu.Lock()
			defer m.wmu.Unlock()
			return m.written, true
		}
	}
	return 0, false
}

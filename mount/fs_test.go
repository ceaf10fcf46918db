package mount

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gomonty/monty/message"
)

//go:embed testdata/embedfs
var embedTree embed.FS

// fsMtime is the modification time of the MapFS fixtures' entries.
var fsMtime = time.Unix(1700000000, 500_000_000)

// fixtureFS is newFixture's tree under base/host as a MapFS.
func fixtureFS() fstest.MapFS {
	return fstest.MapFS{
		"x.txt":     {Data: []byte("hello"), Mode: 0o644, ModTime: fsMtime},
		"bin.dat":   {Data: []byte("\x00\x01\x02"), Mode: 0o644, ModTime: fsMtime},
		"sub":       {Mode: fs.ModeDir | 0o755, ModTime: fsMtime},
		"sub/a.txt": {Data: []byte("A"), Mode: 0o644, ModTime: fsMtime},
	}
}

// checkedFS passes every call on to its fs.FS and records each name that
// fs.ValidPath refuses: the table must never hand an fs.FS such a name.
type checkedFS struct {
	fsys fs.FS
	mu   sync.Mutex
	bad  []string
}

func (c *checkedFS) check(name string) {
	if !fs.ValidPath(name) {
		c.mu.Lock()
		c.bad = append(c.bad, name)
		c.mu.Unlock()
	}
}

func (c *checkedFS) Open(name string) (fs.File, error) { c.check(name); return c.fsys.Open(name) }

func (c *checkedFS) ReadLink(name string) (string, error) {
	c.check(name)
	return fs.ReadLink(c.fsys, name)
}

func (c *checkedFS) Lstat(name string) (fs.FileInfo, error) {
	c.check(name)
	return fs.Lstat(c.fsys, name)
}

// assertValid fails when the table handed the FS an invalid name.
func (c *checkedFS) assertValid(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bad) > 0 {
		t.Fatalf("the fs.FS was handed invalid names: %q", c.bad)
	}
}

// newFSTable mounts fsys at /data in mode.
func newFSTable(t *testing.T, fsys fs.FS, mode Mode, edit ...func(*Mount)) *Table {
	t.Helper()
	m := Mount{FS: fsys, VirtualPath: "/data", Mode: mode}
	for _, e := range edit {
		e(&m)
	}
	tbl, err := New([]Mount{m}, Options{Clock: FixedClock(time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

// sameMapFS fails unless a and b hold the same entries.
func sameMapFS(t *testing.T, a, b fstest.MapFS) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("the FS changed: %d entries, want %d", len(a), len(b))
	}
	for k, f := range b {
		g := a[k]
		if g == nil || string(g.Data) != string(f.Data) || g.Mode != f.Mode || !g.ModTime.Equal(f.ModTime) {
			t.Fatalf("the FS changed at %q", k)
		}
	}
}

// runFSDiff runs up to maxSteps calls drawn from ch on a host mount and
// on an FS mount of the same tree in mode, fails (logging the steps) at
// the first answer that differs, then checks that the FS was never handed
// an invalid name, is unchanged, and (Overlay) that the index is linked.
// label names the sequence in the failure.
func runFSDiff(t *testing.T, ch chooser, mode Mode, names []string, maxSteps int, label string) {
	t.Helper()
	host := newFixture(t, mode)
	mfs := fixtureFS()
	cfs := &checkedFS{fsys: mfs}
	tbl := newFSTable(t, cfs, mode)
	var steps []string
	for step := 0; ch.more() && step < maxSteps; step++ {
		c := randDiffCall(ch, names)
		want, got := answerSummary(t, host.do(c)), answerSummary(t, doCall(t, tbl, c))
		steps = append(steps, fmt.Sprintf("%s %q %q -> %s", c.Op, c.Path, c.Dst, want))
		if want != got {
			for _, s := range steps {
				t.Log(s)
			}
			t.Fatalf("%sstep %d: %s %q %q: host %s, fs %s", label, step, c.Op, c.Path, c.Dst, want, got)
		}
	}
	cfs.assertValid(t)
	sameMapFS(t, mfs, fixtureFS())
	if mode == Overlay {
		checkIndex(t, tbl.mounts[0].ov)
	}
}

// fsDiffNames are the path components the FS and host sequences draw.
var fsDiffNames = []string{"a", "b", "sub", "x.txt", "bin.dat", "c", "..", "."}

// TestFSMatchesHostMount runs seeded random sequences of OS calls (reads,
// changes, odd paths with "." and ".." and trailing slashes) on a host
// mount and on an FS mount of the same tree, in ReadOnly and in Overlay
// mode, and requires the same answer at every step: an fs.FS is answered
// by the same code as a host directory. The FS must never be handed an
// invalid name, and must be unchanged at the end.
func TestFSMatchesHostMount(t *testing.T) {
	for _, mode := range []Mode{ReadOnly, Overlay} {
		t.Run(mode.String(), func(t *testing.T) {
			for seed := range int64(60) {
				runFSDiff(t, randChooser{rand.New(rand.NewSource(seed))}, mode, fsDiffNames, 60, fmt.Sprintf("seed %d ", seed))
			}
		})
	}
}

// FuzzFSMatchesHostMount is TestFSMatchesHostMount driven by the fuzzer:
// the first byte picks the mode, the rest the calls (see
// FuzzOverlayMatchesReadWrite for their encoding).
func FuzzFSMatchesHostMount(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 3})
	f.Add([]byte{1, 1, 1, 2, 2, 6, 1, 0, 0, 2, 8, 0, 2, 9})
	f.Add([]byte{1, 6, 1, 2, 9, 0, 1, 5, 9, 8, 0, 5, 9, 11, 1, 5, 9})
	f.Add([]byte{0, 9, 2, 3, 0, 1, 8, 2, 2, 7, 9, 11, 1, 6, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		mode := []Mode{ReadOnly, Overlay}[data[0]%2]
		runFSDiff(t, &byteChooser{data[1:]}, mode, fsDiffNames, 64, "")
	})
}

// linkFS is a tree with symlinks inside it, a FIFO, and a file whose
// modification time is not whole seconds.
func linkFS() fstest.MapFS {
	return fstest.MapFS{
		"x.txt":     {Data: []byte("hello\nworld\n"), Mode: 0o640, ModTime: fsMtime},
		"sub/a.txt": {Data: []byte("A"), Mode: 0o644, ModTime: fsMtime},
		"link":      {Data: []byte("x.txt"), Mode: fs.ModeSymlink | 0o777},
		"dirlink":   {Data: []byte("sub"), Mode: fs.ModeSymlink | 0o777},
		"abslink":   {Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink | 0o777},
		"fifo":      {Mode: fs.ModeNamedPipe | 0o644},
	}
}

func TestFSMountReadOnly(t *testing.T) {
	mfs := linkFS()
	tbl := newFSTable(t, mfs, ReadOnly)
	do := func(c *message.OsCall) *message.ResumeCall { return doCall(t, tbl, c) }

	wantBool(t, do(opCall(message.OpExists, "/data/x.txt")), true)
	wantBool(t, do(opCall(message.OpIsFile, "/data/x.txt")), true)
	wantBool(t, do(opCall(message.OpIsDir, "/data/sub")), true)
	wantBool(t, do(opCall(message.OpIsDir, "/data")), true)
	wantBool(t, do(opCall(message.OpIsSymlink, "/data/link")), true)
	wantBool(t, do(opCall(message.OpIsSymlink, "/data/x.txt")), false)
	wantBool(t, do(opCall(message.OpIsFile, "/data/link")), true) // followed
	wantBool(t, do(opCall(message.OpExists, "/data/abslink")), false)
	wantBool(t, do(opCall(message.OpExists, "/data/nope")), false)

	wantStr(t, do(opCall(message.OpReadText, "/data/x.txt")), "hello\nworld\n")
	wantBytes(t, do(opCall(message.OpReadBytes, "/data/link")), []byte("hello\nworld\n"))
	wantStr(t, do(opCall(message.OpReadText, "/data/dirlink/a.txt")), "A")
	wantExc(t, do(opCall(message.OpReadText, "/data/nope")), "FileNotFoundError", "[Errno 2] No such file or directory: '/data/nope'")
	wantExc(t, do(opCall(message.OpReadText, "/data/x.txt/a")), "NotADirectoryError", "[Errno 20] Not a directory: '/data/x.txt/a'")
	wantExc(t, do(opCall(message.OpReadText, "/data/sub")), "IsADirectoryError", "[Errno 21] Is a directory: '/data/sub'")
	wantExc(t, do(opCall(message.OpReadText, "/data/fifo")), "PermissionError", "[Errno 13] Permission denied: '/data/fifo'")
	wantExc(t, do(opCall(message.OpReadText, "/data/x.txt/")), "NotADirectoryError", "[Errno 20] Not a directory: '/data/x.txt/'")

	st := do(opCall(message.OpStat, "/data/x.txt"))
	for name, want := range map[string]int64{"st_mode": 0o100640, "st_size": 12, "st_ino": 0, "st_dev": 0, "st_nlink": 1, "st_uid": 0, "st_gid": 0} {
		if got := statField(t, st, name).Int(); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	for _, name := range []string{"st_atime", "st_mtime", "st_ctime"} {
		if got := statField(t, st, name).Float(); got != 1700000000.5 {
			t.Errorf("%s = %v, want 1700000000.5", name, got)
		}
	}
	if got := statField(t, do(opCall(message.OpStat, "/data/sub")), "st_mode").Int(); got&0o170000 != 0o040000 {
		t.Errorf("sub's st_mode %o is not a directory's", got)
	}

	wantPaths(t, do(opCall(message.OpIterdir, "/data")),
		"/data/abslink", "/data/dirlink", "/data/fifo", "/data/link", "/data/sub", "/data/x.txt")
	wantPaths(t, do(opCall(message.OpIterdir, "/data/dirlink")), "/data/dirlink/a.txt")
	wantExc(t, do(opCall(message.OpIterdir, "/data/x.txt")), "NotADirectoryError", "[Errno 20] Not a directory: '/data/x.txt'")

	wantPath(t, do(opCall(message.OpResolve, "/data/link")), "/data/x.txt")
	wantPath(t, do(opCall(message.OpResolve, "/data/dirlink/a.txt")), "/data/sub/a.txt")
	wantPath(t, do(opCall(message.OpResolve, "/data/abslink")), "/data/abslink")
	wantHandle(t, do(openCall("/data/x.txt", "r")), "/data/x.txt", "r", 0)

	// Every change is refused as on a ReadOnly host mount, after the same
	// lookups.
	ro := "[Errno 30] Read-only file system: '/data/x.txt'"
	wantExc(t, do(textCall(message.OpWriteText, "/data/x.txt", "x")), "PermissionError", ro)
	wantExc(t, do(bytesCall(message.OpAppendBytes, "/data/x.txt", []byte("x"))), "PermissionError", ro)
	wantExc(t, do(openCall("/data/x.txt", "w")), "PermissionError", ro)
	wantExc(t, do(opCall(message.OpUnlink, "/data/x.txt")), "PermissionError", ro)
	wantExc(t, do(renameCall("/data/x.txt", "/data/y.txt")), "PermissionError", "[Errno 30] Read-only file system: '/data/x.txt' -> '/data/y.txt'")
	wantExc(t, do(textCall(message.OpWriteText, "/data/nope/x", "x")), "FileNotFoundError", "[Errno 2] No such file or directory: '/data/nope/x'")
	wantExc(t, do(textCall(message.OpWriteText, "/data/sub", "x")), "IsADirectoryError", "[Errno 21] Is a directory: '/data/sub'")
	wantNone(t, do(mkdirCall("/data/sub", true, true)))
	wantExc(t, do(mkdirCall("/data/d1/d2", true, false)), "PermissionError", "[Errno 30] Read-only file system: '/data/d1'")
	sameMapFS(t, mfs, linkFS())
}

func TestFSMountOverlay(t *testing.T) {
	mfs := linkFS()
	tbl := newFSTable(t, mfs, Overlay)
	do := func(c *message.OsCall) *message.ResumeCall { return doCall(t, tbl, c) }

	// Overlays never follow symlinks: they are left out of listings and
	// resolve is lexical, as over a host directory.
	wantPaths(t, do(opCall(message.OpIterdir, "/data")), "/data/fifo", "/data/sub", "/data/x.txt")
	wantPath(t, do(opCall(message.OpResolve, "/data/link")), "/data/link")
	wantBool(t, do(opCall(message.OpIsSymlink, "/data/link")), true)

	wantInt(t, do(textCall(message.OpWriteText, "/data/new.txt", "hi")), 2)
	wantStr(t, do(opCall(message.OpReadText, "/data/new.txt")), "hi")
	wantInt(t, do(textCall(message.OpAppendText, "/data/x.txt", "more")), 4)
	wantStr(t, do(opCall(message.OpReadText, "/data/x.txt")), "hello\nworld\nmore")
	wantNone(t, do(mkdirCall("/data/d1/d2", true, false)))
	wantNone(t, do(opCall(message.OpUnlink, "/data/sub/a.txt")))
	wantNone(t, do(opCall(message.OpRmdir, "/data/sub")))
	wantPath(t, do(renameCall("/data/new.txt", "/data/d1/n.txt")), "/data/d1/n.txt")
	wantPaths(t, do(opCall(message.OpIterdir, "/data")), "/data/d1", "/data/fifo", "/data/x.txt")
	wantStr(t, do(opCall(message.OpReadText, "/data/d1/n.txt")), "hi")
	wantExc(t, do(opCall(message.OpReadText, "/data/sub/a.txt")), "FileNotFoundError", "[Errno 2] No such file or directory: '/data/sub/a.txt'")
	sameMapFS(t, mfs, linkFS())
}

// noLinkFS hides every method of an fs.FS but Open: without
// fs.ReadLinkFS, the mount sees no symlinks.
type noLinkFS struct{ fsys fs.FS }

func (n noLinkFS) Open(name string) (fs.File, error) { return n.fsys.Open(name) }

func TestFSMountWithoutReadLinkHasNoSymlinks(t *testing.T) {
	tbl := newFSTable(t, noLinkFS{linkFS()}, ReadOnly)
	wantBool(t, doCall(t, tbl, opCall(message.OpIsSymlink, "/data/link")), false)
	wantBool(t, doCall(t, tbl, opCall(message.OpIsFile, "/data/link")), true)
	wantStr(t, doCall(t, tbl, opCall(message.OpReadText, "/data/link")), "hello\nworld\n")
	wantPath(t, doCall(t, tbl, opCall(message.OpResolve, "/data/link")), "/data/link")
	if got := statField(t, doCall(t, tbl, opCall(message.OpStat, "/data/link")), "st_mode").Int(); got != 0o100640 {
		t.Errorf("st_mode %o, want the target's 100640", got)
	}
}

func TestFSMountEmbed(t *testing.T) {
	sub, err := fs.Sub(embedTree, "testdata/embedfs")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{ReadOnly, Overlay} {
		t.Run(mode.String(), func(t *testing.T) {
			tbl := newFSTable(t, sub, mode)
			wantStr(t, doCall(t, tbl, opCall(message.OpReadText, "/data/hello.txt")), "embedded\n")
			wantPaths(t, doCall(t, tbl, opCall(message.OpIterdir, "/data")), "/data/hello.txt", "/data/sub")
			wantBytes(t, doCall(t, tbl, opCall(message.OpReadBytes, "/data/sub/deep.txt")), []byte("deep"))
			st := doCall(t, tbl, opCall(message.OpStat, "/data/hello.txt"))
			if got := statField(t, st, "st_size").Int(); got != 9 {
				t.Errorf("st_size %d, want 9", got)
			}
			// embed.FS has no modification times: the epoch.
			if got := statField(t, st, "st_mtime").Float(); got != 0 {
				t.Errorf("st_mtime %v, want 0", got)
			}
			if got := statField(t, st, "st_mode").Int(); got != 0o100444 {
				t.Errorf("st_mode %o, want 100444", got)
			}
		})
	}
}

func TestFSMountValidation(t *testing.T) {
	_, err := New([]Mount{{FS: fixtureFS(), VirtualPath: "/d", Mode: ReadWrite}}, Options{})
	if !errors.Is(err, ErrReadWriteFS) {
		t.Errorf("ReadWrite FS: %v, want ErrReadWriteFS", err)
	}
	_, err = New([]Mount{{FS: fixtureFS(), HostDir: t.TempDir(), VirtualPath: "/d"}}, Options{})
	if !errors.Is(err, ErrSource) {
		t.Errorf("FS and HostDir: %v, want ErrSource", err)
	}
	_, err = New([]Mount{{VirtualPath: "/d"}}, Options{})
	if !errors.Is(err, ErrSource) {
		t.Errorf("neither: %v, want ErrSource", err)
	}
	mfs := fixtureFS()
	tbl, err := New([]Mount{{FS: mfs, VirtualPath: "/d/"}, {FS: mfs, VirtualPath: "/e", Mode: Overlay}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for _, m := range tbl.Mounts() {
		if m.HostDir != "" || m.FS == nil || m.MemoryLimit != DefaultMemoryLimit {
			t.Errorf("Mounts() %+v", m)
		}
	}
}

// endlessFS holds "big", a file whose reads never end and whose stat
// claims size bytes, and "many" and "links", directories whose listings
// never end (of files, and of symlinks).
// It counts the bytes read and the entries listed.
type endlessFS struct {
	size    int64
	read    atomic.Int64
	entries atomic.Int64
}

func (e *endlessFS) Open(name string) (fs.File, error) {
	switch name {
	case "big":
		return &endlessFile{fs: e}, nil
	case ".", "many", "links":
		return &endlessDir{fs: e, name: name}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

type endlessInfo struct {
	name string
	size int64
	dir  bool
	link bool
}

func (i endlessInfo) Name() string { return i.name }
func (i endlessInfo) Size() int64  { return i.size }
func (i endlessInfo) Mode() fs.FileMode {
	switch {
	case i.dir:
		return fs.ModeDir | 0o755
	case i.link:
		return fs.ModeSymlink | 0o777
	}
	return 0o644
}
func (i endlessInfo) ModTime() time.Time { return fsMtime }
func (i endlessInfo) IsDir() bool        { return i.dir }
func (i endlessInfo) Sys() any           { return nil }

type endlessFile struct{ fs *endlessFS }

func (f *endlessFile) Stat() (fs.FileInfo, error) {
	return endlessInfo{name: "big", size: f.fs.size}, nil
}
func (f *endlessFile) Close() error { return nil }
func (f *endlessFile) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'z'
	}
	f.fs.read.Add(int64(len(p)))
	return len(p), nil
}

type endlessDir struct {
	fs   *endlessFS
	name string
	n    int
}

func (d *endlessDir) Stat() (fs.FileInfo, error) { return endlessInfo{name: d.name, dir: true}, nil }
func (d *endlessDir) Close() error               { return nil }
func (d *endlessDir) Read([]byte) (int, error)   { return 0, io.EOF }
func (d *endlessDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.name == "." {
		if d.n > 0 {
			return nil, io.EOF
		}
		d.n = 3
		return []fs.DirEntry{fs.FileInfoToDirEntry(endlessInfo{name: "big"}),
			fs.FileInfoToDirEntry(endlessInfo{name: "links", dir: true}),
			fs.FileInfoToDirEntry(endlessInfo{name: "many", dir: true})}, nil
	}
	if n <= 0 {
		n = 100
	}
	out := make([]fs.DirEntry, n)
	for i := range out {
		d.n++
		out[i] = fs.FileInfoToDirEntry(endlessInfo{name: fmt.Sprintf("f%d", d.n), link: d.name == "links"})
	}
	d.fs.entries.Add(int64(n))
	return out, nil
}

// TestFSMountEndlessIsBounded mounts a file whose reads never end (its
// stat claims 0 bytes) and a directory whose listing never ends: every
// read and listing stops at MemoryLimit with MemoryError, having read at
// most MemoryLimit+1 bytes, in both modes; an overlay's append, which
// copies the file first, too.
func TestFSMountEndlessIsBounded(t *testing.T) {
	const limit = 1 << 16
	tooLarge := "file too large: '/data/big' exceeds the mount's 65536-byte read limit"
	for _, mode := range []Mode{ReadOnly, Overlay} {
		t.Run(mode.String(), func(t *testing.T) {
			efs := &endlessFS{}
			tbl := newFSTable(t, efs, mode, func(m *Mount) { m.MemoryLimit = limit })
			wantExc(t, doCall(t, tbl, opCall(message.OpReadBytes, "/data/big")), "MemoryError", tooLarge)
			wantExc(t, doCall(t, tbl, opCall(message.OpReadText, "/data/big")), "MemoryError", tooLarge)
			if mode == Overlay {
				wantExcType(t, doCall(t, tbl, bytesCall(message.OpAppendBytes, "/data/big", []byte("x"))), "MemoryError")
			}
			calls := int64(2)
			if mode == Overlay {
				calls = 3
			}
			if got := efs.read.Load(); got > calls*(limit+1) {
				t.Errorf("read %d bytes in %d reads, want at most %d", got, calls, calls*(limit+1))
			}
			wantExc(t, doCall(t, tbl, opCall(message.OpIterdir, "/data/many")), "MemoryError",
				"file too large: '/data/many' exceeds the mount's 65536-byte read limit")
			// An overlay leaves every symlink out of its listings, and a
			// read-only mount each one it cannot follow: entries skipped
			// count against the bound too.
			wantExc(t, doCall(t, tbl, opCall(message.OpIterdir, "/data/links")), "MemoryError",
				"file too large: '/data/links' exceeds the mount's 65536-byte read limit")
			if mode == Overlay {
				// rmdir looks for the hidden symlinks a directory holds.
				wantExcType(t, doCall(t, tbl, opCall(message.OpRmdir, "/data/links")), "MemoryError")
				hidden := func() error {
					_, _, err := tbl.ovHostHidden(t.Context(), tbl.mounts[0], "many")
					return err
				}
				if err := hidden(); !errors.As(err, new(*tooLargeError)) {
					t.Errorf("ovHostHidden of an endless directory: %v, want tooLargeError", err)
				}
			}
			if got, most := efs.entries.Load(), int64(8*(maxScanned(limit)+100)); got > most {
				t.Errorf("listed %d entries, want at most %d", got, most)
			}

			// A stat claiming more than the limit is refused before any read.
			big := &endlessFS{size: limit + 1}
			tbl2 := newFSTable(t, big, mode, func(m *Mount) { m.MemoryLimit = limit })
			wantExc(t, doCall(t, tbl2, opCall(message.OpReadBytes, "/data/big")), "MemoryError", tooLarge)
			if got := big.read.Load(); got != 0 {
				t.Errorf("read %d bytes of a file whose size is over the limit", got)
			}
		})
	}
}

// flatFS is a directory whose opened file is not an fs.ReadDirFile.
type flatFS struct{}

func (flatFS) Open(name string) (fs.File, error) {
	if name != "." {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return flatDir{}, nil
}

type flatDir struct{}

func (flatDir) Stat() (fs.FileInfo, error) { return endlessInfo{name: ".", dir: true}, nil }
func (flatDir) Read([]byte) (int, error)   { return 0, io.EOF }
func (flatDir) Close() error               { return nil }

func TestFSMountOddCorners(t *testing.T) {
	// A directory the FS cannot list.
	tbl := newFSTable(t, flatFS{}, ReadOnly)
	wantBool(t, doCall(t, tbl, opCall(message.OpIsDir, "/data")), true)
	wantExc(t, doCall(t, tbl, opCall(message.OpIterdir, "/data")), "OSError", "[Errno 95] Operation not supported: '/data'")

	// A symlink the FS cannot follow is missing.
	tbl = newFSTable(t, linkFS(), ReadOnly)
	wantExc(t, doCall(t, tbl, opCall(message.OpReadText, "/data/abslink")), "FileNotFoundError", "[Errno 2] No such file or directory: '/data/abslink'")
	wantBool(t, doCall(t, tbl, opCall(message.OpIsSymlink, "/data/abslink")), true)
}

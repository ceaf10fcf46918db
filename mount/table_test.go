//go:build unix

package mount

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gomonty/monty/message"
)

func TestNewValidation(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	mustMkdir(t, a)
	mustMkdir(t, b)
	mustMkdir(t, filepath.Join(a, "inner"))
	file := filepath.Join(base, "file")
	mustWrite(t, file, "x")

	bad := []struct {
		name   string
		mounts []Mount
		opts   Options
		want   string
	}{
		{"relative virtual", []Mount{{HostDir: a, VirtualPath: "data"}}, Options{}, "not absolute"},
		{"empty virtual", []Mount{{HostDir: a}}, Options{}, "empty virtual path"},
		{"nul virtual", []Mount{{HostDir: a, VirtualPath: "/d\x00"}}, Options{}, "NUL"},
		{"same virtual", []Mount{{HostDir: a, VirtualPath: "/d"}, {HostDir: b, VirtualPath: "/d/"}}, Options{}, "overlaps"},
		{"nested virtual", []Mount{{HostDir: a, VirtualPath: "/d"}, {HostDir: b, VirtualPath: "/d/e"}}, Options{}, "overlaps"},
		{"nested virtual reversed", []Mount{{HostDir: a, VirtualPath: "/d/e/f"}, {HostDir: b, VirtualPath: "/d"}}, Options{}, "overlaps"},
		{"root overlaps all", []Mount{{HostDir: a, VirtualPath: "/d"}, {HostDir: b, VirtualPath: "/"}}, Options{}, "overlaps"},
		{"missing host", []Mount{{HostDir: filepath.Join(base, "nope"), VirtualPath: "/d"}}, Options{}, "no such file"},
		{"host is a file", []Mount{{HostDir: file, VirtualPath: "/d"}}, Options{}, "not a directory"},
		{"empty host", []Mount{{VirtualPath: "/d"}}, Options{}, "empty host"},
		{"bad mode", []Mount{{HostDir: a, VirtualPath: "/d", Mode: 9}}, Options{}, "unknown mode"},
		{"negative limit", []Mount{{HostDir: a, VirtualPath: "/d", WriteLimit: -1}}, Options{}, "negative limit"},
		{"rw host overlaps", []Mount{{HostDir: a, VirtualPath: "/d", Mode: ReadWrite}, {HostDir: filepath.Join(a, "inner"), VirtualPath: "/e"}}, Options{}, "overlaps the host directory"},
		{"rw same host", []Mount{{HostDir: a, VirtualPath: "/d"}, {HostDir: a + "/", VirtualPath: "/e", Mode: ReadWrite}}, Options{}, "overlaps the host directory"},
		{"relative cwd", nil, Options{Cwd: "x"}, "not an absolute path"},
		{"negative timeout", nil, Options{OpTimeout: -1}, "negative OpTimeout"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			tbl, err := New(c.mounts, c.opts)
			if err == nil {
				tbl.Close()
				t.Fatalf("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not mention %q", err, c.want)
			}
		})
	}

	// Disjoint and sibling virtual paths, read-only host overlap and a
	// cleaned virtual path are fine.
	tbl, err := New([]Mount{
		{HostDir: a, VirtualPath: "/data/"},
		{HostDir: b, VirtualPath: "/data2", Mode: Overlay},
		{HostDir: filepath.Join(a, "inner"), VirtualPath: "/x/./y"},
	}, Options{Cwd: "/data/."})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	if tbl.Cwd() != "/data" {
		t.Fatalf("cwd %q", tbl.Cwd())
	}
	ms := tbl.Mounts()
	if len(ms) != 3 || ms[0].VirtualPath != "/data2" || ms[1].VirtualPath != "/data" || ms[0].WriteLimit != DefaultWriteLimit || ms[0].MemoryLimit != DefaultMemoryLimit {
		t.Fatalf("mounts %+v", ms)
	}
	wantBool(t, doCall(t, tbl, opCall(message.OpIsDir, "/x/y")), true)
	wantBool(t, doCall(t, tbl, opCall(message.OpIsDir, "/data2")), true)
	wantBool(t, doCall(t, tbl, opCall(message.OpIsDir, "inner")), true)
}

func TestMountAtRoot(t *testing.T) {
	f := newFixture(t, ReadOnly, func(m *Mount, _ *Options) { m.VirtualPath = "/" })
	wantStr(t, f.do(opCall(message.OpReadText, "/x.txt")), "hello")
	wantStr(t, f.do(opCall(message.OpReadText, "/../../x.txt")), "hello")
	wantPaths(t, f.do(opCall(message.OpIterdir, "/")), "/bin.dat", "/sub", "/x.txt")
	wantPath(t, f.do(opCall(message.OpResolve, "/sub/../x.txt")), "/x.txt")
	wantExc(t, f.do(opCall(message.OpReadText, "/../outside/secret.txt")), "FileNotFoundError",
		"[Errno 2] No such file or directory: '/../outside/secret.txt'")
}

func TestReadAndListLimits(t *testing.T) {
	f := newFixture(t, ReadOnly, func(m *Mount, _ *Options) { m.MemoryLimit = 300 })
	mustWrite(t, filepath.Join(f.host, "big"), strings.Repeat("b", 301))
	mustWrite(t, filepath.Join(f.host, "fits"), strings.Repeat("b", 300))
	wantExc(t, f.do(opCall(message.OpReadBytes, "/data/big")), "MemoryError",
		"file too large: '/data/big' exceeds the mount's 300-byte read limit")
	if n := len(rootOf(t, f.do(opCall(message.OpReadBytes, "/data/fits"))).Bytes()); n != 300 {
		t.Fatalf("read %d bytes", n)
	}
	dir := filepath.Join(f.host, "many")
	mustMkdir(t, dir)
	for i := 0; i < 10; i++ {
		mustWrite(t, filepath.Join(dir, fmt.Sprintf("file-%02d", i)), "")
	}
	wantExcType(t, f.do(opCall(message.OpIterdir, "/data/many")), "MemoryError")
}

func TestOverlayDirectoryRename(t *testing.T) {
	f := newFixture(t, Overlay)
	mustMkdir(t, filepath.Join(f.host, "sub", "deep"))
	mustWrite(t, filepath.Join(f.host, "sub", "deep", "d.txt"), "D")
	wantInt(t, f.do(textCall(message.OpWriteText, "/data/sub/mine.txt", "M")), 1)
	wantNone(t, f.do(mkdirCall("/data/empty", false, false)))

	// A directory may replace an empty directory.
	wantPath(t, f.do(renameCall("/data/sub", "/data/empty")), "/data/empty")
	wantPaths(t, f.do(opCall(message.OpIterdir, "/data/empty")), "/data/empty/a.txt", "/data/empty/deep", "/data/empty/mine.txt")
	wantStr(t, f.do(opCall(message.OpReadText, "/data/empty/deep/d.txt")), "D")
	wantStr(t, f.do(opCall(message.OpReadText, "/data/empty/mine.txt")), "M")
	wantBool(t, f.do(opCall(message.OpExists, "/data/sub")), false)
	wantBool(t, f.do(opCall(message.OpExists, "/data/sub/a.txt")), false)
	wantExc(t, f.do(opCall(message.OpIterdir, "/data/sub")), "FileNotFoundError",
		"[Errno 2] No such file or directory: '/data/sub'")

	// The moved tree is a copy: later host changes do not show through.
	mustWrite(t, filepath.Join(f.host, "sub", "a.txt"), "changed")
	wantStr(t, f.do(opCall(message.OpReadText, "/data/empty/a.txt")), "A")

	// A file cannot replace a directory, nor a directory a file.
	wantExc(t, f.do(renameCall("/data/empty", "/data/x.txt")), "NotADirectoryError",
		"[Errno 20] Not a directory: '/data/empty' -> '/data/x.txt'")
	// Renaming to itself is a no-op.
	wantPath(t, f.do(renameCall("/data/x.txt", "/data/x.txt")), "/data/x.txt")
	wantStr(t, f.do(opCall(message.OpReadText, "/data/x.txt")), "hello")
	// Rename into a missing directory.
	wantExc(t, f.do(renameCall("/data/x.txt", "/data/nodir/x")), "FileNotFoundError",
		"[Errno 2] No such file or directory: '/data/x.txt' -> '/data/nodir/x'")

	// Removing the whole tree again.
	for _, p := range []string{"/data/empty/deep/d.txt", "/data/empty/a.txt", "/data/empty/mine.txt"} {
		wantNone(t, f.do(opCall(message.OpUnlink, p)))
	}
	wantNone(t, f.do(opCall(message.OpRmdir, "/data/empty/deep")))
	wantNone(t, f.do(opCall(message.OpRmdir, "/data/empty")))
	wantPaths(t, f.do(opCall(message.OpIterdir, "/data")), "/data/bin.dat", "/data/x.txt")
	if !hostExists(filepath.Join(f.host, "sub", "deep", "d.txt")) {
		t.Fatal("overlay reached the host")
	}
}

// TestConcurrentUse runs many calls at once on one table of each mode
// (meaningful under -race).
func TestConcurrentUse(t *testing.T) {
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			f := newFixture(t, mode)
			var wg sync.WaitGroup
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for i := 0; i < 50; i++ {
						p := fmt.Sprintf("/data/g%d-%d.txt", g, i)
						f.tbl.HandleOS(t.Context(), opCall(message.OpReadText, "/data/x.txt"))
						f.tbl.HandleOS(t.Context(), textCall(message.OpWriteText, p, "v"))
						f.tbl.HandleOS(t.Context(), opCall(message.OpIterdir, "/data"))
						f.tbl.HandleOS(t.Context(), opCall(message.OpUnlink, p))
						f.tbl.HandleOS(t.Context(), &message.OsCall{Op: message.OpGetEnviron})
						if g == 0 && i%10 == 0 {
							f.tbl.SetCwd("/data")
						}
					}
				}(g)
			}
			wg.Wait()
			wantStr(t, f.do(opCall(message.OpReadText, "/data/x.txt")), "hello")
			if mode == ReadWrite {
				ents, _ := os.ReadDir(f.host)
				if len(ents) != 3 {
					t.Fatalf("host holds %d entries after the run", len(ents))
				}
			}
		})
	}
}

func TestParseSpec(t *testing.T) {
	good := []struct {
		in   string
		want Mount
	}{
		{"/srv/data::/data", Mount{HostDir: "/srv/data", VirtualPath: "/data", Mode: ReadOnly}},
		{"/srv/data::/data::ro", Mount{HostDir: "/srv/data", VirtualPath: "/data", Mode: ReadOnly}},
		{"/srv/data::/data::rw", Mount{HostDir: "/srv/data", VirtualPath: "/data", Mode: ReadWrite}},
		{"/srv/data::/data::overlay", Mount{HostDir: "/srv/data", VirtualPath: "/data", Mode: Overlay}},
		{"/srv/data::/data::RW", Mount{HostDir: "/srv/data", VirtualPath: "/data", Mode: ReadWrite}},
		{"rel/dir::/data/./x/", Mount{HostDir: "rel/dir", VirtualPath: "/data/x", Mode: ReadOnly}},
		{"/odd::name::/data::overlay", Mount{HostDir: "/odd::name", VirtualPath: "/data", Mode: Overlay}},
		{"/odd::name::/data", Mount{HostDir: "/odd::name", VirtualPath: "/data", Mode: ReadOnly}},
		{"C:x::/", Mount{HostDir: "C:x", VirtualPath: "/", Mode: ReadOnly}},
		// Cut from the right: a virtual path or a host ending in ':'
		// (String writes such a mount so; FuzzParseSpec found "0::/:").
		{"0::/:", Mount{HostDir: "0", VirtualPath: "/:", Mode: ReadOnly}},
		{"0::/:::ro", Mount{HostDir: "0", VirtualPath: "/:", Mode: ReadOnly}},
		{"h::/v:::rw", Mount{HostDir: "h", VirtualPath: "/v:", Mode: ReadWrite}},
		{"h:::/v", Mount{HostDir: "h:", VirtualPath: "/v", Mode: ReadOnly}},
		{"h:::/v:::overlay", Mount{HostDir: "h:", VirtualPath: "/v:", Mode: Overlay}},
	}
	for _, c := range good {
		got, err := ParseSpec(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if again, err := ParseSpec(c.want.String()); err != nil || again != c.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", c.want.String(), again, err, c.want)
		}
	}
	bad := []string{
		"", "/srv/data", "/srv/data:/data", "/srv/data::data", "::/data", "/srv::/data::wo",
		"/srv::/data::", "/srv::data::rw", "/srv::/d\x00::ro", "/srv::::rw",
	}
	for _, s := range bad {
		if m, err := ParseSpec(s); err == nil {
			t.Errorf("ParseSpec(%q) = %+v, want an error", s, m)
		}
	}
	m, _ := ParseSpec("/srv::/data::overlay")
	if m.String() != "/srv::/data::overlay" {
		t.Errorf("String %q", m.String())
	}
	if _, err := ParseMode("x"); err == nil {
		t.Error("ParseMode accepted x")
	}
	if Mode(7).String() != "Mode(7)" {
		t.Error("Mode.String")
	}
}

package mount_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/mount"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// liveSession starts a real worker session for tbl.
func liveSession(t *testing.T) (context.Context, *session.Session) {
	t.Helper()
	bin := testenv.Worker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	cfg := session.Config{OsPolicy: &message.OsPolicy{Clock: message.ClockCallHost}}
	s, err := session.Start(ctx, session.Launch{Launcher: session.ProcessLauncher{Worker: worker.Config{Binary: bin}}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return ctx, s
}

// TestLiveEmptyPath checks, through the real worker, that the os
// functions and open() refuse the empty path with FileNotFoundError as
// CPython does, in every mode, while pathlib's Path("") stays the working
// directory.
func TestLiveEmptyPath(t *testing.T) {
	ctx, s := liveSession(t)
	const enoent = "!FileNotFoundError: [Errno 2] No such file or directory: ''"
	steps := []struct{ code, want string }{
		{"import os\nfrom pathlib import Path", "None"},
		{"os.listdir('')", enoent},
		{"os.stat('')", enoent},
		{"open('')", enoent},
		{"open('', 'w')", enoent},
		{"open('', 'ab')", enoent},
		{"os.mkdir('')", enoent},
		{"os.makedirs('', exist_ok=True)", enoent},
		{"os.rmdir('')", enoent},
		{"os.unlink('')", enoent},
		{"os.remove('')", enoent},
		{"os.rename('', 'y')", enoent + " -> 'y'"},
		{"os.replace('x.txt', '')", "!FileNotFoundError: [Errno 2] No such file or directory: 'x.txt' -> ''"},
		{"(Path('').exists(), Path('').is_dir())", "(True, True)"},
		{"Path('').absolute()", "PosixPath('/data')"},
		{"sorted(os.listdir('.'))", "['b.bin', 'del.txt', 'empty', 'rel', 'ren.txt', 'sub', 'w.txt', 'x.txt']"},
	}
	for _, m := range liveModes {
		t.Run(m.String(), func(t *testing.T) {
			dir, _ := liveFixture(t)
			tbl, err := mount.New([]mount.Mount{{HostDir: dir, VirtualPath: "/data", Mode: m}}, mount.Options{Cwd: "/data"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tbl.Close() })
			for _, st := range steps {
				want := st.want
				if m == mount.Overlay && st.code == "sorted(os.listdir('.'))" {
					want = "['b.bin', 'del.txt', 'empty', 'ren.txt', 'sub', 'w.txt', 'x.txt']" // no symlinks
				}
				if got := liveRun(t, ctx, s, tbl, st.code); got != want {
					t.Errorf("%s\n got: %s\nwant: %s", st.code, got, want)
				}
			}
		})
	}
}

// TestLiveEntryLimit checks, through the real worker, that loops of
// os.mkdir and of open(..., 'w') on a ReadWrite mount end with OSError
// "[Errno 122] Disk quota exceeded" once the mount's EntryLimit is spent,
// having created exactly that many entries on the host.
func TestLiveEntryLimit(t *testing.T) {
	ctx, s := liveSession(t)
	const limit = 25
	loops := map[string]string{
		"mkdir": "import os\nn = 0\ntry:\n    for i in range(1000):\n        os.mkdir(f'd{i}')\n        n += 1\nexcept OSError as e:\n    r = (n, str(e))\nr",
		"open":  "n = 0\ntry:\n    for i in range(1000):\n        open(f'f{i}', 'w').close()\n        n += 1\nexcept OSError as e:\n    r = (n, str(e))\nr",
		"write": "from pathlib import Path\nn = 0\ntry:\n    for i in range(1000):\n        Path(f'w{i}').write_text('')\n        n += 1\nexcept OSError as e:\n    r = (n, str(e))\nr",
	}
	wants := map[string]string{
		"mkdir": "(25, \"[Errno 122] Disk quota exceeded: 'd25'\")",
		"open":  "(25, \"[Errno 122] Disk quota exceeded: 'f25'\")",
		"write": "(25, \"[Errno 122] Disk quota exceeded: 'w25'\")",
	}
	for name, code := range loops {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			tbl, err := mount.New([]mount.Mount{{HostDir: dir, VirtualPath: "/data", Mode: mount.ReadWrite, EntryLimit: limit}},
				mount.Options{Cwd: "/data"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tbl.Close() })
			if got := liveRun(t, ctx, s, tbl, code); got != wants[name] {
				t.Errorf("got %s, want %s", got, wants[name])
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) != limit {
				t.Errorf("%d host entries, want %d", len(ents), limit)
			}
		})
	}
}

// TestLiveReadOnlyLookupsFirst checks, through the real worker, that a
// ReadOnly mount answers changes as a read-only file system does
// (recorded with CPython on a read-only tmpfs): Linux looks up the
// parents first (FileNotFoundError, NotADirectoryError), refuses to open
// or write a directory or a name written with a trailing slash
// (IsADirectoryError), and only then reports EROFS, where every change
// used to be "[Errno 30] Read-only file system". (The mount's EROFS is a
// PermissionError, where CPython raises a plain OSError.)
func TestLiveReadOnlyLookupsFirst(t *testing.T) {
	ctx, s := liveSession(t)
	dir := t.TempDir()
	if err := os.Mkdir(dir+"/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	for p, c := range map[string]string{dir + "/sub/a.txt": "A\n", dir + "/x.txt": "hi\n"} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tbl, err := mount.New([]mount.Mount{{HostDir: dir, VirtualPath: "/data", Mode: mount.ReadOnly}}, mount.Options{Cwd: "/data"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	if got := liveRun(t, ctx, s, tbl, "import os\nfrom pathlib import Path"); got != "None" {
		t.Fatal(got)
	}
	for _, c := range []struct{ code, want string }{
		{`open('nodir/x', 'w')`, `!FileNotFoundError: [Errno 2] No such file or directory: 'nodir/x'`},
		{`open('x.txt/y', 'w')`, `!NotADirectoryError: [Errno 20] Not a directory: 'x.txt/y'`},
		{`open('x.txt/y', 'a')`, `!NotADirectoryError: [Errno 20] Not a directory: 'x.txt/y'`},
		{`open('sub', 'w')`, `!IsADirectoryError: [Errno 21] Is a directory: 'sub'`},
		{`open('sub', 'ab')`, `!IsADirectoryError: [Errno 21] Is a directory: 'sub'`},
		{`open('new', 'w')`, `!PermissionError: [Errno 30] Read-only file system: 'new'`},
		{`open('x.txt', 'a')`, `!PermissionError: [Errno 30] Read-only file system: 'x.txt'`},
		{`open('x.txt', 'w')`, `!PermissionError: [Errno 30] Read-only file system: 'x.txt'`},
		{`open('x.txt/', 'w')`, `!IsADirectoryError: [Errno 21] Is a directory: 'x.txt/'`},
		{`open('sub/', 'w')`, `!IsADirectoryError: [Errno 21] Is a directory: 'sub/'`},
		{`open('new/', 'w')`, `!IsADirectoryError: [Errno 21] Is a directory: 'new/'`},
		{`open('nodir/new/', 'w')`, `!FileNotFoundError: [Errno 2] No such file or directory: 'nodir/new/'`},
		{`open('sub/.', 'w')`, `!IsADirectoryError: [Errno 21] Is a directory: 'sub/.'`},
		{`os.unlink('missing')`, `!PermissionError: [Errno 30] Read-only file system: 'missing'`},
		{`os.unlink('nodir/x')`, `!FileNotFoundError: [Errno 2] No such file or directory: 'nodir/x'`},
		{`os.unlink('x.txt/y')`, `!NotADirectoryError: [Errno 20] Not a directory: 'x.txt/y'`},
		{`os.unlink('sub')`, `!PermissionError: [Errno 30] Read-only file system: 'sub'`},
		{`os.unlink('x.txt')`, `!PermissionError: [Errno 30] Read-only file system: 'x.txt'`},
		{`os.unlink('x.txt/')`, `!PermissionError: [Errno 30] Read-only file system: 'x.txt/'`},
		{`os.unlink('sub/')`, `!PermissionError: [Errno 30] Read-only file system: 'sub/'`},
		{`os.unlink('missing/')`, `!PermissionError: [Errno 30] Read-only file system: 'missing/'`},
		{`os.unlink('sub/.')`, `!IsADirectoryError: [Errno 21] Is a directory: 'sub/.'`},
		{`os.rmdir('missing')`, `!PermissionError: [Errno 30] Read-only file system: 'missing'`},
		{`os.rmdir('nodir/x')`, `!FileNotFoundError: [Errno 2] No such file or directory: 'nodir/x'`},
		{`os.rmdir('x.txt/y')`, `!NotADirectoryError: [Errno 20] Not a directory: 'x.txt/y'`},
		{`os.rmdir('x.txt')`, `!PermissionError: [Errno 30] Read-only file system: 'x.txt'`},
		{`os.rmdir('sub')`, `!PermissionError: [Errno 30] Read-only file system: 'sub'`},
		{`os.rmdir('x.txt/')`, `!PermissionError: [Errno 30] Read-only file system: 'x.txt/'`},
		{`os.rmdir('sub/.')`, `!OSError: [Errno 22] Invalid argument: 'sub/.'`},
		{`os.rmdir('sub/..')`, `!OSError: [Errno 39] Directory not empty: 'sub/..'`},
		{`os.rename('missing', 'y')`, `!PermissionError: [Errno 30] Read-only file system: 'missing' -> 'y'`},
		{`os.rename('x.txt', 'nodir/y')`, `!FileNotFoundError: [Errno 2] No such file or directory: 'x.txt' -> 'nodir/y'`},
		{`os.rename('nodir/x', 'y')`, `!FileNotFoundError: [Errno 2] No such file or directory: 'nodir/x' -> 'y'`},
		{`os.rename('x.txt/z', 'y')`, `!NotADirectoryError: [Errno 20] Not a directory: 'x.txt/z' -> 'y'`},
		{`os.rename('x.txt', 'x.txt/y')`, `!NotADirectoryError: [Errno 20] Not a directory: 'x.txt' -> 'x.txt/y'`},
		{`os.rename('x.txt', 'sub')`, `!PermissionError: [Errno 30] Read-only file system: 'x.txt' -> 'sub'`},
		{`os.rename('x.txt/', 'y')`, `!PermissionError: [Errno 30] Read-only file system: 'x.txt/' -> 'y'`},
		{`os.rename('sub', 'x.txt/')`, `!PermissionError: [Errno 30] Read-only file system: 'sub' -> 'x.txt/'`},
		{`os.rename('sub/.', 'y')`, `!OSError: [Errno 16] Device or resource busy: 'sub/.' -> 'y'`},
		{`Path('nodir/x').write_text('a')`, `!FileNotFoundError: [Errno 2] No such file or directory: 'nodir/x'`},
		{`Path('x.txt/y').write_text('a')`, `!NotADirectoryError: [Errno 20] Not a directory: 'x.txt/y'`},
		{`Path('sub').write_text('a')`, `!IsADirectoryError: [Errno 21] Is a directory: 'sub'`},
		{`Path('sub').write_bytes(b'a')`, `!IsADirectoryError: [Errno 21] Is a directory: 'sub'`},
		{`Path('new').write_text('a')`, `!PermissionError: [Errno 30] Read-only file system: 'new'`},
		{`Path('x.txt').write_text('a')`, `!PermissionError: [Errno 30] Read-only file system: 'x.txt'`},
	} {
		if got := liveRun(t, ctx, s, tbl, c.code); got != c.want {
			t.Errorf("%s\n got: %s\nwant: %s", c.code, got, c.want)
		}
	}
}

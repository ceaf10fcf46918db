package mount_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/mount"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// Every OS-call arm the released worker can produce (behaviour-v2 §10),
// driven through a real worker session against a mount.Table in each mode.

// liveSecret is the content of a host file outside the mount; no answer may
// ever contain it.
const liveSecret = "LIVE-TOPSECRET"

var liveModes = []mount.Mode{mount.ReadOnly, mount.ReadWrite, mount.Overlay}

// liveMtime is the modification time of every fixture file.
var liveMtime = time.Unix(1700000000, 0)

// want is one mode's expectation: a repr, or "!Type: message" for an
// exception.
type want = string

// liveStep is one snippet, run in order on each mode's session.
type liveStep struct {
	name string
	code string
	// want is indexed by mode (ReadOnly, ReadWrite, Overlay).
	want [3]want
	// host checks the host directory after the snippet ran.
	host func(t *testing.T, m mount.Mode, dir string)
}

func all(w want) [3]want { return [3]want{w, w, w} }

// roErr is the ReadOnly refusal of a change.
func roErr(p string) want { return "!PermissionError: [Errno 30] Read-only file system: '" + p + "'" }

// roRename is the ReadOnly refusal of a rename, naming both paths.
func roRename(src, dst string) want {
	return "!PermissionError: [Errno 30] Read-only file system: '" + src + "' -> '" + dst + "'"
}

func denied(p string) want { return "!PermissionError: [Errno 13] Permission denied: '" + p + "'" }

func notFound(p string) want {
	return "!FileNotFoundError: [Errno 2] No such file or directory: '" + p + "'"
}

// rw gives the ReadOnly answer ro and the ReadWrite/Overlay answer w.
func rw(ro, w want) [3]want { return [3]want{ro, w, w} }

// hostFile checks a host file's content; gone means it must not exist.
func hostFile(rel string, content string, gone bool) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, rel))
		switch {
		case gone && err == nil:
			t.Errorf("host %s exists (%q), want absent", rel, b)
		case gone && !errors.Is(err, os.ErrNotExist):
			t.Errorf("host %s: %v", rel, err)
		case !gone && err != nil:
			t.Errorf("host %s: %v", rel, err)
		case !gone && string(b) != content:
			t.Errorf("host %s = %q, want %q", rel, b, content)
		}
	}
}

// changed checks the host after a change: applied reaches the host only in
// ReadWrite mode; ReadOnly and Overlay leave what was there (orig).
func changed(applied, orig func(*testing.T, string)) func(*testing.T, mount.Mode, string) {
	return func(t *testing.T, m mount.Mode, dir string) {
		t.Helper()
		if m == mount.ReadWrite {
			applied(t, dir)
		} else {
			orig(t, dir)
		}
	}
}

func hostDir(rel string, present bool) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		fi, err := os.Stat(filepath.Join(dir, rel))
		switch {
		case present && (err != nil || !fi.IsDir()):
			t.Errorf("host dir %s: %v, want a directory", rel, err)
		case !present && !errors.Is(err, os.ErrNotExist):
			t.Errorf("host %s: err %v, want absent", rel, err)
		}
	}
}

var liveSteps = []liveStep{
	{name: "imports", code: "from pathlib import Path\nimport os\nimport datetime", want: all("None")},

	// Predicates.
	{name: "exists", code: "Path('/data/x.txt').exists()", want: all("True")},
	{name: "exists/missing", code: "Path('/data/nope').exists()", want: all("False")},
	{name: "is_file", code: "(Path('/data/x.txt').is_file(), Path('/data/sub').is_file())", want: all("(True, False)")},
	{name: "is_dir", code: "(Path('/data/sub').is_dir(), Path('/data/x.txt').is_dir(), Path('/data').is_dir())", want: all("(True, False, True)")},
	{name: "is_symlink", code: "(Path('/data/rel').is_symlink(), Path('/data/x.txt').is_symlink())", want: all("(True, False)")},

	// Reads.
	{name: "read_text", code: "Path('/data/x.txt').read_text()", want: all(`'hello\nworld\n'`)},
	{name: "read_text/missing", code: "Path('/data/nope.txt').read_text()", want: all(notFound("/data/nope.txt"))},
	{name: "read_bytes", code: "Path('/data/b.bin').read_bytes()", want: all(`b'\x00\x01\x02'`)},
	{name: "stat", code: "st1 = Path('/data/x.txt').stat()\n(st1.st_mode, st1.st_size, st1.st_nlink, st1.st_mtime, st1[6], len(st1))",
		want: all("(33188, 12, 1, 1700000000.0, 12, 10)")},
	{name: "stat/dir", code: "st2 = Path('/data/sub').stat()\nst2.st_mode & 0o170000 == 0o040000", want: all("True")},
	{name: "iterdir", code: "sorted(str(p) for p in Path('/data').iterdir())",
		want: [3]want{
			"['/data/b.bin', '/data/del.txt', '/data/empty', '/data/rel', '/data/ren.txt', '/data/sub', '/data/w.txt', '/data/x.txt']",
			"['/data/b.bin', '/data/del.txt', '/data/empty', '/data/rel', '/data/ren.txt', '/data/sub', '/data/w.txt', '/data/x.txt']",
			"['/data/b.bin', '/data/del.txt', '/data/empty', '/data/ren.txt', '/data/sub', '/data/w.txt', '/data/x.txt']",
		}},
	{name: "iterdir/repr", code: "Path('/data/sub').iterdir()", want: all("[PosixPath('/data/sub/a.txt')]")},
	{name: "os.listdir", code: "os.listdir('/data/sub')", want: all("['a.txt']")},
	{name: "resolve", code: "(Path('/data/sub/../x.txt').resolve(), Path('/data/rel').resolve())",
		want: [3]want{
			"(PosixPath('/data/x.txt'), PosixPath('/data/x.txt'))",
			"(PosixPath('/data/x.txt'), PosixPath('/data/x.txt'))",
			"(PosixPath('/data/x.txt'), PosixPath('/data/rel'))",
		}},
	{name: "absolute", code: "(Path('rel').absolute(), Path('/data/sub').absolute())", want: all("(PosixPath('/rel'), PosixPath('/data/sub'))")},
	{name: "open/read", code: "fr = open('/data/x.txt')\n(fr.read(3), fr.read(), fr.tell())", want: all(`('hel', 'lo\nworld\n', 12)`)},
	{name: "open/readlines", code: "with open('/data/x.txt') as fl:\n    lines = fl.readlines()\nlines", want: all(`['hello\n', 'world\n']`)},
	{name: "open/rb", code: "with open('/data/b.bin', 'rb') as fbr:\n    rb = fbr.read()\nrb", want: all(`b'\x00\x01\x02'`)},
	{name: "open/repr", code: "fo = open('/data/x.txt')\nfo", want: all("<_io.TextIOWrapper name='/data/x.txt' mode='r' encoding='utf-8'>")},

	// Writes.
	{name: "write_text", code: "Path('/data/new.txt').write_text('hi')", want: rw(roErr("/data/new.txt"), "2"),
		host: changed(hostFile("new.txt", "hi", false), hostFile("new.txt", "", true))},
	{name: "write_text/read", code: "Path('/data/new.txt').read_text()", want: rw(notFound("/data/new.txt"), "'hi'")},
	{name: "append_text", code: "fa = open('/data/new.txt', 'a')\nna = fa.write('XY')\nfa.close()\nna", want: rw(roErr("/data/new.txt"), "2"),
		host: changed(hostFile("new.txt", "hiXY", false), hostFile("new.txt", "", true))},
	{name: "append_text/read", code: "Path('/data/new.txt').read_text()", want: rw(notFound("/data/new.txt"), "'hiXY'")},
	{name: "open-w/existing", code: "fw = open('/data/w.txt', 'w')\nnw1 = fw.write('one')\nnw2 = fw.write('two')\nfw.close()\n(nw1, nw2)",
		want: rw(roErr("/data/w.txt"), "(3, 3)"),
		host: changed(hostFile("w.txt", "onetwo", false), hostFile("w.txt", "orig", false))},
	{name: "open-w/read", code: "Path('/data/w.txt').read_text()", want: rw("'orig'", "'onetwo'")},
	{name: "write_bytes", code: "Path('/data/new.bin').write_bytes(b'\\x00ab')", want: rw(roErr("/data/new.bin"), "3"),
		host: changed(hostFile("new.bin", "\x00ab", false), hostFile("new.bin", "", true))},
	{name: "write_bytes/read", code: "Path('/data/new.bin').read_bytes()", want: rw(notFound("/data/new.bin"), `b'\x00ab'`)},
	{name: "append_bytes", code: "fb = open('/data/new2.bin', 'wb')\nnb1 = fb.write(b'zz')\nnb2 = fb.write(b'y')\nfb.close()\n(nb1, nb2)",
		want: rw(roErr("/data/new2.bin"), "(2, 1)"),
		host: changed(hostFile("new2.bin", "zzy", false), hostFile("new2.bin", "", true))},
	{name: "append_bytes/read", code: "Path('/data/new2.bin').read_bytes()", want: rw(notFound("/data/new2.bin"), `b'zzy'`)},
	{name: "mkdir/parents", code: "Path('/data/d1/d2').mkdir(parents=True)", want: rw(roErr("/data/d1"), "None"), // CPython names the ancestor it tried
		host: changed(hostDir("d1/d2", true), hostDir("d1", false))},
	{name: "mkdir/read", code: "(Path('/data/d1/d2').is_dir(), Path('/data/d1').exists())", want: rw("(False, False)", "(True, True)")},
	{name: "mkdir/exist_ok", code: "Path('/data/sub').mkdir(exist_ok=True)", want: all("None")},
	{name: "mkdir/parents+exist_ok", code: "Path('/data/sub').mkdir(parents=True, exist_ok=True)", want: all("None")},
	{name: "mkdir/exists", code: "Path('/data/sub').mkdir()", want: all("!FileExistsError: [Errno 17] File exists: '/data/sub'")},
	{name: "mkdir/no-parent", code: "Path('/data/q1/q2').mkdir()", want: all(notFound("/data/q1/q2"))},
	{name: "rename", code: "Path('/data/ren.txt').rename('/data/ren2.txt')", want: rw(roRename("/data/ren.txt", "/data/ren2.txt"), "PosixPath('/data/ren2.txt')"),
		host: changed(
			func(t *testing.T, d string) {
				hostFile("ren.txt", "", true)(t, d)
				hostFile("ren2.txt", "R", false)(t, d)
			},
			func(t *testing.T, d string) {
				hostFile("ren.txt", "R", false)(t, d)
				hostFile("ren2.txt", "", true)(t, d)
			})},
	{name: "rename/read", code: "(Path('/data/ren.txt').exists(), Path('/data/ren2.txt').read_text())", want: rw(notFound("/data/ren2.txt"), "(False, 'R')")},
	{name: "unlink", code: "Path('/data/del.txt').unlink()", want: rw(roErr("/data/del.txt"), "None"),
		host: changed(hostFile("del.txt", "", true), hostFile("del.txt", "D", false))},
	{name: "unlink/read", code: "Path('/data/del.txt').exists()", want: rw("True", "False")},
	{name: "unlink/missing", code: "Path('/data/nope').unlink()", want: rw(roErr("/data/nope"), notFound("/data/nope"))},
	{name: "rmdir", code: "Path('/data/empty').rmdir()", want: rw(roErr("/data/empty"), "None"),
		host: changed(hostDir("empty", false), hostDir("empty", true))},
	{name: "rmdir/read", code: "Path('/data/empty').is_dir()", want: rw("True", "False")},
	{name: "rmdir/not-empty", code: "Path('/data/sub').rmdir()", want: rw(roErr("/data/sub"), "!OSError: [Errno 39] Directory not empty: '/data/sub'")},
	{name: "iterdir/after", code: "sorted(os.listdir('/data'))",
		want: [3]want{
			"['b.bin', 'del.txt', 'empty', 'rel', 'ren.txt', 'sub', 'w.txt', 'x.txt']",
			"['b.bin', 'd1', 'new.bin', 'new.txt', 'new2.bin', 'rel', 'ren2.txt', 'sub', 'w.txt', 'x.txt']",
			"['b.bin', 'd1', 'new.bin', 'new.txt', 'new2.bin', 'ren2.txt', 'sub', 'w.txt', 'x.txt']",
		}},

	// Environment and clock.
	{name: "getenv", code: "os.getenv('HOME')", want: all("'/home/sandbox'")},
	{name: "getenv/missing", code: "os.getenv('NOPE')", want: all("None")},
	{name: "getenv/default", code: "(os.getenv('NOPE', 'dflt'), os.getenv('HOME', 'dflt'))", want: all("('dflt', '/home/sandbox')")},
	{name: "environ", code: "os.environ", want: all("{'HOME': '/home/sandbox', 'LANG': 'C.UTF-8'}")},
	{name: "environ/item", code: "os.environ['LANG']", want: all("'C.UTF-8'")},
	{name: "date_today", code: "datetime.date.today()", want: all("datetime.date(2025, 1, 2)")},
	{name: "datetime_now", code: "datetime.datetime.now()", want: all("datetime.datetime(2025, 1, 2, 3, 4, 5, 6)")},
	{name: "datetime_now/utc", code: "datetime.datetime.now(datetime.timezone.utc)",
		want: all("datetime.datetime(2025, 1, 2, 3, 4, 5, 6, tzinfo=datetime.timezone.utc)")},

	// Confinement.
	{name: "outside/read", code: "Path('/etc/passwd').read_text()", want: all(denied("/etc/passwd"))},
	// Unlike an escaping symlink (False), a path under no mount is refused
	// even by the predicates.
	{name: "outside/exists", code: "Path('/etc/passwd').exists()", want: all(denied("/etc/passwd"))},
	{name: "dotdot/exists", code: "Path('/data/../etc/passwd').is_file()", want: all(denied("/data/../etc/passwd"))},
	{name: "outside/write", code: "Path('/tmp/pwn.txt').write_text('x')", want: all(denied("/tmp/pwn.txt"))},
	{name: "outside/listdir", code: "os.listdir('/')", want: all(denied("/"))},
	{name: "dotdot/read", code: "Path('/data/../../etc/passwd').read_text()", want: all(denied("/data/../../etc/passwd"))},
	{name: "dotdot/secret", code: "Path('/data/../outside/secret.txt').read_text()", want: all(denied("/data/../outside/secret.txt"))},
	{name: "dotdot/write", code: "Path('/data/../pwn.txt').write_text('x')", want: all(denied("/data/../pwn.txt"))},
	{name: "rename/outside", code: "Path('/data/x.txt').rename('/tmp/x.txt')", want: rw(roRename("/data/x.txt", "/tmp/x.txt"), "!PermissionError: [Errno 13] Permission denied: '/data/x.txt' -> '/tmp/x.txt'"),
		host: func(t *testing.T, _ mount.Mode, d string) { hostFile("x.txt", "hello\nworld\n", false)(t, d) }},
	{name: "symlink-out/read", code: "Path('/data/esc').read_text()", want: all(denied("/data/esc"))},
	{name: "symlink-out/bytes", code: "Path('/data/esc').read_bytes()", want: all(denied("/data/esc"))},
	{name: "symlink-out/open", code: "open('/data/esc').read()", want: all(denied("/data/esc"))},
	{name: "symlink-out/predicates", code: "(Path('/data/esc').exists(), Path('/data/esc').is_file(), Path('/data/esc').is_symlink())", want: all("(False, False, True)")},
	{name: "symlink-out/dir", code: "Path('/data/escdir/secret.txt').read_text()", want: all(denied("/data/escdir/secret.txt"))},
	{name: "symlink-out/write", code: "Path('/data/esc').write_text('x')", want: rw(roErr("/data/esc"), denied("/data/esc")),
		host: func(t *testing.T, _ mount.Mode, _ string) {}},
	{name: "symlink-out/resolve", code: "Path('/data/esc').resolve()", want: all("PosixPath('/data/esc')")},
}

func TestLiveMountArms(t *testing.T) {
	bin := testenv.Worker(t)
	for _, m := range liveModes {
		t.Run(m.String(), func(t *testing.T) {
			dir, outside := liveFixture(t)
			tbl, err := mount.New([]mount.Mount{{HostDir: dir, VirtualPath: "/data", Mode: m}}, mount.Options{
				Env:   map[string]string{"HOME": "/home/sandbox", "LANG": "C.UTF-8"},
				Clock: mount.FixedClock(time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tbl.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
			t.Cleanup(cancel)
			// At protocol 5 the clock is the child's unless the policy
			// hands it to the host (the table's fixed clock); 4 and 2
			// always ask the host and do not send the policy.
			cfg := session.Config{OsPolicy: &message.OsPolicy{Clock: message.ClockCallHost}}
			s, err := session.Start(ctx, session.Launch{Launcher: session.ProcessLauncher{Worker: worker.Config{Binary: bin}}}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })

			for _, st := range liveSteps {
				t.Run(st.name, func(t *testing.T) {
					got := liveRun(t, ctx, s, tbl, st.code)
					if w := st.want[m]; got != w {
						t.Errorf("%s\n got: %s\nwant: %s", st.code, got, w)
					}
					if strings.Contains(got, liveSecret) || strings.Contains(got, dir) || strings.Contains(got, outside) {
						t.Errorf("answer leaks host data: %s", got)
					}
					if st.host != nil {
						st.host(t, m, dir)
					}
				})
			}
			// The secret outside the mount was never touched.
			hostFile("secret.txt", liveSecret, false)(t, outside)
		})
	}
}

// liveRun runs code and renders the outcome as a want.
func liveRun(t *testing.T, ctx context.Context, s *session.Session, tbl *mount.Table, code string) string {
	t.Helper()
	r, err := s.Run(ctx, code, session.WithOS(tbl))
	var pe *session.PythonError
	switch {
	case errors.As(err, &pe):
		return "!" + pe.Type() + ": " + pe.Exception.Msg()
	case err != nil:
		t.Fatalf("%s: %v", code, err)
	}
	return r.Repr()
}

// liveFixture builds the host tree:
//
//	dir/x.txt      "hello\nworld\n"
//	dir/b.bin      00 01 02
//	dir/w.txt      "orig"   (overwritten with open 'w')
//	dir/ren.txt    "R"      (renamed)
//	dir/del.txt    "D"      (unlinked)
//	dir/empty/              (removed)
//	dir/sub/a.txt  "A"
//	dir/rel    -> x.txt                 (relative, inside)
//	dir/esc    -> outside/secret.txt    (absolute, outside)
//	dir/escdir -> ../outside            (relative, climbs out)
//	outside/secret.txt  liveSecret
func liveFixture(t *testing.T) (dir, outside string) {
	t.Helper()
	base := t.TempDir()
	dir, outside = filepath.Join(base, "data"), filepath.Join(base, "outside")
	for _, d := range []string{dir, outside, filepath.Join(dir, "sub"), filepath.Join(dir, "empty")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(dir, "x.txt"):          "hello\nworld\n",
		filepath.Join(dir, "b.bin"):          "\x00\x01\x02",
		filepath.Join(dir, "w.txt"):          "orig",
		filepath.Join(dir, "ren.txt"):        "R",
		filepath.Join(dir, "del.txt"):        "D",
		filepath.Join(dir, "sub", "a.txt"):   "A",
		filepath.Join(outside, "secret.txt"): liveSecret,
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, liveMtime, liveMtime); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"rel":    "x.txt",
		"esc":    filepath.Join(outside, "secret.txt"),
		"escdir": "../outside",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir, outside
}

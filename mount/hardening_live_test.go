package mount_test

import (
	"context"
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

//go:build unix

package mount_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/mount"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// liveFS is liveFixture's mounted tree as an fstest.MapFS, without the
// symlinks that leave it (an fs.FS has no outside to reach).
func liveFS() fstest.MapFS {
	f := func(s string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(s), Mode: 0o644, ModTime: liveMtime}
	}
	return fstest.MapFS{
		"x.txt":     f("hello\nworld\n"),
		"b.bin":     f("\x00\x01\x02"),
		"w.txt":     f("orig"),
		"ren.txt":   f("R"),
		"del.txt":   f("D"),
		"sub":       {Mode: fs.ModeDir | 0o755, ModTime: liveMtime},
		"sub/a.txt": f("A"),
		"empty":     {Mode: fs.ModeDir | 0o755, ModTime: liveMtime},
		"rel":       {Data: []byte("x.txt"), Mode: fs.ModeSymlink | 0o777},
	}
}

// TestLiveFSMountArms runs TestLiveMountArms's snippets through a real
// worker against an fs.FS mounted ReadOnly and Overlay, and requires the
// answers a host directory of the same tree gets in that mode: reads,
// listings, stat, resolve, the same exceptions for every refused change
// on ReadOnly, writes read back on Overlay. The snippets about symlinks
// out of the host directory are left out. The FS is unchanged at the end.
func TestLiveFSMountArms(t *testing.T) {
	bin := testenv.Worker(t)
	for _, m := range []mount.Mode{mount.ReadOnly, mount.Overlay} {
		t.Run(m.String(), func(t *testing.T) {
			fsys := liveFS()
			tbl, err := mount.New([]mount.Mount{{FS: fsys, VirtualPath: "/data", Mode: m}}, mount.Options{
				Env:   map[string]string{"HOME": "/home/sandbox", "LANG": "C.UTF-8"},
				Clock: mount.FixedClock(time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tbl.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
			t.Cleanup(cancel)
			cfg := session.Config{OsPolicy: &message.OsPolicy{Clock: message.ClockCallHost}}
			s, err := session.Start(ctx, session.Launch{Launcher: session.ProcessLauncher{Worker: worker.Config{Binary: bin}}}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })

			ran := 0
			for _, st := range liveSteps {
				if strings.HasPrefix(st.name, "symlink-out/") {
					continue
				}
				ran++
				t.Run(st.name, func(t *testing.T) {
					if got, w := liveRun(t, ctx, s, tbl, st.code), st.want[m]; got != w {
						t.Errorf("%s\n got: %s\nwant: %s", st.code, got, w)
					}
				})
			}
			if ran < 50 {
				t.Fatalf("only %d snippets ran", ran)
			}
			// The session's changes never reached the FS.
			want := liveFS()
			if len(fsys) != len(want) {
				t.Fatalf("the FS has %d entries, want %d", len(fsys), len(want))
			}
			for k, f := range want {
				if g := fsys[k]; g == nil || string(g.Data) != string(f.Data) || g.Mode != f.Mode {
					t.Errorf("the FS changed at %q", k)
				}
			}
		})
	}
}

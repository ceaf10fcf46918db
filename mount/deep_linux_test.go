package mount

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gomonty/monty/message"
)

// maxTopOpensPerOp bounds how often one answer may open a directory at the
// top of the mount while it works on a path 2040 components deep. Walking
// through sub-roots opens the top directory once per walk, and no answer
// walks more than a dozen times (mkdir(parents=True) probes the existing
// part with a binary search: log2(2040) lookups). Looking each prefix up
// from the mount's root instead opens it once per component, about 2040
// times.
const maxTopOpensPerOp = 64

// TestDeepPathsStayCheap checks that a path thousands of components deep
// costs work linear in its depth. Walking it with one os.Root call per
// prefix costs quadratic work (for the 2040-deep tree below: resolve 9 s
// on a read-write mount, overlay stat, is_dir and iterdir 9 to 18 s,
// and an overlay mkdir(parents=True) 27 s), which a sandbox can trigger
// over and over with a short loop.
//
// The work is counted, not timed, so that a loaded machine cannot fail the
// test: os.Root opens every directory on a path to reach its last
// component, and inotify reports each of those opens. The test counts how
// often each answer opens a directory at the top of the mount: a few times
// when the walk goes one directory at a time, once per component when it
// starts from the root for each prefix.
func TestDeepPathsStayCheap(t *testing.T) {
	deep := strings.Repeat("a/", 2040) + "x" // 4081 bytes: just under PATH_MAX below /data
	for _, mode := range []Mode{ReadWrite, Overlay} {
		t.Run(mode.String(), func(t *testing.T) {
			// A walk gone quadratic takes seconds an answer: the long
			// timeout lets the count, not a timeout, report it.
			f := newFixture(t, mode, func(_ *Mount, o *Options) { o.OpTimeout = time.Minute })
			// The host has a deep tree ...
			hostDeep := "h/" + deep[2:]
			r, err := os.OpenRoot(f.host)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if err := r.MkdirAll(hostDeep, 0o755); err != nil {
				t.Fatal(err)
			}
			opens := watchOpens(t, f.host)
			// The watch sees an open of a directory at the top of the mount.
			if d, err := os.Open(filepath.Join(f.host, "h")); err != nil {
				t.Fatal(err)
			} else {
				d.Close()
			}
			if n := opens.count(); n != 1 {
				t.Fatalf("opening the top directory once counted %d opens, want 1", n)
			}
			var total int
			do := func(c *message.OsCall) *message.ResumeCall {
				t.Helper()
				rc, err := f.tbl.HandleOS(context.Background(), c)
				if err != nil {
					t.Fatalf("%s: %v", c.Op, err)
				}
				n := opens.count()
				total += n
				if n > maxTopOpensPerOp {
					t.Errorf("%s of a path %d components deep opened the mount's top directories %d times, want at most %d: the walk is not linear",
						c.Op, strings.Count(c.Path, "/"), n, maxTopOpensPerOp)
				}
				return rc
			}
			// ... and the session makes one (in memory for the overlay).
			wantNone(t, do(mkdirCall("/data/"+deep, true, false)))
			wantInt(t, do(textCall(message.OpWriteText, "/data/"+deep+"/f", "F")), 1)
			wantPath(t, do(opCall(message.OpResolve, "/data/"+deep+"/f")), "/data/"+deep+"/f")
			wantBool(t, do(opCall(message.OpIsDir, "/data/"+deep)), true)
			wantPaths(t, do(opCall(message.OpIterdir, "/data/"+deep)), "/data/"+deep+"/f")
			hostOpsFrom := total
			wantPath(t, do(opCall(message.OpResolve, "/data/"+hostDeep)), "/data/"+hostDeep)
			wantBool(t, do(opCall(message.OpIsDir, "/data/"+hostDeep)), true)
			if st := do(opCall(message.OpStat, "/data/"+hostDeep)); st.Result.Kind != message.ResultReturn {
				t.Fatalf("stat: %s", st.Result.Error.Msg())
			}
			wantPaths(t, do(opCall(message.OpIterdir, "/data/"+hostDeep)))
			wantNone(t, do(mkdirCall("/data/"+hostDeep+"/y", true, false)))
			// The answers on the host's tree pass through its top directory:
			// the count did see their walks.
			if total == hostOpsFrom {
				t.Error("the answers on the host's deep tree counted no opens of its top")
			}
		})
	}
}

// openCounter counts, through inotify, the opens of the entries of one
// directory (for a directory entry: opening that directory, which os.Root
// does to pass through it).
type openCounter struct {
	t   *testing.T
	fd  int
	buf []byte
}

// watchOpens starts counting the opens of the entries of dir.
func watchOpens(t *testing.T, dir string) *openCounter {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	// Closes are watched too, though not counted: inotify merges an event
	// into the one before it when the two are identical, so two opens of
	// the same entry in a row would count once.
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_OPEN|unix.IN_CLOSE_NOWRITE|unix.IN_ONLYDIR); err != nil {
		t.Fatalf("inotify watch: %v", err)
	}
	return &openCounter{t: t, fd: fd, buf: make([]byte, 64<<10)}
}

// count returns the opens reported since the last call. Each is reported
// by the open system call itself, before it returns, so every open made
// before the call is counted. A queue that overflowed (more than
// fs.inotify.max_queued_events, 16384 by default) counts as that many.
func (c *openCounter) count() int {
	c.t.Helper()
	n := 0
	for {
		got, err := unix.Read(c.fd, c.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			return n
		}
		if err != nil {
			c.t.Fatalf("inotify read: %v", err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= got; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&c.buf[off]))
			switch {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				n += 16384
			case ev.Mask&unix.IN_OPEN != 0:
				n++
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

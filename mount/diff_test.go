package mount

import (
	"fmt"
	"math/rand"
	"os"
	"path"
	"strconv"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// answerSummary renders an answer for comparison across modes: the
// exception, or the value's repr (a stat result as its type bits and
// size, which are the same in both modes; inode and times are not).
func answerSummary(t *testing.T, rc *message.ResumeCall) string {
	t.Helper()
	switch rc.Result.Kind {
	case message.ResultError:
		return "!" + rc.Result.Error.Type + ": " + rc.Result.Error.Msg()
	case message.ResultReturn:
		if rc.Values.Node(rc.Result.Value).Kind == value.KindNamedTuple {
			mode := statField(t, rc, "st_mode").Int()
			size := statField(t, rc, "st_size").Int()
			if mode&0o170000 == 0o040000 {
				return "stat dir"
			}
			return fmt.Sprintf("stat %o %d", mode&0o170000, size)
		}
		return rc.Values.Repr(rc.Result.Value)
	}
	return "not handled"
}

// checkIndex verifies the overlay's kids index: every entry is linked up
// to the top, and every link leads to an entry or to more links.
func checkIndex(t *testing.T, o *overlay) {
	t.Helper()
	for key := range o.entries {
		for p := key; p != "."; p = path.Dir(p) {
			if _, ok := o.kids[path.Dir(p)][path.Base(p)]; !ok {
				t.Fatalf("entry %q: no link for %q", key, p)
			}
		}
	}
	for dir, names := range o.kids {
		if len(names) == 0 {
			t.Fatalf("empty link set for %q", dir)
		}
		for name := range names {
			child := childKey(dir, name)
			if _, ok := o.entries[child]; !ok && len(o.kids[child]) == 0 {
				t.Fatalf("link %q leads nowhere", child)
			}
		}
	}
}

// TestOverlayMatchesReadWrite runs seeded random sequences of changes and
// reads on a read-write mount and on an overlay mount of the same tree, and
// requires the same answer at every step: the overlay must behave like the
// file system it emulates (rename(2)'s error order, trailing slashes,
// mkdir with parents, whiteouts). MONTY_MOUNT_DIFF_SEEDS runs more seeds.
func TestOverlayMatchesReadWrite(t *testing.T) {
	seeds := 150
	if s, err := strconv.Atoi(os.Getenv("MONTY_MOUNT_DIFF_SEEDS")); err == nil {
		seeds = s
	}
	names := []string{"a", "b", "sub", "x.txt", "bin.dat", "c"}
	for seed := range int64(seeds) {
		r := rand.New(rand.NewSource(seed))
		rw := newFixture(t, ReadWrite)
		ov := newFixture(t, Overlay)
		randPath := func() string {
			p := "/data"
			for range 1 + r.Intn(3) {
				p += "/" + names[r.Intn(len(names))]
			}
			switch r.Intn(10) {
			case 0:
				p += "/"
			case 1:
				p += "/."
			}
			return p
		}
		var steps []string
		for step := range 80 {
			var c *message.OsCall
			switch r.Intn(14) {
			case 0:
				c = mkdirCall(randPath(), r.Intn(2) == 0, r.Intn(2) == 0)
			case 1:
				c = textCall(message.OpWriteText, randPath(), "t")
			case 2:
				c = textCall(message.OpAppendText, randPath(), "a")
			case 3:
				c = bytesCall(message.OpWriteBytes, randPath(), []byte("bb"))
			case 4:
				c = opCall(message.OpUnlink, randPath())
			case 5:
				c = opCall(message.OpRmdir, randPath())
			case 6, 7:
				c = renameCall(randPath(), randPath())
			case 8:
				c = opCall(message.OpIterdir, randPath())
			case 9:
				c = opCall([]message.OsOp{message.OpReadText, message.OpReadBytes}[r.Intn(2)], randPath())
			case 10:
				c = opCall([]message.OsOp{message.OpExists, message.OpIsDir, message.OpIsFile}[r.Intn(3)], randPath())
			case 11:
				c = opCall(message.OpStat, randPath())
			case 12:
				c = openCall(randPath(), []string{"r", "rb", "w", "a", "ab"}[r.Intn(5)])
			case 13:
				c = opCall(message.OpResolve, randPath())
			}
			want, got := answerSummary(t, rw.do(c)), answerSummary(t, ov.do(c))
			steps = append(steps, fmt.Sprintf("%s %q %q -> %s", c.Op, c.Path, c.Dst, want))
			if want != got {
				for _, s := range steps {
					t.Log(s)
				}
				t.Fatalf("seed %d step %d: %s %q %q: read-write %s, overlay %s", seed, step, c.Op, c.Path, c.Dst, want, got)
			}
		}
		checkIndex(t, ov.tbl.mounts[0].ov)
	}
}

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

// chooser draws the choices of a random sequence of OS calls.
type chooser interface {
	// intn returns a choice in [0, n).
	intn(n int) int
	// more reports whether the sequence may go on.
	more() bool
}

// randChooser draws from a seeded source, without end.
type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.Intn(n) }
func (c randChooser) more() bool     { return true }

// byteChooser draws from the fuzzer's bytes (0 once they are spent), one
// byte a choice, until they are spent.
type byteChooser struct{ data []byte }

func (c *byteChooser) intn(n int) int {
	if len(c.data) == 0 {
		return 0
	}
	b := c.data[0]
	c.data = c.data[1:]
	return int(b) % n
}
func (c *byteChooser) more() bool { return len(c.data) > 0 }

// randDiffCall draws one OS call under /data: a path of one to three
// components from names, with a trailing "/" or "/." one time in ten
// each; mkdir draws its flags after its path.
func randDiffCall(ch chooser, names []string) *message.OsCall {
	randPath := func() string {
		p := "/data"
		for range 1 + ch.intn(3) {
			p += "/" + names[ch.intn(len(names))]
		}
		switch ch.intn(10) {
		case 0:
			p += "/"
		case 1:
			p += "/."
		}
		return p
	}
	switch ch.intn(14) {
	case 0:
		p := randPath()
		fl := ch.intn(4)
		return mkdirCall(p, fl&1 != 0, fl&2 != 0)
	case 1:
		return textCall(message.OpWriteText, randPath(), "t")
	case 2:
		return textCall(message.OpAppendText, randPath(), "a")
	case 3:
		return bytesCall(message.OpWriteBytes, randPath(), []byte("bb"))
	case 4:
		return opCall(message.OpUnlink, randPath())
	case 5:
		return opCall(message.OpRmdir, randPath())
	case 6, 7:
		return renameCall(randPath(), randPath())
	case 8:
		return opCall(message.OpIterdir, randPath())
	case 9:
		return opCall([]message.OsOp{message.OpReadText, message.OpReadBytes}[ch.intn(2)], randPath())
	case 10:
		return opCall([]message.OsOp{message.OpExists, message.OpIsDir, message.OpIsFile}[ch.intn(3)], randPath())
	case 11:
		return opCall(message.OpStat, randPath())
	case 12:
		return openCall(randPath(), []string{"r", "rb", "w", "a", "ab"}[ch.intn(5)])
	}
	return opCall(message.OpResolve, randPath())
}

// runDiff runs up to maxSteps calls drawn from ch on a read-write mount
// and on an overlay mount of the same tree, fails (logging the steps) at
// the first answer that differs, then checks the overlay's index. label
// names the sequence in the failure.
func runDiff(t *testing.T, ch chooser, names []string, maxSteps int, label string) {
	t.Helper()
	rw := newFixture(t, ReadWrite)
	ov := newFixture(t, Overlay)
	var steps []string
	for step := 0; ch.more() && step < maxSteps; step++ {
		c := randDiffCall(ch, names)
		want, got := answerSummary(t, rw.do(c)), answerSummary(t, ov.do(c))
		steps = append(steps, fmt.Sprintf("%s %q %q -> %s", c.Op, c.Path, c.Dst, want))
		if want != got {
			for _, s := range steps {
				t.Log(s)
			}
			t.Fatalf("%sstep %d: %s %q %q: read-write %s, overlay %s", label, step, c.Op, c.Path, c.Dst, want, got)
		}
	}
	checkIndex(t, ov.tbl.mounts[0].ov)
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
		runDiff(t, randChooser{rand.New(rand.NewSource(seed))}, names, 80, fmt.Sprintf("seed %d ", seed))
	}
}

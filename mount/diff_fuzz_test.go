package mount

import (
	"fmt"
	"testing"

	"github.com/gomonty/monty/message"
)

// FuzzOverlayMatchesReadWrite is TestOverlayMatchesReadWrite driven by the
// fuzzer: the same sequence of OS calls, on a read-write mount and on an
// overlay of the same tree, must get the same answers (the overlay keeps
// in memory what the read-write mount does to the disk), and the overlay's
// index must stay linked. Paths may hold "." and ".." components, which
// both modes clean lexically.
//
// Input: per call an op byte, then its path(s): a component count byte
// (1 + n%3), a byte per component (a name from a small set), a suffix
// byte ("/", "/." or nothing); mkdir takes a flags byte after its path.
func FuzzOverlayMatchesReadWrite(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 3})
	f.Add([]byte{1, 1, 2, 2, 6, 1, 0, 0, 2, 8, 0, 2, 9})
	f.Add([]byte{6, 1, 2, 9, 0, 1, 5, 9, 8, 0, 5, 9, 11, 1, 5, 9})
	f.Add([]byte{0, 2, 0, 1, 9, 3, 6, 0, 6, 1, 2, 9, 1, 0, 9, 8, 1, 1, 9})
	f.Add([]byte{7, 1, 2, 9, 0, 2, 2, 0, 9, 5, 0, 2, 9, 4, 1, 6, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		names := []string{"a", "b", "sub", "x.txt", "bin.dat", "c", "..", "."}
		randPath := func() string {
			p := "/data"
			for range 1 + int(next())%3 {
				p += "/" + names[int(next())%len(names)]
			}
			switch next() % 10 {
			case 0:
				p += "/"
			case 1:
				p += "/."
			}
			return p
		}
		rw := newFixture(t, ReadWrite)
		ov := newFixture(t, Overlay)
		var steps []string
		for step := 0; len(data) > 0 && step < 64; step++ {
			var c *message.OsCall
			switch next() % 14 {
			case 0:
				p := randPath()
				fl := next()
				c = mkdirCall(p, fl&1 != 0, fl&2 != 0)
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
				c = opCall([]message.OsOp{message.OpReadText, message.OpReadBytes}[next()%2], randPath())
			case 10:
				c = opCall([]message.OsOp{message.OpExists, message.OpIsDir, message.OpIsFile}[next()%3], randPath())
			case 11:
				c = opCall(message.OpStat, randPath())
			case 12:
				c = openCall(randPath(), []string{"r", "rb", "w", "a", "ab"}[next()%5])
			case 13:
				c = opCall(message.OpResolve, randPath())
			}
			want, got := answerSummary(t, rw.do(c)), answerSummary(t, ov.do(c))
			steps = append(steps, fmt.Sprintf("%s %q %q -> %s", c.Op, c.Path, c.Dst, want))
			if want != got {
				for _, s := range steps {
					t.Log(s)
				}
				t.Fatalf("step %d: %s %q %q: read-write %s, overlay %s", step, c.Op, c.Path, c.Dst, want, got)
			}
		}
		checkIndex(t, ov.tbl.mounts[0].ov)
	})
}

package mount

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gomonty/monty/message"
)

// heapAlloc is the live heap after a collection.
func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestOverlayMemoryLimitBoundsHeap checks that what an overlay charges
// against MemoryLimit covers the memory it really holds (the package
// documentation promises at most 1.25 times the limit), for the shapes a
// sandbox can choose: many empty files, directories each holding one
// entry, and whiteouts deep in a host tree. A flat 64 bytes per entry
// left out the maps of the parent index, one for every directory on an
// entry's way: a whiteout nine components deep held some 2.5 KB against
// 100-odd bytes charged (28 times the charge), so a 64 MiB limit let a
// session hold well over a gigabyte.
func TestOverlayMemoryLimitBoundsHeap(t *testing.T) {
	check := func(t *testing.T, f *fixture, before uint64) {
		t.Helper()
		held := int64(heapAlloc()) - int64(before)
		used, _ := f.tbl.MemoryUsed("/data")
		if used <= 0 || float64(held) > 1.25*float64(used) {
			t.Errorf("overlay holds %d bytes against %d charged (%.2f times)", held, used, float64(held)/float64(used))
		}
	}
	// Filled up to the limit, one call at a time.
	fill := func(t *testing.T, call func(i int) *message.OsCall) {
		f := newFixture(t, Overlay, func(m *Mount, _ *Options) { m.MemoryLimit = 1 << 20 })
		before := heapAlloc()
		for i := 0; ; i++ {
			if rc := f.do(call(i)); rc.Result.Kind != message.ResultReturn {
				wantExcType(t, rc, "MemoryError")
				break
			}
		}
		check(t, f, before)
	}
	t.Run("files", func(t *testing.T) {
		fill(t, func(i int) *message.OsCall { return textCall(message.OpWriteText, fmt.Sprintf("/data/%x", i), "") })
	})
	t.Run("dirs", func(t *testing.T) {
		fill(t, func(i int) *message.OsCall { return mkdirCall(fmt.Sprintf("/data/%x", i), false, false) })
	})
	t.Run("pairs", func(t *testing.T) {
		fill(t, func(i int) *message.OsCall { return mkdirCall(fmt.Sprintf("/data/%x/y", i), true, false) })
	})
	t.Run("deep_whiteouts", func(t *testing.T) {
		f := newFixture(t, Overlay)
		const chains = 1000
		for i := range chains {
			d := filepath.Join(f.host, fmt.Sprint(i), "a", "b", "c", "d", "e", "f", "g")
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(d, "leaf"), "")
		}
		before := heapAlloc()
		for i := range chains {
			wantNone(t, f.do(opCall(message.OpUnlink, fmt.Sprintf("/data/%d/a/b/c/d/e/f/g/leaf", i))))
		}
		check(t, f, before)
	})
}

// TestOverlayTreeRenameNearLimit checks that renaming a tree whose index
// takes most of the limit is not refused: the index links the renamed
// tree drops count as well as those it gains. A refused change leaves
// the entries, the index and the charge as they were.
func TestOverlayTreeRenameNearLimit(t *testing.T) {
	f := newFixture(t, Overlay, func(m *Mount, _ *Options) { m.MemoryLimit = 64 << 10 })
	wantNone(t, f.do(mkdirCall("/data/a", false, false)))
	for i := range 200 {
		wantInt(t, f.do(textCall(message.OpWriteText, fmt.Sprintf("/data/a/%d", i), "")), 0)
	}
	used, _ := f.tbl.MemoryUsed("/data")
	if used < 40<<10 {
		t.Fatalf("only %d bytes used; the tree should hold most of the limit", used)
	}
	wantPath(t, f.do(renameCall("/data/a", "/data/b")), "/data/b")
	if after, _ := f.tbl.MemoryUsed("/data"); after != used {
		t.Fatalf("MemoryUsed %d after the rename, want %d", after, used)
	}
	wantPaths(t, f.do(opCall(message.OpIterdir, "/data")), "/data/b", "/data/bin.dat", "/data/sub", "/data/x.txt")

	// Refused: nothing changes.
	ov := f.tbl.mounts[0].ov
	entries, kids := len(ov.entries), len(ov.kids)
	wantExcType(t, f.do(bytesCall(message.OpWriteBytes, "/data/c/d", nil)), "FileNotFoundError")
	wantExcType(t, f.do(bytesCall(message.OpWriteBytes, "/data/big", make([]byte, 64<<10))), "MemoryError")
	wantExcType(t, f.do(mkdirCall("/data/"+strings.Repeat("p/", 30)+"z", true, false)), "MemoryError")
	if after, _ := f.tbl.MemoryUsed("/data"); after != used || len(ov.entries) != entries || len(ov.kids) != kids {
		t.Fatalf("after refusals: used %d (want %d), %d entries (want %d), %d index maps (want %d)",
			after, used, len(ov.entries), entries, len(ov.kids), kids)
	}
	checkIndex(t, ov)
	wantBool(t, f.do(opCall(message.OpExists, "/data/big")), false)
}

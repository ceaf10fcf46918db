//go:build unix

package mount

import (
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/gomonty/monty/message"
)

// FuzzSandboxPaths sends one filesystem OS call with fuzzed paths, as
// sandboxed code may write them, to a mount of each mode, and to an
// fstest.MapFS mounted ReadOnly and Overlay. The tree under the mount
// holds symlinks out of it (relative and absolute, and one that climbs
// from a subdirectory). Every call must be answered (a value or a Python
// exception that validates; doCall checks both and that no answer carries
// the outside file's content), and the tree outside the mount must stay
// unchanged; an fs.FS must never be handed a name fs.ValidPath refuses,
// and must stay unchanged.
func FuzzSandboxPaths(f *testing.F) {
	for _, s := range []struct {
		op        message.OsOp
		p, dst    string
		mode      string
		mkdirBits uint8
	}{
		{message.OpReadText, "/data/x.txt", "", "", 0},
		{message.OpReadText, "/data/out/secret.txt", "", "", 0},
		{message.OpStat, "/data/../outside/secret.txt", "", "", 0},
		{message.OpIterdir, "/data/sub/up", "", "", 0},
		{message.OpWriteText, "/data/abs/secret.txt", "", "", 0},
		{message.OpOpen, "/data/out/new", "", "w", 0},
		{message.OpOpen, "data/x.txt", "", "r+b", 0},
		{message.OpMkdir, "/data/out/d/e", "", "", 3},
		{message.OpRename, "/data/x.txt", "/data/out/x.txt", "", 0},
		{message.OpRename, "/data/sub", "/data/sub/inner", "", 0},
		{message.OpUnlink, "/data/out/secret.txt", "", "", 0},
		{message.OpRmdir, "/data/sub/up/outside", "", "", 0},
		{message.OpResolve, "/data/sub/up/outside/secret.txt", "", "", 0},
		{message.OpAbsolute, "../../..//./data/\x00", "", "", 0},
		{message.OpIsSymlink, "/data/abs/", "", "", 0},
	} {
		for m := range uint8(len(allModes) + len(fsModes)) {
			f.Add(m, uint8(s.op), s.p, s.dst, s.mode, s.mkdirBits)
		}
	}
	f.Fuzz(func(t *testing.T, mode, op uint8, p, dst, openMode string, mkdirBits uint8) {
		if !utf8.ValidString(p) || !utf8.ValidString(dst) || !utf8.ValidString(openMode) {
			return // every decoder refuses such a frame
		}
		o := message.OsOp(message.OpExists + message.OsOp(op)%(message.OpRename-message.OpExists+1))
		c := &message.OsCall{CallID: 7, Op: o, Path: p, Dst: dst, Mode: openMode,
			Text: "pwned", Data: []byte("pwned"), Parents: mkdirBits&1 != 0, ExistOK: mkdirBits&2 != 0}
		if i := int(mode) % (len(allModes) + len(fsModes)); i >= len(allModes) {
			mfs := fuzzFS()
			cfs := &checkedFS{fsys: mfs}
			doCall(t, newFSTable(t, cfs, fsModes[i-len(allModes)]), c)
			cfs.assertValid(t)
			sameMapFS(t, mfs, fuzzFS())
			return
		}
		fx := newFixture(t, allModes[int(mode)%len(allModes)])
		mustSymlink(t, "../outside", filepath.Join(fx.host, "out"))
		mustSymlink(t, fx.outside, filepath.Join(fx.host, "abs"))
		mustSymlink(t, "../..", filepath.Join(fx.host, "sub", "up"))
		fx.do(c)
		fx.outsideUnchanged()
	})
}

// fsModes are the modes an fs.FS may be mounted in.
var fsModes = []Mode{ReadOnly, Overlay}

// fuzzFS is the fuzzed host tree as a MapFS, its symlinks included: out
// of the FS (relative and absolute) and one that climbs from a
// subdirectory.
func fuzzFS() fstest.MapFS {
	m := fixtureFS()
	m["out"] = &fstest.MapFile{Data: []byte("../outside"), Mode: fs.ModeSymlink | 0o777}
	m["abs"] = &fstest.MapFile{Data: []byte("/outside"), Mode: fs.ModeSymlink | 0o777}
	m["sub/up"] = &fstest.MapFile{Data: []byte("../.."), Mode: fs.ModeSymlink | 0o777}
	return m
}

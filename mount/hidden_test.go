package mount

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gomonty/monty/message"
)

// TestOverlayRmdirKeepsHiddenEntries: an overlay directory whose host
// entries are all hidden from the sandbox (a symlink, a name that is not
// valid UTF-8) lists as empty, but it is not empty: rmdir, and a directory
// renamed onto it, fail as they would on the host (OSError ENOTEMPTY, with
// CPython's text) rather than hide data the sandbox could not see. Once
// the session has unlinked the symlink (a whiteout), a directory holding
// nothing else is empty.
func TestOverlayRmdirKeepsHiddenEntries(t *testing.T) {
	f := newFixture(t, Overlay)
	link := filepath.Join(f.host, "links")
	mustMkdir(t, link)
	mustSymlink(t, "../x.txt", filepath.Join(link, "l"))
	odd := filepath.Join(f.host, "odd")
	mustMkdir(t, odd)
	mustWrite(t, filepath.Join(odd, "bad\xff"), "x")
	mustMkdir(t, filepath.Join(f.host, "src"))

	for _, d := range []string{"/data/links", "/data/odd"} {
		wantPaths(t, f.do(opCall(message.OpIterdir, d)))
		wantExc(t, f.do(opCall(message.OpRmdir, d)), "OSError", "[Errno 39] Directory not empty: '"+d+"'")
		wantExc(t, f.do(renameCall("/data/src", d)), "OSError",
			"[Errno 39] Directory not empty: '/data/src' -> '"+d+"'")
		wantBool(t, f.do(opCall(message.OpIsDir, d)), true)
		wantBool(t, f.do(opCall(message.OpIsDir, "/data/src")), true)
	}
	wantBool(t, f.do(opCall(message.OpIsSymlink, "/data/links/l")), true)

	// The symlink unlinked, the directory is empty for the session.
	wantNone(t, f.do(opCall(message.OpUnlink, "/data/links/l")))
	wantNone(t, f.do(opCall(message.OpRmdir, "/data/links")))
	wantBool(t, f.do(opCall(message.OpExists, "/data/links")), false)
	if _, err := os.Lstat(filepath.Join(link, "l")); err != nil {
		t.Fatalf("the host's symlink: %v", err)
	}
}

// TestOverlayRmdirSessionDirOverHidden: a directory the session made where
// the host had one with hidden entries hides them already; removing it is
// the session's business.
func TestOverlayRmdirSessionDirOverHidden(t *testing.T) {
	f := newFixture(t, Overlay)
	link := filepath.Join(f.host, "links")
	mustMkdir(t, link)
	mustSymlink(t, "../x.txt", filepath.Join(link, "l"))
	mustWrite(t, filepath.Join(link, "f"), "F")
	wantNone(t, f.do(opCall(message.OpUnlink, "/data/links/f")))
	wantNone(t, f.do(opCall(message.OpUnlink, "/data/links/l")))
	wantNone(t, f.do(opCall(message.OpRmdir, "/data/links")))
	wantNone(t, f.do(mkdirCall("/data/links", false, false)))
	wantPaths(t, f.do(opCall(message.OpIterdir, "/data/links")))
	wantNone(t, f.do(opCall(message.OpRmdir, "/data/links")))
	wantBool(t, f.do(opCall(message.OpExists, "/data/links")), false)
}

// TestOverlayRenameKeepsHiddenEntries: renaming a host directory copies
// its merged tree, which cannot hold what the listing leaves out (a
// symlink, a name that is not valid UTF-8, at any depth). The rename is
// refused with PermissionError naming both paths, as renaming the symlink
// itself is, rather than leave those entries behind a whiteout, where an
// rmdir of the copy would then drop them unseen. Once the session has
// unlinked the symlink, the tree renames.
func TestOverlayRenameKeepsHiddenEntries(t *testing.T) {
	f := newFixture(t, Overlay)
	mustMkdir(t, filepath.Join(f.host, "t", "deep"))
	mustSymlink(t, "../../x.txt", filepath.Join(f.host, "t", "deep", "l"))
	mustWrite(t, filepath.Join(f.host, "t", "f"), "F")
	mustMkdir(t, filepath.Join(f.host, "u"))
	mustWrite(t, filepath.Join(f.host, "u", "bad\xff"), "x")

	for _, d := range []string{"/data/t", "/data/u"} {
		wantExc(t, f.do(renameCall(d, "/data/moved")), "PermissionError",
			"[Errno 13] Permission denied: '"+d+"' -> '/data/moved'")
		wantBool(t, f.do(opCall(message.OpIsDir, d)), true)
		wantBool(t, f.do(opCall(message.OpExists, "/data/moved")), false)
	}
	wantBool(t, f.do(opCall(message.OpIsSymlink, "/data/t/deep/l")), true)

	wantNone(t, f.do(opCall(message.OpUnlink, "/data/t/deep/l")))
	wantPath(t, f.do(renameCall("/data/t", "/data/moved")), "/data/moved")
	wantPaths(t, f.do(opCall(message.OpIterdir, "/data/moved")), "/data/moved/deep", "/data/moved/f")
	wantNone(t, f.do(opCall(message.OpRmdir, "/data/moved/deep")))
}

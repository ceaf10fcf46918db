package mount

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gomonty/monty/message"
)

// TestSlashOnSymlinkAndDotAfterFile: two rules of Linux's path lookup the
// table applies before it cleans a path (CPython on Linux, checked):
//
//   - unlink and rename of "link/", or rename to "d/", look at the entry
//     itself, not the symlink's target: a symlink to a directory is not a
//     directory there, so os.unlink('lk/') is NotADirectoryError and the
//     link stays (it was removed), and so is a rename with a slash on
//     either end (it renamed the link);
//   - a change to "f/x/." or "f/x/.." first looks up "f/x", which fails
//     with ENOTDIR when f is a file: NotADirectoryError, where the table
//     answered as if the directory existed (IsADirectoryError,
//     FileExistsError, or Directory not empty).
func TestSlashOnSymlinkAndDotAfterFile(t *testing.T) {
	for _, mode := range []Mode{ReadWrite, Overlay} {
		t.Run(mode.String(), func(t *testing.T) {
			f := newFixture(t, mode)
			mustSymlink(t, "sub", filepath.Join(f.host, "lk"))
			notDir := func(p string) string { return "[Errno 20] Not a directory: '" + p + "'" }
			wantExc(t, f.do(opCall(message.OpUnlink, "/data/lk/")), "NotADirectoryError", notDir("/data/lk/"))
			wantExc(t, f.do(renameCall("/data/lk/", "/data/zz")), "NotADirectoryError", notDir("/data/lk/")+" -> '/data/zz'")
			wantExc(t, f.do(renameCall("/data/lk", "/data/zz/")), "NotADirectoryError", notDir("/data/lk")+" -> '/data/zz/'")
			wantBool(t, f.do(opCall(message.OpIsSymlink, "/data/lk")), true)
			wantBool(t, f.do(opCall(message.OpExists, "/data/zz")), false)

			wantExc(t, f.do(textCall(message.OpAppendText, "/data/x.txt/a/.", "a")), "NotADirectoryError", notDir("/data/x.txt/a/."))
			wantExc(t, f.do(textCall(message.OpWriteText, "/data/x.txt/a/.", "a")), "NotADirectoryError", notDir("/data/x.txt/a/."))
			wantExc(t, f.do(openCall("/data/x.txt/a/.", "w")), "NotADirectoryError", notDir("/data/x.txt/a/."))
			wantExc(t, f.do(mkdirCall("/data/x.txt/b/..", false, true)), "NotADirectoryError", notDir("/data/x.txt/b/.."))
			wantExc(t, f.do(opCall(message.OpRmdir, "/data/x.txt/sub/..")), "NotADirectoryError", notDir("/data/x.txt/sub/.."))
			wantExc(t, f.do(opCall(message.OpRmdir, "/data/x.txt/sub/.")), "NotADirectoryError", notDir("/data/x.txt/sub/."))
			wantExc(t, f.do(renameCall("/data/x.txt/a/.", "/data/zz")), "NotADirectoryError", notDir("/data/x.txt/a/.")+" -> '/data/zz'")
			if got := readHost(t, filepath.Join(f.host, "x.txt")); got != "hello" {
				t.Fatalf("x.txt changed to %q", got)
			}
		})
	}
}

// TestUnlinkDotLast: os.unlink of a path whose last component is "." or
// ".." is IsADirectoryError on Linux once the directory before it is
// found (FileNotFoundError or NotADirectoryError otherwise). The table
// cleaned the path first, so os.unlink('lk/.') removed the symlink lk,
// and os.unlink('sub/..') was a refusal to remove the mount's root.
func TestUnlinkDotLast(t *testing.T) {
	for _, mode := range []Mode{ReadWrite, Overlay} {
		t.Run(mode.String(), func(t *testing.T) {
			f := newFixture(t, mode)
			mustSymlink(t, "sub", filepath.Join(f.host, "lk"))
			mustSymlink(t, "nowhere", filepath.Join(f.host, "dl"))
			isDir := func(p string) string { return "[Errno 21] Is a directory: '" + p + "'" }
			if mode == ReadWrite {
				wantExc(t, f.do(opCall(message.OpUnlink, "/data/lk/.")), "IsADirectoryError", isDir("/data/lk/."))
				wantExc(t, f.do(opCall(message.OpUnlink, "/data/lk/..")), "IsADirectoryError", isDir("/data/lk/.."))
				wantExc(t, f.do(opCall(message.OpUnlink, "/data/dl/.")), "FileNotFoundError", "[Errno 2] No such file or directory: '/data/dl/.'")
			} else {
				// Overlays never follow a symlink: refused, never removed.
				for _, p := range []string{"/data/lk/.", "/data/lk/..", "/data/dl/."} {
					if rc := f.do(opCall(message.OpUnlink, p)); rc.Result.Kind != message.ResultError {
						t.Fatalf("unlink %s succeeded", p)
					}
				}
			}
			wantExc(t, f.do(opCall(message.OpUnlink, "/data/sub/.")), "IsADirectoryError", isDir("/data/sub/."))
			wantExc(t, f.do(opCall(message.OpUnlink, "/data/sub/..")), "IsADirectoryError", isDir("/data/sub/.."))
			wantExc(t, f.do(opCall(message.OpUnlink, "/data/x.txt/.")), "NotADirectoryError", "[Errno 20] Not a directory: '/data/x.txt/.'")
			wantExc(t, f.do(opCall(message.OpUnlink, "/data/no/..")), "FileNotFoundError", "[Errno 2] No such file or directory: '/data/no/..'")
			wantBool(t, f.do(opCall(message.OpIsSymlink, "/data/lk")), true)
			wantBool(t, f.do(opCall(message.OpIsSymlink, "/data/dl")), true)
		})
	}
}

// TestRenameLooksUpParentsFirst: rename(2) looks up both parents (for a
// path ending in "." or "..", the directory before it) before it refuses
// a dot with EBUSY or a non-directory written with a trailing slash with
// ENOTDIR, so a missing or non-directory parent on either end is what a
// rename with a dot or a slash reports first (CPython on Linux, checked).
func TestRenameLooksUpParentsFirst(t *testing.T) {
	for _, mode := range []Mode{ReadWrite, Overlay} {
		t.Run(mode.String(), func(t *testing.T) {
			f := newFixture(t, mode)
			both := func(n int, text, src, dst string) string {
				return "[Errno " + strconv.Itoa(n) + "] " + text + ": '" + src + "' -> '" + dst + "'"
			}
			for _, c := range []struct{ src, dst, typ, msg string }{
				{"/data/x.txt/a/sub/", "/data/b/a/.", "NotADirectoryError", both(20, "Not a directory", "/data/x.txt/a/sub/", "/data/b/a/.")},
				{"/data/x.txt", "/data/nosuch/x.txt/", "FileNotFoundError", both(2, "No such file or directory", "/data/x.txt", "/data/nosuch/x.txt/")},
				{"/data/sub/.", "/data/a/x.txt/lk", "FileNotFoundError", both(2, "No such file or directory", "/data/sub/.", "/data/a/x.txt/lk")},
				{"/data/x.txt/", "/data/no/zz", "FileNotFoundError", both(2, "No such file or directory", "/data/x.txt/", "/data/no/zz")},
				// Parents found: the dot, then the slash.
				{"/data/sub/.", "/data/zz", "OSError", both(16, "Device or resource busy", "/data/sub/.", "/data/zz")},
				{"/data/x.txt", "/data/sub/zz/", "NotADirectoryError", both(20, "Not a directory", "/data/x.txt", "/data/sub/zz/")},
				{"/data/x.txt/", "/data/zz", "NotADirectoryError", both(20, "Not a directory", "/data/x.txt/", "/data/zz")},
			} {
				wantExc(t, f.do(renameCall(c.src, c.dst)), c.typ, c.msg)
			}
			wantBool(t, f.do(opCall(message.OpIsFile, "/data/x.txt")), true)
		})
	}
}

package mount

import (
	"path/filepath"
	"testing"
)

// TestReadOnlyMkdirNamesWhatItTried: on a read-only file system Linux's
// mkdir reports a missing or non-directory parent before EROFS, and
// Path.mkdir(parents=True) climbs to the first missing ancestor, whose
// mkdir is the one that fails with EROFS: CPython names that ancestor, as
// written (relative paths stay relative).
func TestReadOnlyMkdirNamesWhatItTried(t *testing.T) {
	f := newFixture(t, ReadOnly, func(_ *Mount, o *Options) { o.Cwd = "/data/sub" })
	const ro = "[Errno 30] Read-only file system: "
	wantExc(t, f.do(mkdirCall("/data/new/a/b", true, false)), "PermissionError", ro+"'/data/new'")
	wantExc(t, f.do(mkdirCall("/data/sub/new/a", true, true)), "PermissionError", ro+"'/data/sub/new'")
	wantExc(t, f.do(mkdirCall("new/a/b", true, false)), "PermissionError", ro+"'new'")
	wantExc(t, f.do(mkdirCall("../new/a", true, false)), "PermissionError", ro+"'../new'")
	wantExc(t, f.do(mkdirCall("/data/new", true, false)), "PermissionError", ro+"'/data/new'")
	wantExc(t, f.do(mkdirCall("/data/new", false, false)), "PermissionError", ro+"'/data/new'")
	// Without parents, a missing parent is FileNotFoundError, and a file
	// on the way NotADirectoryError, for the path itself.
	wantExc(t, f.do(mkdirCall("/data/new/a", false, false)), "FileNotFoundError",
		"[Errno 2] No such file or directory: '/data/new/a'")
	wantExc(t, f.do(mkdirCall("/data/x.txt/a/b", true, true)), "NotADirectoryError",
		"[Errno 20] Not a directory: '/data/x.txt/a/b'")
	wantExc(t, f.do(mkdirCall("/data/x.txt/a", false, false)), "NotADirectoryError",
		"[Errno 20] Not a directory: '/data/x.txt/a'")
	// Existing paths are unchanged.
	wantNone(t, f.do(mkdirCall("/data/sub", true, true)))
	wantExc(t, f.do(mkdirCall("/data/sub", true, false)), "FileExistsError", "[Errno 17] File exists: '/data/sub'")
}

// TestReadOnlyMkdirOnSymlink: mkdir does not follow a symlink in its last
// component, so on a read-only mount a symlink that leads nowhere (or out
// of the mount) exists, as in a ReadWrite mount: FileExistsError, even
// with exist_ok (it is not a directory).
func TestReadOnlyMkdirOnSymlink(t *testing.T) {
	for _, mode := range []Mode{ReadOnly, ReadWrite} {
		t.Run(mode.String(), func(t *testing.T) {
			f := newFixture(t, mode)
			mustSymlink(t, "nowhere", filepath.Join(f.host, "dangling"))
			mustSymlink(t, filepath.Join(f.outside, "secret.txt"), filepath.Join(f.host, "esc"))
			for _, p := range []string{"/data/dangling", "/data/esc"} {
				wantExc(t, f.do(mkdirCall(p, true, true)), "FileExistsError", "[Errno 17] File exists: '"+p+"'")
			}
		})
	}
}

// TestMkdirParentsThroughDanglingSymlink: mkdir through a symlink whose
// target is missing is ENOENT, and Path.mkdir(parents=True) then tries
// the symlink itself, which exists and is not a directory:
// FileExistsError naming it, and nothing is made (CPython on Linux). A
// read-write mount used to create the symlink's target instead.
func TestMkdirParentsThroughDanglingSymlink(t *testing.T) {
	for _, mode := range []Mode{ReadOnly, ReadWrite} {
		t.Run(mode.String(), func(t *testing.T) {
			f := newFixture(t, mode, func(_ *Mount, o *Options) { o.Cwd = "/data" })
			mustSymlink(t, "nowhere", filepath.Join(f.host, "dl"))
			const exists = "[Errno 17] File exists: "
			wantExc(t, f.do(mkdirCall("/data/dl/a", true, true)), "FileExistsError", exists+"'/data/dl'")
			wantExc(t, f.do(mkdirCall("dl/a/b", true, false)), "FileExistsError", exists+"'dl'")
			wantExc(t, f.do(mkdirCall("/data/dl/a", false, false)), "FileNotFoundError",
				"[Errno 2] No such file or directory: '/data/dl/a'")
			wantExc(t, f.do(mkdirCall("/data/dl", false, true)), "FileExistsError", exists+"'/data/dl'")
			if hostExists(filepath.Join(f.host, "nowhere")) {
				t.Fatal("mkdir made the symlink's target")
			}
		})
	}
}

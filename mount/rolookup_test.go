package mount

import (
	"testing"

	"github.com/gomonty/monty/message"
)

// TestReadOnlyLookupsFirst checks that a ReadOnly mount reports what
// Linux's lookups find before a read-only file system's EROFS: a missing
// parent, a file on the way, a directory opened for writing, and a rename
// to another mount (EXDEV); a rename out of every mount stays EROFS.
func TestReadOnlyLookupsFirst(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"a", "b", "a/sub"} {
		mustMkdir(t, base+"/"+d)
	}
	mustWrite(t, base+"/a/x.txt", "x")
	tbl, err := New([]Mount{{HostDir: base + "/a", VirtualPath: "/a", Mode: ReadOnly},
		{HostDir: base + "/b", VirtualPath: "/b", Mode: ReadWrite}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	do := func(c *message.OsCall) *message.ResumeCall { t.Helper(); return doCall(t, tbl, c) }
	wantExc(t, do(textCall(message.OpWriteText, "/a/nodir/y", "z")), "FileNotFoundError",
		"[Errno 2] No such file or directory: '/a/nodir/y'")
	wantExc(t, do(openCall("/a/x.txt/y", "w")), "NotADirectoryError", "[Errno 20] Not a directory: '/a/x.txt/y'")
	wantExc(t, do(openCall("/a/sub", "a")), "IsADirectoryError", "[Errno 21] Is a directory: '/a/sub'")
	wantExc(t, do(openCall("/a/new/", "w")), "IsADirectoryError", "[Errno 21] Is a directory: '/a/new/'")
	wantExc(t, do(opCall(message.OpUnlink, "/a/nodir/y")), "FileNotFoundError",
		"[Errno 2] No such file or directory: '/a/nodir/y'")
	wantExc(t, do(opCall(message.OpRmdir, "/a/x.txt/y")), "NotADirectoryError", "[Errno 20] Not a directory: '/a/x.txt/y'")
	wantExc(t, do(renameCall("/a/x.txt", "/a/nodir/y")), "FileNotFoundError",
		"[Errno 2] No such file or directory: '/a/x.txt' -> '/a/nodir/y'")
	wantExc(t, do(renameCall("/a/x.txt", "/b/y")), "OSError", "[Errno 18] Invalid cross-device link: '/a/x.txt' -> '/b/y'")
	wantExc(t, do(renameCall("/a/x.txt", "/elsewhere")), "PermissionError",
		"[Errno 30] Read-only file system: '/a/x.txt' -> '/elsewhere'")
	// Then EROFS, as before.
	wantExc(t, do(opCall(message.OpUnlink, "/a/nope")), "PermissionError", "[Errno 30] Read-only file system: '/a/nope'")
	wantExc(t, do(openCall("/a/x.txt", "w")), "PermissionError", "[Errno 30] Read-only file system: '/a/x.txt'")
	wantExc(t, do(openCall("/a", "w")), "IsADirectoryError", "[Errno 21] Is a directory: '/a'")
	wantExc(t, do(opCall(message.OpRmdir, "/a")), "PermissionError", "[Errno 30] Read-only file system: '/a'")
	if readHost(t, base+"/a/x.txt") != "x" {
		t.Fatal("host file changed")
	}
}

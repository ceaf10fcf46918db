package mount

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gomonty/monty/message"
)

// withEntryLimit builds a second ReadWrite table on the fixture's host
// directory with EntryLimit n.
func (f *fixture) withEntryLimit(t *testing.T, n int64) *Table {
	t.Helper()
	tbl, err := New([]Mount{{HostDir: f.host, VirtualPath: "/data", Mode: ReadWrite, EntryLimit: n}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

// hostEntries counts the entries of the host tree below dir.
func hostEntries(t *testing.T, dir string) int {
	t.Helper()
	n := -1 // dir itself
	if err := filepath.WalkDir(dir, func(string, os.DirEntry, error) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReadWriteEntryLimit checks that a ReadWrite mount bounds the files
// and directories the sandbox creates on the host: without it, mkdir and
// the creation of empty files charged nothing, so a loop could fill the
// host's inodes. Each creation counts one against EntryLimit; once spent,
// creating raises "[Errno 122] Disk quota exceeded", after the refusals
// Linux reports first (a missing parent, an existing name), while writes
// to existing files and exist_ok on existing directories still work.
// Removing an entry gives one back.
func TestReadWriteEntryLimit(t *testing.T) {
	f := newFixture(t, ReadWrite)
	tbl := f.withEntryLimit(t, 3)
	do := func(c *message.OsCall) *message.ResumeCall { t.Helper(); return doCall(t, tbl, c) }
	quota := func(p string) string { return "[Errno 122] Disk quota exceeded: '" + p + "'" }
	before := hostEntries(t, f.host)

	// Failed creations cost nothing.
	wantExcType(t, do(mkdirCall("/data/nodir/x", false, false)), "FileNotFoundError")
	wantExcType(t, do(textCall(message.OpWriteText, "/data/nodir/y", "")), "FileNotFoundError")
	wantExcType(t, do(mkdirCall("/data/sub", false, false)), "FileExistsError")
	wantExcType(t, do(openCall("/data/sub", "w")), "IsADirectoryError")

	wantNone(t, do(mkdirCall("/data/d1", false, false)))
	wantInt(t, do(textCall(message.OpWriteText, "/data/f1", "")), 0)
	wantHandle(t, do(openCall("/data/f2", "w")), "/data/f2", "w", 0)

	// Spent: every creation is refused, and nothing reaches the host.
	wantExc(t, do(mkdirCall("/data/d2", false, false)), "OSError", quota("/data/d2"))
	wantExc(t, do(mkdirCall("/data/d3", true, true)), "OSError", quota("/data/d3"))
	wantExc(t, do(mkdirCall("/data/p/q", true, false)), "OSError", quota("/data/p"))
	wantExc(t, do(textCall(message.OpWriteText, "/data/f3", "")), "OSError", quota("/data/f3"))
	wantExc(t, do(bytesCall(message.OpWriteBytes, "/data/d1/f3", nil)), "OSError", quota("/data/d1/f3"))
	wantExc(t, do(openCall("/data/f4", "w")), "OSError", quota("/data/f4"))
	wantExc(t, do(openCall("/data/f4", "ab")), "OSError", quota("/data/f4"))
	if got := hostEntries(t, f.host); got != before+3 {
		t.Fatalf("%d new host entries, want 3", got-before)
	}

	// Linux's own refusals come first.
	wantExc(t, do(mkdirCall("/data/nodir/x", false, false)), "FileNotFoundError",
		"[Errno 2] No such file or directory: '/data/nodir/x'")
	wantExc(t, do(mkdirCall("/data/x.txt/x", false, false)), "NotADirectoryError",
		"[Errno 20] Not a directory: '/data/x.txt/x'")
	wantExc(t, do(mkdirCall("/data/d1", false, false)), "FileExistsError", "[Errno 17] File exists: '/data/d1'")
	wantExc(t, do(textCall(message.OpWriteText, "/data/nodir/y", "")), "FileNotFoundError",
		"[Errno 2] No such file or directory: '/data/nodir/y'")
	wantExc(t, do(openCall("/data/x.txt/y", "w")), "NotADirectoryError",
		"[Errno 20] Not a directory: '/data/x.txt/y'")

	// What creates nothing still works.
	wantNone(t, do(mkdirCall("/data/d1", true, true)))
	wantNone(t, do(mkdirCall("/data/sub", false, true)))
	wantInt(t, do(textCall(message.OpWriteText, "/data/f1", "abc")), 3)
	wantInt(t, do(textCall(message.OpAppendText, "/data/x.txt", "!")), 1)
	wantHandle(t, do(openCall("/data/f2", "a")), "/data/f2", "a", 0)
	wantPath(t, do(renameCall("/data/f1", "/data/d1/g")), "/data/d1/g")
	wantStr(t, do(opCall(message.OpReadText, "/data/d1/g")), "abc")

	// Removing an entry (the session's or the host's) gives one back:
	// the bound is on the entries added to the host, so that a loop
	// making and removing a temporary file runs for ever.
	for range 3 * DefaultEntryLimit / 1000 {
		wantNone(t, do(opCall(message.OpUnlink, "/data/d1/g")))
		wantInt(t, do(textCall(message.OpWriteText, "/data/d1/g", "")), 0)
	}
	wantNone(t, do(opCall(message.OpUnlink, "/data/d1/g")))
	wantNone(t, do(opCall(message.OpUnlink, "/data/x.txt")))
	wantNone(t, do(mkdirCall("/data/d4", false, false)))
	wantNone(t, do(mkdirCall("/data/d5", false, false)))
	wantExc(t, do(mkdirCall("/data/d6", false, false)), "OSError", quota("/data/d6"))
	if got := hostEntries(t, f.host); got != before+3 {
		t.Fatalf("%d new host entries, want 3", got-before)
	}
	// A failed removal gives nothing back.
	wantExcType(t, do(opCall(message.OpRmdir, "/data/nope")), "FileNotFoundError")
	wantExcType(t, do(opCall(message.OpRmdir, "/data/sub")), "OSError")
	wantExc(t, do(mkdirCall("/data/d6", false, false)), "OSError", quota("/data/d6"))

	// Path.mkdir(parents=True) counts each directory it makes.
	tbl2 := f.withEntryLimit(t, 2)
	wantExc(t, doCall(t, tbl2, mkdirCall("/data/a/b/c", true, false)), "OSError", quota("/data/a/b/c"))
	if !hostExists(filepath.Join(f.host, "a", "b")) || hostExists(filepath.Join(f.host, "a", "b", "c")) {
		t.Fatal("want a/b made and a/b/c refused")
	}
}

// TestDefaultEntryLimit checks that the zero EntryLimit is a finite bound,
// DefaultEntryLimit, and that a negative one is refused.
func TestDefaultEntryLimit(t *testing.T) {
	f := newFixture(t, ReadWrite)
	if got := f.tbl.Mounts()[0].EntryLimit; got != DefaultEntryLimit {
		t.Fatalf("Mounts() EntryLimit %d, want %d", got, DefaultEntryLimit)
	}
	if _, err := New([]Mount{{HostDir: f.host, VirtualPath: "/d", Mode: ReadWrite, EntryLimit: -1}}, Options{}); err == nil {
		t.Fatal("negative EntryLimit accepted")
	}
	wantNone(t, f.do(mkdirCall("/data/many", false, false)))
	for i := range DefaultEntryLimit - 1 {
		rc := f.do(openCall("/data/many/"+itoa(i), "w"))
		if rc.Result.Kind != message.ResultReturn {
			t.Fatalf("creation %d refused: %v", i+2, rc.Result.Error)
		}
	}
	wantExc(t, f.do(opCall(message.OpWriteText, "/data/many/last")), "OSError",
		"[Errno 122] Disk quota exceeded: '/data/many/last'")
	wantExc(t, f.do(mkdirCall("/data/last", false, false)), "OSError",
		"[Errno 122] Disk quota exceeded: '/data/last'")
}

// itoa formats i in decimal.
func itoa(i int64) string { return fmt.Sprint(i) }

// TestEntryLimitDanglingSymlink checks that with the entry budget spent,
// writing through a dangling symlink the host placed in the mount (which
// would create its target) is refused like any other creation; the
// lookup took the symlink itself for an existing file and let the target
// be created uncharged. mkdir on it is FileExistsError, as on Linux.
func TestEntryLimitDanglingSymlink(t *testing.T) {
	f := newFixture(t, ReadWrite)
	mustSymlink(t, "target", filepath.Join(f.host, "dl"))
	mustSymlink(t, "target2", filepath.Join(f.host, "dl2"))
	tbl := f.withEntryLimit(t, 1)
	wantInt(t, doCall(t, tbl, textCall(message.OpWriteText, "/data/dl", "a")), 1)
	if readHost(t, filepath.Join(f.host, "target")) != "a" {
		t.Fatal("target not written")
	}
	wantExc(t, doCall(t, tbl, textCall(message.OpWriteText, "/data/dl2", "b")), "OSError",
		"[Errno 122] Disk quota exceeded: '/data/dl2'")
	wantExc(t, doCall(t, tbl, openCall("/data/dl2", "a")), "OSError",
		"[Errno 122] Disk quota exceeded: '/data/dl2'")
	if hostExists(filepath.Join(f.host, "target2")) {
		t.Fatal("target2 created beyond the entry limit")
	}
	wantExc(t, doCall(t, tbl, mkdirCall("/data/dl2", false, false)), "FileExistsError", "[Errno 17] File exists: '/data/dl2'")
}

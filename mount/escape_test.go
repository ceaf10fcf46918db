//go:build unix

package mount

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
)

const denied = "PermissionError"

// deniedMsg is the refusal text for path p.
func deniedMsg(p string) string { return "[Errno 13] Permission denied: " + pyRepr(p) }

// outsideUnchanged asserts that the outside tree still holds only the
// secret, unchanged.
func (f *fixture) outsideUnchanged() {
	f.t.Helper()
	if got := readHost(f.t, filepath.Join(f.outside, "secret.txt")); got != secret {
		f.t.Fatalf("ESCAPE: outside file changed to %q", got)
	}
	ents, err := os.ReadDir(f.outside)
	if err != nil {
		f.t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != "secret.txt" {
		f.t.Fatalf("ESCAPE: outside directory now holds %q", names)
	}
}

// refusedEverywhere asserts that every reading, writing and opening arm on
// p is refused with PermissionError naming p, and the predicates answer
// False, without touching the outside tree.
func (f *fixture) refusedEverywhere(p string) {
	f.t.Helper()
	msg := deniedMsg(p)
	for _, c := range []*message.OsCall{
		opCall(message.OpReadText, p),
		opCall(message.OpReadBytes, p),
		opCall(message.OpStat, p),
		openCall(p, "r"),
		openCall(p, "rb"),
	} {
		wantExc(f.t, f.do(c), denied, msg)
	}
	if f.tbl.mounts[0].mode != ReadOnly {
		for _, c := range []*message.OsCall{
			textCall(message.OpWriteText, p, "pwned"),
			textCall(message.OpAppendText, p, "pwned"),
			bytesCall(message.OpWriteBytes, p, []byte("pwned")),
			bytesCall(message.OpAppendBytes, p, []byte("pwned")),
			openCall(p, "w"),
			openCall(p, "a"),
		} {
			wantExc(f.t, f.do(c), denied, msg)
		}
	}
	for _, op := range []message.OsOp{message.OpExists, message.OpIsFile, message.OpIsDir} {
		wantBool(f.t, f.do(opCall(op, p)), false)
	}
	f.outsideUnchanged()
}

// TestEscapeSuite is the confinement suite: every case tries to read or
// change something outside the mount, and must be refused with the Python
// exception a user would expect. No answer may carry the outside file's
// content (doCall checks every answer graph) and the outside tree must
// stay unchanged.
func TestEscapeSuite(t *testing.T) {
	cases := []struct {
		name  string
		modes []Mode
		run   func(t *testing.T, f *fixture)
	}{
		{"dotdot_chain", allModes, func(t *testing.T, f *fixture) {
			// /data/../../etc/passwd is /etc/passwd: outside every mount.
			wantExc(t, f.do(opCall(message.OpReadText, "/data/../../etc/passwd")), denied, deniedMsg("/data/../../etc/passwd"))
			wantExc(t, f.do(opCall(message.OpReadText, "/data/../outside/secret.txt")), denied, deniedMsg("/data/../outside/secret.txt"))
			wantExc(t, f.do(opCall(message.OpExists, "/data/../../../../../../")), denied, deniedMsg("/data/../../../../../../"))
			wantExc(t, f.do(opCall(message.OpIterdir, "/data/..")), denied, deniedMsg("/data/.."))
		}},
		{"dotdot_collapses_inside", allModes, func(t *testing.T, f *fixture) {
			// ".." is lexical: it never climbs above the virtual root, and
			// inside the mount it stays inside.
			wantStr(t, f.do(opCall(message.OpReadText, "/data/sub/../x.txt")), "hello")
			wantStr(t, f.do(opCall(message.OpReadText, "/../../data/x.txt")), "hello")
			wantStr(t, f.do(opCall(message.OpReadText, "/data/sub/../../data/sub/a.txt")), "A")
		}},
		{"relative_dotdot_from_cwd", allModes, func(t *testing.T, f *fixture) {
			if err := f.tbl.SetCwd("/data/sub"); err != nil {
				t.Fatal(err)
			}
			wantExc(t, f.do(opCall(message.OpReadText, "../../outside/secret.txt")), denied, deniedMsg("../../outside/secret.txt"))
			wantStr(t, f.do(opCall(message.OpReadText, "../x.txt")), "hello")
		}},
		{"outside_every_mount", allModes, func(t *testing.T, f *fixture) {
			wantExc(t, f.do(opCall(message.OpReadText, "/etc/passwd")), denied, deniedMsg("/etc/passwd"))
			wantExc(t, f.do(opCall(message.OpIsFile, "/etc/passwd")), denied, deniedMsg("/etc/passwd"))
			wantExc(t, f.do(textCall(message.OpWriteText, "/tmp/x", "y")), denied, deniedMsg("/tmp/x"))
			wantExc(t, f.do(opCall(message.OpIterdir, "/")), denied, deniedMsg("/"))
			// A sibling whose name merely starts with the mount's.
			wantExc(t, f.do(opCall(message.OpReadText, "/database/x")), denied, deniedMsg("/database/x"))
		}},
		{"absolute_symlink_out", allModes, func(t *testing.T, f *fixture) {
			mustSymlink(t, filepath.Join(f.outside, "secret.txt"), filepath.Join(f.host, "abs"))
			f.refusedEverywhere("/data/abs")
			wantBool(t, f.do(opCall(message.OpIsSymlink, "/data/abs")), true)
		}},
		{"relative_symlink_out", allModes, func(t *testing.T, f *fixture) {
			mustSymlink(t, "../outside/secret.txt", filepath.Join(f.host, "rel"))
			f.refusedEverywhere("/data/rel")
		}},
		{"deep_relative_symlink_out", allModes, func(t *testing.T, f *fixture) {
			mustSymlink(t, "../../outside/secret.txt", filepath.Join(f.host, "sub", "deep"))
			f.refusedEverywhere("/data/sub/deep")
			mustSymlink(t, "../../../../../../../../../../.."+f.outside+"/secret.txt", filepath.Join(f.host, "sub", "deeper"))
			f.refusedEverywhere("/data/sub/deeper")
		}},
		{"symlink_chain_out", allModes, func(t *testing.T, f *fixture) {
			mustSymlink(t, "c2", filepath.Join(f.host, "c1"))
			mustSymlink(t, "sub/c3", filepath.Join(f.host, "c2"))
			mustSymlink(t, "../../outside/secret.txt", filepath.Join(f.host, "sub", "c3"))
			f.refusedEverywhere("/data/c1")
		}},
		{"symlink_chain_inside_allowed", []Mode{ReadOnly, ReadWrite}, func(t *testing.T, f *fixture) {
			mustSymlink(t, "k2", filepath.Join(f.host, "k1"))
			mustSymlink(t, "sub/../x.txt", filepath.Join(f.host, "k2"))
			wantStr(t, f.do(opCall(message.OpReadText, "/data/k1")), "hello")
			wantPath(t, f.do(opCall(message.OpResolve, "/data/k1")), "/data/x.txt")
		}},
		{"symlink_loop", []Mode{ReadOnly, ReadWrite}, func(t *testing.T, f *fixture) {
			mustSymlink(t, "loop2", filepath.Join(f.host, "loop1"))
			mustSymlink(t, "loop1", filepath.Join(f.host, "loop2"))
			wantExc(t, f.do(opCall(message.OpReadText, "/data/loop1")),
				"OSError", "[Errno 40] Too many levels of symbolic links: '/data/loop1'")
			wantPath(t, f.do(opCall(message.OpResolve, "/data/loop1")), "/data/loop1")
		}},
		{"symlinked_dir_out", allModes, func(t *testing.T, f *fixture) {
			mustSymlink(t, "../outside", filepath.Join(f.host, "dirlink"))
			f.refusedEverywhere("/data/dirlink/secret.txt")
			wantExc(t, f.do(opCall(message.OpIterdir, "/data/dirlink")), denied, deniedMsg("/data/dirlink"))
			// An escaping symlink is not advertised in listings.
			wantPaths(t, f.do(opCall(message.OpIterdir, "/data")), "/data/bin.dat", "/data/sub", "/data/x.txt")
		}},
		{"trailing_slash_symlink_target", allModes, func(t *testing.T, f *fixture) {
			mustSymlink(t, f.outside, filepath.Join(f.host, "outdir"))
			wantExc(t, f.do(opCall(message.OpIterdir, "/data/outdir/")), denied, deniedMsg("/data/outdir/"))
			wantExc(t, f.do(opCall(message.OpStat, "/data/outdir/")), denied, deniedMsg("/data/outdir/"))
			wantBool(t, f.do(opCall(message.OpIsDir, "/data/outdir/")), false)
			wantExc(t, f.do(opCall(message.OpReadText, "/data/outdir//secret.txt")), denied, deniedMsg("/data/outdir//secret.txt"))
			f.outsideUnchanged()
		}},
		{"symlink_swapped_in_after_check_race", allModes, func(t *testing.T, f *fixture) {
			raceSwap(t, f)
		}},
		{"rename_out_of_mount", []Mode{ReadWrite, Overlay}, func(t *testing.T, f *fixture) {
			wantExc(t, f.do(renameCall("/data/x.txt", "/etc/x")), denied,
				"[Errno 13] Permission denied: '/data/x.txt' -> '/etc/x'")
			wantExc(t, f.do(renameCall("/data/x.txt", "/data/../outside/x")), denied,
				"[Errno 13] Permission denied: '/data/x.txt' -> '/data/../outside/x'")
			wantExc(t, f.do(renameCall("/etc/passwd", "/data/passwd")), denied,
				"[Errno 13] Permission denied: '/etc/passwd' -> '/data/passwd'")
			mustSymlink(t, "../outside", filepath.Join(f.host, "outdir"))
			wantExc(t, f.do(renameCall("/data/x.txt", "/data/outdir/x")), denied, deniedMsg("/data/x.txt")+" -> '/data/outdir/x'")
			wantStr(t, f.do(opCall(message.OpReadText, "/data/x.txt")), "hello")
			f.outsideUnchanged()
		}},
		{"rename_across_mounts", []Mode{ReadWrite}, func(t *testing.T, f *fixture) {
			other := filepath.Join(f.base, "other")
			mustMkdir(t, other)
			tbl, err := New([]Mount{
				{HostDir: f.host, VirtualPath: "/data", Mode: ReadWrite},
				{HostDir: other, VirtualPath: "/other", Mode: ReadWrite},
			}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Close()
			wantExc(t, doCall(t, tbl, renameCall("/data/x.txt", "/other/x.txt")), "OSError",
				"[Errno 18] Invalid cross-device link: '/data/x.txt' -> '/other/x.txt'")
			if !hostExists(filepath.Join(f.host, "x.txt")) || hostExists(filepath.Join(other, "x.txt")) {
				t.Fatal("cross-mount rename moved the file")
			}
		}},
		{"rename_onto_symlink", []Mode{ReadWrite}, func(t *testing.T, f *fixture) {
			// renameat replaces the link itself; the outside target is
			// untouched.
			mustSymlink(t, filepath.Join(f.outside, "secret.txt"), filepath.Join(f.host, "lnk"))
			wantPath(t, f.do(renameCall("/data/x.txt", "/data/lnk")), "/data/lnk")
			fi, err := os.Lstat(filepath.Join(f.host, "lnk"))
			if err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("lnk is not the renamed file: %v %v", fi, err)
			}
			wantStr(t, f.do(opCall(message.OpReadText, "/data/lnk")), "hello")
			f.outsideUnchanged()
		}},
		{"rename_onto_symlink_overlay", []Mode{Overlay}, func(t *testing.T, f *fixture) {
			mustSymlink(t, filepath.Join(f.outside, "secret.txt"), filepath.Join(f.host, "lnk"))
			wantPath(t, f.do(renameCall("/data/x.txt", "/data/lnk")), "/data/lnk")
			wantStr(t, f.do(opCall(message.OpReadText, "/data/lnk")), "hello")
			wantExc(t, f.do(renameCall("/data/lnk2", "/data/y")), "FileNotFoundError",
				"[Errno 2] No such file or directory: '/data/lnk2' -> '/data/y'")
			f.outsideUnchanged()
		}},
		{"rename_symlink_out_is_only_a_name", []Mode{ReadWrite}, func(t *testing.T, f *fixture) {
			// Moving an escaping link inside the mount moves the link; it
			// still leads nowhere.
			mustSymlink(t, filepath.Join(f.outside, "secret.txt"), filepath.Join(f.host, "lnk"))
			wantPath(t, f.do(renameCall("/data/lnk", "/data/sub/lnk")), "/data/sub/lnk")
			f.refusedEverywhere("/data/sub/lnk")
		}},
		{"hard_link_to_outside_file", []Mode{ReadOnly, ReadWrite, Overlay}, func(t *testing.T, f *fixture) {
			target := filepath.Join(f.base, "hl-target")
			mustWrite(t, target, "linked")
			if err := os.Link(target, filepath.Join(f.host, "hl")); err != nil {
				t.Skip("hard links unsupported:", err)
			}
			// Documented: reads of a hard-linked file are allowed; it is
			// indistinguishable from a copy the host placed in the mount.
			wantStr(t, f.do(opCall(message.OpReadText, "/data/hl")), "linked")
			if f.tbl.mounts[0].mode == ReadWrite {
				// Writes are refused, so the inode shared with the outside
				// file is never changed.
				for _, c := range []*message.OsCall{
					textCall(message.OpWriteText, "/data/hl", "pwned"),
					textCall(message.OpAppendText, "/data/hl", "pwned"),
					openCall("/data/hl", "w"),
					openCall("/data/hl", "a"),
				} {
					wantExc(t, f.do(c), denied, deniedMsg("/data/hl"))
				}
				// Removing the name inside the mount is allowed.
				wantNone(t, f.do(opCall(message.OpUnlink, "/data/hl")))
			}
			if f.tbl.mounts[0].mode == Overlay {
				wantInt(t, f.do(textCall(message.OpWriteText, "/data/hl", "mine")), 4)
				wantStr(t, f.do(opCall(message.OpReadText, "/data/hl")), "mine")
			}
			if got := readHost(t, target); got != "linked" {
				t.Fatalf("ESCAPE: hard-linked outside file changed to %q", got)
			}
		}},
		{"fifo", allModes, func(t *testing.T, f *fixture) {
			p := filepath.Join(f.host, "fifo")
			if err := syscall.Mkfifo(p, 0o666); err != nil {
				t.Skip("mkfifo:", err)
			}
			start := time.Now()
			for _, c := range []*message.OsCall{
				opCall(message.OpReadText, "/data/fifo"),
				opCall(message.OpReadBytes, "/data/fifo"),
				openCall("/data/fifo", "r"),
			} {
				wantExc(t, f.do(c), denied, deniedMsg("/data/fifo"))
			}
			if f.tbl.mounts[0].mode != ReadOnly {
				for _, c := range []*message.OsCall{
					textCall(message.OpWriteText, "/data/fifo", "x"),
					textCall(message.OpAppendText, "/data/fifo", "x"),
					openCall("/data/fifo", "w"),
					openCall("/data/fifo", "a"),
				} {
					wantExc(t, f.do(c), denied, deniedMsg("/data/fifo"))
				}
			}
			wantExc(t, f.do(opCall(message.OpIterdir, "/data/fifo")), "NotADirectoryError",
				"[Errno 20] Not a directory: '/data/fifo'")
			wantBool(t, f.do(opCall(message.OpExists, "/data/fifo")), true)
			wantBool(t, f.do(opCall(message.OpIsFile, "/data/fifo")), false)
			if m := statField(t, f.do(opCall(message.OpStat, "/data/fifo")), "st_mode").Int(); m&0o170000 != 0o010000 {
				t.Fatalf("fifo st_mode %o", m)
			}
			// A call that blocked on the FIFO would be ended by the
			// operation timeout, DefaultOpTimeout: a bound just below it
			// catches one such call while leaving a loaded machine seconds
			// for calls that take microseconds.
			if d := time.Since(start); d > DefaultOpTimeout-time.Second {
				t.Fatalf("FIFO calls took %v: something blocked", d)
			}
		}},
		{"unix_socket", allModes, func(t *testing.T, f *fixture) {
			l, err := net.Listen("unix", filepath.Join(f.host, "sock"))
			if err != nil {
				t.Skip("unix socket:", err)
			}
			defer l.Close()
			wantExc(t, f.do(opCall(message.OpReadText, "/data/sock")), denied, deniedMsg("/data/sock"))
			wantExc(t, f.do(openCall("/data/sock", "rb")), denied, deniedMsg("/data/sock"))
			if f.tbl.mounts[0].mode != ReadOnly {
				wantExc(t, f.do(textCall(message.OpWriteText, "/data/sock", "x")), denied, deniedMsg("/data/sock"))
				wantExc(t, f.do(openCall("/data/sock", "a")), denied, deniedMsg("/data/sock"))
			}
			wantBool(t, f.do(opCall(message.OpIsFile, "/data/sock")), false)
		}},
		{"device_symlinked_into_mount", allModes, func(t *testing.T, f *fixture) {
			mustSymlink(t, "/dev/null", filepath.Join(f.host, "null"))
			mustSymlink(t, "/dev/zero", filepath.Join(f.host, "zero"))
			f.refusedEverywhere("/data/null")
			f.refusedEverywhere("/data/zero")
		}},
		{"device_node_in_mount", allModes, func(t *testing.T, f *fixture) {
			// A real character device (1,5 is /dev/zero) inside the mount;
			// needs CAP_MKNOD.
			p := filepath.Join(f.host, "zerodev")
			if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|5); err != nil {
				t.Skip("mknod:", err)
			}
			wantExc(t, f.do(opCall(message.OpReadBytes, "/data/zerodev")), denied, deniedMsg("/data/zerodev"))
			wantExc(t, f.do(openCall("/data/zerodev", "rb")), denied, deniedMsg("/data/zerodev"))
			if f.tbl.mounts[0].mode != ReadOnly {
				wantExc(t, f.do(bytesCall(message.OpWriteBytes, "/data/zerodev", []byte("x"))), denied, deniedMsg("/data/zerodev"))
			}
			if m := statField(t, f.do(opCall(message.OpStat, "/data/zerodev")), "st_mode").Int(); m&0o170000 != 0o020000 {
				t.Fatalf("device st_mode %o", m)
			}
		}},
		{"overlay_host_file_changed_underneath", []Mode{Overlay}, func(t *testing.T, f *fixture) {
			wantInt(t, f.do(textCall(message.OpWriteText, "/data/x.txt", "session")), 7)
			mustWrite(t, filepath.Join(f.host, "x.txt"), "host changed it")
			wantStr(t, f.do(opCall(message.OpReadText, "/data/x.txt")), "session")
			mustWrite(t, filepath.Join(f.host, "sub", "a.txt"), "host B")
			wantStr(t, f.do(opCall(message.OpReadText, "/data/sub/a.txt")), "host B")
			// Swapping the unwritten file for a symlink out is refused.
			os.Remove(filepath.Join(f.host, "sub", "a.txt"))
			mustSymlink(t, filepath.Join(f.outside, "secret.txt"), filepath.Join(f.host, "sub", "a.txt"))
			f.refusedEverywhere("/data/sub/a.txt")
		}},
		{"overlay_symlinks_not_followed", []Mode{Overlay}, func(t *testing.T, f *fixture) {
			mustSymlink(t, "x.txt", filepath.Join(f.host, "inlink"))
			mustSymlink(t, "sub", filepath.Join(f.host, "sublink"))
			f.refusedEverywhere("/data/inlink")
			wantBool(t, f.do(opCall(message.OpIsSymlink, "/data/inlink")), true)
			wantExc(t, f.do(opCall(message.OpReadText, "/data/sublink/a.txt")), denied, deniedMsg("/data/sublink/a.txt"))
			wantExc(t, f.do(opCall(message.OpIterdir, "/data/sublink")), denied, deniedMsg("/data/sublink"))
			wantExc(t, f.do(mkdirCall("/data/sublink/new", true, false)), denied, deniedMsg("/data/sublink/new"))
			wantExc(t, f.do(renameCall("/data/inlink", "/data/moved")), denied, deniedMsg("/data/inlink")+" -> '/data/moved'")
			wantPaths(t, f.do(opCall(message.OpIterdir, "/data")), "/data/bin.dat", "/data/sub", "/data/x.txt")
			// Unlinking the link only hides it from the session.
			wantNone(t, f.do(opCall(message.OpUnlink, "/data/inlink")))
			wantBool(t, f.do(opCall(message.OpIsSymlink, "/data/inlink")), false)
			if !hostExists(filepath.Join(f.host, "inlink")) {
				t.Fatal("overlay unlink reached the host")
			}
		}},
		{"nul_bytes", allModes, func(t *testing.T, f *fixture) {
			wantExc(t, f.do(opCall(message.OpReadText, "/data/x.txt\x00/../../etc/passwd")), "ValueError", "embedded null byte")
			wantExc(t, f.do(openCall("/data/x\x00", "r")), "ValueError", "embedded null byte")
			wantExc(t, f.do(textCall(message.OpWriteText, "/data/x\x00", "y")), "ValueError", "embedded null byte")
			wantExc(t, f.do(opCall(message.OpStat, "/data/\x00")), "ValueError", "stat: embedded null character in path")
			wantExc(t, f.do(mkdirCall("/data/\x00", true, true)), "ValueError", "mkdir: embedded null character in path")
			wantExc(t, f.do(opCall(message.OpIterdir, "/data/\x00")), "ValueError", "scandir: embedded null character in path")
			wantExc(t, f.do(opCall(message.OpUnlink, "/data/\x00")), "ValueError", "unlink: embedded null character in path")
			wantExc(t, f.do(opCall(message.OpRmdir, "/data/\x00")), "ValueError", "rmdir: embedded null character in path")
			wantExc(t, f.do(renameCall("/data/x.txt", "/data/\x00")), "ValueError", "rename: embedded null character in dst")
			wantExc(t, f.do(renameCall("/data/\x00", "/data/y")), "ValueError", "rename: embedded null character in src")
			wantBool(t, f.do(opCall(message.OpExists, "/data/x.txt\x00")), false)
			wantBool(t, f.do(opCall(message.OpIsSymlink, "\x00")), false)
		}},
		{"very_long_paths", allModes, func(t *testing.T, f *fixture) {
			long := "/data/" + strings.Repeat("a/", 2100) + "x"
			rc := f.do(opCall(message.OpReadText, long))
			wantExcType(t, rc, "OSError")
			if m := rc.Result.Error.Msg(); !strings.HasPrefix(m, "[Errno 36] File name too long: '/data/a/a/") || !strings.HasSuffix(m, "...") || len(m) > 700 {
				t.Fatalf("long path message %q", m)
			}
			comp := "/data/" + strings.Repeat("n", 256)
			wantExc(t, f.do(opCall(message.OpStat, comp)), "OSError", "[Errno 36] File name too long: "+pyRepr(comp))
			wantBool(t, f.do(opCall(message.OpExists, long)), false)
			wantBool(t, f.do(opCall(message.OpExists, comp)), false)
			// 255 bytes is still a legal name.
			ok := "/data/" + strings.Repeat("n", 255)
			wantBool(t, f.do(opCall(message.OpExists, ok)), false)
			wantExc(t, f.do(opCall(message.OpReadText, ok)), "FileNotFoundError", "[Errno 2] No such file or directory: "+pyRepr(ok))
			// os.rename names both paths, as for every other errno.
			wantExc(t, f.do(renameCall("/data/x.txt", long)), "OSError",
				"[Errno 36] File name too long: '/data/x.txt' -> "+shown(long))
		}},
		{"double_slash_and_dot_components", allModes, func(t *testing.T, f *fixture) {
			wantStr(t, f.do(opCall(message.OpReadText, "/data//sub/./a.txt")), "A")
			wantStr(t, f.do(opCall(message.OpReadText, "//data/./x.txt")), "hello")
			wantStr(t, f.do(opCall(message.OpReadText, "/./data/sub//..//x.txt")), "hello")
			wantPaths(t, f.do(opCall(message.OpIterdir, "/data/./sub//")), "/data/sub/a.txt")
			wantExc(t, f.do(opCall(message.OpReadText, "/data//..//..//outside/secret.txt")), denied,
				deniedMsg("/data//..//..//outside/secret.txt"))
		}},
		{"unicode_paths", []Mode{ReadWrite, Overlay}, func(t *testing.T, f *fixture) {
			wantNone(t, f.do(mkdirCall("/data/日本語", false, false)))
			wantInt(t, f.do(textCall(message.OpWriteText, "/data/日本語/ファイル.txt", "ü")), 1)
			wantStr(t, f.do(opCall(message.OpReadText, "/data/日本語/ファイル.txt")), "ü")
			wantPaths(t, f.do(opCall(message.OpIterdir, "/data/日本語")), "/data/日本語/ファイル.txt")
			// No Unicode normalization: NFD "é" is another name than NFC "é".
			wantInt(t, f.do(textCall(message.OpWriteText, "/data/caf\u00e9", "nfc")), 3)
			wantBool(t, f.do(opCall(message.OpExists, "/data/cafe\u0301")), false)
			wantExc(t, f.do(opCall(message.OpReadText, "/data/\u202enope")), "FileNotFoundError",
				"[Errno 2] No such file or directory: '/data/\\u202enope'")
			if f.tbl.mounts[0].mode == ReadWrite && readHost(t, filepath.Join(f.host, "日本語", "ファイル.txt")) != "ü" {
				t.Fatal("unicode write missing on host")
			}
		}},
		{"writes_beyond_write_limit", []Mode{ReadWrite, Overlay}, func(t *testing.T, f *fixture) {
			tbl := f.withLimits(t, 10, 0)
			wantInt(t, doCall(t, tbl, textCall(message.OpWriteText, "/data/w.txt", "12345678")), 8)
			wantExc(t, doCall(t, tbl, textCall(message.OpAppendText, "/data/w.txt", "abc")), "OSError",
				"[Errno 122] Disk quota exceeded: '/data/w.txt'")
			wantExc(t, doCall(t, tbl, bytesCall(message.OpWriteBytes, "/data/v.bin", make([]byte, 3))), "OSError",
				"[Errno 122] Disk quota exceeded: '/data/v.bin'")
			wantInt(t, doCall(t, tbl, textCall(message.OpAppendText, "/data/w.txt", "90")), 2)
			wantStr(t, doCall(t, tbl, opCall(message.OpReadText, "/data/w.txt")), "1234567890")
			if w, _ := tbl.Written("/data"); w != 10 {
				t.Fatalf("Written %d", w)
			}
			// A failed write is not charged.
			tbl2 := f.withLimits(t, 4, 0)
			wantExcType(t, doCall(t, tbl2, textCall(message.OpWriteText, "/data/nodir/x", "1234")), "FileNotFoundError")
			wantInt(t, doCall(t, tbl2, textCall(message.OpWriteText, "/data/w4", "1234")), 4)
		}},
		{"overlay_beyond_memory_limit", []Mode{Overlay}, func(t *testing.T, f *fixture) {
			tbl := f.withLimits(t, 0, 1500)
			wantInt(t, doCall(t, tbl, bytesCall(message.OpWriteBytes, "/data/m1", make([]byte, 700))), 700)
			wantExc(t, doCall(t, tbl, bytesCall(message.OpWriteBytes, "/data/m2", make([]byte, 700))), "MemoryError",
				"overlay memory limit of 1500 bytes exceeded writing '/data/m2'")
			wantBool(t, doCall(t, tbl, opCall(message.OpExists, "/data/m2")), false)
			wantExc(t, doCall(t, tbl, bytesCall(message.OpAppendBytes, "/data/m1", make([]byte, 700))), "MemoryError",
				"overlay memory limit of 1500 bytes exceeded writing '/data/m1'")
			if n := len(rootOf(t, doCall(t, tbl, opCall(message.OpReadBytes, "/data/m1"))).Bytes()); n != 700 {
				t.Fatalf("m1 has %d bytes after a refused append", n)
			}
			// Removing frees memory.
			wantNone(t, doCall(t, tbl, opCall(message.OpUnlink, "/data/m1")))
			wantInt(t, doCall(t, tbl, bytesCall(message.OpWriteBytes, "/data/m2", make([]byte, 700))), 700)
			// A host file too big for the budget cannot be copied in.
			mustWrite(t, filepath.Join(f.host, "big"), strings.Repeat("b", 2000))
			wantExc(t, doCall(t, tbl, opCall(message.OpReadBytes, "/data/big")), "MemoryError",
				"file too large: '/data/big' exceeds the mount's 1500-byte read limit")
			wantExcType(t, doCall(t, tbl, textCall(message.OpAppendText, "/data/big", "x")), "MemoryError")
		}},
		{"mkdir_parents_through_symlink", []Mode{ReadWrite}, func(t *testing.T, f *fixture) {
			mustSymlink(t, "../outside", filepath.Join(f.host, "outdir"))
			mustSymlink(t, f.outside, filepath.Join(f.host, "absdir"))
			wantExc(t, f.do(mkdirCall("/data/outdir/new/deep", true, false)), denied, deniedMsg("/data/outdir/new/deep"))
			wantExc(t, f.do(mkdirCall("/data/absdir/new", false, false)), denied, deniedMsg("/data/absdir/new"))
			wantExc(t, f.do(mkdirCall("/data/outdir", true, true)), "FileExistsError", "[Errno 17] File exists: '/data/outdir'")
			f.outsideUnchanged()
			// A symlink to a directory inside the mount is followed.
			mustSymlink(t, "sub", filepath.Join(f.host, "sublink"))
			wantNone(t, f.do(mkdirCall("/data/sublink/new/deep", true, false)))
			if !hostExists(filepath.Join(f.host, "sub", "new", "deep")) {
				t.Fatal("mkdir through an inside symlink did not reach sub/")
			}
		}},
		{"iterdir_of_symlinked_dir", []Mode{ReadOnly, ReadWrite}, func(t *testing.T, f *fixture) {
			mustSymlink(t, "sub", filepath.Join(f.host, "sublink"))
			mustSymlink(t, "../outside", filepath.Join(f.host, "outdir"))
			wantPaths(t, f.do(opCall(message.OpIterdir, "/data/sublink")), "/data/sublink/a.txt")
			wantPaths(t, f.do(opCall(message.OpIterdir, "/data")), "/data/bin.dat", "/data/sub", "/data/sublink", "/data/x.txt")
			wantExc(t, f.do(opCall(message.OpIterdir, "/data/outdir")), denied, deniedMsg("/data/outdir"))
		}},
		{"stat_of_dangling_symlink", allModes, func(t *testing.T, f *fixture) {
			mustSymlink(t, "missing", filepath.Join(f.host, "dangling"))
			if f.tbl.mounts[0].mode == Overlay {
				wantExc(t, f.do(opCall(message.OpStat, "/data/dangling")), denied, deniedMsg("/data/dangling"))
			} else {
				wantExc(t, f.do(opCall(message.OpStat, "/data/dangling")), "FileNotFoundError",
					"[Errno 2] No such file or directory: '/data/dangling'")
				wantExc(t, f.do(opCall(message.OpReadText, "/data/dangling")), "FileNotFoundError",
					"[Errno 2] No such file or directory: '/data/dangling'")
			}
			wantBool(t, f.do(opCall(message.OpIsSymlink, "/data/dangling")), true)
			wantBool(t, f.do(opCall(message.OpExists, "/data/dangling")), false)
		}},
		{"open_of_directory", allModes, func(t *testing.T, f *fixture) {
			for _, mode := range []string{"r", "rb"} {
				wantExc(t, f.do(openCall("/data/sub", mode)), "IsADirectoryError", "[Errno 21] Is a directory: '/data/sub'")
			}
			wantExc(t, f.do(openCall("/data", "r")), "IsADirectoryError", "[Errno 21] Is a directory: '/data'")
			if f.tbl.mounts[0].mode != ReadOnly {
				wantExc(t, f.do(openCall("/data/sub", "w")), "IsADirectoryError", "[Errno 21] Is a directory: '/data/sub'")
				wantExc(t, f.do(openCall("/data/sub", "a")), "IsADirectoryError", "[Errno 21] Is a directory: '/data/sub'")
			}
		}},
		{"mount_root_cannot_be_removed_or_renamed", []Mode{ReadWrite, Overlay}, func(t *testing.T, f *fixture) {
			wantExc(t, f.do(opCall(message.OpRmdir, "/data")), denied, deniedMsg("/data"))
			wantExc(t, f.do(opCall(message.OpRmdir, "/data/sub/..")), "OSError", "[Errno 39] Directory not empty: '/data/sub/..'")
			wantExc(t, f.do(renameCall("/data", "/data2")), denied,
				"[Errno 13] Permission denied: '/data' -> '/data2'")
			wantExc(t, f.do(renameCall("/data/x.txt", "/data")), denied, deniedMsg("/data/x.txt")+" -> '/data'")
			if !hostExists(f.host) {
				t.Fatal("mount root removed")
			}
		}},
		{"resolve_never_reveals_host_paths", []Mode{ReadOnly, ReadWrite}, func(t *testing.T, f *fixture) {
			mustSymlink(t, filepath.Join(f.outside, "secret.txt"), filepath.Join(f.host, "abs"))
			mustSymlink(t, "../outside/secret.txt", filepath.Join(f.host, "rel"))
			wantPath(t, f.do(opCall(message.OpResolve, "/data/abs")), "/data/abs")
			wantPath(t, f.do(opCall(message.OpResolve, "/data/rel")), "/data/rel")
			wantPath(t, f.do(opCall(message.OpResolve, "/data/../etc/passwd")), "/etc/passwd")
		}},
		{"ctx_cancelled_before_the_op", []Mode{ReadWrite}, func(t *testing.T, f *fixture) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var ran atomic.Bool
			f.tbl.setHook(func(string) { ran.Store(true) })
			rc, err := f.tbl.HandleOS(ctx, textCall(message.OpWriteText, "/data/c.txt", "x"))
			if rc != nil || !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, %v; want context.Canceled", rc, err)
			}
			if ran.Load() || hostExists(filepath.Join(f.host, "c.txt")) {
				t.Fatal("an operation ran after ctx was cancelled")
			}
		}},
		{"ctx_cancelled_during_the_op", allModes, func(t *testing.T, f *fixture) {
			block := make(chan struct{})
			defer close(block)
			f.tbl.setHook(func(string) { <-block })
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			rc, err := f.tbl.HandleOS(ctx, opCall(message.OpReadText, "/data/x.txt"))
			if rc != nil || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("got %v, %v; want context.DeadlineExceeded", rc, err)
			}
		}},
		{"blocked_op_times_out", allModes, func(t *testing.T, f *fixture) {
			tbl := f.withTimeout(t, 50*time.Millisecond)
			block := make(chan struct{})
			tbl.setHook(func(string) { <-block })
			start := time.Now()
			for _, c := range []*message.OsCall{
				opCall(message.OpReadText, "/data/x.txt"),
				opCall(message.OpExists, "/data/x.txt"),
				opCall(message.OpIterdir, "/data"),
				opCall(message.OpStat, "/data/x.txt"),
			} {
				wantExc(t, doCall(t, tbl, c), "OSError", "operation timed out: "+pyRepr(c.Path))
			}
			// Four 50 ms timeouts; one call that ignored OpTimeout would
			// wait DefaultOpTimeout (or forever), so a bound just below it
			// tells them apart with seconds to spare for a loaded machine.
			if d := time.Since(start); d > DefaultOpTimeout-time.Second {
				t.Fatalf("timeouts took %v", d)
			}
			close(block)
			tbl.setHook(nil)
			wantStr(t, doCall(t, tbl, opCall(message.OpReadText, "/data/x.txt")), "hello")
		}},
	}
	for _, c := range cases {
		for _, mode := range c.modes {
			t.Run(c.name+"/"+mode.String(), func(t *testing.T) {
				f := newFixture(t, mode)
				c.run(t, f)
				f.outsideUnchanged()
			})
		}
	}
	if len(cases) < 25 {
		t.Fatalf("escape suite has only %d cases", len(cases))
	}
}

// withLimits builds a second table on the fixture's host directory with
// the given limits and the fixture's mode.
func (f *fixture) withLimits(t *testing.T, writeLimit, memLimit int64) *Table {
	t.Helper()
	tbl, err := New([]Mount{{HostDir: f.host, VirtualPath: "/data", Mode: f.tbl.mounts[0].mode,
		WriteLimit: writeLimit, MemoryLimit: memLimit}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

// withTimeout builds a second table with OpTimeout d.
func (f *fixture) withTimeout(t *testing.T, d time.Duration) *Table {
	t.Helper()
	tbl, err := New([]Mount{{HostDir: f.host, VirtualPath: "/data", Mode: f.tbl.mounts[0].mode}}, Options{OpTimeout: d})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

// raceSwap flips /data/race between a regular file and a symlink to the
// outside secret while 1000 reads run; no read may ever return the secret.
func raceSwap(t *testing.T, f *fixture) {
	race := filepath.Join(f.host, "race")
	mustWrite(t, race, "inside")
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tmpFile := filepath.Join(f.host, ".race-file")
		tmpLink := filepath.Join(f.host, ".race-link")
		targets := []string{filepath.Join(f.outside, "secret.txt"), "../outside/secret.txt"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.WriteFile(tmpFile, []byte("inside"), 0o644)
			os.Rename(tmpFile, race)
			os.Remove(tmpLink)
			os.Symlink(targets[i%2], tmpLink)
			os.Rename(tmpLink, race)
		}
	}()
	defer func() { close(stop); <-done }()

	var ok, refused int
	for i := 0; i < 1000; i++ {
		var c *message.OsCall
		switch i % 3 {
		case 0:
			c = opCall(message.OpReadText, "/data/race")
		case 1:
			c = opCall(message.OpReadBytes, "/data/race")
		default:
			c = openCall("/data/race", "r")
		}
		rc := f.do(c) // doCall fails on any answer carrying the secret
		switch rc.Result.Kind {
		case message.ResultReturn:
			ok++
			if n := rootOf(t, rc); c.Op != message.OpOpen && n.Text() != "inside" && string(n.Bytes()) != "inside" {
				t.Fatalf("read returned %q %q", n.Text(), n.Bytes())
			}
		case message.ResultError:
			refused++
			switch rc.Result.Error.Type {
			case "PermissionError", "FileNotFoundError":
			case "OSError":
				// os.Root meeting a symlink where its O_NOFOLLOW open found
				// a file (or back) reports ELOOP: a refusal too.
				if !strings.HasPrefix(rc.Result.Error.Msg(), "[Errno 40] ") {
					t.Fatalf("unexpected exception %s", rc.Result.Error)
				}
			default:
				t.Fatalf("unexpected exception %s", rc.Result.Error)
			}
		default:
			t.Fatalf("unexpected result %s", rc.Result.Kind)
		}
	}
	t.Logf("race: %d reads of the inside file, %d refused", ok, refused)
}

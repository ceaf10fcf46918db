package mount

import (
	"strings"
	"testing"

	"github.com/gomonty/monty/message"
)

// TestEmptyPathIsNotFound checks that the empty path is no name at all
// in the arms the os functions and open() reach, as in CPython (the kernel
// refuses "" with ENOENT): os.listdir(""), os.stat(""), open(""),
// os.mkdir(""), os.rmdir(""), os.unlink("") and os.rename raise
// FileNotFoundError naming "", whatever the working directory, where the
// lexical cleaning used to turn "" into the working directory (listing
// it, answering its stat, IsADirectoryError for open). The arms only
// pathlib reaches keep Path("") as the working directory, as CPython's
// Path("") is Path(".") (the worker sends it as "").
func TestEmptyPathIsNotFound(t *testing.T) {
	const enoent = "[Errno 2] No such file or directory: ''"
	for _, mode := range []Mode{ReadOnly, ReadWrite, Overlay} {
		for _, cwd := range []string{"/data", "/data/sub", "/"} {
			t.Run(mode.String()+cwd, func(t *testing.T) {
				f := newFixture(t, mode, func(_ *Mount, o *Options) { o.Cwd = cwd })
				for _, c := range []*message.OsCall{
					opCall(message.OpIterdir, ""),
					opCall(message.OpStat, ""),
					opCall(message.OpUnlink, ""),
					opCall(message.OpRmdir, ""),
					mkdirCall("", false, false),
					mkdirCall("", true, true),
					openCall("", "r"),
					openCall("", "rb"),
					openCall("", "w"),
					openCall("", "a"),
				} {
					wantExc(t, f.do(c), "FileNotFoundError", enoent)
				}
				wantExc(t, f.do(renameCall("", "/data/y")), "FileNotFoundError", enoent+" -> '/data/y'")
				wantExc(t, f.do(renameCall("/data/x.txt", "")), "FileNotFoundError",
					"[Errno 2] No such file or directory: '/data/x.txt' -> ''")
				wantExc(t, f.do(renameCall("", "")), "FileNotFoundError", enoent+" -> ''")
				// Before a cross-mount or an outside refusal: the kernel
				// looks the names up first.
				wantExc(t, f.do(renameCall("", "/elsewhere")), "FileNotFoundError", enoent+" -> '/elsewhere'")
				// Linux's order: the source (empty, too long, a directory
				// component too long), then the target, then the last
				// components' lengths.
				long := strings.Repeat("a", 300)
				wantExc(t, f.do(renameCall(long, "")), "FileNotFoundError",
					"[Errno 2] No such file or directory: '"+long+"' -> ''")
				wantExc(t, f.do(renameCall(long+"/x", "")), "OSError",
					"[Errno 36] File name too long: '"+long+"/x' -> ''")
				wantExc(t, f.do(renameCall("", long)), "FileNotFoundError", enoent+" -> '"+long+"'")
				huge := strings.Repeat("a/", 2100)
				wantExcType(t, f.do(renameCall(huge, "")), "OSError")
				wantExc(t, f.do(renameCall("", huge)), "FileNotFoundError", enoent+" -> "+shown(huge))
				// A NUL byte is refused before anything else.
				wantExc(t, f.do(renameCall("", "a\x00")), "ValueError", "rename: embedded null character in dst")

				wantPath(t, f.do(opCall(message.OpAbsolute, "")), cwd)
				wantPath(t, f.do(opCall(message.OpResolve, "")), cwd)
				if cwd == "/" {
					return
				}
				// pathlib's Path('') is the working directory.
				wantBool(t, f.do(opCall(message.OpExists, "")), true)
				wantBool(t, f.do(opCall(message.OpIsDir, "")), true)
				wantBool(t, f.do(opCall(message.OpIsFile, "")), false)
				wantBool(t, f.do(opCall(message.OpIsSymlink, "")), false)
				wantExcType(t, f.do(opCall(message.OpReadText, "")), "IsADirectoryError")
				// Nothing was made or changed.
				wantStr(t, f.do(opCall(message.OpReadText, "/data/x.txt")), "hello")
				wantPaths(t, f.do(opCall(message.OpIterdir, "/data")), "/data/bin.dat", "/data/sub", "/data/x.txt")
			})
		}
	}
}

package mount

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gomonty/monty/message"
)

// TestChangesToTheNamespaceRoot: with a mount at "/", a change to "/"
// itself answers as Linux does for its root (measured with CPython as
// root): os.rename with "/" at either end is OSError EBUSY (even
// os.rename('/', '/')), os.rmdir('/') OSError EBUSY and os.unlink('/')
// IsADirectoryError, in every mode, before the read-only refusal and
// after the other end's parent is looked up (a missing one is
// FileNotFoundError). Before, these were PermissionError (EACCES or
// EROFS, the refusal to remove or rename a mount's root), and
// os.rename('/x.txt', '/') NotADirectoryError. The root of a mount
// elsewhere ('/data') is an entry of the directory outside every mount,
// which the sandbox cannot change: that stays PermissionError, as Linux
// gives for a mount point in a directory the caller cannot write (its
// permission check comes before the mount point's EBUSY).
func TestChangesToTheNamespaceRoot(t *testing.T) {
	const busy = "[Errno 16] Device or resource busy: "
	for _, mode := range []Mode{ReadWrite, ReadOnly, Overlay} {
		t.Run(mode.String(), func(t *testing.T) {
			f := newFixture(t, mode, func(m *Mount, _ *Options) { m.VirtualPath = "/" })
			for _, c := range []struct {
				call      *message.OsCall
				typ, want string
			}{
				{renameCall("/", "/zz"), "OSError", busy + "'/' -> '/zz'"},
				{renameCall("//", "/zz"), "OSError", busy + "'//' -> '/zz'"},
				{renameCall("/", "/sub/x"), "OSError", busy + "'/' -> '/sub/x'"},
				{renameCall("/sub", "/"), "OSError", busy + "'/sub' -> '/'"},
				{renameCall("/x.txt", "/"), "OSError", busy + "'/x.txt' -> '/'"},
				{renameCall("/", "/"), "OSError", busy + "'/' -> '/'"},
				{renameCall("/", "/nope/x"), "FileNotFoundError", "[Errno 2] No such file or directory: '/' -> '/nope/x'"},
				{opCall(message.OpRmdir, "/"), "OSError", busy + "'/'"},
				{opCall(message.OpUnlink, "/"), "IsADirectoryError", "[Errno 21] Is a directory: '/'"},
			} {
				wantExc(t, f.do(c.call), c.typ, c.want)
			}
			if _, err := os.Stat(filepath.Join(f.host, "sub", "a.txt")); err != nil {
				t.Fatal(err)
			}
		})
	}
	f := newFixture(t, ReadWrite)
	for _, c := range [][2]string{{"/data", "/elsewhere"}, {"/data", "/data/sub/x"}, {"/data/sub", "/data"}} {
		wantExc(t, f.do(renameCall(c[0], c[1])), "PermissionError", "[Errno 13] Permission denied: '"+c[0]+"' -> '"+c[1]+"'")
	}
}

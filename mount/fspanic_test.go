package mount

import (
	"context"
	"io/fs"
	"log/slog"
	"strings"
	"testing"

	"github.com/gomonty/monty/message"
)

// panicFS panics in every method: a user's file system with a bug.
type panicFS struct{}

func (panicFS) Open(string) (fs.File, error) { panic("boom in Open") }

// TestFSPanicReachesTheCaller: a panic of a mounted fs.FS, raised on the
// operation's own goroutine, is raised again on the goroutine that called
// HandleOS (where a session recovers it), as an *opPanic that names the
// operation and keeps the value for logs. Before, it ended the process.
func TestFSPanicReachesTheCaller(t *testing.T) {
	for _, mode := range []Mode{ReadOnly, Overlay} {
		t.Run(mode.String(), func(t *testing.T) {
			tbl := newFSTable(t, panicFS{}, mode)
			var got any
			func() {
				defer func() { got = recover() }()
				tbl.HandleOS(context.Background(), opCall(message.OpReadText, "/data/x"))
			}()
			p, ok := got.(*opPanic)
			if !ok {
				t.Fatalf("recovered %T %v, want *opPanic", got, got)
			}
			if msg := p.Error(); !strings.HasPrefix(msg, "mount: the file system panicked during ") || strings.Contains(msg, "boom") {
				t.Errorf("Error() = %q: want the operation named, not the panic's value", msg)
			}
			lv := p.LogValue().Resolve().String()
			if !strings.Contains(lv, "boom in Open") || !strings.Contains(lv, "panicFS") {
				t.Errorf("LogValue = %s: want the value and the stack", lv)
			}
			var _ slog.LogValuer = p
			// The table still answers afterwards.
			rc := doCall(t, tbl, opCall(message.OpGetenv, "HOME"))
			if rc == nil {
				t.Fatal("no answer after the panic")
			}
		})
	}
}

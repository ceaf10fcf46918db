//go:build unix

package mount_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/gomonty/monty/mount"
	"github.com/gomonty/monty/session"
)

type panickyFS struct{}

func (panickyFS) Open(string) (fs.File, error) { panic("boom in Open") }

// TestLiveFSPanicIsARuntimeError: through the real worker, a mounted
// fs.FS that panics makes the sandbox's call raise a catchable
// RuntimeError naming the operation (not the panic's value; the session
// logs the value and the stack), and the session and the process go on.
func TestLiveFSPanicIsARuntimeError(t *testing.T) {
	ctx, s := liveSession(t)
	tbl, err := mount.New([]mount.Mount{{FS: panickyFS{}, VirtualPath: "/data", Mode: mount.ReadOnly}}, mount.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	r, err := s.Run(ctx, `
from pathlib import Path
try:
    Path("/data/x").read_text()
    out = "no error"
except RuntimeError as e:
    out = str(e)
out`, session.WithOS(tbl))
	if err != nil {
		t.Fatal(err)
	}
	got := r.Str()
	if !strings.Contains(got, "the file system panicked during") || strings.Contains(got, "boom") {
		t.Errorf("sandbox saw %q: want a RuntimeError naming the operation, not the panic's value", got)
	}
	r, err = s.Run(ctx, "1 + 1")
	if err != nil || r.Repr() != "2" {
		t.Fatalf("after the panic: %v %v", r, err)
	}
}

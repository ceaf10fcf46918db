package worker

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingBinaryNamedOnce: a named binary that does not exist was
// reported as "tried: PATH: stat PATH: no such file or directory", the
// path twice (os.Stat's error names it again). The path is said once;
// the error still matches fs.ErrNotExist and holds the *fs.PathError.
func TestMissingBinaryNamedOnce(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-monty")
	_, err := ResolveBinary(missing)
	var pe *fs.PathError
	if !errors.Is(err, ErrBinaryNotFound) || !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != missing {
		t.Fatalf("ResolveBinary(%s): %v, want ErrBinaryNotFound, fs.ErrNotExist and its *fs.PathError", missing, err)
	}
	if n := strings.Count(err.Error(), missing); n != 1 {
		t.Errorf("%q names %s %d times, want once", err, missing, n)
	}
	if !strings.Contains(err.Error(), missing+": "+pe.Err.Error()) {
		t.Errorf("%q does not say %s: %v", err, missing, pe.Err)
	}
}

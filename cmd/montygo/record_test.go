//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomonty/monty/child/tap"
	"github.com/gomonty/monty/codec"
)

// TestDecodeRecordRefusesATruncatedRecord: a recording whose last record
// is cut inside its body is broken, not finished. The tap reader used to
// report that cut with an error matching io.EOF, which decode --record took
// for the clean end of the stream: exit 0, the cut record silently gone.
func TestDecodeRecordRefusesATruncatedRecord(t *testing.T) {
	ok := tap.Header + ">\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x12\x00"
	for name, c := range map[string]struct {
		stream string
		code   int
	}{
		"whole":         {ok, 0},
		"body cut":      {ok + ">\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00ab", 1},
		"body missing":  {ok + "<\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00", 1},
		"header cut":    {ok + "<\x00\x00", 1},
		"bad direction": {ok + "?\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", 1},
	} {
		path := filepath.Join(t.TempDir(), "rec")
		if err := os.WriteFile(path, []byte(c.stream), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		err := decodeRecord(path, 4, codec.Limits{}, &out, &errb)
		code := 0
		var ee exitError
		if errors.As(err, &ee) {
			code = ee.code
		} else if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if code != c.code || (code != 0) != strings.Contains(errb.String(), "record 1:") {
			t.Errorf("%s: exit %d, want %d; stdout %q stderr %q", name, code, c.code, out.String(), errb.String())
		}
		if n := strings.Count(out.String(), "\n"); n != 1 {
			t.Errorf("%s: %d records rendered, want 1: %q", name, n, out.String())
		}
	}
}

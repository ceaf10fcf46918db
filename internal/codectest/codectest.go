// Package codectest holds the test properties every protocol version's
// codec shares: the fuzz round trip and the committed seed corpora. It is
// imported by the codecs' tests only.
package codectest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gomonty/monty/codec"
)

// FuzzLimits keeps each fuzz decode small and fast.
var FuzzLimits = codec.Limits{MaxDecodeBytes: 64 << 20}

// CheckDecodeError fails t unless err is a *codec.DecodeError with a
// text.
func CheckDecodeError(t testing.TB, err error) {
	t.Helper()
	var de *codec.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error is %T (%v), not *codec.DecodeError", err, err)
	}
	if len(err.Error()) == 0 {
		t.Fatal("empty error text")
	}
}

// Codec is one message type's side of a codec: decode within limits,
// append an encoding, and tell two decoded messages apart ("" when they
// are the same; it may consume the messages, so it is called last).
type Codec[M any] struct {
	Decode func([]byte, codec.Limits) (M, error)
	Append func([]byte, M) ([]byte, error)
	Diff   func(a, b M) string
}

// RoundTrip is the fuzz property: b either fails to decode with a
// *codec.DecodeError, or decodes to a message that encodes, decodes back
// to the same message and re-encodes to the same bytes. It returns the
// decoded message and whether b decoded.
func RoundTrip[M any](t *testing.T, c Codec[M], b []byte) (M, bool) {
	t.Helper()
	m, err := c.Decode(b, FuzzLimits)
	if err != nil {
		CheckDecodeError(t, err)
		return m, false
	}
	enc, err := c.Append(nil, m)
	if err != nil {
		t.Fatalf("decoded message does not encode: %v", err)
	}
	m2, err := c.Decode(enc, FuzzLimits)
	if err != nil {
		t.Fatalf("re-encoded message does not decode: %v\n% x", err, enc)
	}
	if enc2, err := c.Append(nil, m2); err != nil || !bytes.Equal(enc, enc2) {
		t.Fatalf("encoding is not a fixed point: %v\n% x\n% x", err, enc, enc2)
	}
	if d := c.Diff(m, m2); d != "" {
		t.Fatalf("round trip differs: %s", d)
	}
	return m, true
}

// ErrDiff adapts a comparison that reports a difference as an error to
// Codec.Diff.
func ErrDiff[M any](same func(a, b M) error) func(a, b M) string {
	return func(a, b M) string {
		if err := same(a, b); err != nil {
			return err.Error()
		}
		return ""
	}
}

// WriteSeeds writes seeds as the committed corpus of fuzz target target
// (testdata/fuzz/target/seedNNN), in the go test fuzz v1 format.
func WriteSeeds(t testing.TB, target string, seeds [][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed%03d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

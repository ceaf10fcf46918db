//go:build unix

package session

import (
	"testing"
)

// TestRealUnsendableHostResultIsCatchable: a host function's result nested
// deeper than protocol 2's decoder accepts raises ValueError naming the
// function, which the code catches; the session goes on. Before, the feed
// ended with an *InvalidRequestError that Python code could not catch.
func TestRealUnsendableHostResultIsCatchable(t *testing.T) {
	s := realSession(t, Config{})
	if s.Version() != 2 {
		// At 4 and 5 the parent's codec sends the value; a relay over a
		// protocol-2 worker refuses it (child/relay's to answer).
		t.Skipf("protocol %d sends the value", s.Version())
	}
	reg := NewRegistry().MustRegister("deep", func() any {
		var v any = 1
		for range 300 {
			v = []any{v}
		}
		return v
	})
	code := `
try:
    deep()
    out = 'no error'
except ValueError as e:
    out = str(e)
out`
	r := run(t, s, code, WithFunctions(reg))
	var msg string
	if err := r.Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if want := "host function deep returned a value that cannot be sent to the sandbox: "; len(msg) < len(want) || msg[:len(want)] != want {
		t.Fatalf("caught %q", msg)
	}
	if got := run(t, s, "1 + 1").Repr(); got != "2" {
		t.Fatal(got)
	}
}

//go:build unix

package session

import (
	"strings"
	"testing"
)

// TestRealUnsendableHostResultIsCatchable: a host function's result nested
// deeper than protocol 2's decoder accepts raises ValueError naming the
// function and the reason, which the code catches; the session goes on.
// Before, the feed ended with an *InvalidRequestError that Python code
// could not catch. At protocols 4 and 5 (scripts/relay-suites.sh: montygo
// subprocess relaying to the protocol-2 worker) the session sends the
// value and the relay answers the inner call with the same ValueError;
// before, it refused the result as a protocol violation and the run was
// lost.
func TestRealUnsendableHostResultIsCatchable(t *testing.T) {
	s := realSession(t, Config{})
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
	if want := "host function deep returned a value that cannot be sent to the sandbox: "; !strings.HasPrefix(msg, want) ||
		!strings.Contains(msg, "the protocol-2 worker's decoder stops at") {
		t.Fatalf("caught %q", msg)
	}
	t.Logf("protocol %d: %s", s.Version(), msg)
	if got := run(t, s, "1 + 1").Repr(); got != "2" {
		t.Fatal(got)
	}
}

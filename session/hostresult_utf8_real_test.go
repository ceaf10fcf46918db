//go:build unix

package session

import (
	"testing"
	"time"

	"github.com/gomonty/monty/value"
)

// TestRealHostResultTextNotUTF8IsTypeError: a host function whose result
// holds a string that is not UTF-8 inside a payload (a path, a time
// zone's name, an exception's argument) raises TypeError in the sandbox,
// which can catch it, as for a plain str. Before, FromGo accepted such
// strings, the codec refused to send the answer, and Run failed with an
// *InvalidRequestError.
func TestRealHostResultTextNotUTF8IsTypeError(t *testing.T) {
	s := realSession(t, Config{})
	bad := "bad \xff"
	reg := NewRegistry().
		MustRegister("p", func() value.PathValue { return value.PathValue(bad) }).
		MustRegister("z", func() time.Time { return time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone(bad, 3600)) }).
		MustRegister("e", func() value.Exception { return value.Exception{Type: "ValueError", Arg: &bad} })
	code := `
out = []
for fn in (p, z, e):
    try:
        fn()
    except TypeError:
        out.append('TypeError')
out`
	r := run(t, s, code, WithFunctions(reg))
	if got, want := r.Value.Repr(), "['TypeError', 'TypeError', 'TypeError']"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

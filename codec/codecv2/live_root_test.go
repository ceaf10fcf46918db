package codecv2

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
)

// TestLiveRootValues checks a singular value field that occurs more than
// once, or without a kind, against the worker: the occurrences merge, the
// kind is checked when the value is used, and a Feed input's failure names
// the input.
func TestLiveRootValues(t *testing.T) {
	w := startWorker(t)
	// check sends f and requires the worker's answer, and ours, to be want:
	// the value (shown), or the Error's text. conv is the worker's words
	// before a conversion error ("invalid result: " for a resume; a Feed
	// input's error is the whole text).
	check := func(name string, f []byte, conv, want string) {
		t.Helper()
		got := last(w.turnRaw(f))
		s := errText(got)
		if c, ok := got.(*message.Complete); ok {
			s = show(&c.Values, c.Value)
		}
		if s != want {
			t.Errorf("%s: worker %s, want %s", name, s, want)
		}
		r, err := DecodeRequest(f, codec.Limits{})
		var de *codec.DecodeError
		var ours string
		switch {
		case err == nil:
			switch b := r.Body.(type) {
			case *message.Feed:
				ours = show(&b.Values, b.Inputs[len(b.Inputs)-1].Value)
			case *message.ResumeCall:
				ours = show(&b.Values, b.Result.Value)
			}
		case errors.As(err, &de) && de.Structural:
			ours = "RuntimeError: protocol violation: " + conv + err.Error()
		default:
			ours = "RuntimeError: protocol violation: malformed request: " + err.Error()
		}
		if ours != want {
			t.Errorf("%s: ours %s, want %s", name, ours, want)
		}
	}
	check("input empty, then set", ld(3, sf(1, "v"), ld(2, sf(1, "v"), ld(2), ld(2, oInt(1)))), "", "1")
	check("input set, then empty", ld(3, sf(1, "v"), ld(2, sf(1, "v"), ld(2, oInt(1)), ld(2))), "", "1")
	check("input empty", ld(3, sf(1, "v"), ld(2, sf(1, "v"), ld(2))), "", `RuntimeError: protocol violation: invalid input "v": missing required field MontyObject.kind`)
	check("input without value", ld(3, sf(1, "v"), ld(2, sf(1, "w")), ld(2, sf(1, "v"), ld(2, oInt(1)))), "", `RuntimeError: protocol violation: input "w" has no value`)
	check("second input empty", ld(3, sf(1, "v"), ld(2, sf(1, "v"), ld(2, oInt(1))), ld(2, sf(1, "w"), ld(2))), "", `RuntimeError: protocol violation: invalid input "w": missing required field MontyObject.kind`)
	for _, c := range []struct {
		name, want string
		result     []byte
	}{
		{"return value empty, then set", "7", ld(2, ld(1), ld(1, oInt(7)))},
		{"return value empty", "RuntimeError: protocol violation: invalid result: missing required field MontyObject.kind", ld(2, ld(1))},
	} {
		fc, ok := last(w.turn(&message.ParentRequest{Body: &message.Feed{Code: "f(1)"}})).(*message.FunctionCall)
		if !ok {
			t.Fatal("f(1) did not suspend")
		}
		check(c.name, ld(4, vi(1, uint64(fc.CallID)), c.result), "invalid result: ", c.want)
		if strings.HasPrefix(c.want, "RuntimeError") {
			last(w.turn(&message.ParentRequest{Body: &message.AbortFeed{Exception: message.NewException("RuntimeError", "x")}}))
		}
	}
}

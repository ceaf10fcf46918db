package codecv2

import (
	"fmt"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
)

// exceptionOrderCases are exceptions with two faults each, and the one the
// worker reports: the type first, then the frames in order, each its
// missing location, else its columns.
func exceptionOrderCases() []struct {
	name, want string
	exc        []byte
} {
	loc := func(l, c uint64) []byte { return cat(vi(1, l), vi(2, c)) }
	badCol := ld(3, sf(1, "f.py"), ld(2, loc(1, 5)), ld(3, loc(1, 2)), sf(5, "abcdef"))
	noEnd := ld(3, sf(1, "g.py"), ld(2, loc(1, 1)))
	noStart := ld(3, sf(1, "g.py"), ld(3, loc(1, 1)))
	col := "invalid value for StackFrame.end.column: 2 is before start column 5"
	return []struct {
		name, want string
		exc        []byte
	}{
		{"bad type, frame without end", `unknown exception type "Nope"`, cat(sf(1, "Nope"), noEnd)},
		{"bad columns, then a frame without end", col, cat(sf(1, "ValueError"), badCol, noEnd)},
		{"a frame without end, then bad columns", "missing required field StackFrame.end", cat(sf(1, "ValueError"), noEnd, badCol)},
		{"a frame without start, then one without end", "missing required field StackFrame.start", cat(sf(1, "ValueError"), noStart, noEnd)},
		{"bad columns, bad type", `unknown exception type "Nope"`, cat(badCol, sf(1, "Nope"))},
	}
}

// TestLiveExceptionCheckOrder sends each of exceptionOrderCases in an
// AbortFeed and requires the worker's and our decoder's report to be the
// case's.
func TestLiveExceptionCheckOrder(t *testing.T) {
	for _, c := range exceptionOrderCases() {
		w := startWorker(t)
		last(w.turn(&message.ParentRequest{Body: &message.Feed{Code: "f(1)"}}))
		frame := ld(11, ld(1, c.exc))
		if got := errText(last(w.turnRaw(frame))); got != "RuntimeError: protocol violation: invalid exception: "+c.want {
			t.Errorf("%s: worker %s", c.name, got)
		}
		if _, err := DecodeRequest(frame, codec.Limits{}); fmt.Sprint(err) != c.want {
			t.Errorf("%s: ours %v, want %s", c.name, err, c.want)
		}
		w.stop()
	}
}

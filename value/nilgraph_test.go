package value

import (
	"errors"
	"testing"
)

// The conversions take a nil *Graph without panicking: FromGo (and an
// Encoder) has nowhere to append and returns a *ConversionError; ToGo and
// ToAny (and a Decoder) read it as an empty graph, in which every id is
// outside. Before, all three dereferenced it.
func TestConversionsOfANilGraph(t *testing.T) {
	var ce *ConversionError
	if _, err := FromGo(nil, 1); !errors.As(err, &ce) || !ce.FromGo {
		t.Errorf("FromGo(nil graph) = %v, want a *ConversionError", err)
	}
	var x int
	want := ToGo(&Graph{}, 0, &x)
	if err := ToGo(nil, 0, &x); err == nil || !errors.As(err, &ce) || err.Error() != want.Error() {
		t.Errorf("ToGo(nil graph) = %v, want an empty graph's %v", err, want)
	}
	_, wantAny := ToAny(&Graph{}, 0)
	if v, err := ToAny(nil, 0); err == nil || v != nil || err.Error() != wantAny.Error() {
		t.Errorf("ToAny(nil graph) = %v, %v, want an empty graph's %v", v, err, wantAny)
	}
}

//go:build unix

package session

import (
	"context"
	"math"
	"testing"
)

// sameTextKey is a map key type whose keys all have one text.
type sameTextKey struct{ N int }

func (sameTextKey) MarshalText() ([]byte, error) { return []byte("k"), nil }

// Go map keys that are distinct in Go but one key to the worker reach it
// as separate entries in a fixed order (value.FromGo's doc), and the
// worker keeps the value of the last: the same value on every run, where
// the order of keys with one text used to follow Go's map iteration.
func TestRealEqualMapKeysKeepTheLastValue(t *testing.T) {
	s := realSession(t, Config{})
	for _, tc := range []struct {
		in   any
		want string
	}{
		{map[sameTextKey]int{{1}: 3, {2}: 1, {3}: 2}, "{'k': 3}"},
		{map[any]int{"k": 9, sameTextKey{1}: 2, sameTextKey{2}: 1}, "{'k': 9}"}, // string sorts after session.sameTextKey
		{map[any]string{1: "int", 1.0: "float", true: "bool", uint8(1): "u8"}, "{1: 'u8'}"},
		{map[any]int{float64(1 << 53): 2, uint64(1 << 53): 3, uint64(1<<53 + 1): 1}, "{9007199254740992: 3, 9007199254740993: 1}"},
		{map[float64]int{math.NaN(): 2, math.NaN(): 1}, "{nan: 2}"},
	} {
		for range 5 {
			r, err := s.Run(context.Background(), "x", WithInputs(Input{Name: "x", Value: tc.in}))
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Repr(); got != tc.want {
				t.Fatalf("%v: the worker has %s, want %s", tc.in, got, tc.want)
			}
		}
	}
}

// NaN keys of a Go map are one key in the sandbox, holding the value of
// the last NaN entry in FromGo's order (NaNs of one Go type by their
// values' repr, of different types by type name), and float('nan') finds
// it. Before, the worker kept one key per NaN bit pattern, so a float32
// NaN beside a float64 one, or a NaN with a payload, made a second nan
// key, and whether float('nan') found one depended on its bits.
func TestRealNaNKeysAreOneKey(t *testing.T) {
	s := realSession(t, Config{})
	nan := math.NaN()
	payload := math.Float64frombits(0x7ff8000000000002)
	for _, tc := range []struct {
		in   any
		want string
	}{
		{map[any]int{float32(nan): 1, nan: 2, "a": 3}, "({nan: 2, 'a': 3}, 2)"},
		{map[float64]int{payload: 5, nan: 4, 1: 0}, "({nan: 5, 1.0: 0}, 5)"},
		{map[float64]string{nan: "b", payload: "a", math.Inf(1): "c"}, "({nan: 'b', inf: 'c'}, 'b')"},
	} {
		r, err := s.Run(context.Background(), "(x, x[float('nan')])", WithInputs(Input{Name: "x", Value: tc.in}))
		if err != nil {
			t.Fatalf("%v: %v", tc.in, err)
		}
		if got := r.Repr(); got != tc.want {
			t.Errorf("%v: the sandbox has %s, want %s", tc.in, got, tc.want)
		}
	}
	// NaN items of tuple keys too.
	r, err := s.Run(context.Background(), "x", WithInputs(Input{Name: "x", Value: map[[2]float64]int{{nan, 1}: 1, {payload, 1}: 2}}))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Repr(); got != "{(nan, 1.0): 2}" {
		t.Errorf("tuple keys: the sandbox has %s, want {(nan, 1.0): 2}", got)
	}
}

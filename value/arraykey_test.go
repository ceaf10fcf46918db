package value

import (
	"math"
	"reflect"
	"testing"
)

// A Go map with array keys converts to a dict with tuple keys (bytes for
// a byte array), the form ToGo reads back into the array: both ways
// agree, and with the session's stubs (dict[tuple[int, ...], V]). Before,
// ToGo took a tuple-keyed dict into map[[2]int]V but FromGo refused the
// same map ("unsupported map key type [2]int"), so a host function could
// take such a map and not return it.
func TestArrayMapKeysAreTuples(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{map[[2]int]bool{{1, 2}: true, {0, 5}: false, {1, -1}: true}, "{(0, 5): False, (1, -1): True, (1, 2): True}"},
		{map[[2][2]int]string{{{1, 2}, {3, 4}}: "a", {{0, 9}, {9, 9}}: "b"}, "{((0, 9), (9, 9)): 'b', ((1, 2), (3, 4)): 'a'}"},
		{map[[3]byte]int{{'b', 0, 1}: 2, {'a', 2, 3}: 1}, "{b'a\\x02\\x03': 1, b'b\\x00\\x01': 2}"},
		{map[[0]int]int{{}: 7}, "{(): 7}"},
		{map[[2]string]float64{{"x", "y"}: 1.5}, "{('x', 'y'): 1.5}"},
		{map[[1]any]int{{"s"}: 1, {2}: 2, {nil}: 3}, "{(None,): 3, (2,): 2, ('s',): 1}"},
		// In a map[any], after the other keys: bools, numbers, str, bytes,
		// then tuples.
		{map[any]int{[2]int{2, 1}: 1, "k": 2, 3: 3, [1]byte{9}: 4, [1]int{7}: 5}, "{3: 3, 'k': 2, b'\\t': 4, (2, 1): 1, (7,): 5}"},
	} {
		for range 10 {
			if got := reprOf(t, tc.in); got != tc.want {
				t.Fatalf("FromGo(%v)\n got %s\nwant %s", tc.in, got, tc.want)
			}
		}
	}
	// Back into the Go type they came from.
	for _, in := range []any{
		map[[2]int]bool{{1, 2}: true, {0, 5}: false},
		map[[2][2]int]string{{{1, 2}, {3, 4}}: "a"},
		map[[3]byte]int{{'b', 0, 1}: 2},
		map[[2]string]float64{{"x", "y"}: 1.5},
	} {
		g := &Graph{}
		id, err := FromGo(g, in)
		if err != nil {
			t.Fatal(err)
		}
		out := reflect.New(reflect.TypeOf(in))
		if err := ToGo(g, id, out.Interface()); err != nil {
			t.Fatalf("ToGo(%s) into %T: %v", g.Repr(id), in, err)
		}
		if !reflect.DeepEqual(out.Elem().Interface(), in) {
			t.Fatalf("round trip of %v gave %v", in, out.Elem().Interface())
		}
	}
}

// An array key holding a NaN is found by no lookup, as a NaN key is not:
// its entry is read while iterating, and several such keys keep their
// own values, in a fixed order.
func TestArrayMapKeysWithNaN(t *testing.T) {
	nan := math.NaN()
	m := map[[2]float64]int{{nan, 1}: 1, {nan, 1}: 2, {0, nan}: 3, {1, 2}: 4}
	const want = "{(nan, 1.0): 1, (nan, 1.0): 2, (0.0, nan): 3, (1.0, 2.0): 4}"
	for range 20 {
		if got := reprOf(t, m); got != want {
			t.Fatalf("FromGo(%v)\n got %s\nwant %s", m, got, want)
		}
	}
}

// NaN keys reach the worker with Python's NaN bits (float('nan')'s), all
// of them. The worker takes NaN keys with one bit pattern as one key and
// NaNs with different bits as different keys, so the sandbox saw one nan
// key or several depending on how Go made each NaN (math.NaN(), a float32
// NaN, a payload). Now it sees one, whatever the Go NaNs.
func TestFromGoNaNKeysHavePythonsBits(t *testing.T) {
	nan := math.NaN()
	for _, in := range []any{
		map[float64]int{math.Float64frombits(0x7ff8000000000002): 1, nan: 2, math.Float64frombits(0xfff8000000000000): 3},
		map[float32]int{float32(nan): 1, math.Float32frombits(0x7fc00005): 2},
		map[any]int{float32(nan): 1, nan: 2, "k": 3},
		map[[2]float64]int{{nan, 1}: 1, {math.Float64frombits(0x7ff0000000000009), 1}: 2},
	} {
		g := &Graph{}
		if _, err := FromGo(g, in); err != nil {
			t.Fatal(err)
		}
		nans := 0
		for i := range g.Nodes {
			if n := &g.Nodes[i]; n.Kind == KindFloat && math.IsNaN(n.Float()) {
				nans++
				if n.Num != pythonNaN {
					t.Errorf("%v: a NaN key has bits %#x, want %#x", in, n.Num, uint64(pythonNaN))
				}
			}
		}
		if nans < 2 {
			t.Fatalf("%v: %d NaN keys written", in, nans)
		}
	}
}

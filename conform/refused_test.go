//go:build unix

package conform

import (
	"slices"
	"testing"
)

// refusedOnly decides whether a run is skipped for the version the parent
// offered. A parent that downgraded after a refusal and then gave up on a
// child that never read its Configure (slow_start under load: the first
// child wakes just before the start timeout and refuses 5, the second
// sleeps through it) went past the refusal: judged, not skipped.
func TestRefusedOnly(t *testing.T) {
	for _, c := range []struct {
		name string
		log  []string
		want []uint32
	}{
		{"no configure", []string{"spawn 1 x"}, nil},
		{"accepted", []string{"spawn 1 x", "configure 1 4 ok"}, nil},
		{"refused only", []string{"spawn 1 x", "configure 1 5 refused"}, []uint32{5}},
		{"refused twice", []string{"spawn 1 x", "configure 1 5 refused", "spawn 2 x", "configure 2 4 refused"}, []uint32{5, 4}},
		{"downgraded then accepted", []string{"spawn 1 x", "configure 1 5 refused", "spawn 2 x", "configure 2 2 ok"}, nil},
		{"downgraded to a child that never read", []string{"spawn 1 x", "configure 1 5 refused", "spawn 2 x"}, nil},
		{"version zero", []string{"spawn 1 x", "configure 1 0 refused"}, nil},
	} {
		if got := refusedOnly(c.log); !slices.Equal(got, c.want) {
			t.Errorf("%s: refusedOnly = %v, want %v", c.name, got, c.want)
		}
	}
}

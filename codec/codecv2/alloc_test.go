package codecv2

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/codectest"
)

// leastBudget is the smallest decode budget under which decode does not
// fail for the budget.
func leastBudget(decode func(codec.Limits) error) int64 {
	lo, hi := int64(1), int64(1<<30)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if err := decode(codec.Limits{MaxDecodeBytes: mid}); errors.Is(err, codec.ErrBudget) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// TestConversionFailuresStayWithinTheBudget holds requests with many
// elements that each fail the worker's conversion rules (checked after the
// frame decoded, the first failure reported) to the budget: decoding one
// under the least budget that admits it allocates no more than that
// budget, plus a quarter for the allocator's size classes (a charged
// 40-byte ExtResult takes 48) and a constant. Each failing element used to
// allocate its own error, uncharged, however many failures came before it:
// an input without a value, 2 bytes on the wire, cost 32 bytes under any
// budget, and a future without a result doubled what its charge said.
func TestConversionFailuresStayWithinTheBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation")
	}
	const n = 20_000
	rep := func(b []byte) []byte { return bytes.Repeat(b, n) }
	for _, c := range []struct {
		name  string
		frame []byte
	}{
		{"inputs without value", ld(3, sf(1, "x"), rep(ld(2)))},
		{"inputs without kind", ld(3, sf(1, "x"), rep(ld(2, sf(1, "a"), ld(2))))},
		{"futures without result", ld(6, rep(ld(1, vi(1, 1))))},
		{"futures without kind", ld(6, rep(ld(1, ld(2))))},
		{"futures returning no kind", ld(6, rep(ld(1, ld(2, ld(1)))))},
		{"futures not handled", ld(6, rep(ld(1, ld(2, ld(5)))))},
		{"futures raising an unknown type", ld(6, rep(ld(1, ld(2, ld(2, sf(1, "X"))))))},
	} {
		t.Run(c.name, func(t *testing.T) {
			decode := func(l codec.Limits) error { _, err := DecodeRequest(c.frame, l); return err }
			least := leastBudget(decode)
			var err error
			got := codectest.Measure(func() { err = decode(codec.Limits{MaxDecodeBytes: least}) })
			var de *codec.DecodeError
			if !errors.As(err, &de) || errors.Is(err, codec.ErrBudget) {
				t.Fatalf("want a conversion error, got %v", err)
			}
			t.Logf("budget %d, allocated %d (%v)", least, got, err)
			if got > uint64(least)*5/4+16<<10 {
				t.Errorf("allocated %d bytes under a budget of %d", got, least)
			}
		})
	}
}

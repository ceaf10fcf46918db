package budget

import (
	"errors"
	"testing"
)

func TestGrowChargesFullReplacement(t *testing.T) {
	b := New(1 << 20)
	var s []uint64
	for range 17 {
		var err error
		s, err = Grow(b, s, 8)
		if err != nil {
			t.Fatal(err)
		}
		s = append(s, 1)
	}
	// 4 + 8 + 16 + 32 slots of 8 bytes.
	if got, want := b.Charged(), int64((4+8+16+32)*8); got != want {
		t.Fatalf("charged %d, want %d", got, want)
	}
}

func TestGrowRejectsBeforeAllocating(t *testing.T) {
	b := New(12 * 8)
	var s []uint64
	for i := range 9 {
		ns, err := Grow(b, s, 8)
		if i == 8 {
			if !errors.Is(err, ErrExceeded) {
				t.Fatalf("push %d: err %v, want ErrExceeded", i, err)
			}
			if len(ns) != 8 || cap(ns) != 8 {
				t.Fatalf("elements lost: len %d cap %d", len(ns), cap(ns))
			}
			if b.Remaining() != 0 {
				t.Fatalf("remaining %d, want 0", b.Remaining())
			}
			return
		}
		if err != nil {
			t.Fatalf("push %d: %v", i, err)
		}
		s = append(ns, uint64(i))
	}
}

func TestChargeOverflowAndNegative(t *testing.T) {
	b := New(100)
	if err := b.ChargeMul(1<<62, 8); !errors.Is(err, ErrExceeded) {
		t.Fatalf("overflow: %v", err)
	}
	if err := b.Charge(-1); !errors.Is(err, ErrExceeded) {
		t.Fatalf("negative: %v", err)
	}
	if b.Remaining() != 100 {
		t.Fatalf("a failed charge changed the budget: %d", b.Remaining())
	}
}

func TestNewCapsAtDefault(t *testing.T) {
	if New(0).Remaining() != Default || New(Default*4).Remaining() != Default || New(7).Remaining() != 7 {
		t.Fatal("New does not apply min(limit, Default)")
	}
}

func TestReserve(t *testing.T) {
	b := New(1000)
	s, err := Reserve(b, []uint32(nil), 10, RefCost)
	if err != nil || cap(s) != 10 || b.Charged() != 10*RefCost {
		t.Fatalf("reserve: cap %d charged %d err %v", cap(s), b.Charged(), err)
	}
	if _, err := Reserve(b, s, 1000, RefCost); !errors.Is(err, ErrExceeded) {
		t.Fatalf("over-reserve: %v", err)
	}
}

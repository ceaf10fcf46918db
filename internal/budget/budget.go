// Package budget meters the memory that decoding one frame from a peer may
// keep resident.
//
// Cheap wire elements can grow a lot when decoded (an empty repeated entry
// is two bytes on the wire and a whole struct in memory), so the frame cap
// alone does not bound a decode. Every decode of peer bytes runs against a
// fresh [Budget]; each allocation it makes is charged before it is made,
// growth is charged at the size of the full replacement allocation, and
// nothing is ever refunded. A charge that does not fit fails with
// [ErrExceeded] and leaves the remaining budget unchanged.
//
// A Budget is owned by one decode and is not safe for concurrent use.
package budget

import (
	"errors"
	"math"
	"unsafe"
)

// Default is the default per-frame decode budget: 1 GiB, four times the
// frame cap.
const Default = 1 << 30

// ErrExceeded is returned when a decode would exceed its budget. Its text is
// the protocol's.
var ErrExceeded = errors.New("frame exceeds decode memory budget")

// RefCost is what one node-reference slot costs: two pointers, allowing for
// the host-side container entry that the reference becomes.
const RefCost = 2 * int64(unsafe.Sizeof(uintptr(0)))

// PairCost is what one (key, value) reference pair costs.
const PairCost = 2 * RefCost

// MinCap is the smallest capacity a growing vector takes.
const MinCap = 4

// Budget is the remaining allowance of one frame decode.
type Budget struct {
	left    int64
	charged int64
}

// New returns a budget of min(limit, Default) bytes; a limit <= 0 means
// Default.
func New(limit int64) *Budget {
	if limit <= 0 || limit > Default {
		limit = Default
	}
	return &Budget{left: limit}
}

// Remaining returns the bytes still available.
func (b *Budget) Remaining() int64 { return b.left }

// Charged returns the total charged so far.
func (b *Budget) Charged() int64 { return b.charged }

// Charge takes n bytes from the budget. It fails, changing nothing, when n
// is negative or more than remains.
func (b *Budget) Charge(n int64) error {
	if n < 0 || n > b.left {
		return ErrExceeded
	}
	b.left -= n
	b.charged += n
	return nil
}

// ChargeMul charges count × size bytes, failing on overflow.
func (b *Budget) ChargeMul(count, size int64) error {
	if count < 0 || size < 0 {
		return ErrExceeded
	}
	if count != 0 && size > math.MaxInt64/count {
		return ErrExceeded
	}
	return b.Charge(count * size)
}

// NextCap returns the capacity a vector of capacity c grows to when it is
// full: max(2c, MinCap).
func NextCap(c int) int {
	if c < MinCap/2 {
		return MinCap
	}
	return 2 * c
}

// Grow makes room for one more element in s. When s is full, it charges the
// full replacement allocation (new capacity × elemSize) and reallocates;
// otherwise it charges nothing. elemSize is the charged size of one element,
// which may exceed the Go size of T (see RefCost).
func Grow[T any](b *Budget, s []T, elemSize int64) ([]T, error) {
	if len(s) < cap(s) {
		return s, nil
	}
	nc := NextCap(cap(s))
	if err := b.ChargeMul(int64(nc), elemSize); err != nil {
		return s, err
	}
	ns := make([]T, len(s), nc)
	copy(ns, s)
	return ns, nil
}

// Reserve makes room for n more elements at once (a packed run, or a count
// hint), charging (len+n) × elemSize when that exceeds the capacity. The
// existing elements are kept.
func Reserve[T any](b *Budget, s []T, n int, elemSize int64) ([]T, error) {
	if n < 0 {
		return s, ErrExceeded
	}
	if len(s)+n <= cap(s) {
		return s, nil
	}
	nc := len(s) + n
	if err := b.ChargeMul(int64(nc), elemSize); err != nil {
		return s, err
	}
	ns := make([]T, len(s), nc)
	copy(ns, s)
	return ns, nil
}

// SizeOf returns the in-memory size of a value of type T, for charging.
func SizeOf[T any]() int64 {
	var z T
	return int64(unsafe.Sizeof(z))
}

package wire

import (
	"fmt"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/internal/budget"
)

// Dec is the state of one frame decode that both codecs' decoders hold
// (each embeds it): the frame's budget, the depth of the next message read,
// the exceptions' missing locations and the storage of the strings and
// bytes copied out of the frame. The message decoders of msg.go run on it.
//
// Proto2 selects protocol 2's ways where the two decoders differ, as the
// version's released worker and its earlier measurements fixed them:
//
//   - a single object (a message's target, an optional field's box) is
//     charged at its Go size, not at the heap size class it takes (Obj);
//   - strings of up to 256 bytes share chunks of at most 8 KiB, not chunks
//     that double from 1 KiB to 32 KiB, sized to the byte and not to a size
//     class, and bytes payloads get their own allocation (Str, Bytes);
//   - the target of a nested message is charged and made before the field's
//     wire type, depth and length are checked, not after (open).
type Dec struct {
	Bud     budget.Budget // held by value: one allocation fewer per frame
	Proto2  bool
	Missing leaf.Missing // per exception, the first traceback frame that lacked a location

	// Level is the depth of the next message read (the frame's top message
	// is at 0): each message read takes it and counts it up while its
	// fields are read, so unknown fields are skipped against prost's
	// recursion limit (SkipField) and a nested message is entered only
	// under it (Msg).
	Level int

	// chunk is the current chunk for small payloads; len is the used
	// part. next is the size of protocol 4's next chunk.
	chunk []byte
	next  int
}

// Chunk sizes of the payload storage (see Dec).
const (
	smallMax2 = 256     // the largest payload a protocol-2 chunk takes
	chunk2    = 8 << 10 // a protocol-2 chunk
	smallMax  = 1024    // the largest payload a protocol-4 chunk takes
	chunkMin  = 1024    // protocol 4's first chunk
	chunkMax  = 32 << 10
)

// Walk reads message b at the current level.
func (d *Dec) Walk(b []byte, f FieldFunc) error {
	d.Level++
	err := Walk(b, d.Level-1, f)
	d.Level--
	return err
}

// Iter starts reading message b, whose capacity runs to the frame's end,
// at the current level (see Iter).
func (d *Dec) Iter(b []byte) Iter {
	d.Level++
	return NewIter(b)
}

// End checks that the message it read ended at its length and goes back to
// its level. (After an error, which ends the decode, the level stays.)
func (d *Dec) End(it *Iter) error {
	if err := it.Ended(); err != nil {
		return err
	}
	d.Level--
	return nil
}

// SkipMessage reads a message with no known fields at the current level.
func (d *Dec) SkipMessage(b []byte) error { return d.Walk(b, SkipAll) }

// Field1 reads a message whose one known field is field 1 at the current
// level, handing each occurrence of it to f.
func (d *Dec) Field1(b []byte, f func(wt protowire.Type, b []byte) (int, error)) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if num != 1 {
			return -1, nil
		}
		return f(wt, b)
	})
}

// Msg reads the payload of a nested message field. Like prost it checks
// the wire type, then the recursion limit (the enclosing message, at
// Level-1, must be under MaxDepth), then the length.
func (d *Dec) Msg(wt protowire.Type, b []byte) ([]byte, int, error) {
	if wt != protowire.BytesType {
		return nil, 0, &TypeError{Got: wt, Want: protowire.BytesType}
	}
	if d.Level > MaxDepth {
		return nil, 0, leaf.ErrRecursion
	}
	return BytesField(wt, b)
}

// Sub reads a nested message field, hands its payload to f and names the
// field seg in an error.
func (d *Dec) Sub(wt protowire.Type, b []byte, seg string, f func([]byte) error) (int, error) {
	v, n, err := d.Msg(wt, b)
	if err == nil {
		err = f(v)
	}
	return Wrap(n, err, seg)
}

// open reads the payload of a nested message field whose target alloc
// makes (when it is absent), in the version's order (see Dec).
func (d *Dec) open(wt protowire.Type, b []byte, alloc func() error) ([]byte, int, error) {
	if d.Proto2 {
		if err := alloc(); err != nil {
			return nil, 0, err
		}
		return d.Msg(wt, b)
	}
	v, n, err := d.Msg(wt, b)
	if err == nil {
		err = alloc()
	}
	return v, n, err
}

// Charge takes n bytes from the budget.
func (d *Dec) Charge(n int64) error { return d.Bud.Charge(n) }

// Obj charges one object of size bytes (see Dec).
func (d *Dec) Obj(size uintptr) error {
	if d.Proto2 {
		return d.Bud.Charge(int64(size))
	}
	return d.Bud.Charge(AllocSize(int(size)))
}

// New charges and allocates one T.
func New[T any](d *Dec) (*T, error) {
	var z T
	if err := d.Obj(unsafe.Sizeof(z)); err != nil {
		return nil, err
	}
	return new(T), nil
}

// NewAt makes *p when it is nil (charged).
func NewAt[T any](d *Dec, p **T) error {
	if *p != nil {
		return nil
	}
	var err error
	*p, err = New[T](d)
	return err
}

// room returns n bytes of fresh, charged storage for a payload, or nil
// (charged) when the caller is to allocate it exactly. rest is the number
// of frame bytes from the payload's start to the frame's end: later
// payloads lie within them, so a small frame gets a small chunk.
func (d *Dec) room(n, rest int) ([]byte, error) {
	small, size := smallMax, max(d.next, chunkMin)
	if d.Proto2 {
		small, size = smallMax2, chunk2
	}
	if n > small {
		c := int64(n)
		if !d.Proto2 {
			c = AllocSize(n)
		}
		return nil, d.Charge(c)
	}
	if cap(d.chunk)-len(d.chunk) < n {
		size = max(min(size, rest), n)
		if !d.Proto2 {
			size = int(AllocSize(size))
		}
		if err := d.Charge(int64(size)); err != nil {
			return nil, err
		}
		d.chunk = make([]byte, 0, size)
		if !d.Proto2 {
			d.next = min(2*max(d.next, chunkMin), chunkMax)
		}
	}
	off := len(d.chunk)
	d.chunk = d.chunk[:off+n]
	return d.chunk[off : off+n : off+n], nil
}

// Str copies a (UTF-8 checked) payload, a view of the frame whose capacity
// runs to the frame's end, into an owned string.
func (d *Dec) Str(raw []byte) (string, error) {
	n := len(raw)
	if n == 0 {
		return "", nil
	}
	// A payload small enough for either version's chunks that fits in
	// the current one is copied there at once (room's last step, which
	// charges nothing).
	if off := len(d.chunk); n <= smallMax2 && cap(d.chunk)-off >= n {
		d.chunk = d.chunk[:off+n]
		copy(d.chunk[off:], raw)
		return unsafe.String(&d.chunk[off], n), nil
	}
	buf, err := d.room(n, cap(raw))
	if err != nil {
		return "", err
	}
	if buf == nil {
		return string(raw), nil
	}
	copy(buf, raw)
	return unsafe.String(&buf[0], n), nil
}

// Bytes copies a payload into an owned, never nil, byte slice.
func (d *Dec) Bytes(raw []byte) ([]byte, error) {
	n := len(raw)
	if n == 0 {
		return []byte{}, nil
	}
	if d.Proto2 {
		if err := d.Charge(int64(n)); err != nil {
			return nil, err
		}
		return append([]byte(nil), raw...), nil
	}
	buf, err := d.room(n, cap(raw))
	if err != nil {
		return nil, err
	}
	if buf == nil {
		return append([]byte(nil), raw...), nil
	}
	copy(buf, raw)
	return buf, nil
}

// StrPtr copies a payload into a newly allocated optional string, or into
// *p when it is already allocated (a repeated optional field).
func (d *Dec) StrPtr(p **string, raw []byte) error {
	s, err := d.Str(raw)
	if err == nil {
		err = NewAt(d, p)
	}
	if err != nil {
		return err
	}
	**p = s
	return nil
}

// Text reads a string field into *dst.
func (d *Dec) Text(wt protowire.Type, b []byte, dst *string) (int, error) {
	v, n, err := BytesField(wt, b)
	if err != nil {
		return 0, err
	}
	if !utf8.Valid(v) {
		return 0, leaf.ErrUTF8
	}
	s, err := d.Str(v)
	*dst = s
	return n, err
}

// OptText reads an optional string field into *dst.
func (d *Dec) OptText(wt protowire.Type, b []byte, dst **string) (int, error) {
	v, n, err := TextField(wt, b)
	if err != nil {
		return 0, err
	}
	return n, d.StrPtr(dst, v)
}

// OptInt reads an optional integer field into *dst, allocating its box
// from the budget the first time.
func OptInt[T uint64 | uint32 | int32](d *Dec, wt protowire.Type, b []byte, dst **T) (int, error) {
	v, n, err := VarintField(wt, b)
	if err == nil {
		err = NewAt(d, dst)
	}
	if err != nil {
		return 0, err
	}
	**dst = T(v)
	return n, nil
}

// OptIntAt is OptInt naming the field seg in an error.
func OptIntAt[T uint64 | uint32 | int32](d *Dec, wt protowire.Type, b []byte, dst **T, seg string) (int, error) {
	n, err := OptInt(d, wt, b, dst)
	return Wrap(n, err, seg)
}

// TextAt is Text naming the field seg in an error.
func (d *Dec) TextAt(wt protowire.Type, b []byte, dst *string, seg string) (int, error) {
	n, err := d.Text(wt, b, dst)
	return Wrap(n, err, seg)
}

// OptTextAt is OptText naming the field seg in an error.
func (d *Dec) OptTextAt(wt protowire.Type, b []byte, dst **string, seg string) (int, error) {
	n, err := d.OptText(wt, b, dst)
	return Wrap(n, err, seg)
}

// BytesImplicit reads an implicit-presence bytes field (empty means nil).
func (d *Dec) BytesImplicit(wt protowire.Type, b []byte, dst *[]byte) (int, error) {
	v, n, err := BytesField(wt, b)
	if err != nil {
		return 0, err
	}
	if len(v) == 0 {
		*dst = nil
		return n, nil
	}
	*dst, err = d.Bytes(v)
	return n, err
}

// Fields decodes message b from its leaf table. paths names the field of
// an error (a protocol-4 node's leaf values add no segment of their own);
// other (nil: skip) takes the fields the table does not hold.
func (d *Dec) Fields(b []byte, f leaf.Fields, paths bool, other FieldFunc) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		s := f.Find(num)
		if s == nil {
			if other == nil {
				return -1, nil
			}
			return other(num, wt, b)
		}
		n, err := d.slot(wt, b, s)
		if paths {
			return Wrap(n, err, s.Name)
		}
		return n, err
	})
}

// FieldsMsg reads a nested message field with Fields, naming its fields.
func (d *Dec) FieldsMsg(wt protowire.Type, b []byte, f leaf.Fields, other FieldFunc) (int, error) {
	v, n, err := d.Msg(wt, b)
	if err == nil {
		err = d.Fields(v, f, true, other)
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// slot reads the value of one table field.
func (d *Dec) slot(wt protowire.Type, b []byte, s *leaf.Slot) (int, error) {
	switch p := s.Dst.(type) {
	case *int32:
		return Int(wt, b, p)
	case *uint32:
		return Int(wt, b, p)
	case *uint64:
		return Int(wt, b, p)
	case **int32:
		return OptInt(d, wt, b, p)
	case **uint32:
		return OptInt(d, wt, b, p)
	case **uint64:
		return OptInt(d, wt, b, p)
	case *bool:
		return Bool(wt, b, p)
	case *string:
		return d.Text(wt, b, p)
	case **string:
		return d.OptText(wt, b, p)
	case *[]byte:
		return d.BytesImplicit(wt, b, p)
	}
	return 0, fmt.Errorf("codec: field %s has no decoder for %T", s.Name, s.Dst)
}

// Go's small-object size classes (runtime/sizeclasses.go). AllocSize uses
// them to charge what an allocation really takes from the heap.
var sizeClasses = [...]int{0, 8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192,
	208, 224, 240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024,
	1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144,
	6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072,
	20480, 21760, 24576, 27264, 28672, 32768}

// AllocSize returns the heap footprint of an n-byte allocation: the size
// class for small objects, whole 8 KiB pages for large ones.
func AllocSize(n int) int64 {
	if n <= 0 {
		return 0
	}
	if n > 32768 {
		return (int64(n) + 8191) &^ 8191
	}
	lo, hi := 1, len(sizeClasses)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if sizeClasses[mid] >= n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return int64(sizeClasses[lo])
}

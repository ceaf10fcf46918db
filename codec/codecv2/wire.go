package codecv2

import (
	"errors"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/codec/internal/wire"
	"github.com/gomonty/monty/internal/budget"
	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The wire-level failure texts are the ones prost (the worker's protobuf
// library) uses (those both codecs report are in package leaf), so that an
// error we report for a frame reads the same as the worker's report of the
// same frame.
var errTooManyNodes = errors.New("too many value nodes in one message")

// fail wraps a cause into a decode error; enclosing fields add their path
// segments as the error travels outwards (see push).
func fail(err error) error { return &codec.DecodeError{Err: err} }

// deferred wraps a conversion error: one found while turning a fully
// decoded protocol message into its domain form. It carries no path.
func deferred(err error) *codec.DecodeError { return &codec.DecodeError{Err: err, Structural: true} }

// push appends the path segment of an enclosing field ("Msg.field") to a
// decode error, innermost first, like prost's DecodeError::push.
func push(err error, seg string) error { return wire.At(err, seg) }

// dec is the state of one frame decode: the shared frame cursor (with the
// frame's budget) and what the protocol-2 tree decode adds to it.
type dec struct {
	wire.Cursor
	g *value.Graph // graph of the message currently being decoded

	chunk   []byte                      // string arena (see intern)
	classes map[value.UUID]value.NodeID // class types of instances, for deduplication

	conv *codec.DecodeError // first conversion error, reported once the frame decoded cleanly

	// kindless holds the results whose return value has no kind (see
	// noteKindless).
	kindless map[*message.ExtResult]bool
	// missing holds, per exception, its first traceback frame that lacked
	// a location (see stackFrame).
	missing leaf.Missing
}

func newDec(frame []byte, lim codec.Limits) *dec {
	d := &dec{}
	d.Buf, d.Bud = frame, *budget.New(lim.DecodeBudget())
	return d
}

// convErr records a conversion error. Conversion happens after decoding in
// the worker, so a later wire error in the same frame takes precedence.
func (d *dec) convErr(err error) {
	if d.conv == nil {
		d.conv = deferred(err)
	}
}

func (d *dec) charge(n int64) error {
	if err := d.Bud.Charge(n); err != nil {
		return fail(codec.ErrBudget)
	}
	return nil
}

// str decodes a string field: charged, checked as UTF-8, then copied.
func (d *dec) str(wt protowire.Type) (string, error) {
	b, err := d.Raw(wt)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", fail(leaf.ErrUTF8)
	}
	return d.intern(b)
}

// bytes decodes a bytes field into a fresh, charged copy. An empty payload
// gives nil unless keepEmpty is set.
func (d *dec) bytes(wt protowire.Type, keepEmpty bool) ([]byte, error) {
	b, err := d.Raw(wt)
	if err != nil {
		return nil, err
	}
	return d.copyBytes(b, keepEmpty)
}

func (d *dec) copyBytes(b []byte, keepEmpty bool) ([]byte, error) {
	if len(b) == 0 {
		if keepEmpty {
			return []byte{}, nil
		}
		return nil, nil
	}
	if err := d.charge(int64(len(b))); err != nil {
		return nil, err
	}
	return append([]byte(nil), b...), nil
}

// String storage. Short strings are copied into shared chunks of up to
// 8 KiB rather than allocated one by one: a dict of 100k short keys then
// costs a few dozen allocations instead of 100k. A chunk's bytes are never
// written again once a string has been cut from them, so the strings stay
// immutable. Long strings get their own allocation, so a retained small
// string never pins more than one chunk.
//
// A chunk is never larger than the rest of the frame from the string being
// stored: every later string of the frame is cut from those bytes, so a
// small frame (a host call naming its function) allocates a few bytes, not
// a whole chunk.
const (
	chunkSize   = 8 << 10
	maxInterned = 256
)

func (d *dec) intern(b []byte) (string, error) { return d.internAt(b, d.Pos) }

// internAt is intern for a string b that ends at frame offset end. The
// fast paths read ahead of the cursor and pass the string's own end, so
// that a new chunk is sized (and charged) exactly as the general path,
// whose cursor has just passed the string, sizes it.
func (d *dec) internAt(b []byte, end int) (string, error) {
	n := len(b)
	switch {
	case n == 0:
		return "", nil
	case n > maxInterned:
		if err := d.charge(int64(n)); err != nil {
			return "", err
		}
		return string(b), nil
	}
	if cap(d.chunk)-len(d.chunk) < n {
		// b ends at end, so the frame's remaining strings lie within
		// d.Buf[end-n:].
		size := min(chunkSize, max(n, len(d.Buf)-end+n))
		if err := d.charge(int64(size)); err != nil {
			return "", err
		}
		d.chunk = make([]byte, 0, size)
	}
	start := len(d.chunk)
	d.chunk = append(d.chunk, b...)
	return unsafe.String(&d.chunk[start], n), nil
}

// Typed field helpers: each decodes one occurrence of a scalar field and
// names the field in the error path, as a prost-generated message does.

// fNum decodes one occurrence of a varint field of an integer type (an
// int32 is truncated from its sign-extended 64 bits, as prost does).
func fNum[T uint64 | uint32 | int32](d *dec, wt protowire.Type, dst *T, path string) error {
	v, err := d.Uvarint(wt)
	if err != nil {
		return push(err, path)
	}
	*dst = T(v)
	return nil
}

// fOptNum is fNum for an optional field, charging its box the first time.
func fOptNum[T uint64 | uint32 | int32](d *dec, wt protowire.Type, dst **T, path string) error {
	v, err := d.Uvarint(wt)
	if err != nil {
		return push(err, path)
	}
	if *dst == nil {
		if err := d.charge(int64(unsafe.Sizeof(T(0)))); err != nil {
			return push(err, path)
		}
		*dst = new(T)
	}
	**dst = T(v)
	return nil
}

func (d *dec) fBool(wt protowire.Type, dst *bool, path string) error {
	v, err := d.Uvarint(wt)
	if err != nil {
		return push(err, path)
	}
	*dst = v != 0
	return nil
}

func (d *dec) fStr(wt protowire.Type, dst *string, path string) error {
	s, err := d.str(wt)
	if err != nil {
		return push(err, path)
	}
	*dst = s
	return nil
}

func (d *dec) fOptStr(wt protowire.Type, dst **string, path string) error {
	s, err := d.str(wt)
	if err != nil {
		return push(err, path)
	}
	if *dst == nil {
		if err := d.charge(16); err != nil {
			return push(err, path)
		}
		*dst = new(string)
	}
	**dst = s
	return nil
}

func (d *dec) fBytes(wt protowire.Type, dst *[]byte, path string) error {
	b, err := d.bytes(wt, false)
	if err != nil {
		return push(err, path)
	}
	*dst = b
	return nil
}

// fStrs appends one element to a repeated string field.
func (d *dec) fStrs(wt protowire.Type, dst *[]string, path string) error {
	s, err := d.str(wt)
	if err != nil {
		return push(err, path)
	}
	l, err := grow(d, *dst, 16)
	if err != nil {
		return push(err, path)
	}
	*dst = append(l, s)
	return nil
}

// grow makes room for one more element of a decoded slice, charging the
// full replacement allocation when it has to grow.
func grow[T any](d *dec, s []T, elem int64) ([]T, error) {
	s, err := budget.Grow(&d.Bud, s, elem)
	if err != nil {
		return s, fail(codec.ErrBudget)
	}
	return s, nil
}

// uuidMsg decodes one occurrence of a Uuid message. Its data is kept when
// it is exactly 16 bytes; n records the length for the later check.
func (d *dec) uuidMsg(wt protowire.Type, id *value.UUID, n *int) error {
	return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
		if num != 1 {
			return d.Skip(num, wt)
		}
		b, err := d.Raw(wt)
		if err != nil {
			return push(err, "Uuid.data")
		}
		*n = len(b)
		*id = value.UUID{}
		if len(b) == 16 {
			*id = value.UUID(b)
		}
		return nil
	})
}

func uuidLenErr(field string, n int) error {
	return valuecheck.InvalidValue(field, fmt.Sprintf("uuid must be 16 bytes, got %d", n))
}

// fields decodes one occurrence of a message from its leaf table; other
// (nil: skip) takes the fields the table does not hold.
func (d *dec) fields(wt protowire.Type, f leaf.Fields, other func(num protowire.Number, wt protowire.Type) error) error {
	return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
		if s := f.Find(num); s != nil {
			return d.slot(wt, s)
		}
		if other != nil {
			return other(num, wt)
		}
		return d.Skip(num, wt)
	})
}

// slot decodes one occurrence of a table field, named in the error path.
func (d *dec) slot(wt protowire.Type, s *leaf.Slot) error {
	switch p := s.Dst.(type) {
	case *int32:
		return fNum(d, wt, p, s.Name)
	case *uint32:
		return fNum(d, wt, p, s.Name)
	case *uint64:
		return fNum(d, wt, p, s.Name)
	case **int32:
		return fOptNum(d, wt, p, s.Name)
	case **uint32:
		return fOptNum(d, wt, p, s.Name)
	case **uint64:
		return fOptNum(d, wt, p, s.Name)
	case *bool:
		return d.fBool(wt, p, s.Name)
	case *string:
		return d.fStr(wt, p, s.Name)
	case **string:
		return d.fOptStr(wt, p, s.Name)
	case *[]byte:
		return d.fBytes(wt, p, s.Name)
	}
	return fail(fmt.Errorf("codecv2: field %s has no decoder for %T", s.Name, s.Dst))
}

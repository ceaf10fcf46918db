package codecv2

import (
	"errors"
	"fmt"
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

// dec is the state of one frame decode. It reads the frame as slices, the
// way protocol 4's decoder does: every message is a payload whose capacity
// runs to the frame's end (wire.Walk), and level is the depth of the next
// message read (the frame's top message is at 0), checked against prost's
// recursion limit as a nested message is entered (msg) and as unknown
// fields are skipped (wire.SkipField).
type dec struct {
	bud   budget.Budget // held by value: one allocation fewer per frame
	level int
	// rest is the number of frame bytes after the value whose node is being
	// added; the first node allocation of a graph is sized by it (growNodes).
	rest int
	g    *value.Graph // graph of the message currently being decoded

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

// newDec returns the decoder of frame, and frame clamped to its length:
// payload capacities measure what is left of the frame.
func newDec(frame []byte, lim codec.Limits) (*dec, []byte) {
	d := &dec{}
	d.bud = *budget.New(lim.DecodeBudget())
	return d, frame[:len(frame):len(frame)]
}

// walk reads message b with wire.Walk at the current level.
func (d *dec) walk(b []byte, f wire.FieldFunc) error {
	d.level++
	err := wire.Walk(b, d.level-1, f)
	d.level--
	return err
}

// msg reads the payload of a nested message field. Like prost it checks
// the wire type, then the recursion limit (the enclosing message's depth,
// level-1, must be under MaxDepth), then the length.
func (d *dec) msg(wt protowire.Type, b []byte) ([]byte, int, error) {
	if wt != protowire.BytesType {
		return nil, 0, &wire.TypeError{Got: wt, Want: protowire.BytesType}
	}
	if d.level > MaxDepth {
		return nil, 0, leaf.ErrRecursion
	}
	return wire.BytesField(wt, b)
}

// message reads one occurrence of a nested message field with f.
func (d *dec) message(wt protowire.Type, b []byte, f wire.FieldFunc) (int, error) {
	v, n, err := d.msg(wt, b)
	if err == nil {
		err = d.walk(v, f)
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// sub reads a nested message field with f, naming the field seg in an
// error.
func (d *dec) sub(wt protowire.Type, b []byte, seg string, f wire.FieldFunc) (int, error) {
	n, err := d.message(wt, b, f)
	return wire.Wrap(n, err, seg)
}

// skipMessage reads a message field with no known fields (Unit, Dump, Ok, …).
func (d *dec) skipMessage(wt protowire.Type, b []byte) (int, error) {
	return d.message(wt, b, wire.SkipAll)
}

// convErr records a conversion error. Conversion happens after decoding in
// the worker, so a later wire error in the same frame takes precedence.
func (d *dec) convErr(err error) {
	if d.conv == nil {
		d.conv = deferred(err)
	}
}

func (d *dec) charge(n int64) error {
	if err := d.bud.Charge(n); err != nil {
		return fail(codec.ErrBudget)
	}
	return nil
}

// str decodes a string field: checked as UTF-8, then charged and copied.
func (d *dec) str(wt protowire.Type, b []byte) (string, int, error) {
	v, n, err := wire.TextField(wt, b)
	if err != nil {
		return "", 0, err
	}
	s, err := d.intern(v)
	return s, n, err
}

// bytes decodes a bytes field into a fresh, charged copy. An empty payload
// gives nil unless keepEmpty is set.
func (d *dec) bytes(wt protowire.Type, b []byte, keepEmpty bool) ([]byte, int, error) {
	v, n, err := wire.BytesField(wt, b)
	if err != nil {
		return nil, 0, err
	}
	v, err = d.copyBytes(v, keepEmpty)
	return v, n, err
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

// intern stores string b, a view of the frame whose capacity runs to the
// frame's end.
func (d *dec) intern(b []byte) (string, error) {
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
		// The frame's remaining strings lie within b[:cap(b)].
		size := min(chunkSize, max(n, cap(b)))
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
// They return the bytes the field's value took (see wire.FieldFunc).

// fNum decodes one occurrence of a varint field of an integer type (an
// int32 is truncated from its sign-extended 64 bits, as prost does).
func fNum[T uint64 | uint32 | int32](wt protowire.Type, b []byte, dst *T, path string) (int, error) {
	n, err := wire.Int(wt, b, dst)
	return wire.Wrap(n, err, path)
}

// fOptNum is fNum for an optional field, charging its box the first time.
func fOptNum[T uint64 | uint32 | int32](d *dec, wt protowire.Type, b []byte, dst **T, path string) (int, error) {
	v, n, err := wire.VarintField(wt, b)
	if err == nil && *dst == nil {
		if err = d.charge(int64(unsafe.Sizeof(T(0)))); err == nil {
			*dst = new(T)
		}
	}
	if err != nil {
		return 0, push(err, path)
	}
	**dst = T(v)
	return n, nil
}

func fBool(wt protowire.Type, b []byte, dst *bool, path string) (int, error) {
	n, err := wire.Bool(wt, b, dst)
	return wire.Wrap(n, err, path)
}

func (d *dec) fStr(wt protowire.Type, b []byte, dst *string, path string) (int, error) {
	s, n, err := d.str(wt, b)
	if err != nil {
		return 0, push(err, path)
	}
	*dst = s
	return n, nil
}

func (d *dec) fOptStr(wt protowire.Type, b []byte, dst **string, path string) (int, error) {
	s, n, err := d.str(wt, b)
	if err == nil && *dst == nil {
		if err = d.charge(16); err == nil {
			*dst = new(string)
		}
	}
	if err != nil {
		return 0, push(err, path)
	}
	**dst = s
	return n, nil
}

func (d *dec) fBytes(wt protowire.Type, b []byte, dst *[]byte, path string) (int, error) {
	v, n, err := d.bytes(wt, b, false)
	if err != nil {
		return 0, push(err, path)
	}
	*dst = v
	return n, nil
}

// fStrs appends one element to a repeated string field.
func (d *dec) fStrs(wt protowire.Type, b []byte, dst *[]string, path string) (int, error) {
	s, n, err := d.str(wt, b)
	if err == nil {
		var l []string
		if l, err = grow(d, *dst, 16); err == nil {
			*dst = append(l, s)
		}
	}
	return wire.Wrap(n, err, path)
}

// grow makes room for one more element of a decoded slice, charging the
// full replacement allocation when it has to grow.
func grow[T any](d *dec, s []T, elem int64) ([]T, error) {
	s, err := budget.Grow(&d.bud, s, elem)
	if err != nil {
		return s, fail(codec.ErrBudget)
	}
	return s, nil
}

// uuidMsg decodes one occurrence of a Uuid message. Its data is kept when
// it is exactly 16 bytes; n records the length for the later check.
func (d *dec) uuidMsg(wt protowire.Type, b []byte, id *value.UUID, n *int) (int, error) {
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if num != 1 {
			return -1, nil
		}
		v, m, err := wire.BytesField(wt, b)
		if err != nil {
			return 0, push(err, "Uuid.data")
		}
		*n = len(v)
		*id = value.UUID{}
		if len(v) == 16 {
			*id = value.UUID(v)
		}
		return m, nil
	})
}

func uuidLenErr(field string, n int) error {
	return valuecheck.InvalidValue(field, fmt.Sprintf("uuid must be 16 bytes, got %d", n))
}

// fields decodes one occurrence of a message field from its leaf table;
// other (nil: skip) takes the fields the table does not hold.
func (d *dec) fields(wt protowire.Type, b []byte, f leaf.Fields, other wire.FieldFunc) (int, error) {
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if s := f.Find(num); s != nil {
			return d.slot(wt, b, s)
		}
		if other != nil {
			return other(num, wt, b)
		}
		return -1, nil
	})
}

// slot decodes one occurrence of a table field, named in the error path.
func (d *dec) slot(wt protowire.Type, b []byte, s *leaf.Slot) (int, error) {
	switch p := s.Dst.(type) {
	case *int32:
		return fNum(wt, b, p, s.Name)
	case *uint32:
		return fNum(wt, b, p, s.Name)
	case *uint64:
		return fNum(wt, b, p, s.Name)
	case **int32:
		return fOptNum(d, wt, b, p, s.Name)
	case **uint32:
		return fOptNum(d, wt, b, p, s.Name)
	case **uint64:
		return fOptNum(d, wt, b, p, s.Name)
	case *bool:
		return fBool(wt, b, p, s.Name)
	case *string:
		return d.fStr(wt, b, p, s.Name)
	case **string:
		return d.fOptStr(wt, b, p, s.Name)
	case *[]byte:
		return d.fBytes(wt, b, p, s.Name)
	}
	return 0, fail(fmt.Errorf("codecv2: field %s has no decoder for %T", s.Name, s.Dst))
}

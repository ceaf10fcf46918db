// Package wire is the decode core the protocol-2 and protocol-4 codecs
// share: the field primitives over a payload slice (keys, varints,
// length-delimited payloads, unknown-field skipping), the field walk that
// every message decoder runs, and the error helpers that give a failure
// its field path.
//
// The texts of the wire-level failures are prost's (the worker's protobuf
// library), so that an error either side reports for a frame reads the
// same. Everything here is owned by one decode and is not safe for
// concurrent use; the functions without a receiver are pure.
package wire

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/leaf"
)

// ErrTagZero is prost's text for a zero field number.
var ErrTagZero = errors.New("invalid tag value: 0")

// ErrDelimited is prost's text for a nested message whose last field runs
// past the message's length.
var ErrDelimited = errors.New("delimited length exceeded")

// MaxDepth is prost's recursion limit: the deepest message nesting a frame
// may have, counting the frame's top message as level 0.
const MaxDepth = 100

// TypeError reports a known field that arrived with the wrong wire type.
type TypeError struct {
	Got, Want protowire.Type
}

func (e *TypeError) Error() string {
	return "invalid wire type: " + leaf.WireTypeNames[e.Got] + " (expected " + leaf.WireTypeNames[e.Want] + ")"
}

// Expect checks a field's wire type.
func Expect(got, want protowire.Type) error {
	if got == want {
		return nil
	}
	return &TypeError{got, want}
}

// At records that err happened while decoding field seg ("Message.field")
// of an enclosing message, making it a *codec.DecodeError if it is not
// one yet. Paths are built innermost first, as errors travel outwards; a
// structural error (found after decode) gets no path. A nil err stays nil.
func At(err error, seg string) error {
	if err == nil {
		return nil
	}
	return at(err, seg)
}

// at is At for a non-nil error: kept apart, so that the error target it
// declares is not moved to the heap on the success path of the caller At is
// inlined into.
func at(err error, seg string) error {
	var de *codec.DecodeError
	if errors.As(err, &de) {
		if !de.Structural {
			de.Path = append(de.Path, seg)
		}
		return de
	}
	return &codec.DecodeError{Path: []string{seg}, Err: err}
}

// AsDecodeError makes sure a non-nil err is a *codec.DecodeError.
func AsDecodeError(err error) error {
	if err == nil {
		return nil
	}
	return asDecodeError(err)
}

// asDecodeError is AsDecodeError for a non-nil error (see at).
func asDecodeError(err error) error {
	var de *codec.DecodeError
	if errors.As(err, &de) {
		return err
	}
	return &codec.DecodeError{Err: err}
}

// Key reads a field key with prost's checks. It reports the wire type as
// read; the caller checks it against the field it expects.
func Key(b []byte) (protowire.Number, protowire.Type, int, error) {
	var v uint64
	var n int
	if len(b) > 0 && b[0] < 0x80 {
		v, n = uint64(b[0]), 1
	} else {
		v, n = protowire.ConsumeVarint(b)
		if n < 0 {
			return 0, 0, 0, leaf.ErrVarint
		}
	}
	if v > math.MaxUint32 {
		return 0, 0, 0, errors.New("invalid key value: " + strconv.FormatUint(v, 10))
	}
	wt := protowire.Type(v & 7)
	if wt > protowire.Fixed32Type {
		return 0, 0, 0, errors.New("invalid wire type value: " + strconv.FormatUint(v&7, 10))
	}
	num := protowire.Number(v >> 3)
	if num == 0 {
		return 0, 0, 0, ErrTagZero
	}
	return num, wt, n, nil
}

// Varint reads a varint.
func Varint(b []byte) (uint64, int, error) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1, nil
	}
	v, n := protowire.ConsumeVarint(b)
	if n < 0 {
		return 0, 0, leaf.ErrVarint
	}
	return v, n, nil
}

// VarintField reads the value of a varint field.
func VarintField(wt protowire.Type, b []byte) (uint64, int, error) {
	if wt != protowire.VarintType {
		return 0, 0, &TypeError{wt, protowire.VarintType}
	}
	return Varint(b)
}

// Fixed64Field reads the value of a 64-bit field.
func Fixed64Field(wt protowire.Type, b []byte) (uint64, int, error) {
	if wt != protowire.Fixed64Type {
		return 0, 0, &TypeError{wt, protowire.Fixed64Type}
	}
	if len(b) < 8 {
		return 0, 0, leaf.ErrUnderflow
	}
	v, _ := protowire.ConsumeFixed64(b)
	return v, 8, nil
}

// BytesField reads the payload of a length-delimited field. The payload
// aliases b.
func BytesField(wt protowire.Type, b []byte) ([]byte, int, error) {
	if wt != protowire.BytesType {
		return nil, 0, &TypeError{wt, protowire.BytesType}
	}
	// A length under 128, Varint's first case, read here without the call.
	var l uint64
	var n int
	if len(b) > 0 && b[0] < 0x80 {
		l, n = uint64(b[0]), 1
	} else {
		var err error
		if l, n, err = Varint(b); err != nil {
			return nil, 0, err
		}
	}
	if l > uint64(len(b)-n) {
		return nil, 0, leaf.ErrUnderflow
	}
	end := n + int(l)
	return b[n:end], end, nil
}

// TextField reads a string field's payload and checks it is UTF-8.
func TextField(wt protowire.Type, b []byte) ([]byte, int, error) {
	v, n, err := BytesField(wt, b)
	if err == nil && !utf8.Valid(v) {
		err = leaf.ErrUTF8
	}
	return v, n, err
}

// CheckUTF8 checks a string payload.
func CheckUTF8(b []byte) error {
	if !utf8.Valid(b) {
		return leaf.ErrUTF8
	}
	return nil
}

// SkipField skips the value of an unknown field whose key has been read
// in a message at depth (the frame's top message is at 0), returning its
// length. Like prost's skip_field it counts against the recursion limit
// (MaxDepth): a field is refused at depth MaxDepth, and each group nests
// its fields one level deeper. Groups are skipped without recursion.
func SkipField(num protowire.Number, wt protowire.Type, b []byte, depth int) (int, error) {
	if depth >= MaxDepth {
		return 0, leaf.ErrRecursion
	}
	switch wt {
	case protowire.VarintType:
		_, n, err := Varint(b)
		return n, err
	case protowire.Fixed64Type:
		if len(b) < 8 {
			return 0, leaf.ErrUnderflow
		}
		return 8, nil
	case protowire.Fixed32Type:
		if len(b) < 4 {
			return 0, leaf.ErrUnderflow
		}
		return 4, nil
	case protowire.BytesType:
		_, n, err := BytesField(wt, b)
		return n, err
	case protowire.EndGroupType:
		return 0, leaf.ErrEndGroup
	}
	// StartGroup: walk keys until the matching end, tracking the open
	// groups; the fields of the innermost lie at depth+len(open).
	var stack [MaxDepth]protowire.Number
	open := stack[:1]
	open[0] = num
	off := 0
	for {
		n2, wt2, m, err := Key(b[off:])
		if err != nil {
			return 0, err
		}
		off += m
		switch wt2 {
		case protowire.EndGroupType:
			if n2 != open[len(open)-1] {
				return 0, leaf.ErrEndGroup
			}
			if open = open[:len(open)-1]; len(open) == 0 {
				return off, nil
			}
		case protowire.StartGroupType:
			if depth+len(open) >= MaxDepth {
				return 0, leaf.ErrRecursion
			}
			open = append(open, n2)
		default:
			m, err := SkipField(n2, wt2, b[off:], depth+len(open))
			if err != nil {
				return 0, err
			}
			off += m
		}
	}
}

// SkipAll is the FieldFunc of a message with no known fields (the empty
// messages: Unit, Dump, Ok, …): Walk skips every field.
func SkipAll(protowire.Number, protowire.Type, []byte) (int, error) { return -1, nil }

// FieldFunc handles one field of a message whose key has been read; b
// runs from the field's value to the end of the frame (see Walk). It
// returns the bytes of b the value took, or -1 to have the field skipped as
// unknown.
type FieldFunc func(num protowire.Number, wt protowire.Type, b []byte) (int, error)

// Walk runs f over the fields of message b, at depth (the frame's top
// message is at 0; see SkipField): the key loop, the dispatch and the skip
// of unknown fields that every message decoder shares.
//
// It reads the way prost does. b's length is the message's, and its
// capacity must run to the end of the frame (the decoders clamp the frame
// to its length once, and every payload is a subslice): each field is read
// against the rest of the frame, so a last field that runs past the
// message's end but not the frame's is decoded, and then reported as
// ErrDelimited; one that runs past the frame's end is a buffer underflow.
func Walk(b []byte, depth int, f FieldFunc) error {
	end := len(b)
	b = b[:cap(b)]
	p := 0
	for p < end {
		num, wt, k, err := Key(b[p:])
		if err != nil {
			return err
		}
		p += k
		n, err := f(num, wt, b[p:])
		if err != nil {
			return err
		}
		if n < 0 {
			if n, err = SkipField(num, wt, b[p:], depth); err != nil {
				return err
			}
		}
		p += n
	}
	return Left(p, end)
}

// Iter reads the fields of one message the way Walk does, for the hot
// loops that cannot afford Walk's call of a function per field:
// Dec.Iter starts it, Next reads each key, Take or Dec.Skip moves past the
// value, and Dec.End checks the message's end. Its methods inline, so a
// loop keeps it in registers.
type Iter struct {
	// B runs from the field's value (after Next) to the end of the frame.
	B []byte
	// tail is the number of frame bytes after the message: it has been
	// read when len(B) is down to tail, and overshot when below.
	tail int
}

// NewIter starts reading message b, whose capacity runs to the frame's
// end.
func NewIter(b []byte) Iter { return Iter{B: b[:cap(b)], tail: cap(b) - len(b)} }

// More reports whether the message has bytes left to read.
func (it *Iter) More() bool { return len(it.B) > it.tail }

// Next reads the next field's key.
func (it *Iter) Next() (num protowire.Number, wt protowire.Type, err error) {
	var k int
	num, wt, k, err = Key(it.B)
	it.B = it.B[k:]
	return
}

// Rest returns the rest of the message, its capacity running to the
// frame's end.
func (it *Iter) Rest() []byte { return it.B[:len(it.B)-it.tail] }

// Skip skips the value of an unknown field whose key Next read, the
// message being at depth (see SkipField).
func (it *Iter) Skip(num protowire.Number, wt protowire.Type, depth int) (err error) {
	var n int
	n, err = SkipField(num, wt, it.B, depth)
	it.B = it.B[n:]
	return
}

// Take moves past n bytes of the message.
func (it *Iter) Take(n int) { it.B = it.B[n:] }

// Ended checks that the message ended at its length (ErrDelimited when its
// last field ran past it).
func (it *Iter) Ended() error {
	if len(it.B) != it.tail {
		return ErrDelimited
	}
	return nil
}

// Left is the check at the end of a message read the way Walk reads one: p,
// where the reads stopped, must be end, the message's length.
func Left(p, end int) error {
	if p != end {
		return ErrDelimited
	}
	return nil
}

// Packed reads the varints of a packed run the way Walk reads a message's
// fields: run's capacity runs to the end of the frame, and a last varint
// that straddles the run's end is read (and handed to f) before the run is
// reported as ErrDelimited.
func Packed(run []byte, f func(v uint64) error) error {
	end := len(run)
	run = run[:cap(run)]
	p := 0
	for p < end {
		v, k, err := Varint(run[p:])
		if err != nil {
			return err
		}
		p += k
		if err := f(v); err != nil {
			return err
		}
	}
	return Left(p, end)
}

// Int reads a varint field's value with proto3's truncation (an int32 or
// uint32 keeps the low 32 bits).
func Int[T uint64 | uint32 | int32](wt protowire.Type, b []byte, dst *T) (int, error) {
	v, n, err := VarintField(wt, b)
	*dst = T(v)
	return n, err
}

// Bool reads a bool field.
func Bool(wt protowire.Type, b []byte, dst *bool) (int, error) {
	v, n, err := VarintField(wt, b)
	*dst = v != 0
	return n, err
}

// IntAt is Int naming the field seg in an error.
func IntAt[T uint64 | uint32 | int32](wt protowire.Type, b []byte, dst *T, seg string) (int, error) {
	n, err := Int(wt, b, dst)
	return Wrap(n, err, seg)
}

// BoolAt is Bool naming the field seg in an error.
func BoolAt(wt protowire.Type, b []byte, dst *bool, seg string) (int, error) {
	n, err := Bool(wt, b, dst)
	return Wrap(n, err, seg)
}

// Wrap annotates a field's error with its path segment: it is the return
// of a FieldFunc that consumed n bytes.
func Wrap(n int, err error, seg string) (int, error) {
	if err != nil {
		return 0, at(err, seg) // not At, so that Wrap inlines
	}
	return n, nil
}

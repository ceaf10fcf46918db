package codecv2

import (
	"errors"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/wire"
	"github.com/gomonty/monty/internal/budget"
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

// dec is the state of one frame decode: the state both codecs' decoders
// share (wire.Dec: budget, depth, string storage, in protocol 2's ways)
// and what the protocol-2 tree decode adds to it. It reads the frame as
// slices, as protocol 4's decoder does: every message is a payload whose
// capacity runs to the frame's end (wire.Walk).
type dec struct {
	wire.Dec
	// rest is the number of frame bytes after the value whose node is being
	// added; the first node allocation of a graph is sized by it (growNodes).
	rest int
	g    *value.Graph // graph of the message currently being decoded

	classes map[value.UUID]value.NodeID // class types of instances, for deduplication

	conv *codec.DecodeError // first conversion error, reported once the frame decoded cleanly

	// kindless holds the results whose return value has no kind (see
	// noteKindless).
	kindless map[*message.ExtResult]bool
}

// newDec returns the decoder of frame, and frame clamped to its length:
// payload capacities measure what is left of the frame.
func newDec(frame []byte, lim codec.Limits) (*dec, []byte) {
	d := &dec{}
	d.Bud, d.Proto2 = *budget.New(lim.DecodeBudget()), true
	return d, frame[:len(frame):len(frame)]
}

// message reads one occurrence of a nested message field with f.
func (d *dec) message(wt protowire.Type, b []byte, f wire.FieldFunc) (int, error) {
	v, n, err := d.Msg(wt, b)
	if err != nil {
		return 0, err
	}
	return n, d.Walk(v, f)
}

// field1 reads one occurrence of a nested message field whose message has
// one known field, field 1, with f (Dec.Field1).
func (d *dec) field1(wt protowire.Type, b []byte, f func(protowire.Type, []byte) (int, error)) (int, error) {
	v, n, err := d.Msg(wt, b)
	if err != nil {
		return 0, err
	}
	return n, d.Field1(v, f)
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

// str decodes a string field.
func (d *dec) str(wt protowire.Type, b []byte) (string, int, error) {
	var s string
	n, err := d.Text(wt, b, &s)
	return s, n, err
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
	return budget.Grow(&d.Bud, s, elem)
}

// uuidMsg decodes one occurrence of a Uuid message field. Its data is kept
// when it is exactly 16 bytes; n records the length for the later check.
func (d *dec) uuidMsg(wt protowire.Type, b []byte, id *value.UUID, n *int) (int, error) {
	v, m, err := d.Msg(wt, b)
	if err == nil {
		*n, err = d.UUID(v, *n, id)
	}
	if err != nil {
		return 0, err
	}
	return m, nil
}

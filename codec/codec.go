// Package codec turns protocol frames into gomonty's domain messages and
// back. There is one implementation per protocol version (codec/codecv5 for what
// upstream's 1.x workers speak, codec/codecv4 for the seed's arena protocol,
// codec/codecv2 for the released npm worker's tree protocol); all produce and
// consume the same [message] types, so nothing above this package depends
// on the version. A field a version cannot express is refused on encode
// with [ErrUnsupported] (see [CheckRequestFields]).
//
// Every decode of peer bytes runs against a fresh per-frame decode budget
// (see [Limits]); there is no unbudgeted entry point. Decoders never panic
// on any input, validate every value and arena index, and return typed
// errors: [ErrBudget] for an over-budget frame (errors.Is), a *DecodeError
// for everything else.
package codec

import (
	"errors"
	"fmt"
	"github.com/gomonty/monty/value"
	"slices"

	"github.com/gomonty/monty/codec/internal/registry"
	"github.com/gomonty/monty/internal/budget"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// Limits bounds one frame decode. The zero value is the safe default.
type Limits struct {
	// MaxDecodeBytes caps the memory one frame decode may keep resident.
	// Zero (or anything above it) means the default of 1 GiB.
	MaxDecodeBytes int64
	// MaxFrameLen caps an encoded frame. Zero (or anything above it) means
	// protocol.MaxFrameLen (256 MiB).
	MaxFrameLen int
}

// DecodeBudget returns the per-frame budget the limits allow.
func (l Limits) DecodeBudget() int64 {
	if l.MaxDecodeBytes <= 0 || l.MaxDecodeBytes > budget.Default {
		return budget.Default
	}
	return l.MaxDecodeBytes
}

// FrameLen returns the frame cap the limits allow.
func (l Limits) FrameLen() int {
	if l.MaxFrameLen <= 0 || l.MaxFrameLen > protocol.MaxFrameLen {
		return protocol.MaxFrameLen
	}
	return l.MaxFrameLen
}

// ErrBudget is matched (errors.Is) by every decode that exceeded its
// budget.
var ErrBudget = budget.ErrExceeded

// ErrMalformed is matched (errors.Is) by every *DecodeError.
var ErrMalformed = errors.New("malformed frame")

// DecodeError reports a frame that could not be decoded or failed
// validation. Its text follows the protocol's form,
// "failed to decode Protobuf message: {path}: {reason}", where path lists
// the enclosing fields innermost first (for example
// "NamedValue.value: Feed.inputs: ParentRequest.kind"). Arena-structure
// errors found after decode carry no prefix: "invalid value for Arena: …".
type DecodeError struct {
	// Path lists the enclosing fields, innermost first.
	Path []string
	// Err is the cause: budget.ErrExceeded, a *value.InvalidError,
	// *value.ArenaError, or a wire-level error.
	Err error
	// Structural is set for errors found after decode (arena structure and
	// roots, missing required fields of converted messages); they are
	// rendered without the "failed to decode" prefix.
	Structural bool
}

func (e *DecodeError) Error() string {
	if e.Err == nil {
		// Not one a codec returns (every one has its cause); a caller's
		// zero DecodeError still describes itself.
		s := "failed to decode Protobuf message"
		for _, p := range e.Path {
			s += ": " + p
		}
		return s
	}
	if e.Structural {
		return e.Err.Error()
	}
	s := "failed to decode Protobuf message: "
	for _, p := range e.Path {
		s += p + ": "
	}
	return s + e.Err.Error()
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// Is makes every DecodeError match ErrMalformed.
func (e *DecodeError) Is(target error) bool { return target == ErrMalformed }

// InputError is a Feed input that converts to no value, in the words of
// the released protocol-2 worker, which names the input: `input "x" has no
// value` (the NamedValue has none) or `invalid input "x": missing required
// field MontyObject.kind`. Protocol 2's decoder reports it as the Err of a
// structural *DecodeError; a child answers it as it reads, where protocol
// 4's input errors read "invalid inputs: …".
type InputError struct {
	// Name is the input's name.
	Name string
	// Err is why its value does not convert; nil when there is no value.
	Err error
}

func (e *InputError) Error() string {
	if e.Err == nil {
		return "input " + value.Quote(e.Name) + " has no value"
	}
	return "invalid input " + value.Quote(e.Name) + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *InputError) Unwrap() error { return e.Err }

// EncodeError reports a message that cannot be encoded: an invalid value
// graph, a value the protocol version cannot express, or a frame over the
// cap. Nothing is written when encoding fails.
type EncodeError struct {
	Msg string
	Err error
}

func (e *EncodeError) Error() string {
	msg := e.Msg
	if msg == "" {
		msg = "codec: the message cannot be encoded" // a caller's zero EncodeError
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", msg, e.Err)
	}
	return msg
}

// Unwrap returns the cause.
func (e *EncodeError) Unwrap() error { return e.Err }

// Codec encodes and decodes the messages of one protocol version.
// Implementations are stateless and safe for concurrent use.
type Codec interface {
	// Version returns the protocol version.
	Version() uint32
	// AppendRequest appends the encoding of r (without a length prefix) to
	// dst.
	AppendRequest(dst []byte, r *message.ParentRequest) ([]byte, error)
	// DecodeRequest decodes one request frame body within the limits.
	DecodeRequest(frame []byte, lim Limits) (*message.ParentRequest, error)
	// AppendEvent appends the encoding of e (without a length prefix) to
	// dst.
	AppendEvent(dst []byte, e *message.ChildEvent) ([]byte, error)
	// DecodeEvent decodes one event frame body within the limits.
	DecodeEvent(frame []byte, lim Limits) (*message.ChildEvent, error)
}

// ForVersion returns the codec for protocol version v, if one is linked in.
// Import codec/codecv5, codec/codecv4 and codec/codecv2 for their side effects.
func ForVersion(v uint32) (Codec, bool) {
	c, ok := registry.Get(v)
	if !ok {
		return nil, false
	}
	return c.(Codec), true
}

// Versions returns the linked-in versions, highest first.
func Versions() []uint32 {
	vs := registry.Versions()
	slices.Sort(vs)
	slices.Reverse(vs)
	return vs
}

// Highest returns the codec of the highest linked-in version that r
// contains.
func Highest(r protocol.VersionRange) (Codec, bool) {
	for _, v := range Versions() {
		if v != 0 && v >= r.Min && v <= r.Max {
			return ForVersion(v)
		}
	}
	return nil, false
}

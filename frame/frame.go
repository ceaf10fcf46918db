package frame

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"

	"github.com/gomonty/monty/protocol"
)

// MaxFrameLen is the largest frame body the protocol allows, in bytes. It
// is also the default and the upper bound of every limit in this package.
const MaxFrameLen = protocol.MaxFrameLen

// PrefixLen is the size of the length prefix in front of every body.
const PrefixLen = 4

// ErrTruncated reports that the stream ended inside a frame's prefix or
// body.
var ErrTruncated = errors.New("stream ended mid-frame")

// ErrTooLarge is matched, through errors.Is, by every *TooLargeError.
var ErrTooLarge = errors.New("frame exceeds the maximum length")

// TooLargeError reports a frame body longer than the limit in force.
type TooLargeError struct {
	// Len is the body length that was announced or requested; 0 when it
	// is not known (a message-oriented transport that stops reading a
	// message at the cap, as transport/ws does).
	Len uint64
	// Max is the limit it exceeded.
	Max uint64
}

// Error renders "frame of {Len} bytes exceeds maximum of {Max} bytes", or
// "frame exceeds maximum of {Max} bytes" when Len is not known.
func (e *TooLargeError) Error() string {
	if e.Len == 0 {
		return "frame exceeds maximum of " + strconv.FormatUint(e.Max, 10) + " bytes"
	}
	return "frame of " + strconv.FormatUint(e.Len, 10) +
		" bytes exceeds maximum of " + strconv.FormatUint(e.Max, 10) + " bytes"
}

// Is reports whether target is ErrTooLarge.
func (e *TooLargeError) Is(target error) bool {
	return target == ErrTooLarge
}

// IOError wraps a failure of the underlying reader or writer other than a
// clean or mid-frame end of stream.
type IOError struct {
	// Err is the underlying error.
	Err error
}

// Error renders "frame I/O error: {Err}".
func (e *IOError) Error() string {
	return "frame I/O error: " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *IOError) Unwrap() error {
	return e.Err
}

// effectiveLimit maps a caller's limit to the one enforced: values <= 0
// select MaxFrameLen, and larger values are capped at it.
func effectiveLimit(limit int) int {
	if limit <= 0 || limit > MaxFrameLen {
		return MaxFrameLen
	}
	return limit
}

// CheckLen reports whether a body of n bytes may be framed under limit.
// A limit <= 0 means MaxFrameLen, and a limit above MaxFrameLen is lowered
// to it. It returns nil or a *TooLargeError. A negative n, which no real
// body has, is reported as too large with Len set to math.MaxUint64.
//
// A peer can call CheckLen before changing any of its own state, to be
// sure the frame it is about to send will not be refused.
func CheckLen(n int, limit int) error {
	limit = effectiveLimit(limit)
	if n < 0 {
		return &TooLargeError{Len: math.MaxUint64, Max: uint64(limit)}
	}
	if n > limit {
		return &TooLargeError{Len: uint64(n), Max: uint64(limit)}
	}
	return nil
}

// CheckMessage applies the frame cap to a message sent or received over a
// message-oriented transport, where no length prefix is used. limit is
// interpreted as in CheckLen.
func CheckMessage(msg []byte, limit int) error {
	return CheckLen(len(msg), limit)
}

// AppendFrame appends the length prefix and body to dst and returns the
// extended slice. It does not enforce any limit: call CheckLen first.
// It panics if body is longer than a 4-byte prefix can express.
func AppendFrame(dst, body []byte) []byte {
	if uint64(len(body)) > math.MaxUint32 {
		panic("frame: body length does not fit in a 4-byte prefix")
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(body)))
	return append(dst, body...)
}

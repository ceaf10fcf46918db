// Package leaf holds what the protocol-2 and protocol-4 codecs write the
// same way: the field primitives (sizes and writers of proto3 fields with
// implicit or explicit presence) and the leaf value messages both schemas
// share field for field (Date, Time, DateTime, TimeDelta, TimeZone,
// Exception, Function, FileHandle).
//
// Sizes and writers come in pairs: Size* is the byte count the matching
// Append* writes. Implicit-presence fields are left out at their zero
// value; the *A ("always") writers and the Opt* writers of set pointers
// write the field regardless. Everything here is a pure function and safe
// for concurrent use.
package leaf

import (
	"errors"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/value"
)

// SizeTag is the size of a field key.
func SizeTag(num protowire.Number) int { return protowire.SizeTag(num) }

// SizeU is the size of an implicit-presence varint field (absent at 0).
func SizeU(num protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return SizeTag(num) + protowire.SizeVarint(v)
}

// SizeI32 is SizeU for an int32 field (negative values take ten bytes).
func SizeI32(num protowire.Number, v int32) int { return SizeU(num, uint64(int64(v))) }

// SizeS is the size of an implicit-presence string or bytes field of n bytes.
func SizeS(num protowire.Number, n int) int {
	if n == 0 {
		return 0
	}
	return SizeTag(num) + protowire.SizeBytes(n)
}

// SizeM is the size of a field that is always written (a message, a oneof
// arm, an optional or a repeated element) with an n-byte payload.
func SizeM(num protowire.Number, n int) int { return SizeTag(num) + protowire.SizeBytes(n) }

// SizeBool is the size of an implicit-presence bool field.
func SizeBool(num protowire.Number, v bool) int {
	if !v {
		return 0
	}
	return SizeTag(num) + 1
}

// SizeOptS is the size of an optional string field.
func SizeOptS(num protowire.Number, p *string) int {
	if p == nil {
		return 0
	}
	return SizeM(num, len(*p))
}

// SizeOptU is the size of an optional uint64 field.
func SizeOptU(num protowire.Number, p *uint64) int {
	if p == nil {
		return 0
	}
	return SizeTag(num) + protowire.SizeVarint(*p)
}

// SizeOptI32 is the size of an optional int32 field.
func SizeOptI32(num protowire.Number, p *int32) int {
	if p == nil {
		return 0
	}
	return SizeTag(num) + protowire.SizeVarint(uint64(int64(*p)))
}

// SizeOptU32 is the size of an optional uint32 field.
func SizeOptU32(num protowire.Number, p *uint32) int {
	if p == nil {
		return 0
	}
	return SizeTag(num) + protowire.SizeVarint(uint64(*p))
}

// AppendTag writes a field key.
func AppendTag(b []byte, num protowire.Number, wt protowire.Type) []byte {
	return protowire.AppendVarint(b, protowire.EncodeTag(num, wt))
}

// AppendU writes an implicit-presence varint field.
func AppendU(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendVarint(AppendTag(b, num, protowire.VarintType), v)
}

// AppendUA writes a varint field even at 0.
func AppendUA(b []byte, num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(AppendTag(b, num, protowire.VarintType), v)
}

// AppendI32 writes an implicit-presence int32 field.
func AppendI32(b []byte, num protowire.Number, v int32) []byte {
	return AppendU(b, num, uint64(int64(v)))
}

// AppendS writes an implicit-presence string field.
func AppendS(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return AppendSA(b, num, s)
}

// AppendSA writes a string field even when empty.
func AppendSA(b []byte, num protowire.Number, s string) []byte {
	b = AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendBytes writes an implicit-presence bytes field.
func AppendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return AppendBytesA(b, num, v)
}

// AppendBytesA writes a bytes field even when empty.
func AppendBytesA(b []byte, num protowire.Number, v []byte) []byte {
	b = AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(v)))
	return append(b, v...)
}

// AppendM writes the key and length of a message field with an n-byte payload.
func AppendM(b []byte, num protowire.Number, n int) []byte {
	b = AppendTag(b, num, protowire.BytesType)
	return protowire.AppendVarint(b, uint64(n))
}

// AppendBool writes an implicit-presence bool field.
func AppendBool(b []byte, num protowire.Number, v bool) []byte {
	if !v {
		return b
	}
	return append(AppendTag(b, num, protowire.VarintType), 1)
}

// AppendOptS writes an optional string field.
func AppendOptS(b []byte, num protowire.Number, p *string) []byte {
	if p == nil {
		return b
	}
	return AppendSA(b, num, *p)
}

// AppendOptU writes an optional uint64 field.
func AppendOptU(b []byte, num protowire.Number, p *uint64) []byte {
	if p == nil {
		return b
	}
	return AppendUA(b, num, *p)
}

// AppendOptI32 writes an optional int32 field.
func AppendOptI32(b []byte, num protowire.Number, p *int32) []byte {
	if p == nil {
		return b
	}
	return AppendUA(b, num, uint64(int64(*p)))
}

// AppendOptU32 writes an optional uint32 field.
func AppendOptU32(b []byte, num protowire.Number, p *uint32) []byte {
	if p == nil {
		return b
	}
	return AppendUA(b, num, uint64(*p))
}

// The leaf value messages, field for field as both schemas define them.
// Each Size is the payload length the matching Append writes (without the
// enclosing field's key and length).

// DateSize is the payload size of a Date message.
func DateSize(x *value.Date) int {
	return SizeI32(1, x.Year) + SizeU(2, uint64(x.Month)) + SizeU(3, uint64(x.Day))
}

// AppendDate writes a Date message's payload.
func AppendDate(b []byte, x *value.Date) []byte {
	b = AppendI32(b, 1, x.Year)
	b = AppendU(b, 2, uint64(x.Month))
	return AppendU(b, 3, uint64(x.Day))
}

// TimeSize is the payload size of a Time message.
func TimeSize(x *value.Time) int {
	return SizeU(1, uint64(x.Hour)) + SizeU(2, uint64(x.Minute)) + SizeU(3, uint64(x.Second)) +
		SizeU(4, uint64(x.Microsecond)) + SizeOptI32(5, x.Offset) + SizeOptS(6, x.TZName) + SizeU(7, uint64(x.Fold))
}

// AppendTime writes a Time message's payload.
func AppendTime(b []byte, x *value.Time) []byte {
	b = AppendU(b, 1, uint64(x.Hour))
	b = AppendU(b, 2, uint64(x.Minute))
	b = AppendU(b, 3, uint64(x.Second))
	b = AppendU(b, 4, uint64(x.Microsecond))
	b = AppendOptI32(b, 5, x.Offset)
	b = AppendOptS(b, 6, x.TZName)
	return AppendU(b, 7, uint64(x.Fold))
}

// DateTimeSize is the payload size of a DateTime message.
func DateTimeSize(x *value.DateTime) int {
	return SizeI32(1, x.Year) + SizeU(2, uint64(x.Month)) + SizeU(3, uint64(x.Day)) +
		SizeU(4, uint64(x.Hour)) + SizeU(5, uint64(x.Minute)) + SizeU(6, uint64(x.Second)) +
		SizeU(7, uint64(x.Microsecond)) + SizeOptI32(8, x.Offset) + SizeOptS(9, x.TZName)
}

// AppendDateTime writes a DateTime message's payload.
func AppendDateTime(b []byte, x *value.DateTime) []byte {
	b = AppendI32(b, 1, x.Year)
	b = AppendU(b, 2, uint64(x.Month))
	b = AppendU(b, 3, uint64(x.Day))
	b = AppendU(b, 4, uint64(x.Hour))
	b = AppendU(b, 5, uint64(x.Minute))
	b = AppendU(b, 6, uint64(x.Second))
	b = AppendU(b, 7, uint64(x.Microsecond))
	b = AppendOptI32(b, 8, x.Offset)
	return AppendOptS(b, 9, x.TZName)
}

// TimeDeltaSize is the payload size of a TimeDelta message.
func TimeDeltaSize(x *value.TimeDelta) int {
	return SizeI32(1, x.Days) + SizeI32(2, x.Seconds) + SizeI32(3, x.Microseconds)
}

// AppendTimeDelta writes a TimeDelta message's payload.
func AppendTimeDelta(b []byte, x *value.TimeDelta) []byte {
	b = AppendI32(b, 1, x.Days)
	b = AppendI32(b, 2, x.Seconds)
	return AppendI32(b, 3, x.Microseconds)
}

// TimeZoneSize is the payload size of a TimeZone message.
func TimeZoneSize(x *value.TimeZone) int { return SizeI32(1, x.Offset) + SizeOptS(2, x.Name) }

// AppendTimeZone writes a TimeZone message's payload.
func AppendTimeZone(b []byte, x *value.TimeZone) []byte {
	b = AppendI32(b, 1, x.Offset)
	return AppendOptS(b, 2, x.Name)
}

// ExceptionSize is the payload size of an Exception message.
func ExceptionSize(x *value.Exception) int { return SizeS(1, len(x.Type)) + SizeOptS(2, x.Arg) }

// AppendException writes an Exception message's payload.
func AppendException(b []byte, x *value.Exception) []byte {
	b = AppendS(b, 1, x.Type)
	return AppendOptS(b, 2, x.Arg)
}

// FunctionSize is the payload size of a Function message.
func FunctionSize(x *value.Function) int { return SizeS(1, len(x.Name)) + SizeOptS(2, x.Docstring) }

// AppendFunction writes a Function message's payload.
func AppendFunction(b []byte, x *value.Function) []byte {
	b = AppendS(b, 1, x.Name)
	return AppendOptS(b, 2, x.Docstring)
}

// FileMode is the canonical spelling of a file mode; a mode that does not
// normalise (one the encoder's checks refused already) is returned as is.
func FileMode(m string) string {
	if c, err := value.NormalizeFileMode(m); err == nil {
		return c
	}
	return m
}

// FileHandleSize is the payload size of a FileHandle message, whose mode
// goes out in its canonical spelling.
func FileHandleSize(x *value.FileHandle) int {
	return SizeS(1, len(x.Path)) + SizeS(2, len(FileMode(x.Mode))) + SizeU(3, x.Position)
}

// AppendFileHandle writes a FileHandle message's payload.
func AppendFileHandle(b []byte, x *value.FileHandle) []byte {
	b = AppendS(b, 1, x.Path)
	b = AppendS(b, 2, FileMode(x.Mode))
	return AppendU(b, 3, x.Position)
}

// Wire-level failures both decoders report. The texts are the ones
// upstream's decoder (prost) reports, so a diagnostic reads the same
// whichever side produced it.
var (
	ErrVarint    = errors.New("invalid varint")
	ErrUnderflow = errors.New("buffer underflow")
	ErrRecursion = errors.New("recursion limit reached")
	ErrUTF8      = errors.New("invalid string value: data is not UTF-8 encoded")
	ErrEndGroup  = errors.New("unexpected end group tag")
)

// WireTypeNames are prost's Debug names of the wire types, indexed by
// protowire.Type.
var WireTypeNames = [...]string{"Varint", "SixtyFourBit", "LengthDelimited", "StartGroup", "EndGroup", "ThirtyTwoBit"}

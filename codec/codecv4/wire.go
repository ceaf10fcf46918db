package codecv4

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/leaf"
)

// errTagZero is prost's text for a zero field number; the failures both
// codecs report are in package leaf.
var errTagZero = errors.New("invalid tag value: 0")

// maxGroupDepth bounds the nesting of unknown groups that are skipped. It is
// prost's recursion limit.
const maxGroupDepth = 100

// wireTypeError reports a known field that arrived with the wrong wire type.
type wireTypeError struct {
	got, want protowire.Type
}

func (e *wireTypeError) Error() string {
	return "invalid wire type: " + leaf.WireTypeNames[e.got] + " (expected " + leaf.WireTypeNames[e.want] + ")"
}

// at records that err happened while decoding field seg ("Message.field")
// of an enclosing message. Paths are built innermost first, as errors
// travel outwards.
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

// asDecodeError makes sure err is a *codec.DecodeError.
func asDecodeError(err error) error {
	var de *codec.DecodeError
	if err == nil || errors.As(err, &de) {
		return err
	}
	return &codec.DecodeError{Err: err}
}

// key reads a field key. It reports the wire type as read; the caller checks
// it against the field it expects.
func key(b []byte) (protowire.Number, protowire.Type, int, error) {
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
		return 0, 0, 0, errTagZero
	}
	return num, wt, n, nil
}

// varint reads a varint.
func varint(b []byte) (uint64, int, error) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1, nil
	}
	v, n := protowire.ConsumeVarint(b)
	if n < 0 {
		return 0, 0, leaf.ErrVarint
	}
	return v, n, nil
}

// varintField reads the value of a varint field.
func varintField(wt protowire.Type, b []byte) (uint64, int, error) {
	if wt != protowire.VarintType {
		return 0, 0, &wireTypeError{wt, protowire.VarintType}
	}
	return varint(b)
}

// fixed64Field reads the value of a 64-bit field.
func fixed64Field(wt protowire.Type, b []byte) (uint64, int, error) {
	if wt != protowire.Fixed64Type {
		return 0, 0, &wireTypeError{wt, protowire.Fixed64Type}
	}
	if len(b) < 8 {
		return 0, 0, leaf.ErrUnderflow
	}
	v, _ := protowire.ConsumeFixed64(b)
	return v, 8, nil
}

// bytesField reads the payload of a length-delimited field. The payload
// aliases b.
func bytesField(wt protowire.Type, b []byte) ([]byte, int, error) {
	if wt != protowire.BytesType {
		return nil, 0, &wireTypeError{wt, protowire.BytesType}
	}
	l, n, err := varint(b)
	if err != nil {
		return nil, 0, err
	}
	if l > uint64(len(b)-n) {
		return nil, 0, leaf.ErrUnderflow
	}
	end := n + int(l)
	return b[n:end], end, nil
}

// textField reads a string field's payload and checks it is UTF-8.
func textField(wt protowire.Type, b []byte) ([]byte, int, error) {
	v, n, err := bytesField(wt, b)
	if err == nil && !utf8.Valid(v) {
		err = leaf.ErrUTF8
	}
	return v, n, err
}

// skipField skips the value of an unknown field whose key has been read.
// Groups are skipped without recursion.
func skipField(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
	switch wt {
	case protowire.VarintType:
		_, n, err := varint(b)
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
		_, n, err := bytesField(wt, b)
		return n, err
	case protowire.EndGroupType:
		return 0, leaf.ErrEndGroup
	}
	// StartGroup: walk keys until the matching end, tracking the open groups.
	var stack [maxGroupDepth]protowire.Number
	depth := 1
	stack[0] = num
	off := 0
	for {
		n2, wt2, m, err := key(b[off:])
		if err != nil {
			return 0, err
		}
		off += m
		switch wt2 {
		case protowire.EndGroupType:
			if n2 != stack[depth-1] {
				return 0, leaf.ErrEndGroup
			}
			depth--
			if depth == 0 {
				return off, nil
			}
		case protowire.StartGroupType:
			if depth == maxGroupDepth {
				return 0, leaf.ErrRecursion
			}
			stack[depth] = n2
			depth++
		default:
			m, err := skipField(n2, wt2, b[off:])
			if err != nil {
				return 0, err
			}
			off += m
		}
	}
}

// skipMessage checks that b is a well-formed message none of whose fields
// are known (the empty messages: Unit, Dump, Ok, …).
func skipMessage(b []byte) error {
	for len(b) > 0 {
		num, wt, n, err := key(b)
		if err != nil {
			return err
		}
		b = b[n:]
		m, err := skipField(num, wt, b)
		if err != nil {
			return err
		}
		b = b[m:]
	}
	return nil
}

// Go's small-object size classes (runtime/sizeclasses.go). allocSize uses
// them to charge what an allocation really takes from the heap.
var sizeClasses = [...]int{0, 8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192,
	208, 224, 240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024,
	1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144,
	6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072,
	20480, 21760, 24576, 27264, 28672, 32768}

// allocSize returns the heap footprint of an n-byte allocation: the size
// class for small objects, whole 8 KiB pages for large ones.
func allocSize(n int) int64 {
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

package value

import (
	"errors"
	"math/big"
	"strconv"
)

// Bounds on the work of rendering a value. A graph from a worker is hostile:
// a legal frame may hold an int of a billion bits (whose decimal form takes
// minutes to compute) or, in protocol 4, sub-values shared so often that
// printing each occurrence in full would produce an exponential amount of
// text. Rendering therefore follows CPython's integer string-conversion
// limit and bounds its output by a linear function of the graph's size.

// MaxIntStrDigits is CPython's default limit on the number of decimal
// digits of an int converted to a string
// (sys.int_info.default_max_str_digits). repr and str refuse an int with
// more digits, as CPython does.
const MaxIntStrDigits = 4300

// IntStrDigitsError reports an int whose decimal form would exceed
// [MaxIntStrDigits] digits. Its Error text is the message of the ValueError
// CPython raises in the same case; [IntStrDigitsError.PythonType] names
// that exception type.
//
// It is plain data, safe for concurrent use.
type IntStrDigitsError struct {
	// Limit is the limit that was exceeded (MaxIntStrDigits).
	Limit int
	// Bits is the bit length of the int's magnitude.
	Bits int
}

// Error returns CPython's message, for example "Exceeds the limit (4300
// digits) for integer string conversion; use sys.set_int_max_str_digits()
// to increase the limit".
func (e *IntStrDigitsError) Error() string {
	return "Exceeds the limit (" + strconv.Itoa(e.Limit) +
		" digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit"
}

// PythonType returns "ValueError", the exception CPython raises.
func (e *IntStrDigitsError) PythonType() string { return "ValueError" }

// ErrReprTooLarge reports a rendering that outgrew its bound: at most a
// fixed 1 MiB plus a small multiple of the graph's size (see
// [Graph.ReprChecked]). A tree-shaped value never reaches it; only
// sub-values shared many times can.
var ErrReprTooLarge = errors.New("value: repr exceeds its size bound (shared sub-values expand beyond a linear bound of the graph's size)")

// log10of2 bounds digit counts from bit lengths: an int of b bits has
// between floor((b-1)·log10(2))+1 and floor(b·log10(2))+1 decimal digits.
const log10of2 = 0.30102999566398119521

// checkIntDigits reports whether b's decimal form has at most
// MaxIntStrDigits digits, deciding from the bit length alone except within
// a few bits of the limit, where it converts (cheaply: the int then has
// about 14,300 bits) and counts.
func checkIntDigits(b *big.Int) error {
	bits := b.BitLen()
	if bits == 0 {
		return nil
	}
	lo := int(float64(bits-1)*log10of2) + 1 // digits of 2**(bits-1)
	hi := int(float64(bits)*log10of2) + 1   // digits of 2**bits - 1, at most
	switch {
	case hi < MaxIntStrDigits:
		return nil
	case lo > MaxIntStrDigits+1: // +1: float rounding at the boundary
		return &IntStrDigitsError{Limit: MaxIntStrDigits, Bits: bits}
	}
	s := new(big.Int).Abs(b).Text(10)
	if len(s) > MaxIntStrDigits {
		return &IntStrDigitsError{Limit: MaxIntStrDigits, Bits: bits}
	}
	return nil
}

// bigIntPlaceholder is what the infallible Repr shows for an int past the
// digit limit.
func appendBigIntPlaceholder(dst []byte, bits int) []byte {
	dst = append(dst, "<int of "...)
	dst = strconv.AppendInt(dst, int64(bits), 10)
	dst = append(dst, " bits: more than "...)
	dst = strconv.AppendInt(dst, MaxIntStrDigits, 10)
	return append(dst, " digits>"...)
}

// reprFloor is the output every rendering may produce whatever the graph.
const reprFloor = 1 << 20

// reprBound returns an upper bound of the repr of any tree-shaped value
// made of g's nodes: every node's own text at its worst escaping (six
// output bytes per input byte, for \udcXX), an int's digits, a constant
// per node (larger for dates and times) and a separator per reference. Rendering stops past reprFloor plus this bound.
// It costs one pass over the nodes, so it is computed only once a rendering
// has already produced reprFloor bytes.
func reprBound(g *Graph) int64 {
	var b int64
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if !n.HasPayload() {
			b += 96
			continue
		}
		b += 96 + 4*int64(len(n.Refs())) + 6*int64(len(n.Text())+extTextLen(n.Ext()))
		switch n.Kind {
		case KindDate, KindTime, KindDateTime, KindTimeDelta, KindTimeZone:
			// Their reprs spell out every field and the tzinfo's: up
			// to ~200 bytes with int32/uint32 fields at their extremes.
			b += 160
		}
		if x, ok := n.Ext().(*big.Int); ok {
			// Its digits (at most MaxIntStrDigits; past that a short
			// placeholder), and a sign.
			b += int64(min(int(float64(x.BitLen())*log10of2)+2, MaxIntStrDigits+2))
		}
		if ci, ok := n.Ext().(*ClassInstance); ok && int(ci.Class) < len(g.Nodes) {
			// Every instance prints its class's name, and decoders share
			// one class node between instances; a class name counts for
			// at most classNameShare bytes per instance.
			if t, ok := g.Nodes[ci.Class].Ext().(*Type); ok {
				b += int64(min(len(t.Name), classNameShare))
			}
		}
	}
	return b
}

// classNameShare bounds what a shared class name adds to reprBound per
// instance.
const classNameShare = 256

// extTextLen sums the text a node's payload contributes to its repr.
func extTextLen(ext any) int {
	opt := func(s *string) int {
		if s == nil {
			return 0
		}
		return len(*s)
	}
	switch x := ext.(type) {
	case []byte:
		return len(x)
	case *NamedTuple:
		n := len(x.TypeName)
		for _, f := range x.FieldNames {
			n += len(f) + 2
		}
		return n
	case *Exception:
		return len(x.Type) + opt(x.Arg)
	case *Type:
		return len(x.Name) + 4*len(x.Attrs)
	case *ClassInstance:
		return 4 * len(x.Attrs)
	case *Function:
		return len(x.Name)
	case *FileHandle:
		return len(x.Path) + len(x.Mode)
	case *Time:
		return opt(x.TZName)
	case *DateTime:
		return opt(x.TZName)
	case *TimeZone:
		return opt(x.Name)
	}
	return 0
}

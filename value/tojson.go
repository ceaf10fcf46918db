package value

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
)

// This file writes graph nodes as JSON text (RFC 8259), straight from the
// graph: no Go value is built on the way.
//
// The JSON is what CPython 3.14's json.dumps(x, ensure_ascii=False,
// allow_nan=False, separators=(",", ":")) writes for every value json.dumps
// accepts, byte for byte, and the tests hold it to the worker's own
// json.dumps. Values json.dumps refuses get the form the pydantic ecosystem
// gives them where there is a natural one:
//
//	None, bool, int, float    null, true/false, number (float as repr(): 1.0, 1e-07)
//	str                       string (UTF-8; only ", \ and control characters escaped)
//	list, tuple, named tuple  array
//	set, frozenset            array, in the set's iteration order
//	dict                      object; keys as json.dumps writes them: a str as is,
//	                          an int, float, bool or None as its JSON text ("1", "1.5",
//	                          "true", "null"); any other key is an error
//	dataclass instance        object of its fields
//	bytes                     string, standard base64 (as encoding/json writes []byte)
//	date, time, datetime      string, isoformat(): "2024-01-02", "03:04:05.000006",
//	                          "2024-01-02T03:04:05+01:00"
//	timedelta                 number, total_seconds()
//	pathlib.Path              string, str(path)
//
// Everything else (NaN and infinities, an int past MaxIntStrDigits digits,
// exceptions, types, functions, timezones, file handles, instances of
// ordinary classes, Ellipsis, repr and cycle placeholders) is an error.
//
// The walk is iterative, like Repr's, and bounded like it: a sub-value
// shared many times is written in full at each occurrence (JSON has no
// references), so the text is bounded by 1 MiB plus a linear function of
// the graph's size (64 bytes a node plus the bound Repr uses), past which
// the writer stops with ErrJSONTooLarge.

// ErrJSONTooLarge reports a JSON text that outgrew its bound (1 MiB plus a
// linear function of the graph's size), which only a value whose
// sub-values are shared many times can reach. It is the Err of the
// *ConversionError AppendJSON returns.
var ErrJSONTooLarge = errors.New("value: JSON text exceeds its size bound (shared sub-values expand beyond a linear bound of the graph's size)")

// jsonType names the destination in AppendJSON's errors.
var jsonType = reflect.TypeFor[json.RawMessage]()

// numberType is encoding/json's number text, converted as the number it
// spells.
var numberType = reflect.TypeFor[json.Number]()

// AppendJSON appends the JSON text of node id of g to dst and returns the
// extended buffer (see the package's JSON mapping above [ErrJSONTooLarge]).
// On error it returns dst unchanged and a *ConversionError whose Path
// locates the value that has no JSON form. It never panics on a malformed
// graph.
func AppendJSON(dst []byte, g *Graph, id NodeID) ([]byte, error) {
	if int(id) >= len(g.Nodes) {
		return dst, &ConversionError{GoType: jsonType, Reason: "node id " + strconv.Itoa(int(id)) + " is out of range"}
	}
	if need := min(6*subtreeSpan(g, id)+64, maxReprPresize); cap(dst)-len(dst) < need {
		dst = slices.Grow(dst, need) // about 5 bytes of JSON a node: saves the doublings
	}
	// Up to this limit (linear in the graph's size already) the text is
	// not measured against the graph; past it, the finer bound is added.
	w := jsonWriter{g: g, buf: dst, start: len(dst), limit: reprFloor + 64*int64(len(g.Nodes))}
	w.write(id)
	if w.err != nil {
		return dst, w.err
	}
	return w.buf, nil
}

// subtreeSpan estimates how many nodes the value of id holds: in the
// post-order graphs codecs and FromGo build, a tree's nodes are the ids
// from its leftmost leaf to its root.
func subtreeSpan(g *Graph, id NodeID) int {
	lo := id
	for range 64 {
		refs := g.Nodes[lo].Refs()
		if len(refs) == 0 || refs[0] >= lo {
			break
		}
		lo = refs[0]
	}
	return int(id-lo) + 1
}

// JSON returns the JSON text of node id (see [AppendJSON]).
func (g *Graph) JSON(id NodeID) ([]byte, error) { return AppendJSON(nil, g, id) }

type jsonFrame struct {
	id NodeID
	i  int // index of the next item to write
}

type jsonWriter struct {
	g       *Graph
	buf     []byte
	start   int
	stack   []jsonFrame
	limit   int64
	bounded bool
	err     error
}

func (w *jsonWriter) write(root NodeID) {
	w.visit(root)
	for len(w.stack) > 0 && w.err == nil {
		if int64(len(w.buf)-w.start) > w.limit && w.overBound() {
			w.fail(KindInvalid, "", ErrJSONTooLarge)
			return
		}
		top := len(w.stack) - 1
		f := &w.stack[top]
		n := &w.g.Nodes[f.id]
		child, ok, done := w.step(n, f)
		if done {
			w.close(n)
			w.stack = w.stack[:top]
			continue
		}
		if !ok {
			continue
		}
		if int(child) >= len(w.g.Nodes) || child >= f.id {
			// Out of range, or not post-order (which could loop).
			w.fail(KindInvalid, "malformed graph: node "+strconv.Itoa(int(f.id))+" refers to node "+strconv.Itoa(int(child)), nil)
			return
		}
		w.visit(child)
	}
}

// overBound computes the graph-dependent part of the bound the first time
// the floor is passed and reports whether the text is past it.
func (w *jsonWriter) overBound() bool {
	if !w.bounded {
		w.bounded = true
		w.limit += jsonBound(w.g)
	}
	return int64(len(w.buf)-w.start) > w.limit
}

// jsonBound is reprBound with the packed items FromGo stores without
// nodes: no JSON form of a node is longer than its repr by more than the
// per-node constant, but a packed number has no node to count.
func jsonBound(g *Graph) int64 {
	b := reprBound(g)
	for i := range g.Nodes {
		if n := &g.Nodes[i]; n.Packed() {
			b += 32 * int64(n.n)
		}
	}
	return b
}

// fail records the first error, with the path of the value being written
// (the stack's items, outermost first).
func (w *jsonWriter) fail(k Kind, reason string, err error) {
	if w.err != nil {
		return
	}
	ce := &ConversionError{Kind: k, GoType: jsonType, Reason: reason, Err: err}
	if errors.Is(err, ErrJSONTooLarge) {
		ce.Reason = "the text exceeds its size bound"
	}
	for i := len(w.stack) - 1; i >= 0; i-- {
		ce.segs = append(ce.segs, w.segment(&w.stack[i]))
	}
	w.err = finishErr(ce)
}

// segment names the item frame f is writing, as ConversionError paths do.
func (w *jsonWriter) segment(f *jsonFrame) string {
	n := &w.g.Nodes[f.id]
	i := max(f.i-1, 0)
	switch n.Kind {
	case KindDict:
		refs := n.Refs()
		if k := i &^ 1; k < len(refs) && int(refs[k]) < len(w.g.Nodes) {
			if key := &w.g.Nodes[refs[k]]; key.Kind == KindStr {
				return "[" + strconv.Quote(key.Text()) + "]"
			}
			return "[" + w.g.Repr(refs[k]) + "]"
		}
	case KindClassInstance:
		if ci, _ := n.Ext().(*ClassInstance); ci != nil && i/2 < len(ci.Attrs) {
			if k := ci.Attrs[i/2].Key; int(k) < len(w.g.Nodes) {
				return "." + w.g.Nodes[k].Text()
			}
		}
	}
	return "[" + strconv.Itoa(i) + "]"
}

// visit writes a leaf in place, or opens a container and pushes it.
func (w *jsonWriter) visit(id NodeID) {
	n := &w.g.Nodes[id]
	switch n.Kind {
	case KindList, KindTuple, KindNamedTuple, KindSet, KindFrozenSet:
		if xs := n.Ints(); xs != nil {
			w.buf = append(w.buf, '[')
			for i, x := range xs {
				if i > 0 {
					w.buf = append(w.buf, ',')
				}
				w.buf = strconv.AppendInt(w.buf, x, 10)
			}
			w.buf = append(w.buf, ']')
			return
		}
		if xs := n.Floats(); xs != nil {
			w.buf = append(w.buf, '[')
			for i, x := range xs {
				if i > 0 {
					w.buf = append(w.buf, ',')
				}
				if !w.float(x) {
					w.stack = append(w.stack, jsonFrame{id: id, i: i + 1})
					w.fail(KindFloat, nonFinite(x), nil)
					return
				}
			}
			w.buf = append(w.buf, ']')
			return
		}
		w.buf = append(w.buf, '[')
	case KindDict:
		w.buf = append(w.buf, '{')
	case KindClassInstance:
		ci, _ := n.Ext().(*ClassInstance)
		if ci == nil || !w.dataclass(id, ci) {
			w.fail(n.Kind, "only a dataclass instance has a JSON form", nil)
			return
		}
		w.buf = append(w.buf, '{')
	default:
		w.leaf(n)
		return
	}
	w.stack = append(w.stack, jsonFrame{id: id})
}

// dataclass reports whether the instance's class is a dataclass.
func (w *jsonWriter) dataclass(id NodeID, ci *ClassInstance) bool {
	if ci.Class >= id {
		return false
	}
	t, ok := w.g.Nodes[ci.Class].Ext().(*Type)
	return ok && t.IsDataclass
}

// step writes the separator before item f.i and returns the node to write
// for it (ok false: the item, a key, was written in full), or done when
// every item has been written.
func (w *jsonWriter) step(n *Node, f *jsonFrame) (child NodeID, ok, done bool) {
	i := f.i
	f.i++
	switch n.Kind {
	case KindDict:
		refs := n.Refs()
		if i >= len(refs)&^1 {
			return 0, false, true
		}
		if i%2 == 1 {
			w.buf = append(w.buf, ':')
			return refs[i], true, false
		}
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		if int(refs[i]) >= len(w.g.Nodes) {
			return refs[i], true, false // reported as malformed by write
		}
		w.key(&w.g.Nodes[refs[i]])
		return 0, false, false
	case KindClassInstance:
		ci := n.Ext().(*ClassInstance)
		if i >= 2*len(ci.Attrs) {
			return 0, false, true
		}
		p := ci.Attrs[i/2]
		if i%2 == 1 {
			w.buf = append(w.buf, ':')
			return p.Value, true, false
		}
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		if int(p.Key) >= len(w.g.Nodes) {
			return p.Key, true, false
		}
		w.key(&w.g.Nodes[p.Key])
		return 0, false, false
	}
	refs := n.Refs()
	if i >= len(refs) {
		return 0, false, true
	}
	if i > 0 {
		w.buf = append(w.buf, ',')
	}
	return refs[i], true, false
}

func (w *jsonWriter) close(n *Node) {
	if n.Kind == KindDict || n.Kind == KindClassInstance {
		w.buf = append(w.buf, '}')
	} else {
		w.buf = append(w.buf, ']')
	}
}

// key writes a dict key as json.dumps does: a str as is, an int, float,
// bool or None as the string of its JSON text.
func (w *jsonWriter) key(k *Node) {
	switch k.Kind {
	case KindStr:
		w.buf = appendJSONString(w.buf, k.Text())
		return
	case KindInt, KindBigInt, KindBool, KindNone:
		w.buf = append(w.buf, '"')
		w.leaf(k)
		w.buf = append(w.buf, '"')
		return
	case KindFloat:
		f := math.Float64frombits(k.Num)
		w.buf = append(w.buf, '"')
		if w.float(f) {
			w.buf = append(w.buf, '"')
		} else {
			w.fail(KindFloat, nonFinite(f)+" (a dict key)", nil)
		}
		return
	}
	w.fail(k.Kind, "keys must be str, int, float, bool or None, not "+k.Kind.String(), nil)
}

// float writes a finite float as repr() does; it reports false for NaN
// and the infinities, which JSON cannot hold.
func (w *jsonWriter) float(f float64) bool {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return false
	}
	w.buf = appendFloatRepr(w.buf, f)
	return true
}

func nonFinite(f float64) string {
	return "Out of range float values are not JSON compliant: " + FloatRepr(f)
}

// leaf writes a node that has no items, or fails.
func (w *jsonWriter) leaf(n *Node) {
	switch n.Kind {
	case KindNone:
		w.buf = append(w.buf, "null"...)
	case KindBool:
		if n.Num != 0 {
			w.buf = append(w.buf, "true"...)
		} else {
			w.buf = append(w.buf, "false"...)
		}
	case KindInt:
		w.buf = strconv.AppendInt(w.buf, int64(n.Num), 10)
	case KindBigInt:
		b := n.BigInt()
		if b == nil {
			w.fail(n.Kind, "no int payload", nil)
			return
		}
		if err := checkIntDigits(b); err != nil {
			w.fail(n.Kind, "", err)
			return
		}
		w.buf = b.Append(w.buf, 10)
	case KindFloat:
		if f := math.Float64frombits(n.Num); !w.float(f) {
			w.fail(n.Kind, nonFinite(f), nil)
		}
	case KindStr:
		w.buf = appendJSONString(w.buf, n.Text())
	case KindPath:
		w.buf = appendJSONString(w.buf, posixPathString(n.Text()))
	case KindBytes:
		b := n.Bytes()
		w.buf = append(w.buf, '"')
		w.buf = base64.StdEncoding.AppendEncode(w.buf, b)
		w.buf = append(w.buf, '"')
	case KindDate, KindTime, KindDateTime:
		w.isoformat(n)
	case KindTimeDelta:
		d, ok := n.Ext().(*TimeDelta)
		if !ok {
			w.fail(n.Kind, "no timedelta payload", nil)
			return
		}
		w.buf = appendFloatRepr(w.buf, totalSeconds(d))
	default:
		w.fail(n.Kind, "no JSON form", nil)
	}
}

// isoformat writes a date, time or datetime as the string isoformat()
// returns.
func (w *jsonWriter) isoformat(n *Node) {
	w.buf = append(w.buf, '"')
	switch x := n.Ext().(type) {
	case *Date:
		w.buf = appendISODate(w.buf, x.Year, x.Month, x.Day)
	case *Time:
		w.buf = appendISOClock(w.buf, x.Hour, x.Minute, x.Second, x.Microsecond)
		if x.Offset != nil {
			w.buf = appendUTCOffset(w.buf, *x.Offset)
		}
	case *DateTime:
		w.buf = appendISODate(w.buf, x.Year, x.Month, x.Day)
		w.buf = append(w.buf, 'T')
		w.buf = appendISOClock(w.buf, x.Hour, x.Minute, x.Second, x.Microsecond)
		if x.Offset != nil {
			w.buf = appendUTCOffset(w.buf, *x.Offset)
		}
	default:
		w.fail(n.Kind, "no payload", nil)
		return
	}
	w.buf = append(w.buf, '"')
}

// totalSeconds is timedelta.total_seconds(): the exact number of
// microseconds divided by 10**6, correctly rounded.
func totalSeconds(d *TimeDelta) float64 {
	secs := int64(d.Days)*86400 + int64(d.Seconds) // |secs| < 2**48: no overflow
	if secs > -1<<32 && secs < 1<<32 {
		// |us| < 2**52: both operands exact, one correctly rounded division.
		return float64(secs*1_000_000+int64(d.Microseconds)) / 1e6
	}
	us := new(big.Int).Mul(big.NewInt(secs), big.NewInt(1_000_000))
	us.Add(us, big.NewInt(int64(d.Microseconds)))
	f, _ := new(big.Rat).SetFrac(us, big.NewInt(1_000_000)).Float64()
	return f
}

// appendJSONString writes s as a JSON string the way json.dumps does with
// ensure_ascii=False: ", \ and the control characters U+0000 to U+001F
// escaped (\n, \r, \t, \b, \f by name, the rest as \u00XX), everything
// else as UTF-8. Bytes that are not UTF-8 (a Python str cannot hold them)
// become U+FFFD, as encoding/json writes them.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

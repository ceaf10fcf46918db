package value

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// This file renders graph nodes the way CPython 3.14's repr() and str()
// render the equivalent Python values.
//
// Rendering is iterative: containers are walked with an explicit stack, so a
// 10,000-deep chain of lists costs a few hundred kilobytes of heap and no Go
// stack. Every child id of a well-formed graph is lower than its parent's id,
// so the walk always terminates; a malformed graph whose child id is not
// below its parent's renders "..." in place of that child instead of
// looping. The cost is linear in the output: a sub-object referenced twice
// is printed in full at each occurrence, like CPython does.
//
// Choices where the graph carries less than CPython would print:
//
//   - An instance of a sandbox class that is not a dataclass renders as
//     "<Name object>" (CPython adds the module and an address:
//     "<__main__.Name object at 0x7f...>"; neither exists here). An
//     instance of a host class renders as Name(attr=value, ...) whether or
//     not the class is a dataclass, which is what the sandbox's own repr()
//     prints for it.
//   - A sandbox or host class type renders as "<class 'Name'>", the text the
//     worker itself uses (CPython would add the defining module).
//   - A host function renders as "<function name>" (no address).
//   - A text file handle always shows encoding='utf-8', the sandbox's only
//     text encoding.
//   - Text that is not valid UTF-8 (which a Python str cannot hold) renders
//     each invalid byte as a lone surrogate escape \udcXX, the way Python
//     shows bytes decoded with errors="surrogateescape".
//
// Bounded work (see limits.go): an int with more than MaxIntStrDigits
// decimal digits is refused as CPython refuses it, decided from its bit
// length before any conversion; the checked forms ([Graph.ReprChecked],
// [Graph.StrChecked]) return an *IntStrDigitsError, the plain forms print a
// placeholder "<int of N bits: more than 4300 digits>". The output is
// bounded by 1 MiB plus a linear function of the graph's size, which only
// sub-values shared many times can reach: the checked forms then return
// ErrReprTooLarge, the plain forms end the text with "...".

// Repr returns the repr of node id. It never panics on a malformed graph: an
// id out of range renders as "<invalid node>". It never fails either: an
// int past CPython's digit limit renders as a placeholder and a rendering
// past its size bound is cut short (see [Graph.ReprChecked] for the forms
// that report both).
func (g *Graph) Repr(id NodeID) string { return ownedString(AppendRepr(nil, g, id)) }

// Str returns what str() returns for node id: the text of a str, the path of
// a pathlib.Path, the message of an exception, the ISO forms of dates and
// times and the str forms of timedelta and timezone; the repr for
// everything else (containers always show their items' reprs). Like Repr it
// never fails.
func (g *Graph) Str(id NodeID) string { return ownedString(AppendStr(nil, g, id)) }

// ownedString returns b as a string without copying it: b must be a buffer
// nothing else refers to or will modify.
func ownedString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// ReprChecked returns the repr of node id, or the error CPython's repr()
// would raise: an *IntStrDigitsError when an int in the value has more than
// [MaxIntStrDigits] decimal digits (checked from the bit length before any
// conversion, so a hostile billion-bit int fails at once). It returns
// ErrReprTooLarge when the text outgrows its bound (1 MiB plus a linear
// function of the graph's size), which only a graph whose sub-values are
// shared many times can make it do. The work is linear in the graph's
// size.
func (g *Graph) ReprChecked(id NodeID) (string, error) {
	g, id = g.Unpacked(id)
	r := reprState{g: g, checked: true}
	r.render(id)
	if r.err != nil {
		return "", r.err
	}
	return ownedString(r.buf), nil
}

// StrChecked is [Graph.Str] with the errors of [Graph.ReprChecked].
func (g *Graph) StrChecked(id NodeID) (string, error) {
	b, err := appendStr(nil, g, id, true)
	if err != nil {
		return "", err
	}
	return ownedString(b), nil
}

// AppendRepr appends the repr of node id of g to dst and returns the
// extended buffer. Like [Graph.Repr] it never fails.
func AppendRepr(dst []byte, g *Graph, id NodeID) []byte {
	g, id = g.Unpacked(id)
	r := reprState{g: g, buf: dst, start: len(dst)}
	r.render(id)
	return r.buf
}

// AppendStr appends the str() of node id of g to dst and returns the
// extended buffer. See [Graph.Str].
func AppendStr(dst []byte, g *Graph, id NodeID) []byte {
	b, _ := appendStr(dst, g, id, false)
	return b
}

func appendStr(dst []byte, g *Graph, id NodeID, checked bool) ([]byte, error) {
	g, id = g.Unpacked(id)
	if int(id) >= len(g.Nodes) {
		return append(dst, invalidNode...), nil
	}
	n := &g.Nodes[id]
	switch n.Kind {
	case KindStr, KindRepr, KindCycle:
		return append(dst, n.Text()...), nil
	case KindPath:
		return append(dst, posixPathString(n.Text())...), nil
	case KindException:
		e, ok := n.Ext().(*Exception)
		if !ok {
			break
		}
		if e.Arg == nil {
			return dst, nil
		}
		if e.Type == "KeyError" {
			// KeyError.__str__ shows the repr of its single argument.
			return appendStrRepr(dst, *e.Arg), nil
		}
		return append(dst, *e.Arg...), nil
	case KindDate:
		if d, ok := n.Ext().(*Date); ok {
			return appendISODate(dst, d.Year, d.Month, d.Day), nil
		}
	case KindTime:
		if t, ok := n.Ext().(*Time); ok {
			dst = appendISOClock(dst, t.Hour, t.Minute, t.Second, t.Microsecond)
			if t.Offset != nil {
				dst = appendUTCOffset(dst, *t.Offset)
			}
			return dst, nil
		}
	case KindDateTime:
		if d, ok := n.Ext().(*DateTime); ok {
			dst = appendISODate(dst, d.Year, d.Month, d.Day)
			dst = append(dst, ' ')
			dst = appendISOClock(dst, d.Hour, d.Minute, d.Second, d.Microsecond)
			if d.Offset != nil {
				dst = appendUTCOffset(dst, *d.Offset)
			}
			return dst, nil
		}
	case KindTimeDelta:
		if d, ok := n.Ext().(*TimeDelta); ok {
			days, secs, us := normTimeDelta(int64(d.Days), int64(d.Seconds), int64(d.Microseconds))
			return appendTimeDeltaStr(dst, days, secs, us), nil
		}
	case KindTimeZone:
		if z, ok := n.Ext().(*TimeZone); ok {
			return appendTimeZoneStr(dst, z.Offset, z.Name), nil
		}
	}
	r := reprState{g: g, buf: dst, start: len(dst), checked: checked}
	r.render(id)
	return r.buf, r.err
}

// StrRepr returns the repr of a Python str holding s, quoted and escaped the
// way CPython does it.
func StrRepr(s string) string { return string(appendStrRepr(nil, s)) }

// BytesRepr returns the repr of a Python bytes object holding b.
func BytesRepr(b []byte) string { return string(appendBytesRepr(nil, b)) }

// FloatRepr returns the repr of a Python float: the shortest digits that
// round-trip, in positional notation when the decimal exponent is in
// [-4, 16) and in scientific notation otherwise (1e+16, 1e-05, 1.5e+300),
// plus inf, -inf and nan.
func FloatRepr(f float64) string { return string(appendFloatRepr(nil, f)) }

const invalidNode = "<invalid node>"

type reprFrame struct {
	id NodeID
	i  int // index of the next item to render
}

type reprState struct {
	g     *Graph
	buf   []byte
	stack []reprFrame

	start   int   // len(buf) before rendering
	limit   int64 // bound on the output; reprFloor until the full bound is computed
	bounded bool  // limit includes reprBound
	checked bool  // stop at the first error
	err     error // first *IntStrDigitsError or ErrReprTooLarge
}

// fail records err; it reports whether rendering should stop.
func (r *reprState) fail(err error) bool {
	if r.err == nil {
		r.err = err
	}
	return r.checked
}

// overBound reports whether the output has outgrown its bound, computing
// the graph-dependent part of the bound the first time the floor is
// passed.
func (r *reprState) overBound() bool {
	if int64(len(r.buf)-r.start) <= r.limit {
		return false
	}
	if !r.bounded {
		r.bounded = true
		r.limit += reprBound(r.g)
		return int64(len(r.buf)-r.start) > r.limit
	}
	return true
}

// maxReprPresize bounds the room render reserves up front.
const maxReprPresize = 64 << 20

func (r *reprState) render(root NodeID) {
	if int(root) >= len(r.g.Nodes) {
		r.buf = append(r.buf, invalidNode...)
		return
	}
	r.limit = reprFloor
	if refs := r.g.Nodes[root].Refs(); cap(r.buf)-len(r.buf) < 8*len(refs) {
		// A container prints at least a separator per item: room for a
		// few digits more each, bounded by the memory the items already
		// take (4 bytes an id), saves the doubling of a large buffer.
		r.buf = slices.Grow(r.buf, min(8*len(refs)+64, maxReprPresize))
	}
	r.visit(root)
	for len(r.stack) > 0 {
		if r.err != nil && r.checked {
			return
		}
		if r.overBound() {
			r.fail(ErrReprTooLarge)
			r.buf = append(r.buf, "..."...)
			return
		}
		top := len(r.stack) - 1
		f := &r.stack[top]
		n := &r.g.Nodes[f.id]
		child, ok, done := r.step(n, f)
		if done {
			r.close(n)
			r.stack = r.stack[:top]
			continue
		}
		if !ok {
			continue
		}
		parent := f.id // f may move when visit grows the stack
		if int(child) >= len(r.g.Nodes) {
			r.buf = append(r.buf, invalidNode...)
		} else if child >= parent {
			// Not a post-order graph: refuse to follow the reference,
			// which could otherwise loop forever.
			r.buf = append(r.buf, "..."...)
		} else {
			r.visit(child)
		}
	}
}

// visit renders a leaf in place, or opens a container and pushes it.
func (r *reprState) visit(id NodeID) {
	n := &r.g.Nodes[id]
	switch n.Kind {
	case KindList:
		r.buf = append(r.buf, '[')
	case KindTuple:
		r.buf = append(r.buf, '(')
	case KindSet:
		if len(n.Refs()) == 0 {
			r.buf = append(r.buf, "set()"...)
			return
		}
		r.buf = append(r.buf, '{')
	case KindFrozenSet:
		if len(n.Refs()) == 0 {
			r.buf = append(r.buf, "frozenset()"...)
			return
		}
		r.buf = append(r.buf, "frozenset({"...)
	case KindDict:
		r.buf = append(r.buf, '{')
	case KindNamedTuple:
		nt, _ := n.Ext().(*NamedTuple)
		if nt != nil {
			r.buf = append(r.buf, nt.TypeName...)
		}
		r.buf = append(r.buf, '(')
	case KindBigInt:
		if b := n.BigInt(); b != nil {
			if err := checkIntDigits(b); err != nil {
				if r.fail(err) {
					return
				}
			}
		}
		r.buf = appendLeafRepr(r.buf, n)
		return
	case KindClassInstance:
		ci, _ := n.Ext().(*ClassInstance)
		if ci == nil {
			r.buf = append(r.buf, "<invalid class_instance>"...)
			return
		}
		name, dataclass := r.className(id, ci)
		if !dataclass {
			r.buf = append(r.buf, '<')
			r.buf = append(r.buf, name...)
			r.buf = append(r.buf, " object>"...)
			return
		}
		r.buf = append(r.buf, name...)
		r.buf = append(r.buf, '(')
	default:
		r.buf = appendLeafRepr(r.buf, n)
		return
	}
	r.stack = append(r.stack, reprFrame{id: id})
}

// className returns the name of an instance's class and whether the
// instance renders with its attributes: a dataclass does, and so does any
// instance of a host class (the sandbox prints those as Name(a=1, ...)).
func (r *reprState) className(id NodeID, ci *ClassInstance) (string, bool) {
	if ci.Class < id {
		if t, ok := r.g.Nodes[ci.Class].Ext().(*Type); ok {
			return t.Name, t.IsDataclass || t.Origin == OriginHost
		}
	}
	return "?", false
}

// step emits the separator before item f.i and returns the node to render
// for it (ok false: the item was emitted in full, or only a separator), or
// done when every item has been rendered.
func (r *reprState) step(n *Node, f *reprFrame) (child NodeID, ok, done bool) {
	i := f.i
	f.i++
	switch n.Kind {
	case KindList, KindTuple, KindSet, KindFrozenSet:
		if i >= len(n.Refs()) {
			return 0, false, true
		}
		if i > 0 {
			r.buf = append(r.buf, ", "...)
		}
		return n.Refs()[i], true, false
	case KindDict:
		if i >= len(n.Refs())&^1 {
			return 0, false, true
		}
		if i > 0 {
			if i%2 == 0 {
				r.buf = append(r.buf, ", "...)
			} else {
				r.buf = append(r.buf, ": "...)
			}
		}
		return n.Refs()[i], true, false
	case KindNamedTuple:
		if i >= len(n.Refs()) {
			return 0, false, true
		}
		if i > 0 {
			r.buf = append(r.buf, ", "...)
		}
		if nt, _ := n.Ext().(*NamedTuple); nt != nil && i < len(nt.FieldNames) {
			r.buf = append(r.buf, nt.FieldNames[i]...)
			r.buf = append(r.buf, '=')
		}
		return n.Refs()[i], true, false
	case KindClassInstance:
		ci := n.Ext().(*ClassInstance)
		if i >= 2*len(ci.Attrs) {
			return 0, false, true
		}
		p := ci.Attrs[i/2]
		if i%2 == 1 {
			r.buf = append(r.buf, '=')
			return p.Value, true, false
		}
		if i > 0 {
			r.buf = append(r.buf, ", "...)
		}
		// Attribute names are str nodes and print bare.
		if int(p.Key) < len(r.g.Nodes) && r.g.Nodes[p.Key].Kind == KindStr {
			r.buf = append(r.buf, r.g.Nodes[p.Key].Text()...)
			return 0, false, false
		}
		return p.Key, true, false
	}
	return 0, false, true
}

func (r *reprState) close(n *Node) {
	switch n.Kind {
	case KindList:
		r.buf = append(r.buf, ']')
	case KindTuple:
		if len(n.Refs()) == 1 {
			r.buf = append(r.buf, ',')
		}
		r.buf = append(r.buf, ')')
	case KindSet, KindDict:
		r.buf = append(r.buf, '}')
	case KindFrozenSet:
		r.buf = append(r.buf, "})"...)
	case KindNamedTuple, KindClassInstance:
		r.buf = append(r.buf, ')')
	}
}

// appendLeafRepr renders a node that has no children to print.
func appendLeafRepr(dst []byte, n *Node) []byte {
	switch n.Kind {
	case KindNone:
		return append(dst, "None"...)
	case KindEllipsis:
		return append(dst, "Ellipsis"...)
	case KindNotImplemented:
		return append(dst, "NotImplemented"...)
	case KindBool:
		if n.Num != 0 {
			return append(dst, "True"...)
		}
		return append(dst, "False"...)
	case KindInt:
		return strconv.AppendInt(dst, n.Int(), 10)
	case KindBigInt:
		if b := n.BigInt(); b != nil {
			if checkIntDigits(b) != nil {
				return appendBigIntPlaceholder(dst, b.BitLen())
			}
			return b.Append(dst, 10)
		}
	case KindFloat:
		return appendFloatRepr(dst, n.Float())
	case KindStr:
		return appendStrRepr(dst, n.Text())
	case KindBytes:
		if b := n.Bytes(); b != nil {
			return appendBytesRepr(dst, b)
		}
	case KindDate:
		if d, ok := n.Ext().(*Date); ok {
			dst = append(dst, "datetime.date("...)
			dst = appendInts(dst, int64(d.Year), int64(d.Month), int64(d.Day))
			return append(dst, ')')
		}
	case KindTime:
		if t, ok := n.Ext().(*Time); ok {
			dst = append(dst, "datetime.time("...)
			switch {
			case t.Microsecond != 0:
				dst = appendInts(dst, int64(t.Hour), int64(t.Minute), int64(t.Second), int64(t.Microsecond))
			case t.Second != 0:
				dst = appendInts(dst, int64(t.Hour), int64(t.Minute), int64(t.Second))
			default:
				dst = appendInts(dst, int64(t.Hour), int64(t.Minute))
			}
			if t.Offset != nil {
				dst = append(dst, ", tzinfo="...)
				dst = appendTimeZoneRepr(dst, *t.Offset, t.TZName)
			}
			if t.Fold != 0 {
				dst = append(dst, ", fold="...)
				dst = strconv.AppendUint(dst, uint64(t.Fold), 10)
			}
			return append(dst, ')')
		}
	case KindDateTime:
		if d, ok := n.Ext().(*DateTime); ok {
			dst = append(dst, "datetime.datetime("...)
			dst = appendInts(dst, int64(d.Year), int64(d.Month), int64(d.Day), int64(d.Hour), int64(d.Minute))
			if d.Second != 0 || d.Microsecond != 0 {
				dst = append(dst, ", "...)
				dst = strconv.AppendUint(dst, uint64(d.Second), 10)
			}
			if d.Microsecond != 0 {
				dst = append(dst, ", "...)
				dst = strconv.AppendUint(dst, uint64(d.Microsecond), 10)
			}
			if d.Offset != nil {
				dst = append(dst, ", tzinfo="...)
				dst = appendTimeZoneRepr(dst, *d.Offset, d.TZName)
			}
			return append(dst, ')')
		}
	case KindTimeDelta:
		if d, ok := n.Ext().(*TimeDelta); ok {
			days, secs, us := normTimeDelta(int64(d.Days), int64(d.Seconds), int64(d.Microseconds))
			return appendTimeDeltaRepr(dst, days, secs, us)
		}
	case KindTimeZone:
		if z, ok := n.Ext().(*TimeZone); ok {
			return appendTimeZoneRepr(dst, z.Offset, z.Name)
		}
	case KindException:
		if e, ok := n.Ext().(*Exception); ok {
			// BaseException.__repr__ uses the bare class name, without
			// the module: JSONDecodeError(...), not json.JSONDecodeError(...).
			name := e.Type
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				name = name[i+1:]
			}
			dst = append(dst, name...)
			dst = append(dst, '(')
			if e.Arg != nil {
				dst = appendStrRepr(dst, *e.Arg)
			}
			return append(dst, ')')
		}
	case KindType:
		if t, ok := n.Ext().(*Type); ok {
			name := t.Name
			if t.Origin == OriginBuiltin {
				name = builtinTypeQualName(name)
			}
			return appendClassRepr(dst, name)
		}
	case KindFunction:
		if f, ok := n.Ext().(*Function); ok {
			dst = append(dst, "<function "...)
			dst = append(dst, f.Name...)
			return append(dst, '>')
		}
	case KindBuiltinFunction:
		if n.Text() == "object.__setattr__" {
			return append(dst, "<slot wrapper '__setattr__' of 'object' objects>"...)
		}
		if builtinClasses[n.Text()] {
			return appendClassRepr(dst, n.Text())
		}
		dst = append(dst, "<built-in function "...)
		dst = append(dst, n.Text()...)
		return append(dst, '>')
	case KindPath:
		dst = append(dst, "PosixPath("...)
		dst = appendStrRepr(dst, posixPathString(n.Text()))
		return append(dst, ')')
	case KindFileHandle:
		if f, ok := n.Ext().(*FileHandle); ok {
			return appendFileRepr(dst, f)
		}
	case KindRepr, KindCycle:
		return append(dst, n.Text()...)
	}
	dst = append(dst, "<invalid "...)
	dst = append(dst, n.Kind.String()...)
	return append(dst, '>')
}

func appendInts(dst []byte, vs ...int64) []byte {
	for i, v := range vs {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = strconv.AppendInt(dst, v, 10)
	}
	return dst
}

func appendClassRepr(dst []byte, name string) []byte {
	dst = append(dst, "<class '"...)
	dst = append(dst, name...)
	return append(dst, "'>"...)
}

// builtinTypeQualName maps the worker's name of a builtin type to the
// qualified name CPython's type repr shows (module.qualname, module omitted
// for builtins).
func builtinTypeQualName(name string) string {
	switch name {
	case "json.JSONDecodeError":
		return "json.decoder.JSONDecodeError"
	case "PosixPath": // the worker's name for pathlib.Path
		return "pathlib.PosixPath"
	case "FrozenInstanceError", "Field", "_DataclassParams":
		return "dataclasses." + name
	}
	return name
}

// builtinClasses are builtins that are classes in CPython, so their repr is
// "<class 'zip'>", even though the worker sends them as builtin functions
// (it does so for enumerate, filter, map, reversed, type and zip).
var builtinClasses = map[string]bool{
	"bool": true, "bytearray": true, "bytes": true, "classmethod": true,
	"complex": true, "dict": true, "enumerate": true, "filter": true,
	"float": true, "frozenset": true, "int": true, "list": true, "map": true,
	"memoryview": true, "object": true, "property": true, "range": true,
	"reversed": true, "set": true, "slice": true, "staticmethod": true,
	"str": true, "super": true, "tuple": true, "type": true, "zip": true,
}

func appendFileRepr(dst []byte, f *FileHandle) []byte {
	mode, err := NormalizeFileMode(f.Mode)
	if err != nil {
		mode = f.Mode
	}
	switch mode {
	case "rb":
		dst = append(dst, "<_io.BufferedReader name="...)
		dst = appendStrRepr(dst, f.Path)
		return append(dst, '>')
	case "wb", "ab":
		dst = append(dst, "<_io.BufferedWriter name="...)
		dst = appendStrRepr(dst, f.Path)
		return append(dst, '>')
	}
	dst = append(dst, "<_io.TextIOWrapper name="...)
	dst = appendStrRepr(dst, f.Path)
	dst = append(dst, " mode="...)
	dst = appendStrRepr(dst, mode)
	return append(dst, " encoding='utf-8'>"...)
}

// posixPathString returns str(pathlib.PurePosixPath(p)): repeated slashes
// and "." components dropped, no trailing slash, "." for an empty path. Two
// leading slashes (exactly two) are kept, as POSIX allows them a meaning.
func posixPathString(p string) string {
	if p == "" {
		return "."
	}
	root := ""
	rel := p
	if p[0] == '/' {
		if len(p) >= 2 && p[1] == '/' && (len(p) == 2 || p[2] != '/') {
			root, rel = "//", p[2:]
		} else {
			root, rel = "/", p[1:]
		}
	}
	// Fast path: already normal.
	if !strings.Contains(rel, "//") && rel != "." && !strings.HasPrefix(rel, "./") &&
		!strings.HasSuffix(rel, "/.") && !strings.Contains(rel, "/./") &&
		!strings.HasSuffix(rel, "/") && !strings.HasPrefix(rel, "/") {
		if s := root + rel; s != "" {
			return s
		}
		return "."
	}
	var b strings.Builder
	b.WriteString(root)
	first := true
	for part := range strings.SplitSeq(rel, "/") {
		if part == "" || part == "." {
			continue
		}
		if !first {
			b.WriteByte('/')
		}
		first = false
		b.WriteString(part)
	}
	if b.Len() == 0 {
		return "."
	}
	return b.String()
}

// --- floats -----------------------------------------------------------------

func appendFloatRepr(dst []byte, f float64) []byte {
	if a := math.Abs(f); a >= 1e-4 && a < 1e16 {
		// Python prints these without an exponent: strconv's shortest
		// fixed form has the same digits, and a ".0" when integral.
		n := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
		if bytes.IndexByte(dst[n:], '.') < 0 {
			dst = append(dst, ".0"...)
		}
		return dst
	}
	return appendFloatReprSlow(dst, f)
}

// appendFloatReprSlow is appendFloatRepr for every float: from the
// shortest scientific form, placing the point as Python's repr does.
func appendFloatReprSlow(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	// Shortest round-trip digits in scientific form: [-]d[.ddd]e±XX.
	var tmp [32]byte
	s := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	if s[0] == '-' {
		dst = append(dst, '-')
		s = s[1:]
	}
	e := 0
	mant := s
	if k := bytes.IndexByte(s, 'e'); k >= 0 {
		mant = s[:k]
		e, _ = strconv.Atoi(string(s[k+1:]))
	}
	var digits [24]byte
	nd := 0
	for _, c := range mant {
		if c != '.' {
			digits[nd] = c
			nd++
		}
	}
	ds := digits[:nd]
	// decpt is where the decimal point goes: value = 0.ds * 10**decpt.
	decpt := e + 1
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			dst = append(dst, "0."...)
			for range -decpt {
				dst = append(dst, '0')
			}
			dst = append(dst, ds...)
		case decpt >= nd:
			dst = append(dst, ds...)
			for range decpt - nd {
				dst = append(dst, '0')
			}
			dst = append(dst, ".0"...)
		default:
			dst = append(dst, ds[:decpt]...)
			dst = append(dst, '.')
			dst = append(dst, ds[decpt:]...)
		}
		return dst
	}
	dst = append(dst, ds[0])
	if nd > 1 {
		dst = append(dst, '.')
		dst = append(dst, ds[1:]...)
	}
	dst = append(dst, 'e')
	if e < 0 {
		dst = append(dst, '-')
		e = -e
	} else {
		dst = append(dst, '+')
	}
	if e < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendInt(dst, int64(e), 10)
}

// --- str and bytes ----------------------------------------------------------

const hexDigits = "0123456789abcdef"

func appendStrRepr(dst []byte, s string) []byte {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	dst = append(dst, quote)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = appendASCIIEscaped(dst, c, quote)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\udc`...)
			dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
			i++
			continue
		}
		// str.isprintable: everything but categories C* and Z* (except the
		// ASCII space) is printable, at the worker's Unicode edition, which
		// is newer than Go's (pyPrintable, read from the worker).
		if unicode.Is(pyPrintable, r) {
			dst = append(dst, s[i:i+size]...)
		} else {
			dst = appendUnicodeEscape(dst, r)
		}
		i += size
	}
	return append(dst, quote)
}

func appendASCIIEscaped(dst []byte, c, quote byte) []byte {
	switch {
	case c == quote || c == '\\':
		return append(dst, '\\', c)
	case c == '\t':
		return append(dst, `\t`...)
	case c == '\n':
		return append(dst, `\n`...)
	case c == '\r':
		return append(dst, `\r`...)
	case c < ' ' || c >= 0x7f:
		return append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
	}
	return append(dst, c)
}

func appendUnicodeEscape(dst []byte, r rune) []byte {
	switch {
	case r <= 0xff:
		return append(dst, '\\', 'x', hexDigits[r>>4], hexDigits[r&15])
	case r <= 0xffff:
		return append(dst, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
	}
	dst = append(dst, '\\', 'U')
	for shift := 28; shift >= 0; shift -= 4 {
		dst = append(dst, hexDigits[r>>uint(shift)&15])
	}
	return dst
}

func appendBytesRepr(dst []byte, b []byte) []byte {
	quote := byte('\'')
	hasSingle, hasDouble := false, false
	for _, c := range b {
		hasSingle = hasSingle || c == '\''
		hasDouble = hasDouble || c == '"'
	}
	if hasSingle && !hasDouble {
		quote = '"'
	}
	dst = append(dst, 'b', quote)
	for _, c := range b {
		dst = appendASCIIEscaped(dst, c, quote)
	}
	return append(dst, quote)
}

// --- dates and times --------------------------------------------------------

// normTimeDelta normalizes a duration the way timedelta does:
// 0 <= secs < 86400, 0 <= us < 1e6, with days carrying the sign.
func normTimeDelta(days, secs, us int64) (int64, int64, int64) {
	secs += floorDiv(us, 1_000_000)
	us = floorMod(us, 1_000_000)
	days += floorDiv(secs, 86400)
	secs = floorMod(secs, 86400)
	return days, secs, us
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

func appendTimeDeltaRepr(dst []byte, days, secs, us int64) []byte {
	dst = append(dst, "datetime.timedelta("...)
	if days == 0 && secs == 0 && us == 0 {
		return append(dst, "0)"...)
	}
	sep := false
	field := func(name string, v int64) {
		if v == 0 {
			return
		}
		if sep {
			dst = append(dst, ", "...)
		}
		sep = true
		dst = append(dst, name...)
		dst = strconv.AppendInt(dst, v, 10)
	}
	field("days=", days)
	field("seconds=", secs)
	field("microseconds=", us)
	return append(dst, ')')
}

func appendTimeDeltaStr(dst []byte, days, secs, us int64) []byte {
	if days != 0 {
		dst = strconv.AppendInt(dst, days, 10)
		if days == 1 || days == -1 {
			dst = append(dst, " day, "...)
		} else {
			dst = append(dst, " days, "...)
		}
	}
	dst = strconv.AppendInt(dst, secs/3600, 10)
	dst = append(dst, ':')
	dst = append2(dst, secs/60%60)
	dst = append(dst, ':')
	dst = append2(dst, secs%60)
	if us != 0 {
		dst = append(dst, '.')
		dst = appendPadded(dst, us, 6)
	}
	return dst
}

// appendTimeZoneRepr renders datetime.timezone(timedelta(seconds=off), name);
// an unnamed zero offset is the timezone.utc singleton.
func appendTimeZoneRepr(dst []byte, off int32, name *string) []byte {
	if off == 0 && name == nil {
		return append(dst, "datetime.timezone.utc"...)
	}
	dst = append(dst, "datetime.timezone("...)
	days, secs, _ := normTimeDelta(0, int64(off), 0)
	dst = appendTimeDeltaRepr(dst, days, secs, 0)
	if name != nil {
		dst = append(dst, ", "...)
		dst = appendStrRepr(dst, *name)
	}
	return append(dst, ')')
}

func appendTimeZoneStr(dst []byte, off int32, name *string) []byte {
	if name != nil {
		return append(dst, *name...)
	}
	dst = append(dst, "UTC"...)
	if off == 0 {
		return dst
	}
	return appendUTCOffset(dst, off)
}

// appendUTCOffset renders an offset as isoformat does: +HH:MM, plus :SS when
// the offset has seconds.
func appendUTCOffset(dst []byte, off int32) []byte {
	a := int64(off)
	if a < 0 {
		dst = append(dst, '-')
		a = -a
	} else {
		dst = append(dst, '+')
	}
	dst = append2(dst, a/3600)
	dst = append(dst, ':')
	dst = append2(dst, a/60%60)
	if a%60 != 0 {
		dst = append(dst, ':')
		dst = append2(dst, a%60)
	}
	return dst
}

func appendISODate(dst []byte, y int32, m, d uint32) []byte {
	dst = appendPadded(dst, int64(y), 4)
	dst = append(dst, '-')
	dst = append2(dst, int64(m))
	dst = append(dst, '-')
	return append2(dst, int64(d))
}

func appendISOClock(dst []byte, h, m, s, us uint32) []byte {
	dst = append2(dst, int64(h))
	dst = append(dst, ':')
	dst = append2(dst, int64(m))
	dst = append(dst, ':')
	dst = append2(dst, int64(s))
	if us != 0 {
		dst = append(dst, '.')
		dst = appendPadded(dst, int64(us), 6)
	}
	return dst
}

func append2(dst []byte, v int64) []byte { return appendPadded(dst, v, 2) }

// appendPadded writes v in decimal, zero-padded to width digits (the sign,
// if any, comes first, as with %0*d).
func appendPadded(dst []byte, v int64, width int) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
		width--
	}
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], v, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

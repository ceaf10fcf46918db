package codecv2

import (
	"google.golang.org/protobuf/encoding/protowire"

	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// show renders a value tree in a Python-like notation that keeps the
// distinctions the tests care about (list vs tuple, int vs float, class
// origins, cycle identities). It is test-only and deliberately simple.
func show(g *value.Graph, id value.NodeID) string {
	var b strings.Builder
	render(&b, g, id)
	return b.String()
}

func quote(s string) string {
	plain := true
	for _, r := range s {
		if r == '\'' || r == '\\' || r < 0x20 || r == 0x7f || r == 0xfffd {
			plain = false
			break
		}
	}
	if plain {
		return "'" + s + "'"
	}
	return strconv.QuoteToASCII(s)
}

func renderSeq(b *strings.Builder, g *value.Graph, refs []value.NodeID) {
	for i, r := range refs {
		if i > 0 {
			b.WriteString(", ")
		}
		render(b, g, r)
	}
}

func renderAttrs(b *strings.Builder, g *value.Graph, ps []value.Pair) {
	for i, p := range ps {
		if i > 0 {
			b.WriteString(", ")
		}
		k := &g.Nodes[p.Key]
		if k.Kind == value.KindStr {
			b.WriteString(k.Text())
		} else {
			render(b, g, p.Key)
		}
		b.WriteByte('=')
		render(b, g, p.Value)
	}
}

func optInt(p *int32) string {
	if p == nil {
		return "naive"
	}
	return strconv.Itoa(int(*p))
}

func optStr(p *string) string {
	if p == nil {
		return "-"
	}
	return quote(*p)
}

func render(b *strings.Builder, g *value.Graph, id value.NodeID) {
	n := &g.Nodes[id]
	switch n.Kind {
	case value.KindNone:
		b.WriteString("None")
	case value.KindEllipsis:
		b.WriteString("Ellipsis")
	case value.KindNotImplemented:
		b.WriteString("NotImplemented")
	case value.KindBool:
		if n.Bool() {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case value.KindInt:
		b.WriteString(strconv.FormatInt(n.Int(), 10))
	case value.KindBigInt:
		b.WriteString("big:" + n.BigInt().String())
	case value.KindFloat:
		f := n.Float()
		switch {
		case math.IsInf(f, 1):
			b.WriteString("inf")
		case math.IsInf(f, -1):
			b.WriteString("-inf")
		case math.IsNaN(f):
			b.WriteString("nan")
		default:
			s := strconv.FormatFloat(f, 'g', -1, 64)
			if !strings.ContainsAny(s, ".e") {
				s += ".0"
			}
			b.WriteString(s)
		}
	case value.KindStr:
		b.WriteString(quote(n.Text()))
	case value.KindBytes:
		b.WriteString("b" + quote(string(n.Bytes())))
	case value.KindList:
		b.WriteByte('[')
		renderSeq(b, g, n.Refs())
		b.WriteByte(']')
	case value.KindTuple:
		b.WriteByte('(')
		renderSeq(b, g, n.Refs())
		if len(n.Refs()) == 1 {
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case value.KindSet:
		if len(n.Refs()) == 0 {
			b.WriteString("set()")
			return
		}
		b.WriteByte('{')
		renderSeq(b, g, n.Refs())
		b.WriteByte('}')
	case value.KindFrozenSet:
		b.WriteString("frozenset({")
		renderSeq(b, g, n.Refs())
		b.WriteString("})")
	case value.KindDict:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Refs()); i += 2 {
			if i > 0 {
				b.WriteString(", ")
			}
			render(b, g, n.Refs()[i])
			b.WriteString(": ")
			render(b, g, n.Refs()[i+1])
		}
		b.WriteByte('}')
	case value.KindNamedTuple:
		nt := n.Ext().(*value.NamedTuple)
		b.WriteString(nt.TypeName + "(")
		for i, r := range n.Refs() {
			if i > 0 {
				b.WriteString(", ")
			}
			if i < len(nt.FieldNames) {
				b.WriteString(nt.FieldNames[i] + "=")
			}
			render(b, g, r)
		}
		b.WriteByte(')')
	case value.KindDate:
		d := n.Ext().(*value.Date)
		fmt.Fprintf(b, "date(%d, %d, %d)", d.Year, d.Month, d.Day)
	case value.KindTime:
		t := n.Ext().(*value.Time)
		fmt.Fprintf(b, "time(%d, %d, %d, %d, off=%s, tz=%s, fold=%d)", t.Hour, t.Minute, t.Second, t.Microsecond,
			optInt(t.Offset), optStr(t.TZName), t.Fold)
	case value.KindDateTime:
		t := n.Ext().(*value.DateTime)
		fmt.Fprintf(b, "datetime(%d, %d, %d, %d, %d, %d, %d, off=%s, tz=%s)", t.Year, t.Month, t.Day,
			t.Hour, t.Minute, t.Second, t.Microsecond, optInt(t.Offset), optStr(t.TZName))
	case value.KindTimeDelta:
		t := n.Ext().(*value.TimeDelta)
		fmt.Fprintf(b, "timedelta(%d, %d, %d)", t.Days, t.Seconds, t.Microseconds)
	case value.KindTimeZone:
		z := n.Ext().(*value.TimeZone)
		fmt.Fprintf(b, "timezone(%d, %s)", z.Offset, optStr(z.Name))
	case value.KindException:
		e := n.Ext().(*value.Exception)
		b.WriteString(e.Type + "(")
		if e.Arg != nil {
			b.WriteString(quote(*e.Arg))
		}
		b.WriteByte(')')
	case value.KindType:
		t := n.Ext().(*value.Type)
		switch t.Origin {
		case value.OriginBuiltin:
			fmt.Fprintf(b, "<class '%s'>", t.Name)
		default:
			fmt.Fprintf(b, "<%s class '%s'", t.Origin, t.Name)
			if t.IsDataclass {
				b.WriteString(" dataclass")
			}
			if t.Attrs != nil {
				b.WriteString(" attrs(")
				renderAttrs(b, g, t.Attrs)
				b.WriteByte(')')
			}
			b.WriteByte('>')
		}
	case value.KindClassInstance:
		ci := n.Ext().(*value.ClassInstance)
		t := g.Nodes[ci.Class].Ext().(*value.Type)
		b.WriteString(t.Origin.String() + ":" + t.Name)
		if t.IsDataclass {
			b.WriteString("@dataclass")
		}
		b.WriteByte('(')
		renderAttrs(b, g, ci.Attrs)
		b.WriteByte(')')
	case value.KindFunction:
		fmt.Fprintf(b, "<function %s>", n.Ext().(*value.Function).Name)
	case value.KindBuiltinFunction:
		fmt.Fprintf(b, "<built-in %s>", n.Text())
	case value.KindPath:
		fmt.Fprintf(b, "Path(%s)", quote(n.Text()))
	case value.KindFileHandle:
		f := n.Ext().(*value.FileHandle)
		fmt.Fprintf(b, "<file %s %s %d>", quote(f.Path), f.Mode, f.Position)
	case value.KindRepr:
		fmt.Fprintf(b, "repr<%s>", n.Text())
	case value.KindCycle:
		fmt.Fprintf(b, "cycle#%d<%s>", n.Num, n.Text())
	default:
		fmt.Fprintf(b, "?%d", n.Kind)
	}
}

// sameValue reports whether two value trees are equal, node by node and
// field by field (NaN payloads compared bit for bit).
func sameValue(ga *value.Graph, a value.NodeID, gb *value.Graph, b value.NodeID) error {
	if int(a) >= len(ga.Nodes) || int(b) >= len(gb.Nodes) {
		return fmt.Errorf("root out of range: %d/%d, %d/%d", a, len(ga.Nodes), b, len(gb.Nodes))
	}
	na, nb := &ga.Nodes[a], &gb.Nodes[b]
	if na.Kind != nb.Kind || na.Num != nb.Num || na.Text() != nb.Text() || len(na.Refs()) != len(nb.Refs()) {
		return fmt.Errorf("node %d vs %d: %s %d %q %d vs %s %d %q %d", a, b,
			na.Kind, na.Num, na.Text(), len(na.Refs()), nb.Kind, nb.Num, nb.Text(), len(nb.Refs()))
	}
	for i := range na.Refs() {
		if err := sameValue(ga, na.Refs()[i], gb, nb.Refs()[i]); err != nil {
			return err
		}
	}
	samePairs := func(pa, pb []value.Pair) error {
		if len(pa) != len(pb) || (pa == nil) != (pb == nil) {
			return fmt.Errorf("node %d: attrs %v vs %v", a, pa, pb)
		}
		for i := range pa {
			if err := sameValue(ga, pa[i].Key, gb, pb[i].Key); err != nil {
				return err
			}
			if err := sameValue(ga, pa[i].Value, gb, pb[i].Value); err != nil {
				return err
			}
		}
		return nil
	}
	switch x := na.Ext().(type) {
	case *value.Type:
		y := nb.Ext().(*value.Type)
		if x.Name != y.Name || x.ID != y.ID || x.Origin != y.Origin || x.IsDataclass != y.IsDataclass {
			return fmt.Errorf("node %d: type %+v vs %+v", a, *x, *y)
		}
		return samePairs(x.Attrs, y.Attrs)
	case *value.ClassInstance:
		y := nb.Ext().(*value.ClassInstance)
		if x.InstanceID != y.InstanceID {
			return fmt.Errorf("node %d: instance id differs", a)
		}
		if err := sameValue(ga, x.Class, gb, y.Class); err != nil {
			return err
		}
		return samePairs(x.Attrs, y.Attrs)
	default:
		if !reflect.DeepEqual(na.Ext(), nb.Ext()) {
			return fmt.Errorf("node %d: payload %#v vs %#v", a, na.Ext(), nb.Ext())
		}
	}
	return nil
}

// valueRoots returns the graph of a message body and pointers to every
// root id it holds.
func valueRoots(body any) (*value.Graph, []*value.NodeID) {
	var roots []*value.NodeID
	ext := func(r *message.ExtResult) {
		if r != nil && r.Kind == message.ResultReturn {
			roots = append(roots, &r.Value)
		}
	}
	switch x := body.(type) {
	case *message.Feed:
		for i := range x.Inputs {
			roots = append(roots, &x.Inputs[i].Value)
		}
		return &x.Values, roots
	case *message.ResumeCall:
		ext(x.Result)
		return &x.Values, roots
	case *message.ResumeNameLookup:
		if x.Kind == message.LookupValue {
			roots = append(roots, &x.Value)
		}
		return &x.Values, roots
	case *message.ResumeFutures:
		for i := range x.Results {
			ext(x.Results[i].Result)
		}
		return &x.Values, roots
	case *message.FunctionCall:
		for i := range x.Args {
			roots = append(roots, &x.Args[i])
		}
		for i := range x.Kwargs {
			roots = append(roots, &x.Kwargs[i].Key, &x.Kwargs[i].Value)
		}
		return &x.Values, roots
	case *message.OsCall:
		if x.Op == message.OpGetenv {
			roots = append(roots, &x.Default)
		}
		return &x.Values, roots
	case *message.Complete:
		roots = append(roots, &x.Value)
		return &x.Values, roots
	}
	return nil, nil
}

// sameBody compares two decoded message bodies: value trees structurally,
// everything else field by field. It clears the graphs and roots of both
// while doing so, so pass scratch copies.
func sameBody(a, b any) error {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return fmt.Errorf("body %T vs %T", a, b)
	}
	ga, ra := valueRoots(a)
	gb, rb := valueRoots(b)
	if len(ra) != len(rb) {
		return fmt.Errorf("%d roots vs %d", len(ra), len(rb))
	}
	for i := range ra {
		if err := sameValue(ga, *ra[i], gb, *rb[i]); err != nil {
			return fmt.Errorf("root %d: %w", i, err)
		}
		*ra[i], *rb[i] = 0, 0
	}
	if ga != nil {
		*ga, *gb = value.Graph{}, value.Graph{}
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Errorf("bodies differ:\n%#v\n%#v", a, b)
	}
	return nil
}

func sameRequest(a, b *message.ParentRequest) error {
	if !reflect.DeepEqual(a.TraceParent, b.TraceParent) {
		return fmt.Errorf("trace_parent differs")
	}
	return sameBody(a.Body, b.Body)
}

func sameEvent(a, b *message.ChildEvent) error {
	ma, mb := *a, *b
	ma.Body, mb.Body = nil, nil
	if !reflect.DeepEqual(ma, mb) {
		return fmt.Errorf("event fields differ: %+v vs %+v", ma, mb)
	}
	return sameBody(a.Body, b.Body)
}

// Wire builders for hand-made frames.

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// ld is a length-delimited field.
func ld(num protowire.Number, parts ...[]byte) []byte {
	body := cat(parts...)
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(body)))
	return append(b, body...)
}

// vi is a varint field.
func vi(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

func sf(num protowire.Number, s string) []byte { return ld(num, []byte(s)) }

// Value builders: each returns a MontyObject body.
func oInt(v int64) []byte          { return vi(armInt, protowire.EncodeZigZag(v)) }
func oStr(s string) []byte         { return sf(armStr, s) }
func oNone() []byte                { return ld(armNone) }
func oList(items ...[]byte) []byte { return ld(armList, itemsOf(1, items)...) }
func oDict(kv ...[]byte) []byte {
	var pairs [][]byte
	for i := 0; i+1 < len(kv); i += 2 {
		pairs = append(pairs, ld(1, ld(1, kv[i]), ld(2, kv[i+1])))
	}
	return ld(armDict, pairs...)
}
func oDate(y, m, d uint64) []byte { return ld(armDate, vi(1, y), vi(2, m), vi(3, d)) }

func itemsOf(num protowire.Number, items [][]byte) [][]byte {
	out := make([][]byte, len(items))
	for i, it := range items {
		out[i] = ld(num, it)
	}
	return out
}

// feedWith is a ParentRequest{feed{code, inputs: [v=obj]}}.
func feedWith(obj []byte) []byte {
	return ld(3, sf(1, "v"), ld(2, sf(1, "v"), ld(2, obj)))
}

// nestLists wraps leaf (a MontyObject body, or nil for an empty list at
// the bottom) in n lists, building the bytes from the inside out.
func nestLists(n int, leaf []byte) []byte {
	o := leaf
	if o == nil {
		o = oList()
		n--
	}
	for i := 0; i < n; i++ {
		o = oList(o)
	}
	return o
}

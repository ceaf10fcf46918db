package leaf

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/value"
)

// TestSizesMatchWriters checks every leaf message's Size against what its
// Append writes, and that the bytes parse as well-formed fields, for zero
// values, typical values and the extremes (negative int32s take ten bytes).
func TestSizesMatchWriters(t *testing.T) {
	s := "Europe/Paris"
	off := int32(-3600)
	cases := []struct {
		name string
		size int
		app  func([]byte) []byte
	}{}
	add := func(name string, size int, app func([]byte) []byte) {
		cases = append(cases, struct {
			name string
			size int
			app  func([]byte) []byte
		}{name, size, app})
	}
	for _, d := range []value.Date{{}, {Year: 2024, Month: 2, Day: 29}, {Year: -1, Month: 12, Day: 31}} {
		add("date", DateSize(&d), func(b []byte) []byte { return AppendDate(b, &d) })
	}
	for _, x := range []value.Time{{}, {Hour: 23, Minute: 59, Second: 59, Microsecond: 999999, Offset: &off, TZName: &s, Fold: 1}} {
		add("time", TimeSize(&x), func(b []byte) []byte { return AppendTime(b, &x) })
	}
	for _, x := range []value.DateTime{{}, {Year: 1, Month: 1, Day: 1, Hour: 1, Minute: 1, Second: 1, Microsecond: 1, Offset: &off, TZName: &s}} {
		add("datetime", DateTimeSize(&x), func(b []byte) []byte { return AppendDateTime(b, &x) })
	}
	for _, x := range []value.TimeDelta{{}, {Days: -999999999, Seconds: 86399, Microseconds: -1}} {
		add("timedelta", TimeDeltaSize(&x), func(b []byte) []byte { return AppendTimeDelta(b, &x) })
	}
	for _, x := range []value.TimeZone{{}, {Offset: off, Name: &s}} {
		add("timezone", TimeZoneSize(&x), func(b []byte) []byte { return AppendTimeZone(b, &x) })
	}
	for _, x := range []value.Exception{{}, {Type: "ValueError", Arg: &s}} {
		add("exception", ExceptionSize(&x), func(b []byte) []byte { return AppendException(b, &x) })
	}
	for _, x := range []value.Function{{}, {Name: "f", Docstring: &s}} {
		add("function", FunctionSize(&x), func(b []byte) []byte { return AppendFunction(b, &x) })
	}
	for _, x := range []value.FileHandle{{}, {Path: "/tmp/x", Mode: "r", Position: 1 << 40}} {
		add("filehandle", FileHandleSize(&x), func(b []byte) []byte { return AppendFileHandle(b, &x) })
	}
	for _, c := range cases {
		prefix := []byte{0xAA}
		out := c.app(prefix)
		body := out[len(prefix):]
		if len(body) != c.size {
			t.Errorf("%s: Size %d, Append wrote %d bytes", c.name, c.size, len(body))
		}
		for len(body) > 0 {
			_, wt, n := protowire.ConsumeTag(body)
			if n < 0 {
				t.Fatalf("%s: bad tag in % x", c.name, out)
			}
			m := protowire.ConsumeFieldValue(0, wt, body[n:])
			if m < 0 {
				t.Fatalf("%s: bad field in % x", c.name, out)
			}
			body = body[n+m:]
		}
	}
}

func TestFileModeCanonical(t *testing.T) {
	want, err := value.NormalizeFileMode("rb")
	if err != nil {
		t.Fatal(err)
	}
	if got := FileMode("rb"); got != want {
		t.Errorf("FileMode(rb) = %q, want %q", got, want)
	}
	if got := FileMode("not a mode"); got != "not a mode" {
		t.Errorf("an unnormalisable mode changed: %q", got)
	}
}

// TestNodeBadTextIsValues: NodeBadText is package value's check (the one
// FromGo makes), its fast path for the hot kinds included: for a node of
// every kind with strings, UTF-8 or not, and the kinds without, it names
// what value names, and something exactly when a string is not UTF-8.
func TestNodeBadTextIsValues(t *testing.T) {
	nodes := []value.Node{
		value.None(), value.Bool(true), value.Int(1), value.Float(1), value.Bytes([]byte("a\xffb")),
		value.List(1, 2), value.Tuple(), value.Dict(), value.Set(), value.FrozenSet(),
	}
	clean := len(nodes)
	for _, s := range []string{"ok", "a\xffb"} {
		nodes = append(nodes,
			value.Str(s), value.Node{Kind: value.KindPath}.WithText(s),
			value.Node{Kind: value.KindBuiltinFunction}.WithText(s),
			value.Node{Kind: value.KindRepr}.WithText(s), value.Node{Kind: value.KindCycle}.WithText(s),
			value.NamedTupleNode(s, []string{"x"}), value.NamedTupleNode("t", []string{"x", s}),
			value.TimeNode(value.Time{TZName: &s}), value.DateTimeNode(value.DateTime{Year: 1, Month: 1, Day: 1, TZName: &s}),
			value.TimeZoneNode(value.TimeZone{Name: &s}),
			value.ExceptionNode(value.Exception{Type: s}), value.ExceptionNode(value.Exception{Type: "E", Arg: &s}),
			value.FunctionNode(value.Function{Name: s}), value.FunctionNode(value.Function{Name: "f", Docstring: &s}),
			value.FileHandleNode(value.FileHandle{Path: s, Mode: "r"}),
			value.TypeNode(value.Type{Name: s, Origin: value.OriginBuiltin}),
		)
		if s == "ok" {
			clean = len(nodes)
		}
	}
	for i := range nodes {
		n := &nodes[i]
		want := valuecheck.BadText(n)
		got, isBad := NodeBadText(n)
		if got != want || isBad != (want != "") {
			t.Errorf("node %d (%s): NodeBadText = %q, %v; value says %q", i, n.Kind, got, isBad, want)
		}
		if (i >= clean) != isBad {
			t.Errorf("node %d (%s): NodeBadText = %q, %v", i, n.Kind, got, isBad)
		}
	}
}

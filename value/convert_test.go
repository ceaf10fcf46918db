package value

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

type inner struct {
	X int `monty:"x"`
}

type tagged struct {
	A       int       `monty:"a"`
	B       string    `monty:",omitempty"`
	C       *int      // nil pointer: None
	D       []int     `monty:"d,omitempty"`
	When    time.Time `monty:"when,omitzero"`
	Skip    int       `monty:"-"`
	private int
	inner   // promoted: x
}

type conflict struct {
	Left
	Right
	Name string `monty:"name"` // shallower: wins over the embedded ones
}

type Left struct{ Name, L string }
type Right struct{ Name, R string }

type myByte byte

// point encodes itself as a named tuple.
type point struct{ X, Y int }

func (p point) AppendGraph(g *Graph) (NodeID, error) {
	x, y := g.Add(Int(int64(p.X))), g.Add(Int(int64(p.Y)))
	return g.Add(NamedTupleNode("Point", []string{"x", "y"}, x, y)), nil
}

// celsius decodes itself from an int or a float.
type celsius float64

func (c *celsius) DecodeGraph(g *Graph, id NodeID) error {
	var f float64
	if err := ToGo(g, id, &f); err != nil {
		return err
	}
	*c = celsius(f)
	return nil
}

type failing struct{}

func (failing) AppendGraph(*Graph) (NodeID, error) { return 0, errors.New("nope") }

func reprOf(t *testing.T, v any) string {
	t.Helper()
	g := &Graph{}
	id, err := FromGo(g, v)
	if err != nil {
		t.Fatalf("FromGo(%#v): %v", v, err)
	}
	if err := g.CheckStructure(id); err != nil {
		t.Fatalf("FromGo(%#v) built a bad graph: %v", v, err)
	}
	return g.Repr(id)
}

func TestFromGo(t *testing.T) {
	seven := 7
	id := mustUUID(t, "00112233-4455-6677-8899-aabbccddeeff")
	cest := time.FixedZone("CEST", 7200)
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, "None"},
		{true, "True"},
		{int8(-5), "-5"},
		{uint8(200), "200"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{int64(math.MinInt64), "-9223372036854775808"},
		{new(big.Int).Lsh(big.NewInt(1), 100), "1267650600228229401496703205376"},
		{*big.NewInt(-3), "-3"},
		{(*big.Int)(nil), "None"},
		{float32(1.5), "1.5"},
		{math.Inf(-1), "-inf"},
		{1e16, "1e+16"},
		{"it's", `"it's"`},
		{[]byte("a\x00"), `b'a\x00'`},
		{[]byte(nil), "b''"},
		{[3]byte{'x', 'y', 0xff}, `b'xy\xff'`},
		{[]myByte{'h', 'i'}, "b'hi'"},
		{[2]myByte{'o', 'k'}, "b'ok'"},
		{[]int{1, 2}, "[1, 2]"},
		{[]int(nil), "[]"},
		{[2]string{"a", "b"}, "['a', 'b']"},
		{[]any{nil, 1, "x", []any{}}, "[None, 1, 'x', []]"},
		{TupleValue{1}, "(1,)"},
		{TupleValue(nil), "()"},
		{SetValue{}, "set()"},
		{FrozenSetValue{1}, "frozenset({1})"},
		{map[string]int{"b": 2, "a": 1, "c": 3}, "{'a': 1, 'b': 2, 'c': 3}"},
		{map[int]string{10: "x", -1: "y", 2: "z"}, "{-1: 'y', 2: 'z', 10: 'x'}"},
		{map[any]int{"x": 1, 2: 2, true: 3, 1.5: 4, uint(1): 5}, "{True: 3, 1: 5, 1.5: 4, 2: 2, 'x': 1}"},
		{map[any]any{nil: 1, "a": nil}, "{None: 1, 'a': None}"}, // a nil key is None, first
		{map[string]any(nil), "{}"},
		{map[UUID]int{id: 1}, "{'00112233-4455-6677-8899-aabbccddeeff': 1}"},
		{map[PathValue]time.Duration{"/b": time.Second, "/a": 0}, "{PosixPath('/a'): datetime.timedelta(0), PosixPath('/b'): datetime.timedelta(seconds=1)}"},
		{DictValue{{1, "a"}, {"k", nil}, {TupleValue{1, 2}, 3.0}}, "{1: 'a', 'k': None, (1, 2): 3.0}"},
		{tagged{A: 1, C: &seven, Skip: 3, private: 4, inner: inner{X: 9}}, "{'a': 1, 'C': 7, 'x': 9}"},
		{tagged{B: "b", D: []int{4}, When: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)},
			"{'a': 0, 'B': 'b', 'C': None, 'd': [4], 'when': datetime.datetime(2024, 1, 1, 0, 0, tzinfo=datetime.timezone.utc), 'x': 0}"},
		{conflict{Left{"l", "L"}, Right{"r", "R"}, "top"}, "{'L': 'L', 'R': 'R', 'name': 'top'}"},
		{struct{ Left }{Left{"n", "l"}}, "{'Name': 'n', 'L': 'l'}"},
		{struct {
			Left
			Right
		}{}, "{'L': '', 'R': ''}"}, // Name is ambiguous: dropped
		{struct{ *Left }{}, "{}"}, // nil embedded pointer: its fields are absent
		{&struct{ P point }{point{1, 2}}, "{'P': Point(x=1, y=2)}"},
		{time.Date(2024, 2, 29, 12, 30, 0, 123456789, time.UTC),
			"datetime.datetime(2024, 2, 29, 12, 30, 0, 123456, tzinfo=datetime.timezone.utc)"},
		{time.Date(2024, 7, 1, 8, 0, 5, 0, cest),
			"datetime.datetime(2024, 7, 1, 8, 0, 5, tzinfo=datetime.timezone(datetime.timedelta(seconds=7200), 'CEST'))"},
		{time.Date(2024, 7, 1, 8, 0, 0, 0, time.FixedZone("", -3600)),
			"datetime.datetime(2024, 7, 1, 8, 0, tzinfo=datetime.timezone(datetime.timedelta(days=-1, seconds=82800)))"},
		{time.Date(2024, 7, 1, 8, 0, 0, 0, time.FixedZone("UTC", 0)),
			"datetime.datetime(2024, 7, 1, 8, 0, tzinfo=datetime.timezone.utc)"},
		{-time.Microsecond, "datetime.timedelta(days=-1, seconds=86399, microseconds=999999)"},
		{time.Duration(-999), "datetime.timedelta(0)"},
		{90 * time.Minute, "datetime.timedelta(seconds=5400)"},
		{time.Duration(math.MaxInt64), "datetime.timedelta(days=106751, seconds=85636, microseconds=854775)"},
		{Date{2024, 2, 29}, "datetime.date(2024, 2, 29)"},
		{Time{Hour: 1, Minute: 2, Offset: Ptr[int32](0), Fold: 1}, "datetime.time(1, 2, tzinfo=datetime.timezone.utc, fold=1)"},
		{DateTime{Year: 2024, Month: 1, Day: 2, Hour: 3}, "datetime.datetime(2024, 1, 2, 3, 0)"},
		{TimeDelta{Seconds: 90000}, "datetime.timedelta(days=1, seconds=3600)"},
		{TimeZone{Offset: -3600, Name: Ptr("X")}, "datetime.timezone(datetime.timedelta(days=-1, seconds=82800), 'X')"},
		{Exception{Type: "ValueError", Arg: Ptr("bad")}, "ValueError('bad')"},
		{Function{Name: "fetch"}, "<function fetch>"},
		{FileHandle{Path: "/f", Mode: "br"}, "<_io.BufferedReader name='/f'>"},
		{NamedTupleValue{TypeName: "Point", Fields: []string{"x", "y"}, Values: []any{1, 2}}, "Point(x=1, y=2)"},
		{PathValue("/a//b/"), "PosixPath('/a/b')"},
		{BuiltinFunctionValue("len"), "<built-in function len>"},
		{ReprValue("range(0, 3)"), "range(0, 3)"},
		{CycleValue("[...]"), "[...]"},
		{EllipsisValue, "Ellipsis"},
		{NotImplementedValue, "NotImplemented"},
		{ClassValue{Name: "Widget", ID: id}, "<class 'Widget'>"},
		{ClassValue{Name: "int"}, "<class 'int'>"},
		{ObjectValue{Class: ClassValue{Name: "P", ID: id, IsDataclass: true}, Attrs: []Attr{{"x", 1}, {"y", []int{}}}}, "P(x=1, y=[])"},
		{id, "'00112233-4455-6677-8899-aabbccddeeff'"},
		{point{3, 4}, "Point(x=3, y=4)"},
		{[]point{{1, 1}}, "[Point(x=1, y=1)]"},
		{(*point)(nil), "None"},
	} {
		if got := reprOf(t, tc.in); got != tc.want {
			t.Errorf("FromGo(%#v)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestFromGoSharing(t *testing.T) {
	s := &[]int{1}
	m := map[string]int{"k": 1}
	g := &Graph{}
	root, err := FromGo(g, []any{s, s, m, m})
	if err != nil {
		t.Fatal(err)
	}
	refs := g.Node(root).Refs()
	if refs[0] != refs[1] || refs[2] != refs[3] {
		t.Errorf("shared pointers/maps should share a node: %v", refs)
	}
	if got := g.Repr(root); got != "[[1], [1], {'k': 1}, {'k': 1}]" {
		t.Errorf("repr %s", got)
	}
}

// empty is a zero-size type: Go may give distinct values of it one
// address.
type empty struct{}

// TestFromGoZeroSizeValuesAreNotShared checks that distinct pointers to
// zero-size values, and distinct slices of them, become distinct nodes:
// Go may place them all at one address (new(empty) == new(empty) can
// hold), which made two &empty{} one dict, so Python saw one object
// where Go has two, and a change through one showed through the other.
func TestFromGoZeroSizeValuesAreNotShared(t *testing.T) {
	for _, in := range []any{
		[]any{&empty{}, &empty{}},
		[]any{new([0]int), new([0]int)},
		[]any{make([]empty, 2), make([]empty, 2)},
		[]*empty{{}, {}},
	} {
		g := &Graph{}
		root, err := FromGo(g, in)
		if err != nil {
			t.Fatal(err)
		}
		refs := g.Node(root).Refs()
		if len(refs) != 2 || refs[0] == refs[1] {
			t.Errorf("%T %s: refs %v, want two nodes", in, g.Repr(root), refs)
		}
	}
}

type loop struct{ Next *loop }

func TestFromGoErrors(t *testing.T) {
	l := &loop{}
	l.Next = l
	s := []any{nil}
	s[0] = s
	m := map[string]any{}
	m["m"] = m
	deep := any(1)
	for range MaxConvertDepth + 1 {
		deep = []any{deep}
	}
	for _, tc := range []struct {
		in   any
		want string
	}{
		{make(chan int), "value: cannot convert Go chan int: unsupported type"},
		{func() {}, "value: cannot convert Go func(): unsupported type"},
		{complex(1, 2), "value: cannot convert Go complex128: unsupported type"},
		{map[[2]struct{ A int }]int{{}: 3}, "value: cannot convert Go map[[2]struct { A int }]int to dict: unsupported map key type [2]struct { A int }"},
		{map[any]int{[1]any{struct{}{}}: 3}, "value: cannot convert Go map[interface {}]int to dict: unsupported map key type [1]interface {}"},
		{"\xff", "value: cannot convert Go string to str: invalid UTF-8"},
		{l, "value: cannot convert Go *value.loop at .Next: the value refers to itself (cycle)"},
		{s, "value: cannot convert Go []interface {} at [0]: the value refers to itself (cycle)"},
		{m, `value: cannot convert Go map[string]interface {} at ["m"]: the value refers to itself (cycle)`},
		{time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), "value: cannot convert Go time.Time to datetime: year 0 is outside 1..9999"},
		{TimeDelta{Days: math.MaxInt32, Seconds: 86399}, "value: cannot convert Go value.TimeDelta to timedelta: days 2147483647 is outside -999999999..999999999"},
		{NamedTupleValue{Fields: []string{"a"}}, "value: cannot convert Go value.NamedTupleValue to named_tuple: Fields and Values differ in length"},
		{Exception{Type: "HostError"}, `value: cannot convert Go value.Exception to exception: unknown exception type "HostError"`},
		{Date{2023, 2, 29}, "value: cannot convert Go value.Date to date: invalid value for Date.day: 29 is outside the range 1..=28"},
		{FileHandle{Path: "/f", Mode: "r+"}, `value: cannot convert Go value.FileHandle to file_handle: invalid file mode "r+"`},
		{SpecialValue(9), "value: cannot convert Go value.SpecialValue: unknown SpecialValue 9"},
		{ClassValue{Name: "int", Attrs: []Attr{{"a", 1}}}, "value: cannot convert Go value.ClassValue to type: a builtin type has neither an ID nor attributes"},
		{ObjectValue{Class: ClassValue{Name: "int"}}, "value: cannot convert Go value.ObjectValue to class_instance: the class of an instance must be a sandbox or host class"},
		{struct{ Items []any }{[]any{1, make(chan int)}}, "value: cannot convert Go chan int at .Items[1]: unsupported type"},
		{failing{}, "value: cannot convert Go value.failing: nope"},
		{*time.FixedZone("X", 3600), "value: cannot convert Go time.Location: a time.Location value has no Python counterpart; use a *time.Location or TimeZone"},
		{[]any{time.UTC, *time.UTC}, "value: cannot convert Go time.Location at [1]: a time.Location value has no Python counterpart; use a *time.Location or TimeZone"},
		{deep, "nesting exceeds 10000 levels"},
	} {
		g := &Graph{}
		g.Add(Int(42))
		_, err := FromGo(g, tc.in)
		var ce *ConversionError
		if !errors.As(err, &ce) || !ce.FromGo {
			t.Errorf("FromGo(%T): want a *ConversionError, got %v", tc.in, err)
			continue
		}
		if got := err.Error(); got != tc.want && !(strings.HasPrefix(tc.want, "nesting") && strings.HasSuffix(got, tc.want)) {
			t.Errorf("FromGo(%T)\n got %s\nwant %s", tc.in, got, tc.want)
		}
		if g.Len() != 1 {
			t.Errorf("FromGo(%T) left %d nodes behind after an error", tc.in, g.Len()-1)
		}
	}
}

func TestDeepErrorPath(t *testing.T) {
	deep := any(1)
	for range MaxConvertDepth + 1 {
		deep = []any{deep}
	}
	_, err := FromGo(&Graph{}, deep)
	want := "value: cannot convert Go int at " + strings.Repeat("[0]", 12) + "...(9977 more)..." +
		strings.Repeat("[0]", 12) + ": nesting exceeds 10000 levels"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	// ToGo and ToAny have the same bound.
	g := &Graph{}
	id := g.Add(Int(1))
	for range MaxConvertDepth + 1 {
		id = g.Add(List(id))
	}
	if _, err := ToAny(g, id); err == nil || !strings.HasSuffix(err.Error(), "nesting exceeds 10000 levels") {
		t.Errorf("ToAny: %v", err)
	}
	var dst any
	if err := ToGo(g, id, &dst); err == nil || !strings.HasSuffix(err.Error(), "nesting exceeds 10000 levels") {
		t.Errorf("ToGo: %v", err)
	}
	// A path through maps and struct fields, and through a GraphDecoder
	// that calls ToGo itself.
	_, err = FromGo(&Graph{}, map[string]any{"a": map[int]any{3: []any{1, make(chan int)}}})
	if err == nil || err.Error() != `value: cannot convert Go chan int at ["a"][3][1]: unsupported type` {
		t.Errorf("map path: %v", err)
	}
	g2, root := graphOf(t, map[string]any{"temp": "hot"})
	var tgt target
	err = ToGo(g2, root, &tgt)
	if err == nil || err.Error() != "value: cannot convert str to float64 at .Temp" {
		t.Errorf("decoder path: %v", err)
	}
}

func TestFromGoDeepOK(t *testing.T) {
	deep := any(1)
	for range MaxConvertDepth - 1 {
		deep = []any{deep}
	}
	g := &Graph{}
	id, err := FromGo(g, deep)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ToAny(g, id)
	if err != nil {
		t.Fatal(err)
	}
	for range MaxConvertDepth - 1 {
		v = v.([]any)[0]
	}
	if v != int64(1) {
		t.Fatalf("innermost %v", v)
	}
}

// graphOf builds a graph with FromGo, for the decoding tests.
func graphOf(t *testing.T, v any) (*Graph, NodeID) {
	t.Helper()
	g := &Graph{}
	id, err := FromGo(g, v)
	if err != nil {
		t.Fatal(err)
	}
	return g, id
}

func TestToAny(t *testing.T) {
	id := NewUUID()
	for _, tc := range []struct {
		in   any
		want any
	}{
		{nil, nil},
		{true, true},
		{int8(3), int64(3)},
		{uint64(math.MaxUint64), new(big.Int).SetUint64(math.MaxUint64)},
		{float32(0.5), 0.5},
		{"s", "s"},
		{[]byte{1}, []byte{1}},
		{[]int{1, 2}, []any{int64(1), int64(2)}},
		{TupleValue{"a"}, TupleValue{"a"}},
		{SetValue{1}, SetValue{int64(1)}},
		{FrozenSetValue{}, FrozenSetValue{}},
		{map[string]int{"a": 1}, map[string]any{"a": int64(1)}},
		{map[int]string{2: "b", 1: "a"}, DictValue{{int64(1), "a"}, {int64(2), "b"}}},
		{NamedTupleValue{"P", []string{"x"}, []any{1}}, NamedTupleValue{"P", []string{"x"}, []any{int64(1)}}},
		{Date{2024, 2, 29}, Date{2024, 2, 29}},
		{Time{Hour: 1, Offset: Ptr[int32](60)}, Time{Hour: 1, Offset: Ptr[int32](60)}},
		{DateTime{Year: 2024, Month: 1, Day: 1}, DateTime{Year: 2024, Month: 1, Day: 1}},
		{90 * time.Second, 90 * time.Second},
		{TimeDelta{Days: -1}, -24 * time.Hour},
		{TimeZone{Offset: 60}, TimeZone{Offset: 60}},
		{Exception{Type: "KeyError"}, Exception{Type: "KeyError"}},
		{ClassValue{Name: "W", ID: id, Origin: OriginHost, Attrs: []Attr{{"n", 1}}}, ClassValue{Name: "W", ID: id, Origin: OriginHost, Attrs: []Attr{{"n", int64(1)}}}},
		{ObjectValue{Class: ClassValue{Name: "W", ID: id}, InstanceID: id, Attrs: []Attr{{"a", "b"}}},
			ObjectValue{Class: ClassValue{Name: "W", ID: id, Origin: OriginHost}, InstanceID: id, Attrs: []Attr{{"a", "b"}}}},
		{Function{Name: "f"}, Function{Name: "f"}},
		{BuiltinFunctionValue("len"), BuiltinFunctionValue("len")},
		{PathValue("/p"), PathValue("/p")},
		{FileHandle{Path: "/f", Mode: "w"}, FileHandle{Path: "/f", Mode: "w"}},
		{EllipsisValue, EllipsisValue},
		{NotImplementedValue, NotImplementedValue},
		{ReprValue("r"), ReprValue("r")},
		{CycleValue("..."), CycleValue("...")},
		{id, id.String()},
	} {
		g, root := graphOf(t, tc.in)
		got, err := ToAny(g, root)
		if err != nil {
			t.Errorf("ToAny(%#v): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ToAny(FromGo(%#v))\n got %#v\nwant %#v", tc.in, got, tc.want)
		}
	}
}

func TestToAnyTime(t *testing.T) {
	cest := time.FixedZone("CEST", 7200)
	in := time.Date(2024, 7, 1, 8, 0, 5, 123456000, cest)
	g, id := graphOf(t, in)
	v, err := ToAny(g, id)
	if err != nil {
		t.Fatal(err)
	}
	got := v.(time.Time)
	if !got.Equal(in) {
		t.Errorf("got %v, want %v", got, in)
	}
	if name, off := got.Zone(); name != "CEST" || off != 7200 {
		t.Errorf("zone %s %d", name, off)
	}
	g, id = graphOf(t, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	v, _ = ToAny(g, id)
	if v.(time.Time).Location() != time.UTC {
		t.Errorf("timezone.utc should come back as time.UTC, got %v", v.(time.Time).Location())
	}
}

func TestToAnySharing(t *testing.T) {
	g := &Graph{}
	one := g.Add(Int(1))
	inner := g.Add(List(one))
	root := g.Add(List(inner, inner))
	v, err := ToAny(g, root)
	if err != nil {
		t.Fatal(err)
	}
	l := v.([]any)
	a, b := l[0].([]any), l[1].([]any)
	if &a[0] != &b[0] {
		t.Error("a node referenced twice should give one slice")
	}
}

func TestToAnyErrors(t *testing.T) {
	g := &Graph{}
	big := g.Add(TimeDeltaNode(TimeDelta{Days: 999_999_999}))
	self := g.Add(List(2))
	badAttr := g.Add(TypeNode(Type{Name: "C", ID: NewUUID(), Origin: OriginHost, Attrs: []Pair{{big, big}}}))
	for _, tc := range []struct {
		id   NodeID
		want string
	}{
		{big, "value: cannot convert timedelta to time.Duration: the duration overflows time.Duration"},
		{self, "value: cannot decode into interface {} at [0]: node 2 is not below its parent 1"},
		{badAttr, "value: cannot convert timedelta to interface {}: an attribute name must be a str"},
		{99, "value: cannot decode into interface {}: node 99 is outside the graph"},
	} {
		_, err := ToAny(g, tc.id)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ToAny(%d) = %v, want %s", tc.id, err, tc.want)
		}
	}
}

type target struct {
	Name  string            `monty:"name"`
	Count uint8             `monty:"count"`
	Tags  []string          `monty:"tags"`
	Opt   *int              `monty:"opt"`
	Any   any               `monty:"any"`
	Temp  celsius           `monty:"temp"`
	Meta  map[string]string `monty:"meta"`
	inner
}

func TestToGo(t *testing.T) {
	g := &Graph{}
	str := func(s string) NodeID { return g.Add(Str(s)) }
	dict := g.Add(Dict(
		Pair{str("NAME"), str("widget")}, // case-insensitive match
		Pair{str("count"), g.Add(Int(200))},
		Pair{str("tags"), g.Add(Tuple(str("a"), str("b")))},
		Pair{str("opt"), g.Add(None())},
		Pair{str("any"), g.Add(List(g.Add(Float(1.5))))},
		Pair{str("temp"), g.Add(Int(21))},
		Pair{str("meta"), g.Add(Dict(Pair{str("k"), str("v")}))},
		Pair{str("x"), g.Add(Int(5))},
		Pair{str("unknown"), g.Add(Int(0))},
	))
	var got target
	got.Opt = new(int)
	if err := ToGo(g, dict, &got); err != nil {
		t.Fatal(err)
	}
	want := target{Name: "widget", Count: 200, Tags: []string{"a", "b"}, Any: []any{1.5}, Temp: 21,
		Meta: map[string]string{"k": "v"}, inner: inner{X: 5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}

	// The same fields from a dataclass instance and a named tuple.
	cls := g.Add(TypeNode(Type{Name: "T", ID: NewUUID(), Origin: OriginSandbox, IsDataclass: true}))
	inst := g.Add(ClassInstanceNode(ClassInstance{Class: cls, Attrs: []Pair{{str("name"), str("i")}}}))
	var fromInst target
	if err := ToGo(g, inst, &fromInst); err != nil || fromInst.Name != "i" {
		t.Errorf("instance: %+v %v", fromInst, err)
	}
	nt := g.Add(NamedTupleNode("T", []string{"name", "count"}, str("n"), g.Add(Int(1))))
	var fromNT target
	if err := ToGo(g, nt, &fromNT); err != nil || fromNT.Name != "n" || fromNT.Count != 1 {
		t.Errorf("named tuple: %+v %v", fromNT, err)
	}
	var ntMap map[string]any
	if err := ToGo(g, nt, &ntMap); err != nil || ntMap["count"] != int64(1) {
		t.Errorf("named tuple to map: %v %v", ntMap, err)
	}
}

func TestToGoScalars(t *testing.T) {
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	maxU := new(big.Int).Sub(two64, big.NewInt(1))
	cases := []struct {
		in   any // encoded with FromGo
		dst  any // pointer to a zero destination
		want any // the destination's value afterwards
	}{
		{127, new(int8), int8(127)},
		{maxU, new(uint64), uint64(math.MaxUint64)},
		{maxU, new(*big.Int), maxU},
		{5, new(big.Int), *big.NewInt(5)},
		{5, new(float32), float32(5)},
		{two64, new(float64), 18446744073709551616.0},
		{math.NaN(), new(float64), nil}, // checked below
		{"s", new(string), "s"},
		{PathValue("/p"), new(string), "/p"},
		{[]byte("ab"), new([]byte), []byte("ab")},
		{[]byte("ab"), new([]myByte), []myByte("ab")},
		{[]byte("ab"), new([2]byte), [2]byte{'a', 'b'}},
		{TupleValue{1, 2}, new([2]int), [2]int{1, 2}},
		{SetValue{"x"}, new([]string), []string{"x"}},
		{[]int{1}, new(TupleValue), TupleValue{int64(1)}},
		{map[int]bool{1: true}, new(map[int]bool), map[int]bool{1: true}},
		{map[int]bool{1: true}, new(DictValue), DictValue{{int64(1), true}}},
		{nil, new(*int), (*int)(nil)},
		{nil, new([]int), []int(nil)},
		{nil, new(any), nil},
		{true, new(any), true},
		{time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC), new(time.Time), time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC)},
		{DateTime{Year: 2024, Month: 1, Day: 2, Hour: 3}, new(time.Time), time.Date(2024, 1, 2, 3, 0, 0, 0, time.UTC)},
		{Date{2024, 2, 29}, new(time.Time), time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{Date{2024, 2, 29}, new(Date), Date{2024, 2, 29}},
		{-time.Microsecond, new(time.Duration), -time.Microsecond},
		{-time.Microsecond, new(TimeDelta), TimeDelta{Days: -1, Seconds: 86399, Microseconds: 999999}},
		{TimeZone{}, new(*time.Location), time.UTC},
		{EllipsisValue, new(SpecialValue), EllipsisValue},
		{EllipsisValue, new(fmt.Stringer), EllipsisValue},
		{3.5, new(celsius), celsius(3.5)},
		{"00112233-4455-6677-8899-aabbccddeeff", new(UUID), mustUUID(t, "00112233445566778899aabbccddeeff")},
	}
	for _, tc := range cases {
		g, id := graphOf(t, tc.in)
		if err := ToGo(g, id, tc.dst); err != nil {
			t.Errorf("ToGo(%#v into %T): %v", tc.in, tc.dst, err)
			continue
		}
		got := reflect.ValueOf(tc.dst).Elem().Interface()
		if f, ok := got.(float64); ok && tc.want == nil {
			if !math.IsNaN(f) {
				t.Errorf("NaN came back as %v", f)
			}
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ToGo(%#v into %T) = %#v, want %#v", tc.in, tc.dst, got, tc.want)
		}
	}
	// An aware datetime keeps its zone.
	g, id := graphOf(t, time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("X", -5400)))
	var tm time.Time
	if err := ToGo(g, id, &tm); err != nil {
		t.Fatal(err)
	}
	if name, off := tm.Zone(); name != "X" || off != -5400 || tm.Hour() != 3 {
		t.Errorf("zone %s %d, %v", name, off, tm)
	}
	var loc *time.Location
	g, id = graphOf(t, TimeZone{Offset: 3600, Name: Ptr("CET")})
	if err := ToGo(g, id, &loc); err != nil || loc.String() != "CET" {
		t.Errorf("location %v %v", loc, err)
	}
}

func TestToGoErrors(t *testing.T) {
	g := &Graph{}
	two63 := new(big.Int).Lsh(big.NewInt(1), 63)
	cases := []struct {
		in   any
		dst  any
		want string
	}{
		{"x", new(int), "value: cannot convert str to int"},
		{300, new(int8), "value: cannot convert int to int8: 300 is out of range"},
		{-1, new(uint), "value: cannot convert int to uint: -1 is out of range"},
		{256, new(uint8), "value: cannot convert int to uint8: 256 is out of range"},
		{two63, new(int64), "value: cannot convert bigint to int64: the value is out of range"},
		{new(big.Int).Lsh(big.NewInt(1), 64), new(uint64), "value: cannot convert bigint to uint64: the value is out of range"},
		{new(big.Int).Lsh(big.NewInt(1), 1100), new(float64), "value: cannot convert bigint to float64: the value is out of range"},
		{1e300, new(float32), "value: cannot convert float to float32: 1e+300 is out of range"},
		{1.5, new(int), "value: cannot convert float to int"},
		{1, new(bool), "value: cannot convert int to bool"},
		{1, new(string), "value: cannot convert int to string"},
		{"x", new([]byte), "value: cannot convert str to []uint8"},
		{[]byte("abc"), new([2]byte), "value: cannot convert bytes to [2]uint8: 3 bytes do not fit an array of 2"},
		{[]int{1, 2, 3}, new([2]int), "value: cannot convert list to [2]int: 3 items do not fit an array of 2"},
		{[]any{1, "x"}, new([]int), "value: cannot convert str to int at [1]"},
		{nil, new(int), "value: cannot convert none to int"},
		{nil, new(struct{}), "value: cannot convert none to struct {}"},
		{map[string]any{"count": "x"}, new(target), `value: cannot convert str to uint8 at .Count`},
		{map[int]int{1: 2}, new(target), "value: cannot convert int to value.target: a struct field name must be a str"},
		{map[string]int{"a": 1}, new(map[int]int), "value: cannot convert str to int at [key]"},
		{TimeDelta{Days: 999_999_999}, new(time.Duration), "value: cannot convert timedelta to time.Duration: the duration overflows time.Duration"},
		{1, new(time.Duration), "value: cannot convert int to time.Duration"},
		{1, new(time.Time), "value: cannot convert int to time.Time"},
		{"not-a-uuid", new(UUID), "value: cannot convert str to value.UUID: not a UUID"},
		{1, new(Date), "value: cannot convert int to value.Date"},
		{1, new(chan int), "value: cannot convert int to chan int: unsupported destination type"},
		{1, new(error), "value: cannot convert int to error: the value does not implement the interface"},
		{1, new(time.Location), "value: cannot convert int to time.Location: decode a timezone into a *time.Location"},
	}
	for _, tc := range cases {
		g2, id := graphOf(t, tc.in)
		err := ToGo(g2, id, tc.dst)
		var ce *ConversionError
		if !errors.As(err, &ce) || ce.FromGo {
			t.Errorf("ToGo(%#v into %T): want a *ConversionError, got %v", tc.in, tc.dst, err)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("ToGo(%#v into %T)\n got %s\nwant %s", tc.in, tc.dst, err, tc.want)
		}
	}
	g.Add(Int(1))
	var i int
	for _, tc := range []struct {
		dst  any
		want string
	}{
		{i, "value: cannot decode into int: the destination must be a non-nil pointer"},
		{nil, "value: cannot decode into Go value: the destination must be a non-nil pointer"},
		{(*int)(nil), "value: cannot decode into *int: the destination must be a non-nil pointer"},
	} {
		if err := ToGo(g, 0, tc.dst); err == nil || err.Error() != tc.want {
			t.Errorf("ToGo(%#v) = %v, want %s", tc.dst, err, tc.want)
		}
	}
	if err := ToGo(g, 5, &i); err == nil || err.Error() != "value: cannot decode into int: node 5 is outside the graph" {
		t.Errorf("out of range: %v", err)
	}
}

type roundTrip struct {
	ID      UUID              `monty:"id"`
	Name    string            `monty:"name"`
	Big     *big.Int          `monty:"big"`
	When    time.Time         `monty:"when"`
	Timeout time.Duration     `monty:"timeout"`
	Day     Date              `monty:"day"`
	Scores  map[string]uint16 `monty:"scores"`
	Matrix  [][]float64       `monty:"matrix"`
	Blob    []byte            `monty:"blob"`
	Hash    [4]byte           `monty:"hash"`
	Next    *roundTrip        `monty:"next"`
	Extra   any               `monty:"extra"`
	Path    PathValue         `monty:"path"`
}

func TestRoundTrip(t *testing.T) {
	in := roundTrip{
		ID:      NewUUID(),
		Name:    "名前 😀",
		Big:     new(big.Int).Exp(big.NewInt(7), big.NewInt(40), nil),
		When:    time.Date(2024, 2, 29, 23, 59, 59, 999999000, time.FixedZone("X", 3600)),
		Timeout: 1500 * time.Millisecond,
		Day:     Date{1, 1, 1},
		Scores:  map[string]uint16{"a": 1, "b": 65535},
		Matrix:  [][]float64{{1, 2.5}, {}, {math.Inf(1)}},
		Blob:    []byte{0, 1, 2},
		Hash:    [4]byte{9, 8, 7, 6},
		Next:    &roundTrip{Name: "child", Day: Date{2000, 1, 1}, Scores: map[string]uint16{}, Matrix: [][]float64{}, Blob: []byte{}},
		Extra:   map[string]any{"k": []any{int64(1), "two", nil}},
		Path:    "/tmp/x",
	}
	g, id := graphOf(t, in)
	if err := g.Check(id); err != nil {
		t.Fatalf("graph does not validate: %v", err)
	}
	var out roundTrip
	if err := ToGo(g, id, &out); err != nil {
		t.Fatal(err)
	}
	if !out.When.Equal(in.When) {
		t.Errorf("When %v != %v", out.When, in.When)
	}
	out.When, in.When = time.Time{}, time.Time{}
	// The child's zero time.Time is year 1 UTC and comes back as such.
	out.Next.When, in.Next.When = time.Time{}, time.Time{}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("round trip\n got %+v\nwant %+v", out, in)
	}
}

func TestExampleErrorText(t *testing.T) {
	g, id := graphOf(t, "x")
	var n int
	err := ToGo(g, id, &n)
	if err == nil || err.Error() != "value: cannot convert str to int" {
		t.Fatalf("got %v", err)
	}
}

func BenchmarkFromGoStruct(b *testing.B) {
	v := roundTrip{Name: "n", Day: Date{2024, 1, 1}, Scores: map[string]uint16{"a": 1, "b": 2}, Matrix: [][]float64{{1, 2}, {3}}}
	g := &Graph{}
	b.ReportAllocs()
	for b.Loop() {
		g.Reset()
		if _, err := FromGo(g, v); err != nil {
			b.Fatal(err)
		}
	}
}

// jsonTagged is a type written for encoding/json: its json tags name the
// keys Python sees, unless a monty tag overrides them.
type jsonTagged struct {
	Name    string   `json:"name"`
	Price   float64  `json:"price,omitempty"`
	Tags    []string `json:"tags,omitzero"`
	Secret  string   `json:"-"`
	Own     int      `json:"own_json" monty:"own"`
	Plain   int      `json:",omitempty"`
	GoName  int      `json:"go_name" monty:""`
	Dropped int      `json:"dropped" monty:"-"`
}

func TestJSONTagsNameFields(t *testing.T) {
	v := jsonTagged{Name: "apple", Secret: "s", Own: 2, GoName: 3, Dropped: 4}
	var g Graph
	id, err := FromGo(&g, v)
	if err != nil {
		t.Fatal(err)
	}
	const want = "{'name': 'apple', 'own': 2, 'GoName': 3}"
	if got := g.Repr(id); got != want {
		t.Fatalf("FromGo: %s, want %s", got, want)
	}
	// The same keys read back, and the JSON text encoding/json writes
	// converts to the same struct.
	var back jsonTagged
	if err := ToGo(&g, id, &back); err != nil {
		t.Fatal(err)
	}
	v.Secret, v.Dropped = "", 0
	if !reflect.DeepEqual(back, v) {
		t.Fatalf("ToGo: %+v, want %+v", back, v)
	}
	full := jsonTagged{Name: "pear", Price: 0.5, Tags: []string{"x"}, Plain: 7}
	text, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	var jg Graph
	jid, err := FromJSON(&jg, text)
	if err != nil {
		t.Fatal(err)
	}
	var fromJSON jsonTagged
	if err := ToGo(&jg, jid, &fromJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromJSON, full) {
		t.Fatalf("from %s: %+v, want %+v", text, fromJSON, full)
	}
	names := []string{}
	for _, f := range StructFields(reflect.TypeFor[jsonTagged]()) {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); got != "name price tags own Plain GoName" {
		t.Fatalf("StructFields: %s", got)
	}
}

// A NaN map key is a key like any other: its entry's value converts.
// (MapIndex cannot find a NaN key, since NaN != NaN; the entry must be
// read while iterating.)
func TestFromGoNaNMapKey(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		in   any
		want string
	}{
		{map[float64]int{nan: 5}, "{nan: 5}"},
		{map[float64]string{nan: "a", 1: "b"}, "{nan: 'a', 1.0: 'b'}"},
		{map[any]any{nan: []int{1}, "k": 2}, "{nan: [1], 'k': 2}"},
		{map[float32]bool{float32(nan): true}, "{nan: True}"},
	} {
		if got := reprOf(t, tc.in); got != tc.want {
			t.Errorf("FromGo(%v)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
	// Two NaN keys are two entries.
	g := &Graph{}
	id, err := FromGo(g, map[float64]int{nan: 7, math.NaN(): 7})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Repr(id); got != "{nan: 7, nan: 7}" {
		t.Errorf("two NaN keys: got %s", got)
	}
	// NaNs of different types keep their values, in type order.
	for range 20 {
		if got := reprOf(t, map[any]int{nan: 2, float32(nan): 1}); got != "{nan: 1, nan: 2}" {
			t.Fatalf("float32 and float64 NaN keys: got %s", got)
		}
	}
}

// Several NaN keys of one type are equal in key order, so their entries
// came in Go's random iteration order: the dict's order changed from one
// call to the next. They now order by their values' repr.
func TestFromGoNaNKeysOrderDeterministically(t *testing.T) {
	m := map[float64]any{1: "one"}
	for i := range 6 {
		m[math.NaN()] = i
	}
	m[math.NaN()] = []string{"a"}
	m[math.Float64frombits(0x7ff8000000000001)] = "payload"
	const want = "{nan: 'payload', nan: 0, nan: 1, nan: 2, nan: 3, nan: 4, nan: 5, nan: ['a'], 1.0: 'one'}"
	for range 50 {
		if got := reprOf(t, m); got != want {
			t.Fatalf("FromGo(%v)\n got %s\nwant %s", m, got, want)
		}
	}
}

// Keys of different Go types that are equal numbers (1, 1.0, uint8(1))
// are distinct Go map keys but one Python key: their order, and so which
// value the dict keeps in Python, must not depend on Go's random map
// iteration. Equal numbers order by Go type name.
func TestFromGoEqualKeysOfMixedTypesOrderDeterministically(t *testing.T) {
	m := map[any]string{1: "int", 1.0: "float", uint8(1): "u8", int8(1): "i8", 2: "two", 0.0: "zero", uint(0): "uzero"}
	const want = "{0.0: 'zero', 0: 'uzero', 1.0: 'float', 1: 'int', 1: 'i8', 1: 'u8', 2: 'two'}"
	for range 50 {
		if got := reprOf(t, m); got != want {
			t.Fatalf("FromGo(%v)\n got %s\nwant %s", m, got, want)
		}
	}
}

// ptrZero reports zero through a pointer-receiver IsZero.
type ptrZero struct{ N int }

func (z *ptrZero) IsZero() bool { return z.N == 7 }

// zeroer is an interface type that has IsZero.
type zeroer interface{ IsZero() bool }

type omitZeroes struct {
	PZ    ptrZero    `json:"pz,omitzero"`    // *ptrZero has IsZero: called, boxed when unaddressable
	PZP   *ptrZero   `json:"pzp,omitzero"`   // nil: omitted; else IsZero
	TP    *time.Time `json:"tp,omitzero"`    // nil *time.Time: omitted, IsZero not called on nil
	AnyT  any        `json:"any_t,omitzero"` // any has no IsZero: omitted only when nil
	IfZ   zeroer     `json:"if_z,omitzero"`  // an interface with IsZero: nil, a nil pointer, or IsZero
	IfNil zeroer     `json:"if_nil,omitzero"`
	T     time.Time  `json:"t,omitzero"`
}

// TestOmitZeroAsEncodingJSON checks that omitzero skips exactly the fields
// encoding/json skips: IsZero is looked up on the field's type (a
// pointer-receiver IsZero included), not on the dynamic value of an
// interface field.
func TestOmitZeroAsEncodingJSON(t *testing.T) {
	for _, v := range []omitZeroes{
		{PZ: ptrZero{7}, PZP: &ptrZero{7}, AnyT: time.Time{}, IfZ: (*ptrZero)(nil), IfNil: nil},
		{PZ: ptrZero{1}, PZP: &ptrZero{1}, TP: &time.Time{}, AnyT: 0, IfZ: &ptrZero{7}, T: time.Unix(1, 0)},
		{IfZ: &ptrZero{1}},
	} {
		text, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(text, &m); err != nil {
			t.Fatal(err)
		}
		var want []string
		for k := range m {
			want = append(want, k)
		}
		// By value (unaddressable fields) and through a pointer.
		for _, in := range []any{v, &v} {
			var g Graph
			id, err := FromGo(&g, in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range g.Node(id).Pairs() {
				got = append(got, g.Node(p.Key).Text())
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("FromGo(%T) of %s: keys %v, want encoding/json's %v", in, text, got, want)
			}
		}
	}
}

// decodedInts and decodedFloats are slice types that decode themselves.
type (
	decodedInts   []int
	decodedFloats []float64
)

func (p *decodedInts) DecodeGraph(g *Graph, id NodeID) error {
	*p = decodedInts{42}
	return nil
}

func (p *decodedFloats) DecodeGraph(g *Graph, id NodeID) error {
	*p = decodedFloats{4.2}
	return nil
}

// TestGraphDecoderSliceOfPackedRoot checks that a slice type implementing
// GraphDecoder decodes itself from a packed int or float list at the root,
// as it does from the same list unpacked or nested: ToGo's packed-root fast
// path copied the items in, bypassing DecodeGraph.
func TestGraphDecoderSliceOfPackedRoot(t *testing.T) {
	var g Graph
	ints, err := FromGo(&g, []int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	floats, err := FromGo(&g, []float64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if !g.Nodes[ints].Packed() || !g.Nodes[floats].Packed() {
		t.Fatal("FromGo no longer packs int and float slices: the test needs a packed root")
	}
	var di decodedInts
	if err := ToGo(&g, ints, &di); err != nil || !slices.Equal(di, decodedInts{42}) {
		t.Errorf("packed ints into decodedInts: %v, %v; want [42] from DecodeGraph", di, err)
	}
	var df decodedFloats
	if err := ToGo(&g, floats, &df); err != nil || !slices.Equal(df, decodedFloats{4.2}) {
		t.Errorf("packed floats into decodedFloats: %v, %v; want [4.2] from DecodeGraph", df, err)
	}
}

// TestPackedRootIntoRawMessage checks that a packed int list at the root
// decodes into a json.RawMessage as its JSON text, as the same list
// unpacked or nested does: json.RawMessage is a []byte, so ToGo's
// packed-root fast path stored the items as its bytes ([1, 2] became the
// two bytes 01 02, not the text "[1,2]").
func TestPackedRootIntoRawMessage(t *testing.T) {
	var g Graph
	ints, err := FromGo(&g, []int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	u16, err := FromGo(&g, []uint16{3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if !g.Nodes[ints].Packed() || !g.Nodes[u16].Packed() {
		t.Fatal("FromGo no longer packs int slices: the test needs a packed root")
	}
	for _, tc := range []struct {
		id   NodeID
		want string
	}{{ints, "[1,2]"}, {u16, "[3,4]"}} {
		var raw json.RawMessage
		if err := ToGo(&g, tc.id, &raw); err != nil || string(raw) != tc.want {
			t.Errorf("packed %s into json.RawMessage: %q, %v; want %q", g.Repr(tc.id), raw, err, tc.want)
		}
		ug, uid := g.Unpacked(tc.id)
		var ref json.RawMessage
		if err := ToGo(ug, uid, &ref); err != nil || string(ref) != tc.want {
			t.Errorf("unpacked %s into json.RawMessage: %q, %v; want %q", g.Repr(tc.id), ref, err, tc.want)
		}
	}
}

// badJSONNames is a struct type whose json tag names encoding/json
// refuses (a backslash or a quote, a character that is neither a letter,
// a digit nor allowed punctuation): it marshals those fields under their
// Go names. (Built by reflect: staticcheck flags such tags written out.)
func badJSONNames() reflect.Type {
	intT := reflect.TypeFor[int]()
	return reflect.StructOf([]reflect.StructField{
		{Name: "A", Type: intT, Tag: `json:"a\\b"`},
		{Name: "B", Type: intT, Tag: `json:"a'b,omitempty"`},
		{Name: "C", Type: intT, Tag: `json:"\"q"`},
		{Name: "D", Type: intT, Tag: "json:\"\u00a0\""},
		{Name: "E", Type: intT, Tag: `json:"ü-x y"`},                                                        // valid
		{Name: "F", Type: intT, Tag: `monty:"x\\y"`},                                                        // a monty tag names it as written
		{Name: "JSONEmbedded", Type: reflect.TypeFor[JSONEmbedded](), Tag: `json:"\\bad"`, Anonymous: true}, // promoted, as if untagged
	})
}

// TestInvalidJSONTagNamesAreIgnored checks that a json tag name that
// encoding/json ignores is ignored here too, so Python sees the keys the
// JSON has: FromGo used the refused names as keys.
func TestInvalidJSONTagNamesAreIgnored(t *testing.T) {
	v := reflect.New(badJSONNames()).Elem()
	for i := range 6 {
		v.Field(i).SetInt(int64(i + 1))
	}
	v.Field(6).Field(0).SetInt(7)
	var g Graph
	id, err := FromGo(&g, v.Interface())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	want["x\\y"] = want["F"]
	delete(want, "F")
	var got map[string]any
	if err := ToGo(&g, id, &got); err != nil {
		t.Fatal(err)
	}
	if !maps.EqualFunc(got, want, func(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Fatalf("keys %v, want %v (json.Marshal's, with the monty tag's name)", got, want)
	}
}

// JSONEmbedded is embedded (exported: reflect.StructOf cannot embed an
// unexported type) by badJSONNames.
type JSONEmbedded struct{ G int }

// A big.Float or a big.Rat has no Python counterpart. Both used to
// convert as structs with no exported fields, so Python silently got an
// empty dict (and a dict decoded into one as a no-op); they are refused
// now, the way time.Location is.
func TestBigFloatAndRatRefused(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{big.NewFloat(1.5), "value: cannot convert Go big.Float: a big.Float has no Python counterpart; convert it with its Float64 method"},
		{*big.NewFloat(1.5), "value: cannot convert Go big.Float: a big.Float has no Python counterpart; convert it with its Float64 method"},
		{big.NewRat(1, 3), "value: cannot convert Go big.Rat: a big.Rat has no Python counterpart; convert it with its Float64 method"},
		{struct{ F *big.Float }{big.NewFloat(2)}, "value: cannot convert Go big.Float at .F: a big.Float has no Python counterpart; convert it with its Float64 method"},
		{struct{ R big.Rat }{}, "value: cannot convert Go big.Rat at .R: a big.Rat has no Python counterpart; convert it with its Float64 method"},
		{map[string]big.Float{"f": {}}, `value: cannot convert Go big.Float at ["f"]: a big.Float has no Python counterpart; convert it with its Float64 method`},
		{[]any{big.NewRat(1, 3)}, "value: cannot convert Go big.Rat at [0]: a big.Rat has no Python counterpart; convert it with its Float64 method"},
	} {
		var g Graph
		_, err := FromGo(&g, tc.in)
		var ce *ConversionError
		if !errors.As(err, &ce) || !ce.FromGo {
			t.Errorf("FromGo(%T): want a *ConversionError, got %v", tc.in, err)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("FromGo(%T)\n got %s\nwant %s", tc.in, err, tc.want)
		}
		if g.Len() != 0 {
			t.Errorf("FromGo(%T) left %d nodes behind", tc.in, g.Len())
		}
	}
	for _, tc := range []struct {
		in   any
		dst  any
		want string
	}{
		{map[string]any{}, new(big.Float), "value: cannot convert dict to big.Float: a big.Float has no Python counterpart"},
		{map[string]any{"a": 1}, new(*big.Rat), "value: cannot convert dict to big.Rat: a big.Rat has no Python counterpart"},
		{1.5, new(big.Float), "value: cannot convert float to big.Float: a big.Float has no Python counterpart"},
		{map[string]any{"F": map[string]any{}}, new(struct{ F big.Float }), "value: cannot convert dict to big.Float at .F: a big.Float has no Python counterpart"},
	} {
		g, id := graphOf(t, tc.in)
		err := ToGo(g, id, tc.dst)
		var ce *ConversionError
		if !errors.As(err, &ce) || ce.FromGo {
			t.Errorf("ToGo(%#v into %T): want a *ConversionError, got %v", tc.in, tc.dst, err)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("ToGo(%#v into %T)\n got %s\nwant %s", tc.in, tc.dst, err, tc.want)
		}
	}
}

// TestFromGoRefusesInvalidUTF8Payloads checks that FromGo refuses a string
// that is not UTF-8 wherever it lands in the graph, as it refuses a plain
// str: in a path, a time zone name, an exception's argument, a named
// tuple's names, a class's or an attribute's name. It accepted them, so a
// host function returning such a value failed the whole run when the
// codec refused to send it, instead of raising TypeError in the sandbox.
func TestFromGoRefusesInvalidUTF8Payloads(t *testing.T) {
	bad := "a\xffb"
	for _, tc := range []struct {
		in   any
		want string
	}{
		{PathValue(bad), "value: cannot convert Go value.PathValue to path: invalid UTF-8 in text"},
		{BuiltinFunctionValue(bad), "value: cannot convert Go value.BuiltinFunctionValue to builtin_function: invalid UTF-8 in text"},
		{ReprValue(bad), "value: cannot convert Go value.ReprValue to repr: invalid UTF-8 in text"},
		{CycleValue(bad), "value: cannot convert Go value.CycleValue to cycle: invalid UTF-8 in placeholder"},
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone(bad, 3600)), "value: cannot convert Go time.Time to datetime: invalid UTF-8 in timezone_name"},
		{DateTime{Year: 2024, Month: 1, Day: 2, Offset: Ptr(int32(60)), TZName: &bad}, "value: cannot convert Go value.DateTime to datetime: invalid UTF-8 in timezone_name"},
		{Time{Hour: 1, Offset: Ptr(int32(60)), TZName: &bad}, "value: cannot convert Go value.Time to time: invalid UTF-8 in timezone_name"},
		{TimeZone{Offset: 60, Name: &bad}, "value: cannot convert Go value.TimeZone to timezone: invalid UTF-8 in name"},
		{Exception{Type: "ValueError", Arg: &bad}, "value: cannot convert Go value.Exception to exception: invalid UTF-8 in arg"},
		{Function{Name: bad}, "value: cannot convert Go value.Function to function: invalid UTF-8 in name"},
		{Function{Name: "f", Docstring: &bad}, "value: cannot convert Go value.Function to function: invalid UTF-8 in docstring"},
		{FileHandle{Path: bad, Mode: "r"}, "value: cannot convert Go value.FileHandle to file_handle: invalid UTF-8 in path"},
		{NamedTupleValue{TypeName: bad, Fields: []string{"a"}, Values: []any{1}}, "value: cannot convert Go value.NamedTupleValue to named_tuple: invalid UTF-8 in type_name"},
		{NamedTupleValue{TypeName: "p", Fields: []string{bad}, Values: []any{1}}, "value: cannot convert Go value.NamedTupleValue to named_tuple: invalid UTF-8 in field name"},
		{ClassValue{Name: bad, ID: UUID{1}}, "value: cannot convert Go value.ClassValue to type: invalid UTF-8 in name"},
		{ClassValue{Name: "C", ID: UUID{1}, Attrs: []Attr{{bad, 1}}}, "value: cannot convert Go value.ClassValue to type: invalid UTF-8 in attribute name"},
		{ObjectValue{Class: ClassValue{Name: bad, ID: UUID{1}}}, "value: cannot convert Go value.ClassValue to type at .Class: invalid UTF-8 in name"},
		{ObjectValue{Class: ClassValue{Name: "C", ID: UUID{1}}, Attrs: []Attr{{bad, 1}}}, "value: cannot convert Go value.ObjectValue to class_instance: invalid UTF-8 in attribute name"},
		{[]any{1, PathValue(bad)}, "value: cannot convert Go value.PathValue to path at [1]: invalid UTF-8 in text"},
		{struct{ P PathValue }{PathValue(bad)}, "value: cannot convert Go value.PathValue to path at .P: invalid UTF-8 in text"},
	} {
		g := &Graph{}
		g.Add(Int(42))
		_, err := FromGo(g, tc.in)
		var ce *ConversionError
		if !errors.As(err, &ce) || !ce.FromGo {
			t.Errorf("FromGo(%T): want a *ConversionError, got %v", tc.in, err)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("FromGo(%T)\n got %s\nwant %s", tc.in, err, tc.want)
		}
		if g.Len() != 1 {
			t.Errorf("FromGo(%T) left %d nodes behind after an error", tc.in, g.Len()-1)
		}
	}
}

// sameText is a map key type whose keys all have one text.
type sameText struct{ N int }

func (sameText) MarshalText() ([]byte, error) { return []byte("k"), nil }

// strText is a string type whose text is its own.
type strText string

func (s strText) MarshalText() ([]byte, error) { return []byte(s), nil }

// Keys of a TextMarshaler type whose texts are equal sort as equals, so
// their entries came in Go's random map iteration order, and so did the
// value Python's dict keeps for the one str key they make. They now order
// by type name (a string and a TextMarshaler with its text), then by
// their values' repr.
func TestFromGoEqualTextKeysOrderDeterministically(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{map[sameText]int{{1}: 3, {2}: 1, {3}: 2, {4}: 0}, "{'k': 0, 'k': 1, 'k': 2, 'k': 3}"},
		{map[any]int{"a": 1, strText("a"): 2, sameText{1}: 5, sameText{2}: 4, "b": 0}, "{'a': 1, 'a': 2, 'b': 0, 'k': 4, 'k': 5}"},
		// Ties of different texts stay in text order.
		{map[any]string{sameText{1}: "z", sameText{2}: "y", strText("j"): "x", strText("l"): "w"}, "{'j': 'x', 'k': 'y', 'k': 'z', 'l': 'w'}"},
	} {
		for range 50 {
			if got := reprOf(t, tc.in); got != tc.want {
				t.Fatalf("FromGo(%v)\n got %s\nwant %s", tc.in, got, tc.want)
			}
		}
	}
}

// Integer and float keys compared as floats: 2**53+1 (a big.Word, whose
// type name sorts before float64's) was equal to 2**53 as a float, and
// below it by type name, but above 2**53 as a uint64, which was above
// the float by type name: an order that is not transitive, so the sort's
// result followed Go's random map iteration, and so did the value the
// worker kept for 2**53 and 2**53.0, which it takes as one key. Numbers
// now compare by their exact values.
func TestFromGoNumberKeysCompareExactly(t *testing.T) {
	m := map[any]int{big.Word(1<<53 + 1): 1, float64(1 << 53): 2, uint64(1 << 53): 3, uint32(7): 4, int8(-1): 5, 7.5: 6, int64(-1 << 63): 7, -0x1p63: 8, 0x1p64: 9, uint64(math.MaxUint64): 10}
	const want = "{-9.223372036854776e+18: 8, -9223372036854775808: 7, -1: 5, 7: 4, 7.5: 6, 9007199254740992.0: 2, 9007199254740992: 3, 9007199254740993: 1, 18446744073709551615: 10, 1.8446744073709552e+19: 9}"
	for range 50 {
		if got := reprOf(t, m); got != want {
			t.Fatalf("FromGo(%v)\n got %s\nwant %s", m, got, want)
		}
	}
	// compareKeys is a strict weak order on such keys.
	keys := []any{big.Word(1<<53 + 1), float64(1 << 53), uint64(1 << 53), int64(1<<53 + 1), float32(1 << 24), int32(1<<24 + 1),
		math.NaN(), float32(math.NaN()), 0.0, math.Copysign(0, -1), uint8(0), -0.5, int16(-1), math.Inf(1), math.Inf(-1),
		uint64(math.MaxUint64), 0x1p64, int64(math.MinInt64), -0x1p63, true, "a", nil}
	vals := make([]reflect.Value, len(keys))
	for i := range keys {
		vals[i] = reflect.ValueOf(&keys[i]).Elem() // interface values, as in a map[any]
	}
	for _, a := range vals {
		for _, b := range vals {
			if compareKeys(a, b) != -compareKeys(b, a) {
				t.Errorf("compareKeys(%v, %v) = %d, reversed %d", a, b, compareKeys(a, b), compareKeys(b, a))
			}
			for _, c := range vals {
				if compareKeys(a, b) <= 0 && compareKeys(b, c) <= 0 && compareKeys(a, c) > 0 {
					t.Errorf("not transitive: %v <= %v <= %v but %v > %v", a, b, c, a, c)
				}
			}
		}
	}
}

// A bool decodes into no integer or float type (Python's bool is an int,
// but encoding/json refuses it too, and True taken for 1 hides mistakes),
// nor an int into a bool, nor a float into an integer type; the fast
// paths of slices, arrays and struct fields refuse them as the general
// path does. The string option of a json tag is ignored both ways.
func TestBoolIntFloatAreNotInterchangeable(t *testing.T) {
	type fields struct {
		I int
		F float64
		B bool
	}
	for _, tc := range []struct {
		json string
		dst  any
	}{
		{`true`, new(int)}, {`false`, new(uint8)}, {`true`, new(float64)}, {`true`, new(float32)},
		{`true`, new(big.Int)}, {`true`, new(*big.Int)}, {`true`, new(json.Number)}, {`true`, new(time.Duration)},
		{`1`, new(bool)}, {`1.0`, new(int)}, {`1.0`, new(uint64)},
		{`[1, true]`, new([]int)}, {`[1.5, false]`, new([]float64)}, {`[1, 0]`, new([]bool)}, {`[1.0]`, new([]int64)},
		{`[true, 2]`, new([2]int)}, {`{"I": true}`, new(fields)}, {`{"F": false}`, new(fields)}, {`{"B": 1}`, new(fields)},
		{`{"a": true}`, new(map[string]int)},
	} {
		g := &Graph{}
		id, err := FromJSON(g, []byte(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		var ce *ConversionError
		if err := ToGo(g, id, tc.dst); !errors.As(err, &ce) {
			t.Errorf("ToGo(%s) into %T: %v, want a ConversionError", tc.json, tc.dst, err)
		}
	}
	type quoted struct {
		N int     `json:"n,string"`
		F float64 `json:",string"`
		B bool    `monty:"b,string"`
	}
	g := &Graph{}
	id, err := FromGo(g, quoted{N: 1, F: 2.5, B: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Repr(id); got != "{'n': 1, 'F': 2.5, 'b': True}" {
		t.Errorf("string option: got %s", got)
	}
	var back quoted
	if err := ToGo(g, id, &back); err != nil || back != (quoted{N: 1, F: 2.5, B: true}) {
		t.Errorf("string option back: %+v, %v", back, err)
	}
}

// BenchmarkFromGoMapKeys converts maps whose keys take mapDict's general
// path: mixed number keys in a map[any], float keys, TextMarshaler keys.
func BenchmarkFromGoMapKeys(b *testing.B) {
	mixed := map[any]int{}
	floats := map[float64]int{}
	texts := map[strText]int{}
	for i := range 1000 {
		switch i % 3 {
		case 0:
			mixed[i] = i
		case 1:
			mixed[float64(i)+0.5] = i
		default:
			mixed[uint8(i)] = i
		}
		floats[float64(i)/3] = i
		texts[strText(fmt.Sprint(i))] = i
	}
	for _, bc := range []struct {
		name string
		v    any
	}{{"mixed", mixed}, {"floats", floats}, {"texts", texts}} {
		b.Run(bc.name, func(b *testing.B) {
			g := &Graph{}
			b.ReportAllocs()
			for b.Loop() {
				g.Reset()
				if _, err := FromGo(g, bc.v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// What a destination keeps, as ToGo's doc says: a struct its unset
// fields, an array's struct items theirs (as encoding/json), while a
// slice and a map are replaced (encoding/json merges into them).
func TestToGoPrefilledDestinations(t *testing.T) {
	type pair struct{ A, B int }
	g := &Graph{}
	list, err := FromJSON(g, []byte(`[{"A": 1}, {"B": 2}]`))
	if err != nil {
		t.Fatal(err)
	}
	arr := [2]pair{{9, 9}, {8, 8}}
	if err := ToGo(g, list, &arr); err != nil || arr != [2]pair{{1, 9}, {8, 2}} {
		t.Errorf("array: %+v, %v", arr, err)
	}
	sl := []pair{{9, 9}, {8, 8}, {7, 7}}
	if err := ToGo(g, list, &sl); err != nil || !slices.Equal(sl, []pair{{1, 0}, {0, 2}}) {
		t.Errorf("slice: %+v, %v", sl, err)
	}
	dict, err := FromJSON(g, []byte(`{"a": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int{"z": 26}
	if err := ToGo(g, dict, &m); err != nil || !maps.Equal(m, map[string]int{"a": 1}) {
		t.Errorf("map: %v, %v", m, err)
	}
}

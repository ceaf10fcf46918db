package value

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// goldenNode is one node of a golden case, in the JSON form written by
// scripts/gen-repr-golden.py.
type goldenNode struct {
	Kind       string      `json:"kind"`
	Bool       bool        `json:"bool"`
	Int        string      `json:"int"`
	Bits       string      `json:"bits"`
	Text       string      `json:"text"`
	Hex        string      `json:"hex"`
	Refs       []NodeID    `json:"refs"`
	TypeName   string      `json:"type_name"`
	Fields     []string    `json:"fields"`
	Date       []int       `json:"date"`
	Clock      []uint32    `json:"clock"`
	Offset     *int32      `json:"offset"`
	TZName     *string     `json:"tzname"`
	Fold       uint32      `json:"fold"`
	TD         []int32     `json:"td"`
	ExcType    string      `json:"exc_type"`
	Arg        *string     `json:"arg"`
	Origin     string      `json:"origin"`
	ID         string      `json:"id"`
	Dataclass  bool        `json:"dataclass"`
	Class      NodeID      `json:"class"`
	InstanceID string      `json:"instance_id"`
	Attrs      [][2]NodeID `json:"attrs"`
	Path       string      `json:"path"`
	Mode       string      `json:"mode"`
}

type goldenCase struct {
	Name  string       `json:"name"`
	Expr  string       `json:"expr"`
	Repr  string       `json:"repr"`
	Str   string       `json:"str"`
	Root  NodeID       `json:"root"`
	Nodes []goldenNode `json:"nodes"`
}

func kindByName(t *testing.T, name string) Kind {
	t.Helper()
	for k := KindInvalid; k <= KindCycle; k++ {
		if k.Valid() && k.String() == name {
			return k
		}
	}
	t.Fatalf("unknown kind %q", name)
	return KindInvalid
}

func mustUUID(t *testing.T, s string) UUID {
	t.Helper()
	u, err := ParseUUID(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func pairsOf(ps [][2]NodeID) []Pair {
	out := make([]Pair, len(ps))
	for i, p := range ps {
		out[i] = Pair{p[0], p[1]}
	}
	return out
}

func (gn *goldenNode) node(t *testing.T) Node {
	t.Helper()
	k := kindByName(t, gn.Kind)
	switch k {
	case KindNone:
		return None()
	case KindEllipsis:
		return Ellipsis()
	case KindNotImplemented:
		return NotImplemented()
	case KindBool:
		return Bool(gn.Bool)
	case KindInt:
		v, err := strconv.ParseInt(gn.Int, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return Int(v)
	case KindBigInt:
		b, ok := new(big.Int).SetString(gn.Int, 10)
		if !ok {
			t.Fatalf("bad bigint %q", gn.Int)
		}
		return BigIntNode(b)
	case KindFloat:
		bits, err := strconv.ParseUint(gn.Bits, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		return Float(math.Float64frombits(bits))
	case KindStr:
		return Str(gn.Text)
	case KindBytes:
		b, err := hex.DecodeString(gn.Hex)
		if err != nil {
			t.Fatal(err)
		}
		return Bytes(b)
	case KindList:
		return List(gn.Refs...)
	case KindTuple:
		return Tuple(gn.Refs...)
	case KindSet:
		return Set(gn.Refs...)
	case KindFrozenSet:
		return FrozenSet(gn.Refs...)
	case KindDict:
		return Node{Kind: KindDict}.WithRefs(gn.Refs)
	case KindNamedTuple:
		return NamedTupleNode(gn.TypeName, gn.Fields, gn.Refs...)
	case KindDate:
		return DateNode(Date{Year: int32(gn.Date[0]), Month: uint32(gn.Date[1]), Day: uint32(gn.Date[2])})
	case KindTime:
		c := gn.Clock
		return TimeNode(Time{Hour: c[0], Minute: c[1], Second: c[2], Microsecond: c[3],
			Offset: gn.Offset, TZName: gn.TZName, Fold: gn.Fold})
	case KindDateTime:
		c := gn.Clock
		return DateTimeNode(DateTime{Year: int32(gn.Date[0]), Month: uint32(gn.Date[1]), Day: uint32(gn.Date[2]),
			Hour: c[0], Minute: c[1], Second: c[2], Microsecond: c[3], Offset: gn.Offset, TZName: gn.TZName})
	case KindTimeDelta:
		return TimeDeltaNode(TimeDelta{Days: gn.TD[0], Seconds: gn.TD[1], Microseconds: gn.TD[2]})
	case KindTimeZone:
		var off int32
		if gn.Offset != nil {
			off = *gn.Offset
		}
		return TimeZoneNode(TimeZone{Offset: off, Name: gn.TZName})
	case KindException:
		return ExceptionNode(Exception{Type: gn.ExcType, Arg: gn.Arg})
	case KindType:
		switch gn.Origin {
		case "builtin":
			return BuiltinType(gn.TypeName)
		case "sandbox":
			return TypeNode(Type{Name: gn.TypeName, ID: mustUUID(t, gn.ID), Origin: OriginSandbox, IsDataclass: gn.Dataclass})
		}
		t.Fatalf("origin %q", gn.Origin)
	case KindClassInstance:
		return ClassInstanceNode(ClassInstance{Class: gn.Class, InstanceID: mustUUID(t, gn.InstanceID), Attrs: pairsOf(gn.Attrs)})
	case KindBuiltinFunction:
		return BuiltinFunction(gn.Text)
	case KindPath:
		return Path(gn.Text)
	case KindFileHandle:
		return FileHandleNode(FileHandle{Path: gn.Path, Mode: gn.Mode})
	case KindRepr:
		return Repr(gn.Text)
	case KindCycle:
		return Cycle(gn.Text)
	}
	t.Fatalf("kind %v not handled", k)
	return Node{}
}

func loadGolden(t *testing.T) []goldenCase {
	t.Helper()
	data, err := os.ReadFile("testdata/repr_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []goldenCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Cases
}

func TestReprGolden(t *testing.T) {
	cases := loadGolden(t)
	if len(cases) < 80 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	kinds := map[Kind]bool{}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var g Graph
			for i := range c.Nodes {
				n := c.Nodes[i].node(t)
				kinds[n.Kind] = true
				g.Add(n)
			}
			if err := g.Check(c.Root); err != nil {
				t.Fatalf("golden graph does not validate: %v", err)
			}
			if got := g.Repr(c.Root); got != c.Repr {
				t.Errorf("%s\nrepr got  %s\n     want %s", c.Expr, got, c.Repr)
			}
			if got := g.Str(c.Root); got != c.Str {
				t.Errorf("%s\nstr got  %q\n    want %q", c.Expr, got, c.Str)
			}
			// AppendRepr appends.
			if got := string(AppendRepr([]byte("x="), &g, c.Root)); got != "x="+c.Repr {
				t.Errorf("AppendRepr = %q", got)
			}
		})
	}
	// Every kind but the host function (no CPython counterpart) appears.
	for k := KindEllipsis; k <= KindCycle; k++ {
		if k.Valid() && k != KindFunction && !kinds[k] {
			t.Errorf("no golden case has a %v node", k)
		}
	}
}

// build is a tiny graph builder for the hand-written cases.
type build struct{ g Graph }

func (b *build) add(n Node) NodeID   { return b.g.Add(n) }
func (b *build) int(v int64) NodeID  { return b.add(Int(v)) }
func (b *build) str(s string) NodeID { return b.add(Str(s)) }

func TestReprDesignChoices(t *testing.T) {
	var b build
	id := mustUUID(t, "00112233445566778899aabbccddeeff")
	plain := b.add(TypeNode(Type{Name: "Widget", ID: id, Origin: OriginHost}))
	inst := b.add(ClassInstanceNode(ClassInstance{Class: plain, InstanceID: NewUUID(),
		Attrs: []Pair{{b.str("size"), b.int(3)}}}))
	sandboxCls := b.add(TypeNode(Type{Name: "K", ID: NewUUID(), Origin: OriginSandbox}))
	sandboxInst := b.add(ClassInstanceNode(ClassInstance{Class: sandboxCls, InstanceID: NewUUID(),
		Attrs: []Pair{{b.str("size"), b.int(3)}}}))
	dc := b.add(TypeNode(Type{Name: "Point", ID: NewUUID(), Origin: OriginSandbox, IsDataclass: true}))
	k := b.int(7) // a non-str attribute key renders as its repr
	odd := b.add(ClassInstanceNode(ClassInstance{Class: dc, Attrs: []Pair{{k, b.int(1)}}}))
	fn := b.add(FunctionNode(Function{Name: "fetch", Docstring: Ptr("doc")}))
	tzName := b.add(DateTimeNode(DateTime{Year: 2024, Month: 3, Day: 31, Hour: 2, Offset: Ptr[int32](0), TZName: Ptr("UTC")}))
	unnorm := b.add(TimeDeltaNode(TimeDelta{Days: 0, Seconds: -1, Microseconds: 1_500_000}))
	badUTF8 := b.str("a\xffb\xed\xa0\x80")
	plusFile := b.add(Node{Kind: KindFileHandle}.WithExt(&FileHandle{Path: "/f", Mode: "br"}))
	g := &b.g
	for _, tc := range []struct {
		id   NodeID
		want string
	}{
		{plain, "<class 'Widget'>"},
		{inst, "Widget(size=3)"}, // as the sandbox prints a host instance
		{sandboxInst, "<K object>"},
		{odd, "Point(7=1)"},
		{fn, "<function fetch>"},
		{tzName, "datetime.datetime(2024, 3, 31, 2, 0, tzinfo=datetime.timezone(datetime.timedelta(0), 'UTC'))"},
		{unnorm, "datetime.timedelta(microseconds=500000)"},
		{badUTF8, `'a\udcffb\udced\udca0\udc80'`},
		{plusFile, "<_io.BufferedReader name='/f'>"},
		{NodeID(9999), "<invalid node>"},
	} {
		if got := g.Repr(tc.id); got != tc.want {
			t.Errorf("Repr(%d) = %s, want %s", tc.id, got, tc.want)
		}
	}
	if got := g.Str(sandboxInst); got != "<K object>" {
		t.Errorf("Str(instance) = %s", got)
	}
	if got := g.Str(NodeID(9999)); got != "<invalid node>" {
		t.Errorf("Str(out of range) = %s", got)
	}
}

func TestReprMalformed(t *testing.T) {
	// A node that refers to itself (not post-order) must not loop.
	g := &Graph{Nodes: []Node{List(0, 5)}}
	if got := g.Repr(0); got != "[..., <invalid node>]" {
		t.Errorf("self reference: %s", got)
	}
	// Missing payloads and an odd dict.
	g = &Graph{}
	one := g.Add(Int(1))
	for _, tc := range []struct {
		n    Node
		want string
	}{
		{Node{Kind: KindDate}, "<invalid date>"},
		{Node{Kind: KindBytes}, "<invalid bytes>"},
		{Node{Kind: KindClassInstance}, "<invalid class_instance>"},
		{Node{Kind: KindDict}.WithRefs([]NodeID{one, one, one}), "{1: 1}"},
		{Node{Kind: KindNamedTuple}.WithRefs([]NodeID{one, one}).WithExt(&NamedTuple{TypeName: "T", FieldNames: []string{"a"}}), "T(a=1, 1)"},
		{Node{Kind: KindInvalid}, "<invalid invalid>"},
	} {
		id := g.Add(tc.n)
		if got := g.Repr(id); got != tc.want {
			t.Errorf("Repr(%+v) = %s, want %s", tc.n, got, tc.want)
		}
	}
}

func TestReprDeepChain(t *testing.T) {
	const depth = 10_000
	for _, tc := range []struct {
		name        string
		wrap        func(g *Graph, child NodeID) NodeID
		open, close string
	}{
		{"list", func(g *Graph, c NodeID) NodeID { return g.Add(List(c)) }, "[", "]"},
		{"tuple", func(g *Graph, c NodeID) NodeID { return g.Add(Tuple(c)) }, "(", ",)"},
		{"dict", func(g *Graph, c NodeID) NodeID { return g.Add(Dict(Pair{g.Add(Int(0)), c})) }, "{0: ", "}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &Graph{}
			id := g.Add(List())
			for range depth - 1 {
				id = tc.wrap(g, id)
			}
			want := strings.Repeat(tc.open, depth-1) + "[]" + strings.Repeat(tc.close, depth-1)
			if got := g.Repr(id); got != want {
				t.Fatalf("deep %s chain: got %d bytes, want %d", tc.name, len(got), len(want))
			}
		})
	}
}

func TestReprSharedWide(t *testing.T) {
	// A list of 100,000 references to one str node: output is linear.
	g := &Graph{}
	s := g.Add(Str("ab"))
	refs := make([]NodeID, 100_000)
	for i := range refs {
		refs[i] = s
	}
	id := g.Add(List(refs...))
	got := g.Repr(id)
	if want := 2 + len(refs)*4 + (len(refs)-1)*2; len(got) != want {
		t.Fatalf("len = %d, want %d", len(got), want)
	}
}

func TestReprBigIntAtTheDigitLimit(t *testing.T) {
	// 10**4300 - 1 has 4300 digits, the most CPython prints by default.
	v := new(big.Int).Exp(big.NewInt(10), big.NewInt(MaxIntStrDigits), nil)
	v.Sub(v, big.NewInt(1))
	g := &Graph{}
	id := g.Add(BigIntNode(v))
	if got := g.Repr(id); got != strings.Repeat("9", MaxIntStrDigits) {
		t.Fatalf("got %d chars", len(got))
	}
}

// The fast path of appendFloatRepr agrees with the general one.
func TestFloatReprFastPath(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(f float64) {
		if got, want := string(appendFloatRepr(nil, f)), string(appendFloatReprSlow(nil, f)); got != want {
			t.Fatalf("%v: fast %s, general %s", f, got, want)
		}
	}
	for _, f := range []float64{1e-4, math.Nextafter(1e-4, 0), 1e16, math.Nextafter(1e16, 0), 9999999999999998, 0.1, 1, 123456.789, 0.00012345678901234567} {
		check(f)
		check(-f)
	}
	for range 200_000 {
		check(math.Ldexp(r.Float64(), r.IntN(70)-20))
		check(float64(r.Int64N(1 << 55)))
		check(math.Float64frombits(r.Uint64()))
	}
}

func TestFloatRepr(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 1e16: "1e+16", 1e-5: "1e-05", math.Inf(1): "inf", math.Inf(-1): "-inf",
		math.NaN(): "nan", math.Copysign(0, -1): "-0.0", 0.1: "0.1", 1.5e300: "1.5e+300",
		123.0: "123.0", 1e100: "1e+100", 2.5e-300: "2.5e-300", 0.001: "0.001",
		1234567890123456.7: "1234567890123456.8", 12345678901234567.0: "1.2345678901234568e+16",
	} {
		if got := FloatRepr(f); got != want {
			t.Errorf("FloatRepr(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestStrAndBytesRepr(t *testing.T) {
	if got := StrRepr(`it's "x"`); got != `'it\'s "x"'` {
		t.Errorf("StrRepr = %s", got)
	}
	if got := BytesRepr([]byte{'\'', 0x80}); got != `b"'\x80"` {
		t.Errorf("BytesRepr = %s", got)
	}
}

func BenchmarkRepr(b *testing.B) {
	g := &Graph{}
	var items []NodeID
	for i := range 1000 {
		items = append(items, g.Add(Dict(Pair{g.Add(Str("k" + strconv.Itoa(i))), g.Add(Float(float64(i) / 7))})))
	}
	root := g.Add(List(items...))
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendRepr(buf[:0], g, root)
	}
}

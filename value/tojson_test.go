package value_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gomonty/monty/value"
)

func mustJSON(t *testing.T, g *value.Graph, id value.NodeID) string {
	t.Helper()
	b, err := value.AppendJSON(nil, g, id)
	if err != nil {
		t.Fatalf("AppendJSON: %v", err)
	}
	return string(b)
}

func jsonErr(t *testing.T, g *value.Graph, id value.NodeID) *value.ConversionError {
	t.Helper()
	prefix := []byte("keep")
	b, err := value.AppendJSON(prefix, g, id)
	var ce *value.ConversionError
	if !errors.As(err, &ce) || string(b) != "keep" {
		t.Fatalf("AppendJSON: %q, %v; want a *ConversionError and dst unchanged", b, err)
	}
	return ce
}

// randomJSONish returns a Go value encoding/json and FromGo both take:
// nested maps with string keys, slices, strings, bools, nil, and numbers
// that survive a float64 round trip.
func randomJSONish(r *rand.Rand, depth int) any {
	switch k := r.IntN(8); {
	case depth > 4 || k < 3:
		switch r.IntN(5) {
		case 0:
			return nil
		case 1:
			return r.IntN(2) == 0
		case 2:
			return int64(r.IntN(1<<20) - 1<<19)
		case 3:
			return math.Ldexp(r.Float64()-0.5, r.IntN(200)-100)
		default:
			alphabet := []rune("a\"\\\n\x00\x1fé😀\u2028<")
			b := make([]rune, r.IntN(6))
			for i := range b {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
			return string(b)
		}
	case k < 5:
		s := make([]any, r.IntN(5))
		for i := range s {
			s[i] = randomJSONish(r, depth+1)
		}
		return s
	default:
		m := map[string]any{}
		for range r.IntN(5) {
			m[strconv.Itoa(r.IntN(100))] = randomJSONish(r, depth+1)
		}
		return m
	}
}

// TestJSONAgreesWithEncodingJSON: for Go data both take, AppendJSON of
// FromGo's graph reads back as encoding/json's text of the same data.
func TestJSONAgreesWithEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		v := randomJSONish(r, 0)
		var g value.Graph
		id, err := value.FromGo(&g, v)
		if err != nil {
			t.Fatal(err)
		}
		got := mustJSON(t, &g, id)
		want, _ := json.Marshal(v)
		var x, y any
		if err := json.Unmarshal([]byte(got), &x); err != nil {
			t.Fatalf("%d: invalid JSON %q: %v", i, got, err)
		}
		json.Unmarshal(want, &y)
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("%d: got %s\nwant %s", i, got, want)
		}
	}
}

func TestJSONForms(t *testing.T) {
	type S struct {
		N    int       `monty:"n"`
		F    []float64 `monty:"f"`
		Tags []string  `monty:"tags"`
	}
	for _, c := range []struct {
		in   any
		want string
	}{
		{[]int{1, -2, 3}, `[1,-2,3]`}, // packed items
		{[]float64{1, 0.5, 1e-7, 1e16}, `[1.0,0.5,1e-07,1e+16]`},
		{[3]int8{}, `[0,0,0]`},
		{S{N: 1, F: []float64{2}, Tags: nil}, `{"n":1,"f":[2.0],"tags":[]}`},
		{map[int]string{1: "a"}, `{"1":"a"}`},
		{[]byte("hi"), `"aGk="`},
		{"\u007f\u0080", "\"\u007f\u0080\""},
		{math.MaxInt64, `9223372036854775807`},
	} {
		var g value.Graph
		id, err := value.FromGo(&g, c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := mustJSON(t, &g, id); got != c.want {
			t.Errorf("%#v: got %s, want %s", c.in, got, c.want)
		}
	}
}

func TestJSONRefusals(t *testing.T) {
	var g value.Graph
	// A NaN in a packed float slice inside a dict: the path says where.
	id, _ := value.FromGo(&g, map[string]any{"xs": []float64{1, math.NaN()}})
	if ce := jsonErr(t, &g, id); ce.Path != `["xs"][1]` || ce.Kind != value.KindFloat || !strings.Contains(ce.Error(), "not JSON compliant: nan") {
		t.Errorf("packed NaN: %v (path %s)", ce, ce.Path)
	}
	for _, n := range []value.Node{
		value.Float(math.Inf(1)), value.Ellipsis(), value.NotImplemented(),
		value.ExceptionNode(value.Exception{Type: "ValueError"}), value.FunctionNode(value.Function{Name: "f"}),
		value.BuiltinFunction("len"), value.BuiltinType("int"), value.Repr("<x>"), value.Cycle("[...]"),
		value.TimeZoneNode(value.TimeZone{}), value.FileHandleNode(value.FileHandle{Path: "/a", Mode: "r"}),
	} {
		var g value.Graph
		leaf := g.Add(n)
		root := g.Add(value.List(g.Add(value.None()), leaf))
		if ce := jsonErr(t, &g, root); ce.Path != "[1]" || ce.Kind != n.Kind {
			t.Errorf("%v: %v (path %q)", n.Kind, ce, ce.Path)
		}
	}
	// Text that is not UTF-8 (no Python str holds it) becomes U+FFFD.
	g = value.Graph{}
	if got := mustJSON(t, &g, g.Add(value.Str("bad \xff\xc3 utf-8\xe2\x82"))); got != `"bad `+"\uFFFD\uFFFD"+` utf-8`+"\uFFFD\uFFFD"+`"` {
		t.Errorf("invalid UTF-8: %q", got)
	}
	// Keys json.dumps refuses, and a float key it cannot write.
	g = value.Graph{}
	k := g.Add(value.Tuple())
	root := g.Add(value.Dict(value.Pair{Key: g.Add(value.Str("ok")), Value: g.Add(value.Int(1))}, value.Pair{Key: k, Value: g.Add(value.Int(2))}))
	if ce := jsonErr(t, &g, root); ce.Path != "[()]" || !strings.Contains(ce.Error(), "keys must be str, int, float, bool or None, not tuple") {
		t.Errorf("tuple key: %v (path %q)", ce, ce.Path)
	}
	g = value.Graph{}
	root = g.Add(value.Dict(value.Pair{Key: g.Add(value.Float(math.NaN())), Value: g.Add(value.Int(1))}))
	if ce := jsonErr(t, &g, root); !strings.Contains(ce.Error(), "nan (a dict key)") {
		t.Errorf("nan key: %v", ce)
	}
	// An int past CPython's digit limit, as json.dumps refuses it.
	g = value.Graph{}
	big := g.Add(value.BigIntNode(new(bigInt).Lsh(bigOne(), 20000)))
	var de *value.IntStrDigitsError
	if ce := jsonErr(t, &g, big); !errors.As(ce, &de) {
		t.Errorf("huge int: %v", ce)
	}
	// Malformed graphs: a root out of range, a child that is not below
	// its parent.
	if ce := jsonErr(t, &g, 7); !strings.Contains(ce.Error(), "out of range") {
		t.Errorf("root: %v", ce)
	}
	g = value.Graph{Nodes: []value.Node{value.List(0)}}
	if ce := jsonErr(t, &g, 0); !strings.Contains(ce.Error(), "malformed graph") {
		t.Errorf("self reference: %v", ce)
	}
}

// A value shared many times is bounded like Repr; a deep one needs no
// Go stack.
func TestJSONBoundedAndIterative(t *testing.T) {
	var g value.Graph
	id := g.Add(value.Str(strings.Repeat("x", 100)))
	for range 64 {
		id = g.Add(value.List(id, id))
	}
	if ce := jsonErr(t, &g, id); !errors.Is(ce, value.ErrJSONTooLarge) {
		t.Fatalf("shared: %v", ce)
	}
	g = value.Graph{}
	id = g.Add(value.Int(1))
	const depth = 1_000_000
	for range depth {
		id = g.Add(value.List(id))
	}
	got := mustJSON(t, &g, id)
	if got != strings.Repeat("[", depth)+"1"+strings.Repeat("]", depth) {
		t.Fatalf("deep: %d bytes: %.10s...%s", len(got), got, got[len(got)-10:])
	}
}

type bigInt = big.Int

func bigOne() *big.Int { return big.NewInt(1) }

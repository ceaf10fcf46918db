package session

import (
	"encoding/json"
	"log/slog"
	"math"
	"math/big"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/value"
)

// stubRecord is a record with a field FromGo may leave out.
type stubRecord struct {
	Name string   `monty:"name"`
	Tags []string `monty:"tags,omitempty"`
	Next *stubRecord
}

// stubEmbeds promotes its embedded struct's fields.
type stubEmbeds struct {
	stubRecord
	Extra int
}

// TestStubsMatchConversions converts a value of each Go type the stubs
// distinguish (zero values too: nil pointers, slices and maps) and checks
// that the Python value FromGo makes is of the type the stubs declare for
// that Go type, and that ToGo reads it back into the Go type (which shows
// that a value of the declared type is taken as an argument).
// (Types the stubs declare as Never, which FromGo refuses, are in
// TestStubsAgreeWithRoundTrips.)
func TestStubsMatchConversions(t *testing.T) {
	one := 1
	nan := math.NaN()
	for _, v := range []any{
		true, 7, int8(-3), uint64(math.MaxUint64), 2.5, float32(1.5), "s",
		[]byte("ab"), []byte(nil), [3]byte{1, 2, 3},
		[]int{1, 2}, []int(nil), [2]string{"a", "b"}, [][]float64{{1}, {2, 3}}, [2][2]int{{1, 2}, {3, 4}},
		map[string]int{"a": 1}, map[string]int(nil), map[int]string{2: "b"}, map[float64]bool{1.5: true, nan: false},
		map[bool]int{true: 1}, map[[2]int]string{{1, 2}: "x"}, map[[2][2]int]int{{{1, 2}, {3, 4}}: 1},
		map[[2]byte]int{{1, 2}: 3}, map[int8]*int{1: &one, 2: nil},
		map[netip.Addr]int{netip.MustParseAddr("::1"): 1}, map[value.UUID]int{{1}: 1},
		&one, (*int)(nil), (*[]string)(nil), &[]string{"p"},
		stubRecord{Name: "a", Next: &stubRecord{Name: "b", Tags: []string{"t"}}}, stubEmbeds{Extra: 1},
		[]stubRecord{{Name: "x"}}, Pair[int, string]{1, "a"}, Pair[string, []float64]{"k", nil},
		struct{ A int }{1},
		time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), time.Duration(90 * time.Second), (*time.Duration)(nil),
		value.Date{Year: 2024, Month: 2, Day: 3}, value.Time{Hour: 1}, value.DateTime{Year: 2024, Month: 1, Day: 1},
		value.TimeDelta{Days: 1}, value.TimeZone{Offset: 3600}, (*time.Location)(nil),
		time.UTC, time.FixedZone("CET", 3600), map[time.Time]int{time.Unix(0, 0).UTC(): 1},
		map[value.Date]int{{Year: 2024, Month: 1, Day: 1}: 1}, map[[2]value.TimeDelta]int{{{Days: 1}, {}}: 2},
		value.PathValue("/tmp"), value.UUID{1, 2}, *big.NewInt(5), big.NewInt(-5), (*big.Int)(nil),
		value.TupleValue{1, "a"}, value.SetValue{1}, value.FrozenSetValue{"f"}, value.DictValue{{Key: 1, Value: "v"}},
		json.Number("12"), json.Number("1.5"), value.Exception{Type: "ValueError"},
		netip.MustParseAddr("10.0.0.1"), slog.LevelWarn, json.RawMessage(`{"a": [1]}`),
		[]any{1, "x"}, map[string]any{"k": []int{1}}, any(nil),
	} {
		typ := reflect.TypeOf(v)
		if typ == nil {
			continue
		}
		st := stubWriter{r: NewRegistry()}
		stub := st.pyType(typ)
		g := &value.Graph{}
		id, err := value.FromGo(g, v)
		if err != nil {
			t.Errorf("%T: FromGo: %v (stub %s)", v, err, stub)
			continue
		}
		u, ids := g.Unpack()
		if ids != nil {
			id = ids[id]
		}
		c := stubChecker{st: &st, g: u}
		if why := c.check(id, stub); why != "" {
			t.Errorf("%T %v: stub %s, but FromGo made %s: %s", v, v, stub, u.Repr(id), why)
		}
		out := reflect.New(typ)
		if err := value.ToGo(g, id, out.Interface()); err != nil && ids == nil {
			t.Errorf("%T: ToGo of %s: %v", v, g.Repr(id), err)
		}
	}
}

// stubChecker checks a converted value against a stub's type expression.
type stubChecker struct {
	st *stubWriter
	g  *value.Graph
}

// splitTop splits s at sep where no bracket is open.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := range len(s) {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// check returns why node id is not of type typ, or "".
func (c *stubChecker) check(id value.NodeID, typ string) string {
	alts := splitTop(typ, '|')
	if len(alts) > 1 {
		var whys []string
		for _, a := range alts {
			why := c.check(id, a)
			if why == "" {
				return ""
			}
			whys = append(whys, why)
		}
		return strings.Join(whys, "; ")
	}
	n := c.g.Node(id)
	head, args := typ, []string(nil)
	if i := strings.IndexByte(typ, '['); i >= 0 && strings.HasSuffix(typ, "]") {
		head, args = typ[:i], splitTop(typ[i+1:len(typ)-1], ',')
	}
	want := map[string]value.Kind{
		"None": value.KindNone, "bool": value.KindBool, "float": value.KindFloat, "str": value.KindStr,
		"bytes": value.KindBytes, "list": value.KindList, "tuple": value.KindTuple, "dict": value.KindDict,
		"set": value.KindSet, "frozenset": value.KindFrozenSet, "datetime.datetime": value.KindDateTime,
		"datetime.date": value.KindDate, "datetime.time": value.KindTime, "datetime.timedelta": value.KindTimeDelta,
		"datetime.timezone": value.KindTimeZone, "pathlib.Path": value.KindPath, "BaseException": value.KindException,
		"type": value.KindType,
	}
	switch k, ok := want[head]; {
	case head == "Any":
		return ""
	case head == "int":
		if n.Kind != value.KindInt && n.Kind != value.KindBigInt {
			return "not an int: " + n.Kind.String()
		}
		return ""
	case ok:
		if n.Kind != k {
			return "not a " + head + ": " + n.Kind.String()
		}
	default:
		dt, ok := c.st.dictTypes[head]
		if !ok {
			return "unknown stub type " + head
		}
		return c.typedDict(id, dt)
	}
	refs := n.Refs()
	switch head {
	case "list", "set", "frozenset":
		for _, r := range refs {
			if why := c.check(r, args[0]); why != "" {
				return "item: " + why
			}
		}
	case "tuple":
		if len(args) != 2 || args[1] != "..." {
			return "tuple stub " + typ
		}
		for _, r := range refs {
			if why := c.check(r, args[0]); why != "" {
				return "item: " + why
			}
		}
	case "dict":
		for i := 0; i+1 < len(refs); i += 2 {
			if why := c.check(refs[i], args[0]); why != "" {
				return "key: " + why
			}
			if why := c.check(refs[i+1], args[1]); why != "" {
				return "value: " + why
			}
		}
	}
	return ""
}

// typedDict checks a dict against the TypedDict of struct type t.
func (c *stubChecker) typedDict(id value.NodeID, t reflect.Type) string {
	n := c.g.Node(id)
	if n.Kind != value.KindDict {
		return "not a dict: " + n.Kind.String()
	}
	got := map[string]value.NodeID{}
	refs := n.Refs()
	for i := 0; i+1 < len(refs); i += 2 {
		got[c.g.Node(refs[i]).Text()] = refs[i+1]
	}
	fields := value.StructFields(t)
	for _, f := range fields {
		v, ok := got[f.Name]
		if !ok {
			if f.OmitEmpty || f.OmitZero {
				continue
			}
			return "no key " + f.Name
		}
		if why := c.check(v, c.st.pyType(f.Type)); why != "" {
			return f.Name + ": " + why
		}
		delete(got, f.Name)
	}
	for k := range got {
		return "a key the TypedDict lacks: " + k
	}
	return ""
}

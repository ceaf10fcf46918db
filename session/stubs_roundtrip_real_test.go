//go:build unix

package session

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/value"
)

type (
	rtInt    int16
	rtString string
	rtBool   bool
	rtFloat  float32
)

// TestStubsAgreeWithRoundTrips: for each Go type in the table, the stubs
// and the conversions agree. A type the stubs declare without Never goes
// to the sandbox as an input, through a host function taking and
// returning that type (func(T) T, so the worker's value converts back to
// T and T's value to the worker again) and comes back equal to what went
// out, up to the normalisations sameGo documents. A type whose stub says
// Never (a value that holds what no conversion takes) is refused by
// FromGo, and a dict for a map type by ToGo, with a *value.ConversionError.
//
// Before, map keys of the date and time types and *time.Location values
// were declared with their Python types and refused by FromGo; map keys
// of pointer and struct types were declared as T | None and TypedDicts
// (a dict, which Python cannot hash) and refused too.
func TestStubsAgreeWithRoundTrips(t *testing.T) {
	s := realSession(t, Config{})
	n, str := 5, "p"
	nan := math.NaN()
	cet := time.FixedZone("CET", 3600)
	unnamed := time.FixedZone("", -5400)
	t0 := time.Date(2024, 2, 29, 23, 59, 58, 123456789, time.UTC)
	accepted := []any{
		// Scalars and named scalars.
		true, int8(-128), int16(300), int32(-1 << 31), int64(math.MinInt64), 42,
		uint8(255), uint16(65535), uint32(1 << 31), uint64(math.MaxUint64), uint(7), uintptr(9),
		float32(0.1), 2.5, math.Inf(-1), nan, "héllo\x00", "",
		rtInt(-3), rtString("named"), rtBool(true), rtFloat(1.25),
		// Pointers.
		&n, (*int)(nil), &str, ptrTo(&str), ptrTo[*string](nil),
		// Slices and arrays.
		[]int{1, 2}, []int(nil), []string{"a"}, [][]int{{1}, {}}, [3]int{1, 2, 3}, [2][2]string{{"a", "b"}, {"c", "d"}},
		[]byte("ab"), [4]byte{0, 1, 2, 255}, []rtString{"x"}, []*int{&n, nil},
		// Maps with each key kind.
		map[string]int{"a": 1}, map[string]int(nil), map[int]string{-1: "m"}, map[int8]bool{1: true},
		map[uint64]int{math.MaxUint64: 1}, map[float64]int{1.5: 1, nan: 2}, map[bool]string{false: "f"},
		map[[2]int]string{{1, 2}: "t"}, map[[3]byte]int{{1, 2, 3}: 1}, map[[2][2]int]int{{{1, 2}, {3, 4}}: 1},
		map[rtString]int{"k": 1}, map[rtInt]int{-3: 1}, map[netip.Addr]int{netip.MustParseAddr("::1"): 1},
		map[value.UUID]int{{1, 2}: 1}, map[time.Duration]int{time.Second: 1, -time.Microsecond: 2},
		map[time.Time]int{t0: 1, t0.In(cet).Add(time.Hour): 2, t0.In(unnamed).Add(time.Minute): 3},
		map[[2]time.Time]string{{t0, t0.Add(time.Hour)}: "span"},
		map[value.Date]int{{Year: 2024, Month: 2, Day: 29}: 1}, map[value.Time]int{{Hour: 23, Microsecond: 1}: 2},
		map[value.TimeDelta]int{{Days: -1, Seconds: 3}: 3}, map[value.TimeZone]int{{Offset: 3600}: 4, {Offset: -60, Name: value.Ptr("m")}: 5},
		map[value.DateTime]int{{Year: 2024, Month: 1, Day: 2}: 6, {Year: 2024, Month: 1, Day: 2, Offset: value.Ptr[int32](60)}: 7},
		map[any]int{"s": 1, 2: 2, t0: 3, value.Date{Year: 1, Month: 1, Day: 1}: 4, nil: 5},
		// Structs.
		stubRecord{Name: "a", Tags: []string{"t"}, Next: &stubRecord{Name: "b"}}, stubEmbeds{Extra: 1},
		struct{ A, B int }{1, 2}, []stubRecord{{Name: "x"}},
		// Time types.
		t0, t0.In(cet), t0.In(unnamed), time.Duration(-90 * time.Millisecond), time.Duration(1500),
		time.UTC, cet, unnamed, time.FixedZone("", 3600), (*time.Location)(nil), []*time.Location{time.UTC, cet},
		value.Date{Year: 9999, Month: 12, Day: 31}, value.TimeDelta{Days: 3, Microseconds: 7},
		// Nested generics.
		Pair[int, string]{1, "a"}, Pair[string, []Pair[int, float64]]{"k", []Pair[int, float64]{{1, 0.5}}},
		map[string]Pair[rtInt, *time.Location]{"z": {2, cet}}, map[time.Time][]Pair[int, bool]{t0: {{1, true}}},
		// Others.
		*big.NewInt(-7), new(big.Int).Lsh(big.NewInt(1), 100), (*big.Int)(nil), json.Number("12"),
		value.PathValue("/tmp/x"), value.UUID{9},
	}
	refused := []any{
		make(chan int), []chan int{nil}, complex(1, 2), map[string]complex64{"c": 1}, func() {},
		*big.NewFloat(1), *time.UTC, map[*int]int{&n: 1}, map[Pair[int, string]]int{{1, "k"}: 1},
		map[*time.Location]int{time.UTC: 1}, map[[2]*int]int{{&n, nil}: 1}, map[struct{ A int }]int{{1}: 1},
		Pair[string, map[*string]int]{"a", map[*string]int{&str: 1}},
	}
	ctx := context.Background()
	for _, v := range accepted {
		typ := reflect.TypeOf(v)
		if stub := stubText(typ); strings.Contains(stub, "Never") {
			t.Errorf("%T: the stub %s refuses what converts", v, stub)
			continue
		}
		reg := NewRegistry().MustRegister("echo", echo(typ))
		r, err := s.Run(ctx, "echo(x)", WithInputs(Input{Name: "x", Value: v}), WithFunctions(reg))
		if err != nil {
			t.Errorf("%T %v: %v", v, v, err)
			continue
		}
		out := reflect.New(typ)
		if err := r.Decode(out.Interface()); err != nil {
			t.Errorf("%T: decoding %s: %v", v, r.Repr(), err)
			continue
		}
		if !sameGo(reflect.ValueOf(v), out.Elem()) {
			t.Errorf("%T: %v came back as %v (the sandbox had %s)", v, v, out.Elem(), r.Repr())
		}
	}
	for _, v := range refused {
		typ := reflect.TypeOf(v)
		if stub := stubText(typ); !strings.Contains(stub, "Never") {
			t.Errorf("%T: the stub %s takes what no conversion does", v, stub)
		}
		var ce *value.ConversionError
		if _, err := value.FromGo(&value.Graph{}, v); !errors.As(err, &ce) {
			t.Errorf("%T: FromGo: %v, want a *value.ConversionError", v, err)
		}
		if _, err := s.Run(ctx, "x", WithInputs(Input{Name: "x", Value: v})); !errors.As(err, &ce) {
			t.Errorf("%T: as an input: %v, want a *value.ConversionError", v, err)
		}
		if typ.Kind() == reflect.Map {
			var g value.Graph
			d := g.Add(value.Dict(value.Pair{Key: g.Add(value.Int(1)), Value: g.Add(value.Int(2))}))
			if err := value.ToGo(&g, d, reflect.New(typ).Interface()); !errors.As(err, &ce) {
				t.Errorf("ToGo into %v: %v, want a *value.ConversionError", typ, err)
			}
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// stubText returns the stub of a Go type and of the TypedDicts it names.
func stubText(t reflect.Type) string {
	st := stubWriter{r: NewRegistry()}
	text := st.pyType(t)
	for len(st.pending) > 0 {
		text += "\n" + st.typedDict(st.pending[0])
		st.pending = st.pending[1:]
	}
	return text
}

// echo returns a func(T) T that returns its argument.
func echo(t reflect.Type) any {
	ft := reflect.FuncOf([]reflect.Type{t}, []reflect.Type{t}, false)
	return reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value { return args }).Interface()
}

// sameGo reports whether b, which came back from the sandbox, equals a,
// which went out, up to what the conversions normalize: a time.Time comes
// back to the microsecond, at the same instant, in a fixed zone of the
// same name and offset (time.UTC for UTC, which FromGo also makes of a
// zero offset named "" or "UTC"); a time.Duration to the microsecond
// (truncated); a *time.Location as a fixed zone of the same name and
// offset; a nil slice or map as an empty one; a pointer to a nil pointer
// as nil (both are None); pointers (also inside keys) by what they point
// to; an integer in an interface as an int64 (ToAny's type); NaN equals
// NaN.
func sameGo(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	switch a.Type() {
	case reflect.TypeFor[time.Time]():
		x, y := a.Interface().(time.Time), b.Interface().(time.Time)
		xn, xo := x.Zone()
		yn, yo := y.Zone()
		if xo == 0 && (xn == "" || x.Location() == time.UTC) {
			xn = "UTC"
		}
		return x.Truncate(time.Microsecond).Equal(y) && y.Nanosecond()%1000 == 0 && xn == yn && xo == yo
	case reflect.TypeFor[time.Duration]():
		return b.Int() == a.Int()/1000*1000 || b.Int() == (a.Int()-999)/1000*1000 && a.Int() < 0 && a.Int()%1000 != 0
	case reflect.TypeFor[*time.Location]():
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		xn, xo := time.Unix(0, 0).In(a.Interface().(*time.Location)).Zone()
		yn, yo := time.Unix(0, 0).In(b.Interface().(*time.Location)).Zone()
		if xo == 0 && xn == "" {
			xn = "UTC"
		}
		return xn == yn && xo == yo
	case reflect.TypeFor[big.Int]():
		x, y := a.Interface().(big.Int), b.Interface().(big.Int)
		return x.Cmp(&y) == 0
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return nilPtr(a) == nilPtr(b)
		}
		return sameGo(a.Elem(), b.Elem())
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		if x, y := a.Elem(), b.Elem(); x.CanInt() && y.Type() == reflect.TypeFor[int64]() {
			return x.Int() == y.Int()
		}
		return sameGo(a.Elem(), b.Elem())
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameGo(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
	keys:
		for it := a.MapRange(); it.Next(); {
			for jt := b.MapRange(); jt.Next(); {
				if sameGo(it.Key(), jt.Key()) {
					if !sameGo(it.Value(), jt.Value()) {
						return false
					}
					continue keys
				}
			}
			return false
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameGo(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float() || math.IsNaN(a.Float()) && math.IsNaN(b.Float())
	}
	return a.Equal(b)
}

// nilPtr reports whether p is nil or points, through pointers, to nil.
func nilPtr(p reflect.Value) bool {
	for p.Kind() == reflect.Pointer {
		if p.IsNil() {
			return true
		}
		p = p.Elem()
	}
	return false
}

// A dict keyed by named tuples decodes into a Go map keyed by a struct
// of their fields, though FromGo refuses struct keys (a struct becomes a
// dict, which Python cannot hash) and the stubs declare them Never. The
// first cut of the key-type refusal in ToGo refused it too.
func TestRealNamedTupleKeysDecodeIntoStructs(t *testing.T) {
	s := realSession(t, Config{})
	r, err := s.Run(context.Background(), "import collections\nP = collections.namedtuple('P', 'a b')\n{P(1, 2): 'x', P(3, 4): 'y'}")
	if err != nil {
		t.Fatal(err)
	}
	var m map[struct{ A, B int }]string
	if err := r.Decode(&m); err != nil || len(m) != 2 || m[struct{ A, B int }{1, 2}] != "x" || m[struct{ A, B int }{3, 4}] != "y" {
		t.Fatalf("%s decoded to %v, %v", r.Repr(), m, err)
	}
}

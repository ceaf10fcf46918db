package value_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // America/New_York and Etc/GMT+5 wherever the test runs

	"github.com/gomonty/monty/value"
)

// Go maps keyed by the date and time types convert to dicts with those
// keys (Python hashes datetimes, dates, times, timedeltas and timezones)
// and back to equal maps. FromGo refused them with "unsupported map key
// type", though the stubs name their Python types.
func TestDateMapKeysRoundTrip(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	t0 := time.Date(2024, 3, 1, 12, 0, 0, 5000, time.UTC)
	for _, in := range []any{
		map[time.Time]int{t0: 1, t0.Add(time.Hour): 2},
		map[[2]time.Time]string{{t0, t0.Add(time.Second)}: "a"},
		map[value.Date]int{{Year: 2024, Month: 2, Day: 29}: 1, {Year: 1, Month: 1, Day: 1}: 2},
		map[value.Time]int{{Hour: 1}: 1, {Hour: 23, Minute: 59, Second: 59, Microsecond: 999999}: 2},
		map[value.TimeDelta]int{{Days: -1, Seconds: 86399}: 1, {Days: 2}: 2},
		map[value.TimeZone]int{{Offset: 3600}: 1, {Offset: -7200}: 2},
		map[value.DateTime]int{{Year: 2024, Month: 1, Day: 2, Hour: 3}: 1},
		map[any]int{t0: 1, value.Date{Year: 2024, Month: 1, Day: 1}: 2, "s": 3},
	} {
		out := roundTrip(t, in)
		if !reflect.DeepEqual(out, in) {
			t.Errorf("%T: %v came back as %v", in, in, out)
		}
	}
	// What comes back of a time.Time is the same instant in a fixed zone
	// of the same name and offset (time.UTC for UTC), to the microsecond.
	in := map[time.Time]int{t0.In(cet): 1}
	out := roundTrip(t, in).(map[time.Time]int)
	for k, v := range out {
		name, off := k.Zone()
		if !k.Equal(t0) || name != "CET" || off != 3600 || v != 1 || len(out) != 1 {
			t.Errorf("%v came back as %v", in, out)
		}
	}
	// Aware keys and values naming their zone come back with equal
	// contents (new pointers).
	dt := value.DateTime{Year: 2024, Month: 1, Day: 2, Offset: value.Ptr[int32](60), TZName: value.Ptr("M")}
	tm := value.Time{Hour: 4, Offset: value.Ptr[int32](-60), TZName: value.Ptr("N"), Fold: 1}
	tz := value.TimeZone{Offset: 90, Name: value.Ptr("Z")}
	for _, in := range []any{map[value.DateTime]int{dt: 1}, map[value.Time]int{tm: 2}, map[value.TimeZone]int{tz: 3}} {
		out := reflect.ValueOf(roundTrip(t, in))
		if out.Len() != 1 {
			t.Fatalf("%v came back as %v", in, out)
		}
		k := out.MapKeys()[0]
		want := reflect.ValueOf(in).MapKeys()[0]
		if !reflect.DeepEqual(k.Interface(), want.Interface()) {
			t.Errorf("%T: key %+v came back as %+v", in, want, k)
		}
	}
}

// roundTrip converts in with FromGo and back with ToGo into its type.
func roundTrip(t *testing.T, in any) any {
	t.Helper()
	var g value.Graph
	id, err := value.FromGo(&g, in)
	if err != nil {
		t.Fatalf("FromGo(%T): %v", in, err)
	}
	out := reflect.New(reflect.TypeOf(in))
	if err := value.ToGo(&g, id, out.Interface()); err != nil {
		t.Fatalf("ToGo(%s) into %T: %v", g.Repr(id), in, err)
	}
	return out.Elem().Interface()
}

// Date and time keys that are distinct in Go but one key to Python (one
// instant in two zones is one aware datetime key; two time.Times of one
// instant and zone differ in Go by their *Location) are written in an
// order that does not follow Go's map iteration, so the dict Python
// builds is the same every time.
func TestDateMapKeysOrderIsStable(t *testing.T) {
	t0 := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	m := map[time.Time]int{}
	for i := range 40 {
		// One instant, forty zones: forty Go keys.
		m[t0.In(time.FixedZone("Z", 3600*(i%3)))] = i
	}
	m[t0.Add(-time.Hour)] = -1
	var first string
	for range 20 {
		var g value.Graph
		id, err := value.FromGo(&g, m)
		if err != nil {
			t.Fatal(err)
		}
		got := g.Repr(id)
		if first == "" {
			first = got
			if !strings.HasPrefix(got, "{datetime.datetime(2024, 3, 1, 11, 0, tzinfo=datetime.timezone.utc): -1, ") {
				t.Fatalf("the earlier instant does not come first: %s", got)
			}
			continue
		}
		if got != first {
			t.Fatalf("the dict changed between conversions:\n%s\n%s", first, got)
		}
	}
}

// A map whose key type Python cannot hash or whose Go identity would not
// survive (a pointer, a struct, a *time.Location, a channel) is refused
// by FromGo with a *ConversionError, unless it is empty; KeyConverts
// says which. ToGo refuses those holding a pointer or a channel for the
// key type, before any key is read (it made new pointers before); a
// struct key type takes a named tuple key by its fields.
func TestRefusedMapKeyTypes(t *testing.T) {
	n := 1
	type pt struct{ X, Y int }
	for _, in := range []any{
		map[*int]int{&n: 1}, map[pt]int{{1, 2}: 3}, map[*time.Location]int{time.UTC: 1},
		map[chan int]int{make(chan int): 1}, map[[1]pt]int{{{1, 2}}: 1}, map[any]int{&n: 1},
	} {
		var g value.Graph
		_, err := value.FromGo(&g, in)
		var ce *value.ConversionError
		if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "unsupported map key type") {
			t.Errorf("FromGo(%T): %v, want a *ConversionError for the key type", in, err)
		}
		typ := reflect.TypeOf(in)
		if typ.Key().Kind() != reflect.Interface && value.KeyConverts(typ.Key()) {
			t.Errorf("KeyConverts(%v) is true", typ.Key())
		}
		if typ.Key().Kind() == reflect.Interface {
			continue
		}
		// Back: a dict with a key of the kind the Go key would need.
		d := g.Add(value.Dict(value.Pair{Key: g.Add(value.Int(1)), Value: g.Add(value.Int(2))}))
		err = value.ToGo(&g, d, reflect.New(typ).Interface())
		identity := typ.Key().Kind() == reflect.Pointer || typ.Key().Kind() == reflect.Chan
		if !errors.As(err, &ce) || identity != strings.Contains(ce.Reason, "unsupported map key type") {
			t.Errorf("ToGo into %v: %v, want a *ConversionError (for the key type if a pointer or channel)", typ, err)
		}
		// Empty, both ways.
		empty := reflect.MakeMap(typ).Interface()
		if out := roundTrip(t, empty); reflect.ValueOf(out).Len() != 0 {
			t.Errorf("%T: empty came back as %v", in, out)
		}
	}
	// A named tuple key decodes into a struct key type by its fields.
	{
		var g value.Graph
		nt := g.Add(value.NamedTupleNode("P", []string{"X", "Y"}, g.Add(value.Int(1)), g.Add(value.Int(2))))
		d := g.Add(value.Dict(value.Pair{Key: nt, Value: g.Add(value.Int(3))}))
		var m map[pt]int
		if err := value.ToGo(&g, d, &m); err != nil || m[pt{1, 2}] != 3 || len(m) != 1 {
			t.Errorf("a named tuple key into map[pt]int: %v, %v", m, err)
		}
	}
	// A Decoder whose hook is consulted for the key type decodes the keys
	// itself (a session's host objects): not refused.
	var g value.Graph
	d := g.Add(value.Dict(value.Pair{Key: g.Add(value.Int(1)), Value: g.Add(value.Int(2))}))
	dec := value.Decoder{
		Hook: func(s *value.DecodeState, id value.NodeID, t reflect.Type) (reflect.Value, bool, error) {
			return reflect.ValueOf(&n), t == reflect.TypeFor[*int](), nil
		},
		HookTypes: func(t reflect.Type) bool { return t == reflect.TypeFor[*int]() },
	}
	var hooked map[*int]int
	if err := dec.Decode(&g, d, &hooked); err != nil || hooked[&n] != 2 {
		t.Errorf("with a hook for *int: %v, %v", hooked, err)
	}
	for _, k := range []reflect.Type{
		reflect.TypeFor[time.Time](), reflect.TypeFor[value.Date](), reflect.TypeFor[value.Time](),
		reflect.TypeFor[value.DateTime](), reflect.TypeFor[value.TimeDelta](), reflect.TypeFor[value.TimeZone](),
		reflect.TypeFor[time.Duration](), reflect.TypeFor[[2]time.Time](), reflect.TypeFor[any](),
		reflect.TypeFor[string](), reflect.TypeFor[[3]byte](), reflect.TypeFor[value.UUID](),
	} {
		if !value.KeyConverts(k) {
			t.Errorf("KeyConverts(%v) is false", k)
		}
	}
}

// A *time.Location converts to a datetime.timezone when its zone is
// fixed, and comes back as a fixed zone of that name and offset (time.UTC
// itself for UTC). FromGo refused every location that was not nil,
// though ToGo reads a timezone into one and the stubs declare
// datetime.timezone for it.
func TestLocationRoundTrip(t *testing.T) {
	gmt5, err := time.LoadLocation("Etc/GMT+5")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in         *time.Location
		repr, name string
		off        int
	}{
		{time.UTC, "datetime.timezone.utc", "UTC", 0},
		{time.FixedZone("UTC", 0), "datetime.timezone.utc", "UTC", 0},
		{time.FixedZone("", 0), "datetime.timezone.utc", "UTC", 0},
		{time.FixedZone("", 3600), "datetime.timezone(datetime.timedelta(seconds=3600))", "", 3600},
		{time.FixedZone("", -5400), "datetime.timezone(datetime.timedelta(days=-1, seconds=81000))", "", -5400},
		{time.FixedZone("CET", 3600), "datetime.timezone(datetime.timedelta(seconds=3600), 'CET')", "CET", 3600},
		{time.FixedZone("X", -86399), "datetime.timezone(datetime.timedelta(days=-1, seconds=1), 'X')", "X", -86399},
		{gmt5, "datetime.timezone(datetime.timedelta(days=-1, seconds=68400), '-05')", "-05", -5 * 3600},
	} {
		var g value.Graph
		id, err := value.FromGo(&g, tc.in)
		if err != nil {
			t.Errorf("%v: %v", tc.in, err)
			continue
		}
		if got := g.Repr(id); got != tc.repr {
			t.Errorf("%v: %s, want %s", tc.in, got, tc.repr)
		}
		var back *time.Location
		if err := value.ToGo(&g, id, &back); err != nil {
			t.Fatalf("%v: back: %v", tc.in, err)
		}
		name, off := time.Unix(0, 0).In(back).Zone()
		if tc.name == "UTC" && back != time.UTC || name != tc.name || off != tc.off {
			t.Errorf("%v came back as %q %d (%p)", tc.in, name, off, back)
		}
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []any{ny, []*time.Location{time.UTC, ny}, time.FixedZone("far", 86400)} {
		var g value.Graph
		_, err := value.FromGo(&g, in)
		var ce *value.ConversionError
		if !errors.As(err, &ce) || !ce.FromGo || ce.Kind != value.KindTimeZone {
			t.Errorf("FromGo(%v): %v, want a *ConversionError", in, err)
		}
	}
}

// A map[any] whose keys are arrays (a tuple or bytes key in Python) comes
// back from ToGo: a tuple key as an [N]any of its items (decoded as keys
// too), a bytes key as an [N]byte, which FromGo writes as the same tuple
// and bytes. Before, ToGo refused the dict FromGo had made of the map
// ("it decodes to a value no Go map can use as a key").
func TestAnyKeysComeBack(t *testing.T) {
	in := map[any]int{[2]int{1, 2}: 1, [2]byte{1, 2}: 2, [0]int{}: 3, [2]any{"a", [1]int{1}}: 4, "s": 5}
	var g value.Graph
	id, err := value.FromGo(&g, in)
	if err != nil {
		t.Fatal(err)
	}
	var out map[any]int
	if err := value.ToGo(&g, id, &out); err != nil {
		t.Fatalf("ToGo(%s): %v", g.Repr(id), err)
	}
	want := map[any]int{[2]any{int64(1), int64(2)}: 1, [2]byte{1, 2}: 2, [0]any{}: 3, [2]any{"a", [1]any{int64(1)}}: 4, "s": 5}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("got %#v, want %#v", out, want)
	}
	var g2 value.Graph
	id2, err := value.FromGo(&g2, out)
	if err != nil || g2.Repr(id2) != g.Repr(id) {
		t.Fatalf("FromGo of what came back: %s %v, want %s", g2.Repr(id2), err, g.Repr(id))
	}
	// A tuple key that holds itself all the way down (x = (x, x), forty
	// times), which a Go map would hash in 2**40 steps, is past the bound
	// of 32 items in all: a TupleValue, which no map holds.
	var h value.Graph
	x := h.Add(value.Tuple())
	for range 40 {
		x = h.Add(value.Tuple(x, x))
	}
	d := h.Add(value.Dict(value.Pair{Key: x, Value: h.Add(value.Int(1))}))
	var m map[any]int
	var ce *value.ConversionError
	if err := value.ToGo(&h, d, &m); !errors.As(err, &ce) || ce.Path != "[key]" {
		t.Fatalf("shared tuple key: %v, want a *ConversionError at [key]", err)
	}
	// Past 32 items, a tuple key is a TupleValue, which no map holds.
	items := make([]value.NodeID, 33)
	for i := range items {
		items[i] = h.Add(value.Int(int64(i)))
	}
	d = h.Add(value.Dict(value.Pair{Key: h.Add(value.Tuple(items...)), Value: h.Add(value.Int(1))}))
	if err := value.ToGo(&h, d, &m); !errors.As(err, &ce) || ce.Path != "[key]" {
		t.Fatalf("33 items: %v, want a *ConversionError at [key]", err)
	}
}

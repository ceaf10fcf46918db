package value

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// A json.Number is the number it spells, as json.loads reads it, both
// ways: a document decoded with UseNumber reaches Python with numbers, not
// strings (before, a json.Number was a str).
func TestJSONNumber(t *testing.T) {
	for text, want := range map[json.Number]string{
		"12": "12", "-0": "0", "1.5": "1.5", "1e5": "100000.0", "-2.5E-3": "-0.0025",
		"123456789012345678901234567890": "123456789012345678901234567890", "": "0",
	} {
		var g Graph
		id, err := FromGo(&g, text)
		if err != nil {
			t.Errorf("%q: %v", text, err)
			continue
		}
		if got := g.Repr(id); got != want {
			t.Errorf("%q: %s, want %s", text, got, want)
		}
	}
	for _, bad := range []json.Number{"abc", "01", "1.", ".5", "1e", "+1", "0x10", " 1", "NaN"} {
		var g Graph
		var ce *ConversionError
		if _, err := FromGo(&g, bad); !errors.As(err, &ce) || !strings.Contains(err.Error(), "not a JSON number") {
			t.Errorf("%q: %v, want a ConversionError", bad, err)
		}
		if _, err := json.Marshal(bad); err == nil {
			t.Errorf("%q: encoding/json accepts it", bad)
		}
	}

	dec := json.NewDecoder(strings.NewReader(`{"a": 1, "b": [2.5, 30000000000000000000]}`))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var g Graph
	id, err := FromGo(&g, doc)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.Repr(id), "{'a': 1, 'b': [2.5, 30000000000000000000]}"; got != want {
		t.Errorf("UseNumber document: %s, want %s", got, want)
	}

	for _, c := range []struct {
		n    Node
		want json.Number
	}{{Int(12), "12"}, {Float(1.5), "1.5"}, {Float(1), "1.0"}, {Str("7e3"), "7e3"}} {
		var g Graph
		id := g.Add(c.n)
		var got json.Number
		if err := ToGo(&g, id, &got); err != nil || got != c.want {
			t.Errorf("ToGo(%v): %q, %v; want %q", c.n.Kind, got, err, c.want)
		}
	}
	for _, n := range []Node{Str("seven"), Bool(true), None()} {
		var g Graph
		id := g.Add(n)
		var got json.Number
		if err := ToGo(&g, id, &got); err == nil {
			t.Errorf("ToGo(%v) into json.Number: %q, want an error", n.Kind, got)
		}
	}
}

// A float with no JSON text (nan, inf) decoded into a json.Number fails
// naming json.Number, the destination, at the value's path; before, the
// error named json.RawMessage, the type of the writer it borrowed.
func TestNumberNonFiniteNamesNumber(t *testing.T) {
	var g Graph
	k := g.Add(Str("n"))
	inf := g.Add(Float(math.Inf(1)))
	root := g.Add(Dict(Pair{Key: k, Value: inf}))
	var dst struct {
		N json.Number `monty:"n"`
	}
	err := ToGo(&g, root, &dst)
	var ce *ConversionError
	if !errors.As(err, &ce) {
		t.Fatalf("ToGo(inf) into json.Number: %v, want a *ConversionError", err)
	}
	if ce.GoType != reflect.TypeFor[json.Number]() || ce.Kind != KindFloat || ce.Path != ".N" {
		t.Errorf("error %q: GoType %v, Kind %v, Path %q; want json.Number, float, .N", err, ce.GoType, ce.Kind, ce.Path)
	}
	if want := "value: cannot convert float to json.Number at .N: Out of range float values are not JSON compliant: inf"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

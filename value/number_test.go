package value

import (
	"encoding/json"
	"errors"
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

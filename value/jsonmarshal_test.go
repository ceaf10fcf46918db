package value

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"testing"
)

// money has unexported fields and a JSON form of its own only (no
// MarshalText): encoding/json writes {"amount": "1.50", "cur": "EUR"}.
type money struct {
	cents int64
	cur   string
}

func (m money) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"amount": fmt.Sprintf("%d.%02d", m.cents/100, m.cents%100), "cur": m.cur})
}

func (m *money) UnmarshalJSON(b []byte) error {
	var f struct{ Amount, Cur string }
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	var units, cents int64
	if _, err := fmt.Sscanf(f.Amount, "%d.%02d", &units, &cents); err != nil {
		return err
	}
	m.cents, m.cur = units*100+cents, f.Cur
	return nil
}

// ptrJSON marshals through its pointer only.
type ptrJSON struct{ n int }

func (p *ptrJSON) MarshalJSON() ([]byte, error) {
	return []byte(`[` + strconv.Itoa(p.n) + `, null]`), nil
}

// failJSON fails both ways.
type failJSON struct{ X int }

var errFailJSON = errors.New("failJSON refuses")

func (failJSON) MarshalJSON() ([]byte, error)  { return nil, errFailJSON }
func (*failJSON) UnmarshalJSON(b []byte) error { return errFailJSON }

// badJSON writes text that is not JSON.
type badJSON struct{}

func (badJSON) MarshalJSON() ([]byte, error) { return []byte(`{nope`), nil }

// bothForms has a text and a JSON form that differ: the text wins.
type bothForms struct{}

func (bothForms) MarshalText() ([]byte, error) { return []byte("text"), nil }
func (bothForms) MarshalJSON() ([]byte, error) { return []byte(`{"json": true}`), nil }

// jsonInt is an integer kind with a JSON form of its own: never a plain
// scalar on the fast paths.
type jsonInt int16

func (j jsonInt) MarshalJSON() ([]byte, error) {
	return []byte(`{"j": ` + strconv.Itoa(int(j)) + `}`), nil
}

func (j *jsonInt) UnmarshalJSON(b []byte) error {
	var f struct{ J int16 }
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*j = jsonInt(f.J)
	return nil
}

type withMoney struct {
	Price  money
	Prices []money
	Ptr    *money
	N      jsonInt
	Ns     []jsonInt
}

// embedsMoney has money's MarshalJSON promoted: encoding/json writes
// money's JSON alone.
type embedsMoney struct {
	money
	Note string
}

// TestJSONMarshalers: a Go type with no conversion of its own and no
// MarshalText that implements json.Marshaler converts as the value of its
// JSON (as FromJSON reads it), encoding/json's view of it; a dedicated
// conversion or a MarshalText comes first. ToGo reads any value back
// through json.Unmarshaler (from the value's JSON, AppendJSON's text).
// Before, such a type converted field by field (money, whose fields are
// unexported, to {}).
func TestJSONMarshalers(t *testing.T) {
	eur := money{150, "EUR"}
	cases := []struct {
		v    any
		want string // Repr
	}{
		{eur, "{'amount': '1.50', 'cur': 'EUR'}"},
		{&eur, "{'amount': '1.50', 'cur': 'EUR'}"},
		{(*money)(nil), "None"},
		{ptrJSON{3}, "[3, None]"},
		{jsonInt(7), "{'j': 7}"},
		{[]jsonInt{1, 2}, "[{'j': 1}, {'j': 2}]"},
		{map[string]money{"m": eur}, "{'m': {'amount': '1.50', 'cur': 'EUR'}}"},
		{withMoney{Price: eur, Prices: []money{eur}, Ptr: &eur, N: 3, Ns: []jsonInt{4}},
			"{'Price': {'amount': '1.50', 'cur': 'EUR'}, 'Prices': [{'amount': '1.50', 'cur': 'EUR'}], " +
				"'Ptr': {'amount': '1.50', 'cur': 'EUR'}, 'N': {'j': 3}, 'Ns': [{'j': 4}]}"},
		{embedsMoney{eur, "x"}, "{'amount': '1.50', 'cur': 'EUR'}"},
		// MarshalText first, and the dedicated conversions before both.
		{bothForms{}, "'text'"},
		{slog.LevelWarn, "'WARN'"},
		{json.RawMessage(`{"a": 1}`), "{'a': 1}"},
	}
	for _, slow := range []bool{false, true} {
		for _, c := range cases {
			g, id, err := encodeWith(slow, c.v)
			if err != nil {
				t.Errorf("slow %v: FromGo(%T): %v", slow, c.v, err)
				continue
			}
			if got := g.Repr(id); got != c.want {
				t.Errorf("slow %v: FromGo(%T) = %s, want %s", slow, c.v, got, c.want)
			}
		}
	}
	for _, v := range []any{failJSON{}, badJSON{}, []badJSON{{}}} {
		var g Graph
		_, err := FromGo(&g, v)
		var ce *ConversionError
		if !errors.As(err, &ce) || !ce.FromGo {
			t.Errorf("FromGo(%T) = %v, want a *ConversionError", v, err)
		}
		if len(g.Nodes) != 0 {
			t.Errorf("FromGo(%T) left %d nodes", v, len(g.Nodes))
		}
	}
	var g Graph
	if _, err := FromGo(&g, failJSON{}); !errors.Is(err, errFailJSON) {
		t.Errorf("FromGo(failJSON) = %v, want its MarshalJSON error", err)
	}

	// Back through UnmarshalJSON.
	in := withMoney{Price: eur, Prices: []money{eur}, Ptr: &eur, N: 3, Ns: []jsonInt{4}}
	g = Graph{}
	id, err := FromGo(&g, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, slow := range []bool{false, true} {
		got, err := decodeWith(slow, &g, id, reflect.TypeFor[withMoney]())
		if err != nil {
			t.Fatalf("slow %v: ToGo: %v", slow, err)
		}
		if !reflect.DeepEqual(got.Interface(), in) {
			t.Errorf("slow %v: ToGo = %+v, want %+v", slow, got, in)
		}
	}
	// A value whose JSON the type refuses, or one with no JSON form.
	s := g.Add(Str("not money"))
	var m money
	var ce *ConversionError
	if err := ToGo(&g, s, &m); !errors.As(err, &ce) || ce.FromGo || ce.GoType != reflect.TypeFor[money]() {
		t.Errorf("ToGo(str, money) = %v, want a *ConversionError naming money", err)
	}
	var f failJSON
	if err := ToGo(&g, s, &f); !errors.Is(err, errFailJSON) {
		t.Errorf("ToGo(failJSON) = %v, want its UnmarshalJSON error", err)
	}
	b := g.Add(Bytes([]byte("x")))
	if err := ToGo(&g, b, &m); !errors.As(err, &ce) || ce.GoType != reflect.TypeFor[money]() {
		t.Errorf("ToGo(bytes, money) = %v, want a *ConversionError naming money", err)
	}
}

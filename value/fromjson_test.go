package value_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/gomonty/monty/value"
)

func TestFromJSONForms(t *testing.T) {
	for in, want := range map[string]string{
		`null`:                           `None`,
		` true `:                         `True`,
		"\t\n\r false":                   `False`,
		`0`:                              `0`,
		`-0`:                             `0`,
		`-0.0`:                           `-0.0`,
		`1.0`:                            `1.0`,
		`1E2`:                            `100.0`,
		`1e400`:                          `inf`,
		`-1e400`:                         `-inf`,
		`1e-400`:                         `0.0`,
		`9223372036854775807`:            `9223372036854775807`,
		`-9223372036854775809`:           `-9223372036854775809`,
		`123456789012345678901234567890`: `123456789012345678901234567890`,
		`"a\"b\\c\/d\b\f\n\r\t"`:         `'a"b\\c/d\x08\x0c\n\r\t'`,
		`"\u00e9\u20AC\ud83d\ude00é"`:    `'é€😀é'`,
		`"\ud800"`:                       `'` + "\uFFFD" + `'`,
		`"\ud800\u0041"`:                 `'` + "\uFFFD" + `A'`,
		`"\udc00\ud800"`:                 `'` + "\uFFFD\uFFFD" + `'`,
		`[]`:                             `[]`,
		`{}`:                             `{}`,
		`[1, [2, [3, []]], {}]`:          `[1, [2, [3, []]], {}]`,
		`{"b": 1, "a": [true, null]}`:    `{'b': 1, 'a': [True, None]}`,
		`{"a": 1, "b": 2, "a": 3}`:       `{'a': 3, 'b': 2}`,
		`{"k": {"k": {}}, "k": 0}`:       `{'k': 0}`,
	} {
		var g value.Graph
		id, err := value.FromJSON(&g, []byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := g.Repr(id); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
	// A repeated key among many keeps its first place (the map path).
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		b.WriteString(`"k` + string(rune('a'+i%20)) + `": ` + string(rune('0'+i%10)) + ",")
	}
	b.WriteString(`"end": null}`)
	var g value.Graph
	id, err := value.FromJSON(&g, []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Repr(id); !strings.HasPrefix(got, "{'ka': 0, 'kb': 1,") || strings.Count(got, ":") != 21 || !strings.Contains(got, "'kj': 9, 'kk': 0,") {
		t.Fatalf("40 keys, 20 distinct: %s", got)
	}
}

func TestFromJSONRefusals(t *testing.T) {
	for in, want := range map[string]string{
		``:                 "byte 0: unexpected end of input",
		`   `:              "byte 3: unexpected end of input",
		`[1,]`:             "byte 3: unexpected ']'",
		`{"a":1,}`:         "byte 7: unexpected '}'",
		`{"a" 1}`:          "byte 5: unexpected '1'",
		`{1: 2}`:           "byte 1: unexpected '1'",
		`[1 2]`:            "byte 3: unexpected '2'",
		`[1}`:              "byte 2: unexpected '}'",
		`01`:               "byte 1: a number with a leading zero",
		`1.`:               "byte 2: unexpected end of input",
		`.5`:               "byte 0: unexpected '.'",
		`1e`:               "byte 2: unexpected end of input",
		`-`:                "byte 1: unexpected end of input",
		`NaN`:              "byte 0: unexpected 'N'",
		`Infinity`:         "byte 0: unexpected 'I'",
		`tru`:              "byte 0: unexpected 't'",
		`nulls`:            "byte 4: data after the JSON value",
		`1 2`:              "byte 2: data after the JSON value",
		`"abc`:             "byte 4: unexpected end of input",
		"\"a\nb\"":         "byte 2: a control character in a string",
		`"\x"`:             "byte 2: a bad escape",
		`"\u12"`:           "bad \\u escape",
		"\"\xff\"":         "byte 1: invalid UTF-8",
		"\"\\n\xc3\"":      "invalid UTF-8",
		`[` + `"a"` + `,`:  "byte 5: unexpected end of input",
		`{"a": [1, {"b"]}`: "byte 14: unexpected ']'",
		"[" + "\x00" + "]": "byte 1: unexpected '\\x00'",
	} {
		var g value.Graph
		g.Add(value.Int(7))
		_, err := value.FromJSON(&g, []byte(in))
		var ce *value.ConversionError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) || g.Len() != 1 {
			t.Errorf("%q: %v (graph %d nodes); want %q", in, err, g.Len(), want)
		}
	}
	// An int past CPython's digit limit, refused before any conversion.
	var g value.Graph
	_, err := value.FromJSON(&g, []byte("[1, "+strings.Repeat("9", 5000)+"]"))
	var de *value.IntStrDigitsError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "byte 4: an int of 5000 digits") {
		t.Fatalf("huge int: %v", err)
	}
}

// A deep text needs no Go stack: a million levels.
func TestFromJSONDeep(t *testing.T) {
	const depth = 1_000_000
	text := strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth)
	var g value.Graph
	id, err := value.FromJSON(&g, []byte(text))
	if err != nil || g.Len() != depth+1 {
		t.Fatalf("%v, %d nodes", err, g.Len())
	}
	if back := mustJSON(t, &g, id); back != text {
		t.Fatal("round trip differs")
	}
}

// json.RawMessage is JSON text both ways: FromGo reads it as FromJSON
// does, ToGo writes it as AppendJSON does.
func TestJSONRawMessage(t *testing.T) {
	type Job struct {
		Name    string          `monty:"name"`
		Payload json.RawMessage `monty:"payload"`
		Empty   json.RawMessage `monty:"empty"`
	}
	var g value.Graph
	id, err := value.FromGo(&g, Job{Name: "x", Payload: json.RawMessage(`{"n": [1, 2.5]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Repr(id); got != `{'name': 'x', 'payload': {'n': [1, 2.5]}, 'empty': None}` {
		t.Fatal(got)
	}
	var back Job
	if err := value.ToGo(&g, id, &back); err != nil || string(back.Payload) != `{"n":[1,2.5]}` || string(back.Empty) != `null` {
		t.Fatalf("%+v, %v", back, err)
	}
	_, err = value.FromGo(&g, map[string]any{"p": json.RawMessage(`{"n": }`)})
	var ce *value.ConversionError
	if !errors.As(err, &ce) || ce.Path != `["p"]` || !strings.Contains(err.Error(), "invalid JSON at byte 6") {
		t.Fatalf("bad payload: %v", err)
	}
}

// Text encoding/json writes, read back and written again, means the same
// to encoding/json.
func TestFromJSONRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		text, _ := json.Marshal(randomJSONish(r, 0))
		checkFromJSON(t, text)
		if t.Failed() {
			t.Fatalf("case %d: %s", i, text)
		}
	}
}

// checkFromJSON holds FromJSON to encoding/json on text: it may accept
// only valid JSON; it refuses valid JSON only for invalid UTF-8 or an int
// past the digit limit; what it reads, written by AppendJSON, decodes as
// text does.
func checkFromJSON(t *testing.T, text []byte) {
	var g value.Graph
	id, err := value.FromJSON(&g, text)
	valid := json.Valid(text)
	if err != nil {
		var ce *value.ConversionError
		var de *value.IntStrDigitsError
		if !errors.As(err, &ce) {
			t.Fatalf("%q: error %T: %v", text, err, err)
		}
		if valid && !strings.Contains(err.Error(), "invalid UTF-8") && !errors.As(err, &de) {
			t.Fatalf("%q: valid JSON refused: %v", text, err)
		}
		return
	}
	if !valid {
		t.Fatalf("%q: invalid JSON accepted: %s", text, g.Repr(id))
	}
	out, err := value.AppendJSON(nil, &g, id)
	if err != nil {
		if strings.Contains(err.Error(), "not JSON compliant: inf") || strings.Contains(err.Error(), "not JSON compliant: -inf") {
			return // 1e400 reads as inf, as in Python
		}
		t.Fatalf("%q: AppendJSON: %v", text, err)
	}
	x, err := numbersRead(text)
	if err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	y, err := numbersRead(out)
	if err != nil {
		t.Fatalf("%q: written as invalid JSON %q: %v", text, out, err)
	}
	if !reflect.DeepEqual(x, y) {
		t.Fatalf("%q: read back as %q", text, out)
	}
}

// numbersRead decodes JSON text with every number made comparable: an
// integer literal as its exact decimal digits, any other as its float64.
func numbersRead(text []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return nil, err
	}
	var norm func(any) any
	norm = func(x any) any {
		switch v := x.(type) {
		case json.Number:
			if strings.ContainsAny(string(v), ".eE") {
				f, _ := strconv.ParseFloat(string(v), 64)
				return f
			}
			b, _ := new(big.Int).SetString(string(v), 10)
			return "int:" + b.String()
		case []any:
			for i := range v {
				v[i] = norm(v[i])
			}
		case map[string]any:
			for k := range v {
				v[k] = norm(v[k])
			}
		}
		return x
	}
	return norm(x), nil
}

func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`null`, `{"a": [1, 2.5e3, "x\u00e9\ud83d\ude00", true], "a": -0}`, `[[[]]]`, `"\ud800"`, `123456789012345678901234567890`, `1e400`, `{"k": {}, "k": 1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		if bytes.Count(text, []byte("[")) > 10_000 {
			return // encoding/json's own depth limit, not ours
		}
		checkFromJSON(t, text)
	})
}

//go:build unix

package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gomonty/monty/value"
)

// jsonDumps runs expr in the worker and returns the value and what the
// worker's own json.dumps makes of it with the options AppendJSON
// follows, or ok false when json.dumps refuses it.
func jsonDumps(t *testing.T, s *Session, expr string) (v Value, dumps string, ok bool) {
	t.Helper()
	setup, last := "", expr
	if i := strings.LastIndexByte(expr, '\n'); i >= 0 {
		setup, last = expr[:i+1], expr[i+1:]
	}
	code := "import json\n" + setup + "x = " + last + "\ntry:\n" +
		"    out = json.dumps(x, ensure_ascii=False, allow_nan=False, separators=(',', ':'))\n" +
		"except (TypeError, ValueError):\n    out = None\n(x, out)"
	r := run(t, s, code)
	var pair []Value
	g := r.Graph
	items := g.Node(r.Root).Refs()
	if len(items) != 2 {
		t.Fatalf("%s: got %s", expr, r.Repr())
	}
	pair = []Value{{Graph: g, Root: items[0]}, {Graph: g, Root: items[1]}}
	if n := pair[1].Node(); n.Kind == value.KindStr {
		return pair[0], n.Text(), true
	}
	return pair[0], "", false
}

// TestJSONMatchesTheWorkersJSONDumps holds value.AppendJSON (through
// Value.MarshalJSON) to the worker's json.dumps, byte for byte, on the
// values json.dumps accepts, and requires an error where it refuses one
// that has no JSON form here either.
func TestJSONMatchesTheWorkersJSONDumps(t *testing.T) {
	s := realSession(t, Config{})
	for _, expr := range []string{
		"None", "True", "False", "0", "-1", "2**63 - 1", "-2**63", "2**63", "-2**64 - 1", "10**4299", "-(10**4299)",
		"0.0", "-0.0", "1.0", "1.5", "0.1", "1e16", "1e-7", "1e22", "123456789012345680.0", "5e-324", "1.7976931348623157e308", "-2.5e-5",
		"''", "'plain'", "'a\"b\\\\c'", "'\\n\\r\\t\\b\\f\\x00\\x01\\x1f\\x7f'", "'é€😀\\u2028\\u2029'", "'<&>/'",
		"[]", "()", "{}", "[1, [2, [3, []]], {}]", "(1, 'a', None)", "[(), [()]]",
		"{'a': 1, 'b': [True, None]}", "{1: 'int', 2.5: 'float', None: 'none', False: 'bool', 10**30: 'big', -3: 'neg'}",
		"{'k': {'k': {'k': {}}}}", "{1e16: 1, 1e-7: 2, -0.0: 3}", "{'': ''}",
		"[x * 0.1 for x in range(30)]", "{str(i): i for i in range(50)}", "list(range(-5, 5))",
		// json.dumps refuses these, and they have no JSON form here.
		"float('nan')", "[1, float('inf')]", "{'a': -float('inf')}", "{float('nan'): 1}", "{(1, 2): 3}", "{'a': {frozenset(): 1}}",
		"10**5000", "[ValueError('x')]", "len", "...",
	} {
		v, dumps, ok := jsonDumps(t, s, expr)
		got, err := v.MarshalJSON()
		if !ok {
			var ce *value.ConversionError
			if !errors.As(err, &ce) {
				t.Errorf("%s: json.dumps refuses it; MarshalJSON gave %s, %v", expr, got, err)
			}
			continue
		}
		if err != nil || string(got) != dumps {
			t.Errorf("%s:\n got %s (%v)\nwant %s", expr, got, err, dumps)
		}
		// json.Marshal takes it as valid JSON (it checks a Marshaler's
		// text) and reads back the same.
		if m, err := json.Marshal(v); err != nil || !jsonEqual(m, got) {
			t.Errorf("%s: json.Marshal gave %s, %v", expr, m, err)
		}
	}
}

func jsonEqual(a, b []byte) bool {
	read := func(b []byte) (any, error) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var x any
		return x, d.Decode(&x)
	}
	x, err1 := read(a)
	y, err2 := read(b)
	return err1 == nil && err2 == nil && reflect.DeepEqual(x, y)
}

// TestJSONBeyondJSONDumps checks the forms given to what json.dumps
// refuses, on values made by the worker.
func TestJSONBeyondJSONDumps(t *testing.T) {
	s := realSession(t, Config{})
	for expr, want := range map[string]string{
		"b'\\x00\\xffabc'":                       `"AP9hYmM="`,
		"b''":                                    `""`,
		"frozenset({'a'})":                       `["a"]`,
		"[set()]":                                `[[]]`,
		"pathlib.Path('/a/b/../c')":              `"/a/b/../c"`,
		"datetime.date(2024, 1, 2)":              `"2024-01-02"`,
		"datetime.time(3, 4, 5, 6)":              `"03:04:05.000006"`,
		"datetime.datetime(2024, 1, 2, 3, 4, 5)": `"2024-01-02T03:04:05"`,
		"datetime.datetime(2024, 1, 2, 3, 4, 5, 60, tzinfo=datetime.timezone(datetime.timedelta(hours=-5, seconds=-30)))": `"2024-01-02T03:04:05.000060-05:00:30"`,
		"datetime.timedelta(days=-1, seconds=1, microseconds=5)":                                                          `-86398.999995`,
		"datetime.timedelta(0)":                               `0.0`,
		"{'when': datetime.date(2000, 2, 29), 'raw': b'\\n'}": `{"when":"2000-02-29","raw":"Cg=="}`,
	} {
		r := run(t, s, "import datetime, pathlib\n"+expr)
		got, err := r.MarshalJSON()
		if err != nil || string(got) != want {
			t.Errorf("%s: got %s (%v), want %s", expr, got, err, want)
		}
	}
	// A set is an array in the order the worker iterates it.
	r := run(t, s, "import json\nx = {3, 1, 2, 'a'}\n(x, json.dumps(list(x), separators=(',', ':')))")
	pair := r.Graph.Node(r.Root).Refs()
	if got, err := (Value{Graph: r.Graph, Root: pair[0]}).MarshalJSON(); err != nil || string(got) != r.Graph.Node(pair[1]).Text() {
		t.Errorf("set: got %s (%v), want %s", got, err, r.Graph.Node(pair[1]).Text())
	}
	// total_seconds(), as CPython 3.14 computes it (the worker's own is off
	// by a rounding for days=-999999999).
	for td, secs := range map[string]string{
		"days=999999999, hours=23, microseconds=999999": "86399999996401.0",
		"days=-999999999":            "-86399999913600.0",
		"microseconds=1":             "1e-06",
		"days=1, microseconds=-1":    "86399.999999",
		"microseconds=100000":        "0.1",
		"days=-106751992, seconds=1": "-9223372108799.0",
	} {
		r := run(t, s, "import datetime\ndatetime.timedelta("+td+")")
		if got, err := r.MarshalJSON(); err != nil || string(got) != secs {
			t.Errorf("timedelta(%s): got %s (%v), want %s", td, got, err, secs)
		}
	}
	// A dataclass is an object of its fields; an ordinary instance has no
	// JSON form.
	r = run(t, s, "from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n    tags: list\nP(1, ['a', {'b': None}])")
	if got, err := json.Marshal(r); err != nil || string(got) != `{"x":1,"tags":["a",{"b":null}]}` {
		t.Errorf("dataclass: %s, %v", got, err)
	}
	r = run(t, s, "class C:\n    pass\n{'items': [1, C()]}")
	var ce *value.ConversionError
	if got, err := json.Marshal(r); !errors.As(err, &ce) || ce.Path != `["items"][1]` || ce.Kind != value.KindClassInstance {
		t.Errorf("instance: %s, %v", got, err)
	}
	// An error names where the value sits.
	r = run(t, s, "{'a': [1, {'b': float('nan')}]}")
	if _, err := json.Marshal(r); !errors.As(err, &ce) || ce.Path != `["a"][1]["b"]` || !strings.Contains(err.Error(), "not JSON compliant: nan") {
		t.Errorf("nan: %v", err)
	}
}

// TestJSONInputsReadAsJSONLoads: a json.RawMessage input reaches the
// sandbox as the worker's own json.loads reads the same text (types,
// key order, repeated keys, escapes), and a result decodes into a
// json.RawMessage as JSON text.
func TestJSONInputsReadAsJSONLoads(t *testing.T) {
	s := realSession(t, Config{})
	for _, text := range []string{
		`{"b": 1, "a": [1.0, 2, -0, -0.0, 1e2, 123456789012345678901234567890], "b": {"x": null}, "c": true}`,
		`["\u00e9\ud83d\ude00\n\t\"\\\/", "", "\u0000"]`,
		`[[], {}, [[{}]], 1E-7, 2.5e+16]`,
		`"plain"`, `null`, `false`, `-9223372036854775809`,
	} {
		r := run(t, s, "import json\n(repr(data) == repr(json.loads(text)), repr(data), repr(json.loads(text)))",
			WithInputs(Input{Name: "data", Value: json.RawMessage(text)}, Input{Name: "text", Value: text}))
		if !strings.HasPrefix(r.Repr(), "(True, ") {
			t.Errorf("%s: (equal, ours, json.loads) = %s", text, r.Repr())
		}
	}
	r := run(t, s, "{'n': [1, 2.5, None], 'when': 'now'}")
	var raw json.RawMessage
	if err := r.Decode(&raw); err != nil || string(raw) != `{"n":[1,2.5,null],"when":"now"}` {
		t.Fatalf("decode into json.RawMessage: %s, %v", raw, err)
	}
}

// A host function can take and return JSON text: the sandbox's argument
// arrives as json.dumps's text, the returned text reaches it as
// json.loads's value (no Go types in between, as for a proxy to a JSON
// API).
func TestHostFunctionJSONPassThrough(t *testing.T) {
	s := realSession(t, Config{})
	var seen string
	reg := NewRegistry().MustRegister("call_api", func(req json.RawMessage) (json.RawMessage, error) {
		seen = string(req)
		return json.RawMessage(`{"status": "ok", "echo": ` + string(req) + `, "n": 1.0}`), nil
	})
	r := run(t, s, "resp = call_api({'q': 'x', 'ids': (1, 2), 'when': None})\n(resp['status'], resp['echo']['ids'], type(resp['n']).__name__)", WithFunctions(reg))
	if seen != `{"q":"x","ids":[1,2],"when":null}` || r.Repr() != `('ok', [1, 2], 'float')` {
		t.Fatalf("sent %s, got %s", seen, r.Repr())
	}
	// Text that is not JSON is the host function's error, raised in the
	// sandbox; a value with no JSON form is the argument's TypeError.
	bad := NewRegistry().MustRegister("bad", func() json.RawMessage { return json.RawMessage(`{"a": }`) }).
		MustRegister("take", func(json.RawMessage) {})
	_, err := s.Run(context.Background(), "bad()", WithFunctions(bad))
	if pe := pyErr(t, err, "TypeError"); !strings.Contains(pe.Exception.Msg(), "invalid JSON at byte 6") {
		t.Fatalf("bad result: %v", err)
	}
	_, err = s.Run(context.Background(), "take({'x': float('nan')})", WithFunctions(bad))
	if pe := pyErr(t, err, "TypeError"); !strings.Contains(pe.Exception.Msg(), "not JSON compliant: nan") {
		t.Fatalf("bad argument: %v", err)
	}
}

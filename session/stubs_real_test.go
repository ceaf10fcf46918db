//go:build unix

package session

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gomonty/monty/value"
)

// TestStubsTypeCheck: with the registry's stubs, a type-checked session
// accepts code that uses every function, class and value as their Go
// signatures allow, and reports the calls they do not; without them,
// every host name is unresolved.
func TestStubsTypeCheck(t *testing.T) {
	reg := stubRegistry()
	s := realSession(t, Config{TypeCheck: true, TypeCheckStubs: reg.Stubs()})
	wantReprs(t, s, reg, map[string]string{
		"fetch_price('a', 2) + 1":      "4.0",
		"fetch_price(item='a', qty=3)": "4.5",
		"fetch_price('a', qty=1)":      "1.5",
		"positional('a', [1, 2])":      "{'a': 2.0}",
		"import datetime\nwhen(datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc), None).year": "2024",
		"total(1, 2.5, 3)": "6.5",
		"async def main():\n    return await slow(2)\nawait main()": "20",
		"raw(1, 2, x=3)":                                "3",
		"api({'a': [1]})":                               "{'a': [1]}",
		"[j['name'] for j in jobs()]":                   "['build']",
		"n = jobs()[0]['next']\nn['name'] if n else ''": "'test'",
		"w.grow(by=2) + limit":                          "13",
		"Widget(3, 'x').label.upper()":                  "'X'",
		"Widget(Notes='n').Notes":                       "'n'",
		"m = make_widget()\nm.label if m else ''":       "'made'",
		"names[0].upper()":                              "'A'",
		"log('x')":                                      "None",
		"nothing is None":                               "True",
	})
	for code, want := range map[string]string{
		"fetch_price(3, 'a')":         "invalid-argument-type",
		"positional(a='a', b=[1])":    "missing-argument",
		"w.grow('x')":                 "invalid-argument-type",
		"fetch_price('a', 1).upper()": "unresolved-attribute",
		"jobs()[0]['nope']":           "invalid-key",
		"names.upper()":               "unresolved-attribute",
		"slow(1) + 1":                 "unsupported-operator",
		"log('x', 'y')":               "too-many-positional-arguments",
	} {
		_, err := s.Run(context.Background(), code, WithFunctions(reg))
		var tc *TypeCheckError
		if !errors.As(err, &tc) || !strings.Contains(tc.Diagnostics, want) {
			t.Errorf("%q: %v; want the type checker's %s", code, err, want)
		}
	}
	plain := realSession(t, Config{TypeCheck: true})
	_, err := plain.Run(context.Background(), "fetch_price('a', 1)", WithFunctions(reg))
	var tc *TypeCheckError
	if !errors.As(err, &tc) || !strings.Contains(tc.Diagnostics, "unresolved-reference") {
		t.Fatalf("without stubs: %v", err)
	}
}

// TestStubsValueTypes: the value package's own types are stubbed as the
// Python values they convert to. Before, the stubs followed their Go
// kinds: a json.Number (an int or a float in the sandbox) was a str, a
// value.Exception or value.FileHandle a TypedDict of its Go fields, a
// value.BuiltinFunctionValue a str and Ellipsis an int, so the type
// checker refused code that runs.
func TestStubsValueTypes(t *testing.T) {
	reg := NewRegistry().
		MustRegister("num", func(n json.Number) json.Number { return n }).
		MustRegister("nums", func() []json.Number { return []json.Number{"1", "2.5"} }).
		MustRegister("exc", func() value.Exception { return value.Exception{Type: "ValueError", Arg: value.Ptr("boom")} }).
		MustRegister("builtin", func() value.BuiltinFunctionValue { return "len" }).
		MustRegister("ellipsis", func() value.SpecialValue { return value.EllipsisValue })
	s := realSession(t, Config{TypeCheck: true, TypeCheckStubs: reg.Stubs()})
	wantReprs(t, s, reg, map[string]string{
		"num(2) + 1":                 "3",
		"num(2.5) * 2.0":             "5.0",
		"x: int | float = num(7)\nx": "7",
		"sum(nums())":                "3.5",
		"try:\n    raise exc()\nexcept ValueError as e:\n    r = str(e)\nr": "'boom'",
		"builtin()([1, 2])": "2",
		"ellipsis() is ...": "True",
	})
	// Still checked: a json.Number is no str.
	_, err := s.Run(context.Background(), "num(1).upper()", WithFunctions(reg))
	var tc *TypeCheckError
	if !errors.As(err, &tc) || !strings.Contains(tc.Diagnostics, "unresolved-attribute") {
		t.Errorf("num(1).upper(): %v; want the type checker's unresolved-attribute", err)
	}
}

// TestParamsKeywords: Params lets the sandbox pass arguments by keyword,
// with CPython's errors for what does not bind.
func TestParamsKeywords(t *testing.T) {
	reg := NewRegistry().MustRegister("fetch", func(item string, qty int) string {
		return strings.Repeat(item, qty)
	}, Params("item", "qty"))
	s := realSession(t, Config{})
	for code, want := range map[string]string{
		"fetch('ab', 2)":                   "'abab'",
		"fetch(qty=3, item='x')":           "'xxx'",
		"fetch('y', qty=1)":                "'y'",
		"fetch(**{'item': 'z', 'qty': 2})": "'zz'",
	} {
		if got := run(t, s, code, WithFunctions(reg)).Repr(); got != want {
			t.Errorf("%s: got %s, want %s", code, got, want)
		}
	}
	for code, want := range map[string]string{
		"fetch('a')":               "fetch() missing 1 required positional argument: 'qty'",
		"fetch('a', 1, item='b')":  "fetch() got multiple values for argument 'item'",
		"fetch('a', 1, n=2)":       "fetch() got an unexpected keyword argument 'n'",
		"fetch(qty='x', item='a')": "fetch() argument 'qty'",
	} {
		_, err := s.Run(context.Background(), code, WithFunctions(reg))
		if pe := pyErr(t, err, "TypeError"); !strings.Contains(pe.Exception.Msg(), want) {
			t.Errorf("%s: %v; want %q", code, err, want)
		}
	}
}

// TestDocNotUTF8: a docstring that is not UTF-8 (read from a Latin-1
// file, say) is repaired with U+FFFD, as a host error's text is: the
// protocol carries only UTF-8. Before, the sandbox's every read of the
// function's name failed the whole Run with an *InvalidRequestError, and
// the stubs were not UTF-8.
func TestDocNotUTF8(t *testing.T) {
	reg := NewRegistry().MustRegister("price", func() int { return 7 }, Doc("caf\xe9 prices"))
	if stubs := reg.Stubs(); !utf8.ValidString(stubs) || !strings.Contains(stubs, "caf\uFFFD prices") {
		t.Errorf("stubs %q", stubs)
	}
	s := realSession(t, Config{TypeCheck: true, TypeCheckStubs: reg.Stubs()})
	if got := run(t, s, "p = price\np()", WithFunctions(reg)).Repr(); got != "7" {
		t.Fatalf("got %s", got)
	}
}

// wantReprs runs each program with reg's functions and checks the repr of
// its result.
func wantReprs(t *testing.T, s *Session, reg *Registry, cases map[string]string) {
	t.Helper()
	for code, want := range cases {
		r, err := s.Run(context.Background(), code, WithFunctions(reg))
		if err != nil {
			t.Errorf("%q: %v", code, err)
			continue
		}
		if r.Repr() != want {
			t.Errorf("%q: got %s, want %s", code, r.Repr(), want)
		}
	}
}

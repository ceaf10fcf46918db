//go:build unix

package session

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// inputNames are input names of every kind the worker's check tells
// apart: keywords hard and soft, non-ASCII letters, names whose NFKC form
// differs (to a name, to a keyword, to something that is no name),
// characters newer than Unicode 15.0 (Go's tables in Go 1.26: the zero
// width joiners of 15.1, a Todhri letter of 16.0), digits first, dunder
// names, spaces and symbols.
var inputNames = []string{
	"x", "_", "_1", "match", "case", "type", "print", "__init__", "__name__", "__debug__", "__class__",
	"class", "if", "True", "None", "async", "await", "lambda", "nonlocal",
	"é", "Å", "A\u030a", "ǅ", "ª", "℘", "℘x", "℮", "a·b", "x·", "x\u0300", "xำ", "ᢅ", "ｸ", "株式会社",
	"ｘ", "ｉｆ", "ﬁ", "𝔘", "ℌ", "x²", "㍿",
	"x\u200c", "x\u200d", "x\u30fb", "x\uff65", "\u1c89", "\U000105c0", "x\U000105c0",
	"", "1x", "·a", "ำ", "x y", "x-y", "price€", "℞", "゛", "x゛", " x", "x\n",
}

// The session's check of input names agrees with the worker's: each name
// is sent raw, in the form the session sends it (NFKC), with Do, and the
// worker either binds it or answers its SyntaxError; checkInputName must
// refuse exactly the names the worker refuses. Before the check, Feed and
// Run sent every name and the caller got that SyntaxError back from the
// worker (an Error event, a *PythonError from Run) after a round trip.
func TestRealInputNamesAgreeWithWorker(t *testing.T) {
	s := realSession(t, Config{})
	ctx := context.Background()
	for _, name := range inputNames {
		sent := nfkc(name)
		feed := &message.Feed{Code: "None"}
		root := feed.Values.Add(value.Node{Kind: value.KindInt, Num: 1})
		feed.Inputs = []message.NamedRef{{Name: sent, Value: root}}
		ev, err := s.Do(ctx, feed)
		if err != nil {
			t.Fatalf("Do with input %q: %v", sent, err)
		}
		workerOK := true
		if err := EventError(ev); err != nil {
			var pe *PythonError
			if !errors.As(err, &pe) || pe.Type() != "SyntaxError" || !strings.Contains(pe.Error(), "not a valid identifier") {
				t.Fatalf("input %q: the worker answered %v", sent, err)
			}
			workerOK = false
		}
		if goOK := checkInputName(name) == nil; goOK != workerOK {
			t.Errorf("input %q (sent as %q): the session accepts it: %v, the worker: %v", name, sent, goOK, workerOK)
		}
	}
}

// Names the worker accepts are bound as the sandbox reads them, including
// one whose written form is no identifier (x² is x2) and characters newer
// than Go's Unicode tables.
func TestRealInputNamesBind(t *testing.T) {
	s := realSession(t, Config{})
	for _, c := range []struct{ name, code string }{
		{"match", "match"}, {"_", "_"}, {"é", "é"}, {"x²", "x2"}, {"x\u200c", "x\u200c"}, {"\U000105c0", "\U000105c0"},
	} {
		if got := run(t, s, c.code+" * 2", WithInputs(Input{Name: c.name, Value: 21})).Repr(); got != "42" {
			t.Errorf("input %q read as %s: %s", c.name, c.code, got)
		}
	}
}

// What the worker does with two inputs that are one global as the sandbox
// reads them (x and ｘ, both sent as x): it binds both, the last silently
// winning. That is why Feed and Run refuse the pair before sending
// (TestInputsOneGlobalRefusedBeforeSending), which this checks too against
// the real worker.
func TestRealInputsOneGlobalLastWins(t *testing.T) {
	s := realSession(t, Config{})
	ctx := context.Background()
	feed := &message.Feed{Code: "x"}
	one := feed.Values.Add(value.Node{Kind: value.KindInt, Num: 1})
	two := feed.Values.Add(value.Node{Kind: value.KindInt, Num: 2})
	feed.Inputs = []message.NamedRef{{Name: nfkc("x"), Value: one}, {Name: nfkc("ｘ"), Value: two}}
	ev, err := s.Do(ctx, feed)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := ev.Body.(*message.Complete); !ok || c.Values.Repr(c.Value) != "2" {
		t.Fatalf("the worker answered %s %v, want 2 (the last input)", ev.Body.EventKind(), EventError(ev))
	}
	_, err = s.Run(ctx, "x", WithInputs(Input{Name: "x", Value: 1}, Input{Name: "ｘ", Value: 2}))
	var ire *InvalidRequestError
	if !errors.As(err, &ire) {
		t.Fatalf("Run with x and ｘ: %v, want an *InvalidRequestError", err)
	}
	if got := run(t, s, "1 + 1").Repr(); got != "2" {
		t.Fatal(got)
	}
}

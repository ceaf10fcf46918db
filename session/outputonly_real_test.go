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

// outputOnlyBox is a host object whose method hands back its argument and
// whose attributes hold values the sandbox sent.
type outputOnlyBox struct {
	Held any `monty:"held"`
}

func (b *outputOnlyBox) Echo(x any) any { return x }

// outputOnlyPrelude binds, in the sandbox, a value that arrives at the
// host as a repr (a module) and one that arrives with a cycle placeholder
// (a list that holds itself).
const outputOnlyPrelude = "import sys\na = []\na.append(a)\n"

// TestRealOutputOnlyValueHandedBackRaisesTypeError: a host answer that
// holds a value the sandbox sends but does not take back (a repr, a cycle
// placeholder), at the top or nested, raises a TypeError naming the host
// function (or value) and what it holds where the code called (or looked
// the name up), which the code catches; the session goes on. Before, a
// call's answer ended the feed with the worker's uncatchable RuntimeError
// ("invalid return type: 'Repr' is not a valid input value", "Invalid
// return value for call 0" for a future) and a lookup's raised a
// RuntimeError in the worker's words.
func TestRealOutputOnlyValueHandedBackRaisesTypeError(t *testing.T) {
	s := realSession(t, Config{})
	cls := MustClassOf[outputOnlyBox]("Box", Policy{Lazy: []string{"held"}, Methods: []string{"echo(x)"},
		Getattr: func(ctx context.Context, obj any, name string) (any, bool, error) {
			if name == "dyn" {
				return obj.(*outputOnlyBox).Held, true, nil
			}
			return nil, false, nil
		}})
	box := &outputOnlyBox{}
	reg := NewRegistry().
		MustRegister("echo", func(x any) any { return x }).
		MustRegister("echo_value", func(x Value) Value { return x }).
		MustRegister("wrap", func(x any) any { return []any{1, x} }).
		MustRegister("wrap_dict", func(x any) any { return map[string]any{"k": x} }).
		MustRegister("aecho", func(x any) any { return x }, Async()).
		MustRegister("keep", func(x any) { box.Held = x }).
		MustRegisterClass("Box", cls)
	reg.SetValue("box", box)
	reg.SetValue("made_repr", value.ReprValue("<made by Go>"))
	reg.SetValue("made_cycle", []any{value.CycleValue("[...]")})
	const sysRepr = "repr of <module 'sys'>"
	const cycle = "cycle placeholder [...], a value that contains itself"
	call := func(fn string) string {
		return fn + "() returned a value that cannot be sent back into the sandbox ("
	}
	for _, c := range []struct {
		expr, want string
	}{
		{"echo(sys)", call("echo") + sysRepr + ")"},
		{"echo([1, sys])", call("echo") + "it holds the " + sysRepr + ")"},
		{"echo({'k': (sys,)})", call("echo") + "it holds the " + sysRepr + ")"},
		{"echo(a)", call("echo") + "it holds a " + cycle + ")"},
		{"echo_value(sys)", call("echo_value") + sysRepr + ")"},
		{"wrap(sys)", call("wrap") + "it holds the " + sysRepr + ")"},
		{"wrap_dict(a)", call("wrap_dict") + "it holds a " + cycle + ")"},
		{"box.echo(sys)", call("Box.echo") + sysRepr + ")"},
		{"box.echo([sys])", call("Box.echo") + "it holds the " + sysRepr + ")"},
		{"made_repr", "host value made_repr cannot be sent back into the sandbox (repr of <made by Go>)"},
		{"made_cycle", "host value made_cycle cannot be sent back into the sandbox (it holds a cycle placeholder [...], a value that contains itself)"},
		{"keep(sys) or box.held", "host value Box.held cannot be sent back into the sandbox (" + sysRepr + ")"},
		{"keep([sys]) or box.dyn", "host value Box.dyn cannot be sent back into the sandbox (it holds the " + sysRepr + ")"},
	} {
		code := outputOnlyPrelude + "try:\n    r = " + c.expr + "\n    out = 'no error: ' + repr(r)\nexcept TypeError as e:\n    out = str(e)\nout"
		var got string
		if err := run(t, s, code, WithFunctions(reg)).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: caught %q\nwant %q", c.expr, got, c.want)
		}
		if got := run(t, s, "1 + 1").Repr(); got != "2" {
			t.Fatalf("%s: the next feed: %s", c.expr, got)
		}
	}
	// A future's result: awaited alone and gathered with another.
	for _, expr := range []string{"await aecho(sys)", "(await asyncio.gather(aecho(1), aecho([sys])))[1]"} {
		code := "import asyncio\n" + outputOnlyPrelude + "async def main():\n    try:\n        return 'no error: ' + repr(" + expr +
			")\n    except TypeError as e:\n        return str(e)\nasyncio.run(main())"
		var got string
		if err := run(t, s, code, WithFunctions(reg)).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(got, call("aecho")) || !strings.Contains(got, sysRepr) {
			t.Errorf("%s: caught %q", expr, got)
		}
	}
	// Uncaught, it ends the feed as the TypeError; the session goes on.
	_, err := s.Run(context.Background(), outputOnlyPrelude+"echo(sys)", WithFunctions(reg))
	if pe := pyErr(t, err, "TypeError"); pe.Exception.Msg() != call("echo")+sysRepr+")" {
		t.Errorf("uncaught: %q", pe.Exception.Msg())
	}
	if got := run(t, s, "1 + 1").Repr(); got != "2" {
		t.Fatalf("after the uncaught TypeError: %s", got)
	}
}

// TestRealOutputOnlyInputRefused: a Feed or Run input, or a Resume answer,
// that holds a repr or a cycle placeholder is refused before it is sent,
// with an *InvalidRequestError naming the input (it matches
// *value.InputError); a refused answer leaves the feed suspended for
// another. Before, the worker ended the feed with its RuntimeError
// ("invalid input type: 'Repr' is not a valid input value") and a refused
// call's answer ended the feed uncatchably.
func TestRealOutputOnlyInputRefused(t *testing.T) {
	s := realSession(t, Config{})
	for _, in := range []any{value.ReprValue("<x>"), []any{1, value.ReprValue("<x>")}, map[string]any{"k": value.CycleValue("[...]")}} {
		inputs := []Input{{Name: "fine", Value: 1}, {Name: "bad", Value: in}}
		_, ferr := s.Feed(context.Background(), "bad", inputs...)
		_, rerr := s.Run(context.Background(), "bad", WithInputs(inputs...))
		for _, err := range []error{ferr, rerr} {
			var ir *InvalidRequestError
			var ie *value.InputError
			if !errors.As(err, &ir) || !errors.As(err, &ie) || !strings.Contains(err.Error(), `input "bad": `) {
				t.Errorf("%#v: %v, want an *InvalidRequestError naming the input", in, err)
			}
		}
		if got := run(t, s, "1 + 1").Repr(); got != "2" {
			t.Fatalf("after the refusal: %s", got)
		}
	}
	// Resume: the argument the sandbox passed, handed back.
	ev, err := s.Feed(context.Background(), outputOnlyPrelude+"f(sys)")
	if err != nil {
		t.Fatal(err)
	}
	fc, ok := ev.Body.(*message.FunctionCall)
	if !ok || len(fc.Args) != 1 {
		t.Fatalf("got %s, want the call of f", ev.Body.EventKind())
	}
	arg := Value{Graph: &fc.Values, Root: fc.Args[0]}
	for _, a := range []any{arg, []any{arg}} {
		_, err := s.Resume(context.Background(), Return(a))
		var ir *InvalidRequestError
		if !errors.As(err, &ir) || !strings.Contains(err.Error(), "repr of <module 'sys'>") {
			t.Errorf("Resume(Return(%T)): %v, want an *InvalidRequestError", a, err)
		}
		if s.State() != StateSuspended {
			t.Fatalf("after the refused answer: %s, want still suspended", s.State())
		}
	}
	ev, err = s.Resume(context.Background(), Return(2))
	if c, ok := ev.Body.(*message.Complete); err != nil || !ok || c.Values.Repr(c.Value) != "2" {
		t.Fatalf("the answer after the refused ones: %v %v", ev, err)
	}
	// A future resolved with it.
	ev, err = s.Feed(context.Background(), "import asyncio\n"+outputOnlyPrelude+"async def main():\n    return await g(sys)\nasyncio.run(main())")
	if err != nil {
		t.Fatal(err)
	}
	if fc, ok = ev.Body.(*message.FunctionCall); !ok || len(fc.Args) != 1 {
		t.Fatalf("got %s, want the call of g", ev.Body.EventKind())
	}
	arg = Value{Graph: &fc.Values, Root: fc.Args[0]}
	id := fc.CallID
	if fc.AllowEagerAwait {
		_, err = s.Resume(context.Background(), Resolve(FutureOutcome{CallID: id, Value: arg}))
	} else {
		if ev, err = s.Resume(context.Background(), AsFuture()); err != nil || ev.Body.EventKind() != message.KindResolveFutures {
			t.Fatalf("after AsFuture: %v %v, want ResolveFutures", ev, err)
		}
		_, err = s.Resume(context.Background(), Resolve(FutureOutcome{CallID: id, Value: []any{arg}}))
	}
	var ir *InvalidRequestError
	if !errors.As(err, &ir) || !strings.Contains(err.Error(), "repr of <module 'sys'>") || s.State() != StateSuspended {
		t.Fatalf("Resolve with the argument: %v (state %s), want an *InvalidRequestError, still suspended", err, s.State())
	}
	ev, err = s.Resume(context.Background(), Resolve(FutureOutcome{CallID: id, Value: 3}))
	if c, ok := ev.Body.(*message.Complete); err != nil || !ok || c.Values.Repr(c.Value) != "3" {
		t.Fatalf("the outcome after the refused one: %v %v", ev, err)
	}
}

// An OS handler's result holding a repr or a cycle placeholder raises a
// TypeError naming the op where the code made the call, which it may
// catch; the session goes on. Before, the worker ended the feed with its
// uncatchable RuntimeError.
func TestRealOutputOnlyOSResultRaisesTypeError(t *testing.T) {
	s := realSession(t, Config{})
	h := OSFunc(func(ctx context.Context, c *message.OsCall) (*message.ResumeCall, error) {
		rc := &message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultReturn}}
		switch c.Op {
		case message.OpReadText:
			rc.Result.Value = rc.Values.Add(value.Repr("<text>"))
		case message.OpExists:
			rc.Result.Value = rc.Values.Add(value.List(rc.Values.Add(value.Cycle("[...]"))))
		default:
			return nil, ErrNotHandled
		}
		return rc, nil
	})
	for _, c := range []struct{ expr, want string }{
		{"Path('/data').read_text()", "the OS handler for read_text returned a value that cannot be sent back into the sandbox (repr of <text>)"},
		{"Path('/data').exists()", "the OS handler for exists returned a value that cannot be sent back into the sandbox (it holds a cycle placeholder [...], a value that contains itself)"},
	} {
		code := "from pathlib import Path\ntry:\n    r = " + c.expr + "\n    out = 'no error: ' + repr(r)\nexcept TypeError as e:\n    out = str(e)\nout"
		var got string
		if err := run(t, s, code, WithOS(h)).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: caught %q\nwant %q", c.expr, got, c.want)
		}
	}
	if got := run(t, s, "1 + 1").Repr(); got != "2" {
		t.Fatal(got)
	}
}

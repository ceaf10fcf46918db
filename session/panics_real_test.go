//go:build unix

package session

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// nilErr is an error whose Error method reads its receiver: a typed nil
// *nilErr returned as an error (the classic Go mistake) panics when its
// text is asked for.
type nilErr struct{ msg string }

func (e *nilErr) Error() string { return e.msg }

// panicAppender is a result type whose conversion panics.
type panicAppender struct{}

func (panicAppender) AppendGraph(*value.Graph) (value.NodeID, error) { panic("appender bug") }

// A host function's outcome is converted by user code too (the error's
// Error method, a GraphAppender): a panic there is a RuntimeError in the
// sandbox, like a panic in the function itself. Before, it crashed the
// whole process for an Async function (the panic was on the host
// goroutine) and unwound through Run for a plain one, leaving the feed
// suspended.
func TestHostResultConversionPanicIsRuntimeError(t *testing.T) {
	s := realSession(t, Config{})
	reg := NewRegistry()
	reg.MustRegister("typed_nil", func() error { var e *nilErr; return e })
	reg.MustRegister("typed_nil_async", func() error { var e *nilErr; return e }, Async())
	reg.MustRegister("bad_result", func() any { return panicAppender{} })
	reg.MustRegister("bad_result_async", func() any { return panicAppender{} }, Async())
	for _, code := range []string{"typed_nil()", "await typed_nil_async()", "bad_result()", "await bad_result_async()"} {
		_, err := s.Run(context.Background(), code, WithFunctions(reg))
		pe := pyErr(t, err, "RuntimeError")
		if !strings.Contains(pe.Exception.Msg(), "panicked") {
			t.Errorf("%s: got %q, want a message saying the host panicked", code, pe.Exception.Msg())
		}
		if s.State() != StateIdle {
			t.Fatalf("%s: state %v after the run, want idle", code, s.State())
		}
	}
	if r := run(t, s, "1 + 1"); r.Repr() != "2" {
		t.Fatalf("got %s", r.Repr())
	}
}

// A print function that panics mid-turn (a caller up the stack, net/http
// say, may recover it) leaves the rest of the turn unread, so the worker
// cannot be kept in step: it is discarded, and the session says so.
// Before, the session still claimed to be idle and reusable with no
// cause, while every later turn failed with a bare ErrClosed and a pool
// would have asked the worker, still busy with the feed, for a Reset.
func TestPrintPanicDiscardsWorker(t *testing.T) {
	s := realSession(t, Config{})
	sink := func(message.PrintStream, string) { panic("sink bug") }
	func() {
		defer func() {
			if p := recover(); p != "sink bug" {
				t.Fatalf("recovered %v, want the sink's own panic", p)
			}
		}()
		s.Run(context.Background(), "print('a')\nsum(range(10**6))\n5", WithPrint(sink))
		t.Fatal("Run returned; want the sink's panic")
	}()
	if st := s.State(); st != StateClosed {
		t.Errorf("state %v, want closed", st)
	}
	if err := s.Reusable(); !errors.Is(err, ErrClosed) {
		t.Errorf("Reusable: %v, want ErrClosed", err)
	}
	if s.Cause() == nil {
		t.Error("no Cause for the discarded worker")
	}
	_, err := s.Run(context.Background(), "1")
	if !errors.Is(err, ErrClosed) || Survives(err) {
		t.Errorf("next run: %v, want ErrClosed", err)
	}
}

// The other host answers converted on the feed's goroutine keep to the
// same rule: a registered value whose conversion panics, and an OS
// handler's error whose text panics, are RuntimeErrors in the sandbox.
// Before, the panic unwound through Run and left the feed suspended.
func TestHostLookupAndOSPanicsAreRuntimeErrors(t *testing.T) {
	s := realSession(t, Config{})
	reg := NewRegistry()
	reg.SetValue("bad", panicAppender{})
	_, err := s.Run(context.Background(), "bad", WithFunctions(reg))
	pe := pyErr(t, err, "RuntimeError")
	if !strings.Contains(pe.Exception.Msg(), "panicked") || s.State() != StateIdle {
		t.Fatalf("got %q in state %v", pe.Exception.Msg(), s.State())
	}
	osh := OSFunc(func(context.Context, *message.OsCall) (*message.ResumeCall, error) {
		var e *nilErr
		return nil, e
	})
	_, err = s.Run(context.Background(), "import os\nos.getenv('HOME')", WithOS(osh))
	pe = pyErr(t, err, "RuntimeError")
	if !strings.Contains(pe.Exception.Msg(), "panicked") || s.State() != StateIdle {
		t.Fatalf("got %q in state %v", pe.Exception.Msg(), s.State())
	}
	if r := run(t, s, "1 + 1"); r.Repr() != "2" {
		t.Fatalf("got %s", r.Repr())
	}
}

// An Async host function whose goroutine ends without returning
// (runtime.Goexit: t.FailNow or log.Fatal-style helpers called on it) is a
// RuntimeError at the await. Before, its future never finished and the
// feed waited for it until the caller's context ended (for ever with
// context.Background).
func TestAsyncHostGoexitIsRuntimeError(t *testing.T) {
	s := realSession(t, Config{})
	reg := NewRegistry().MustRegister("quits", func() int { runtime.Goexit(); return 1 }, Async())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound for the old hang only
	defer cancel()
	_, err := s.Run(ctx, "await quits()", WithFunctions(reg))
	pe := pyErr(t, err, "RuntimeError")
	if !strings.Contains(pe.Exception.Msg(), "quits") || !strings.Contains(pe.Exception.Msg(), "Goexit") {
		t.Errorf("got %q, want it to name the function and runtime.Goexit", pe.Exception.Msg())
	}
	if r := run(t, s, "1 + 1"); r.Repr() != "2" {
		t.Fatalf("got %s", r.Repr())
	}
}

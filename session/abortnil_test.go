//go:build unix

package session

import (
	"errors"
	"testing"

	"github.com/gomonty/monty/message"
)

// AbortFeed with a nil exception raises RuntimeError("feed aborted by the
// host") and ends the feed. The protocol has no AbortFeed without one: the
// real worker answered it with an Error event ("protocol violation:
// AbortFeed has no exception") and stayed suspended, so a caller read the
// refusal as the feed's end and its next Run failed with ErrSuspended.
func TestRealAbortFeedWithoutException(t *testing.T) {
	s := realSession(t, Config{})
	ev, err := s.Feed(bg, "x = 1\ny = f(2)\n")
	if err != nil || s.State() != StateSuspended {
		t.Fatalf("feed: %v %v (%v)", ev, err, s.State())
	}
	ev, err = s.AbortFeed(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := ev.Body.(*message.Error)
	if !ok || e.Exception.Type != "RuntimeError" || e.Exception.Msg() != "feed aborted by the host" || s.State() != StateIdle {
		t.Fatalf("abort: %+v, state %v; want the RuntimeError and an idle session", ev.Body, s.State())
	}
	r, err := s.Run(bg, "x")
	if err != nil || r.Repr() != "1" {
		t.Fatalf("after the abort: %v %v", r, err)
	}
}

// AbortFeed sends the exception as Raise does: a type the worker does not
// know becomes a RuntimeError naming it, a message that is not UTF-8 is
// repaired and a traceback (an exception taken from an earlier
// *PythonError) is left out. Before, the worker refused the first and the
// third with a protocol-violation Error and stayed suspended, and AbortFeed
// returned that refusal with a nil error, which reads as the abort's own
// Error event; the second failed with an *InvalidRequestError.
func TestRealAbortFeedSendsAnExceptionTheWorkerTakes(t *testing.T) {
	_, err := realSession(t, Config{}).Run(bg, "def g():\n    raise ValueError('earlier')\ng()\n")
	var pe *PythonError
	if !errors.As(err, &pe) || len(pe.Exception.Traceback) == 0 {
		t.Fatalf("setup: %v, want a *PythonError with a traceback", err)
	}
	bad := "bad \xff byte"
	for _, c := range []struct {
		name      string
		exc       *message.RaisedException
		typ, text string
	}{
		{"unknown type", message.NewException("MyError", "stop"), "RuntimeError", "MyError: stop"},
		{"not UTF-8", &message.RaisedException{Type: "ValueError", Message: &bad}, "ValueError", "bad \uFFFD byte"},
		{"with traceback", pe.Exception, "ValueError", "earlier"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := realSession(t, Config{})
			ev, err := s.Feed(bg, "x = 1\ny = f(2)\n")
			if err != nil || s.State() != StateSuspended {
				t.Fatalf("feed: %v %v (%v)", ev, err, s.State())
			}
			ev, err = s.AbortFeed(bg, c.exc)
			if err != nil {
				t.Fatalf("AbortFeed: %v (state %v)", err, s.State())
			}
			e, ok := ev.Body.(*message.Error)
			if !ok || e.Exception.Type != c.typ || e.Exception.Msg() != c.text || s.State() != StateIdle {
				t.Fatalf("abort: %+v, state %v; want %s(%q) and an idle session", e.Exception, s.State(), c.typ, c.text)
			}
			if r, err := s.Run(bg, "x"); err != nil || r.Repr() != "1" {
				t.Fatalf("after the abort: %v %v", r, err)
			}
		})
	}
}

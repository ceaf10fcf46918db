//go:build unix

package session

import (
	"testing"

	"github.com/gomonty/monty/message"
)

// Raise(nil) raises RuntimeError("raised by the host") where the feed is
// suspended, as AbortFeed(ctx, nil) raises its RuntimeError: a nil
// exception means "a RuntimeError from the host" in both. Before, Resume
// with Raise(nil) failed with an *InvalidRequestError ("error result with
// a nil exception") and left the session suspended, while AbortFeed's nil
// went through.
func TestRealRaiseNilRaisesRuntimeError(t *testing.T) {
	s := realSession(t, Config{})
	// A function call: the sandbox catches it.
	ev, err := s.Feed(bg, "try:\n    f(1)\nexcept RuntimeError as e:\n    r = repr(e)\nr")
	if err != nil || s.State() != StateSuspended {
		t.Fatalf("feed: %v %v (%v)", ev, err, s.State())
	}
	ev, err = s.Resume(bg, Raise(nil))
	if err != nil {
		t.Fatalf("Raise(nil) for a call: %v", err)
	}
	c, ok := ev.Body.(*message.Complete)
	if !ok || s.State() != StateIdle {
		t.Fatalf("Raise(nil) for a call: %+v, state %v", ev.Body, s.State())
	}
	if got := c.Values.Repr(c.Value); got != `"RuntimeError('raised by the host')"` {
		t.Errorf("the sandbox caught %s", got)
	}
	// A name lookup: the feed ends with it.
	if _, err := s.Feed(bg, "undefined_name"); err != nil || s.State() != StateSuspended {
		t.Fatalf("feed: %v (%v)", err, s.State())
	}
	ev, err = s.Resume(bg, Raise(nil))
	if err != nil {
		t.Fatalf("Raise(nil) for a lookup: %v", err)
	}
	e, ok := ev.Body.(*message.Error)
	if !ok || e.Exception.Type != "RuntimeError" || e.Exception.Msg() != "raised by the host" || s.State() != StateIdle {
		t.Fatalf("Raise(nil) for a lookup: %+v, state %v", ev.Body, s.State())
	}
}

//go:build unix

package session

import (
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

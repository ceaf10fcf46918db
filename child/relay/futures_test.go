//go:build unix

package relay

import (
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// A sandbox that makes futures it never awaits: each feed's call is
// answered with a future and the feed completes. The relay names each
// such future's function in case its result cannot be sent, and used to
// keep the name until Configure, Reset or Load, so a long session grew
// one entry per call. The worker forgets a run's futures when the run
// ends (a later feed cannot await them), and so does the relay now.
func TestUnawaitedFuturesDoNotAccumulate(t *testing.T) {
	s := serve(t)
	s.do(t, &message.Configure{ProtocolVersion: protocol.Version})
	const feeds = 40
	for i := range feeds {
		fc := call(t, first(s.do(t, &message.Feed{Code: "a = f()\nb = g()\n1"})), "Feed")
		fc2 := call(t, first(s.do(t, &message.ResumeCall{CallID: fc.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: fc.CallID}})), "f's future")
		if n := len(s.eng.futures); n != 1 {
			t.Fatalf("feed %d: %d futures named while the run holds 1", i, n)
		}
		ev := first(s.do(t, &message.ResumeCall{CallID: fc2.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: fc2.CallID}}))
		completes(t, ev, "Feed", "1")
		if n := len(s.eng.futures); n != 0 {
			t.Fatalf("after %d feeds, %d futures are still named (the runs that made them are over)", i+1, n)
		}
	}
	// A run that ends in an error forgets its futures too.
	fc := call(t, first(s.do(t, &message.Feed{Code: "a = f()\n1/0"})), "Feed")
	ev := first(s.do(t, &message.ResumeCall{CallID: fc.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: fc.CallID}}))
	if e, ok := ev.Body.(*message.Error); !ok || e.Exception.Type != "ZeroDivisionError" {
		t.Fatalf("1/0: %s", describe(ev.Body))
	}
	if n := len(s.eng.futures); n != 0 {
		t.Fatalf("after a failed run, %d futures are still named", n)
	}
}

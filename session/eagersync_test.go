//go:build unix

package session

import (
	"context"
	"testing"

	"github.com/gomonty/monty/message"
)

// A host function registered without Async returns a plain value, which
// the sandbox cannot await (TypeError, as CPython says of awaiting an
// int), whatever the protocol: at 4 the worker offers an eager await for
// `await f()` (allow_eager_await), and answering it with a settled future
// made a synchronous function's result awaitable at 4 alone. Async
// functions, methods aside, keep the eager answer. (At protocol 4 this runs
// with scripts/relay-suites.sh, montygo subprocess being the worker.)
func TestRealAwaitingASyncHostFunctionIsATypeError(t *testing.T) {
	s := realSession(t, Config{})
	reg := NewRegistry().
		MustRegister("add", func(a, b int) int { return a + b }).
		MustRegister("af", func(x int) int { return 2 * x }, Async())
	_, err := s.Run(context.Background(), "await add(1, 2)", WithFunctions(reg))
	pyErr(t, err, "TypeError")
	_, err = s.Run(context.Background(), "x = await add(1, 2)", WithFunctions(reg))
	pyErr(t, err, "TypeError")
	if got := run(t, s, "x = await af(2)\nx", WithFunctions(reg)).Repr(); got != "4" {
		t.Fatalf("await af(2) = %s", got)
	}
	if got := run(t, s, "add(1, 2)", WithFunctions(reg)).Repr(); got != "3" {
		t.Fatalf("add(1, 2) = %s", got)
	}
}

// At protocol 4 a synchronous host function's call offered as an eager
// await is answered with a ResumeCall (which the contract keeps valid), its
// Call still marked Eager; only an Async function's gets the one-future
// ResumeFutures.
func TestFakeEagerCallOfASyncFunctionIsAnsweredWithResumeCall(t *testing.T) {
	var got message.Request
	s, _ := startFakeOpts(t, fakeOpts{version: 4}, Config{}, func(req *message.ParentRequest) fakeReply {
		switch req.Body.(type) {
		case *message.Feed:
			e := funcCall("fetch", 7, 5)
			e.Body.(*message.FunctionCall).AllowEagerAwait = true
			return reply(e)
		case *message.ResumeCall, *message.ResumeFutures:
			got = req.Body
			return reply(completeInt(1))
		}
		return reply(violation("unexpected"))
	})
	eager := false
	reg := NewRegistry().MustRegister("fetch", func(ctx context.Context, c *Call) (any, error) {
		eager = c.Eager
		return "five", nil
	})
	if _, err := s.Run(bg, "x = await fetch(5)", WithFunctions(reg)); err != nil {
		t.Fatal(err)
	}
	rc, ok := got.(*message.ResumeCall)
	if !ok || rc.CallID != 7 || rc.Result.Kind != message.ResultReturn || rc.Values.Node(rc.Result.Value).Text() != "five" || !eager {
		t.Fatalf("reply %T %+v (eager %v)", got, got, eager)
	}
}

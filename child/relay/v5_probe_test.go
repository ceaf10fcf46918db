//go:build unix

package relay

import (
	"testing"
	"time"

	"github.com/gomonty/monty/message"
)

// At protocol 5 over the protocol-2 worker the relay enforces the feed
// and turn budgets itself, timing each relayed turn; the eager-await
// probe, which runs the code after a call ahead of time, was bounded only
// by probeBudget (a second by default), so code that looped after its
// call ran that long, unseen and uncounted, at every suspension, whatever
// max_feed_duration said (1000 suspensions of a feed limited to 10 ms
// could burn 1000 s). The probe now runs within what is left of the
// budgets, and past them it ends as any probe past its budget: the inner
// worker is replaced and the call goes out unflagged; the feed then trips
// when it runs the loop for real.
func TestV5ProbeWithinFeedBudget(t *testing.T) {
	old := probeBudget
	probeBudget = time.Hour
	t.Cleanup(func() { probeBudget = old })
	// Generous against the 1 s budget (itself generous against the first
	// turn's few milliseconds, on a loaded machine); before, the probe
	// ran for the hour (a panic rather than a hang: the stuck turn would
	// also hold the test's cleanup).
	watchdog := time.AfterFunc(2*time.Minute, func() { panic("the eager-await probe ran past max_feed_duration") })
	defer watchdog.Stop()
	do := serve5(t)
	lim := &message.ResourceLimits{MaxFeedDurationMicros: u64(1_000_000), MaxTurnDurationMicros: u64(30_000_000)}
	if _, ok := do(configure5(lim, nil)).Body.(*message.Ok); !ok {
		t.Fatal("Configure refused")
	}
	fc := call(t, do(&message.Feed{Code: "x = f()\nn = 0\nwhile True:\n    n += 1\nawait x"}), "Feed")
	if fc.AllowEagerAwait {
		t.Fatal("flagged after a probe past its budget")
	}
	wantError(t, do(returns(fc.CallID, 1)), "TimeoutError", "feed time limit exceeded: ")
}

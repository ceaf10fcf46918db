package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// A lost worker's close code follows the limit the watchdog enforced,
// exactly: a duration limit of the client's is 4004 with its name in the
// reason; the reply bound, a *session.TimeoutError of no limit (not the
// watchdog's: a context's, or an AbortFeed left unanswered) and one of a
// limit the server does not know are the worker's failure, 1011. Before,
// every TimeoutError but the reply bound's closed with 4004, "max_duration
// overrun", whatever limit (or none) it named.
func TestLostCloseFollowsTheLimit(t *testing.T) {
	watchdog := func(l session.DurationLimit) error {
		return &session.TimeoutError{Watchdog: true, Limit: l, Budget: time.Second, Killed: true}
	}
	for _, c := range []struct {
		name    string
		err     error
		code    int
		reason  string
		outcome string
	}{
		{"max_duration", watchdog(session.LimitDuration), CloseDurationBackstop, "max_duration overrun", OutcomeDuration},
		{"max_feed_duration", watchdog(session.LimitFeed), CloseDurationBackstop, "max_feed_duration overrun", OutcomeDuration},
		{"max_turn_duration", watchdog(session.LimitTurn), CloseDurationBackstop, "max_turn_duration overrun", OutcomeDuration},
		{"wrapped", fmt.Errorf("relay: %w", watchdog(session.LimitFeed)), CloseDurationBackstop, "max_feed_duration overrun", OutcomeDuration},
		{"reply bound", watchdog(session.LimitReply), CloseWorkerFailed, "worker failed: ", OutcomeWorkerFailed},
		{"no limit, killed", &session.TimeoutError{Killed: true, Err: context.DeadlineExceeded}, CloseWorkerFailed, "worker failed: ", OutcomeWorkerFailed},
		{"no limit, zero", &session.TimeoutError{}, CloseWorkerFailed, "worker failed: ", OutcomeWorkerFailed},
		{"unknown limit", watchdog(session.DurationLimit(200)), CloseWorkerFailed, "worker failed: ", OutcomeWorkerFailed},
		{"memory", &worker.MemoryLimitError{}, CloseMemoryLimit, "worker memory limit", OutcomeMemory},
		{"oom exit", &child.ExitError{Code: protocol.ExitOOM}, CloseMemoryLimit, "worker memory limit", OutcomeMemory},
		{"crash", fmt.Errorf("worker crashed"), CloseWorkerFailed, "worker failed: worker crashed", OutcomeWorkerFailed},
	} {
		code, reason, outcome := lostClose(c.err)
		if code != c.code || !strings.HasPrefix(reason, c.reason) || outcome != c.outcome {
			t.Errorf("%s: %d %q %s, want %d %q… %s", c.name, code, reason, outcome, c.code, c.reason, c.outcome)
		}
		if len(reason) > 123 {
			t.Errorf("%s: reason of %d bytes", c.name, len(reason))
		}
	}
}

package remoteclient

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// JobResult classifies one job: OK, Lost (the session ended without an
// answer, or could not be resumed) or Wrong (an answer that differs from
// the expected one).
type JobResult uint8

// The job results.
const (
	OK JobResult = iota
	Lost
	Wrong
)

// RunJob runs a multi-step session whose answer depends on every step
// (globals built up over several feeds, and a host answer to an OS call
// suspension), pausing think between requests, and checks the final
// value. It is the workload of examples/remote and the server soak.
func RunJob(ctx context.Context, r *Resuming, n int, think time.Duration) (JobResult, error) {
	if err := r.Open(ctx); err != nil {
		return Lost, err
	}
	defer r.Close()
	const mod = 1000003
	want := n
	steps := []string{"acc = " + strconv.Itoa(n)}
	for k := 1; k <= 4; k++ {
		steps = append(steps, fmt.Sprintf("acc = (acc * 3 + %d) %% %d", k, mod))
		want = (want*3 + k) % mod
	}
	pause := func() {
		if think > 0 {
			time.Sleep(think)
		}
	}
	for _, code := range steps {
		turn, err := r.Do(ctx, &message.Feed{Code: code})
		if err != nil {
			return Lost, err
		}
		if _, ok := turn.Event.Body.(*message.Complete); !ok {
			return Wrong, fmt.Errorf("step %q answered %s", code, turn.Event.Body.EventKind())
		}
		pause()
	}
	// A suspension: the host says which path exists.
	path := "/k" + strconv.Itoa(n%5)
	turn, err := r.Do(ctx, &message.Feed{Code: "from pathlib import Path\nacc = acc + (7 if Path('" + path + "').exists() else 1)\nacc"})
	if err != nil {
		return Lost, err
	}
	oc, ok := turn.Event.Body.(*message.OsCall)
	if !ok || oc.Path != path {
		return Wrong, fmt.Errorf("want an OsCall for %s, got %s", path, turn.Event.Body.EventKind())
	}
	pause()
	rc := &message.ResumeCall{CallID: oc.CallID, Result: &message.ExtResult{Kind: message.ResultReturn}}
	rc.Result.Value = rc.Values.Add(value.Bool(true))
	turn, err = r.Do(ctx, rc)
	if err != nil {
		return Lost, err
	}
	want += 7
	c, ok := turn.Event.Body.(*message.Complete)
	if !ok {
		return Wrong, fmt.Errorf("the resumed feed answered %s", turn.Event.Body.EventKind())
	}
	if got := c.Values.Repr(c.Value); got != strconv.Itoa(want) {
		return Wrong, fmt.Errorf("job %d: got %s, want %d", n, got, want)
	}
	return OK, nil
}

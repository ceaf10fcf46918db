// Package remotejob is the workload of examples/remote and the server's
// soak test: a multi-step session over session.RemoteLauncher whose
// answer depends on every step, started on replicas that may be draining
// or restarting and resumed elsewhere by the launcher's auto-resume.
package remotejob

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// Result classifies one job: OK, Lost (the session ended without an
// answer, or could not be started or resumed) or Wrong (an answer that
// differs from the expected one).
type Result uint8

// The job results.
const (
	OK Result = iota
	Lost
	Wrong
)

// Start opens a session on a replica from pick, trying again (with a
// short doubling pause) while replicas refuse it because they drain or
// restart. The session resumes on pick's replicas after a ShutdownDump.
func Start(ctx context.Context, pick func() string, version uint32) (*session.Session, error) {
	wait := 10 * time.Millisecond
	for attempt := 0; ; attempt++ {
		l := session.RemoteLauncher{URL: pick(), Pick: pick}
		s, err := session.Start(ctx, session.Launch{Launcher: l, ProtocolVersion: version}, session.Config{ScriptName: "job.py"})
		if err == nil {
			return s, nil
		}
		var de *ws.DialError
		retry := errors.Is(err, session.ErrShutdown) ||
			errors.As(err, &de) && (de.StatusCode == 0 || de.Overloaded())
		if !retry || attempt == 100 {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// Run runs a multi-step session whose answer depends on every step
// (globals built up over several feeds, and a host answer to an OS call
// suspension), pausing think between requests, and checks the final
// value. It reports how many times the session resumed elsewhere.
func Run(ctx context.Context, pick func() string, version uint32, n int, think time.Duration) (Result, int, error) {
	s, err := Start(ctx, pick, version)
	if err != nil {
		return Lost, 0, err
	}
	defer s.Close()
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
		if _, err := s.Run(ctx, code); err != nil {
			return Lost, s.Resumed(), err
		}
		pause()
	}
	// A suspension: the host says which path exists.
	path := "/k" + strconv.Itoa(n%5)
	ev, err := s.Feed(ctx, "from pathlib import Path\nacc = acc + (7 if Path('"+path+"').exists() else 1)\nacc")
	if err != nil {
		return Lost, s.Resumed(), err
	}
	oc, ok := ev.Body.(*message.OsCall)
	if !ok || oc.Path != path {
		return Wrong, s.Resumed(), fmt.Errorf("want an OsCall for %s, got %s", path, ev.Body.EventKind())
	}
	pause()
	ev, err = s.Resume(ctx, session.Return(true))
	if err != nil {
		return Lost, s.Resumed(), err
	}
	want += 7
	c, ok := ev.Body.(*message.Complete)
	if !ok {
		return Wrong, s.Resumed(), fmt.Errorf("the resumed feed answered %s", ev.Body.EventKind())
	}
	if got := c.Values.Repr(c.Value); got != strconv.Itoa(want) {
		return Wrong, s.Resumed(), fmt.Errorf("job %d: got %s, want %d", n, got, want)
	}
	return OK, s.Resumed(), nil
}

//go:build unix

package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// start5 starts a session against `montygo subprocess --protocol 5` over
// the real (protocol-2) worker; the parent negotiates 5.
func start5(t *testing.T, cfg session.Config) *session.Session {
	t.Helper()
	bin := relayBinary(t)
	cfg.Logger = quiet
	s, err := session.Start(context.Background(), session.Launch{Launcher: session.ProcessLauncher{
		Worker: worker.Config{Binary: bin, Args: []string{"subprocess", "--protocol", "5"}, Logger: quiet},
	}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if v := s.Version(); v != protocol.Version5 {
		t.Fatalf("negotiated protocol %d, want 5", v)
	}
	return s
}

// A session at protocol 5 gets the per-feed limit: a feed past it ends in
// the child's uncatchable TimeoutError naming the limit in Rust Duration
// form, while a feed within it completes.
func TestSubprocessProtocol5FeedLimit(t *testing.T) {
	s := start5(t, session.Config{Limits: session.Limits{MaxFeedDuration: 400 * time.Millisecond}})
	if r, err := s.Run(context.Background(), "sum(range(10))"); err != nil || r.Repr() != "45" {
		t.Fatalf("got %v %v", r, err)
	}
	_, err := s.Run(context.Background(), "while True:\n    pass")
	var pe *session.PythonError
	if !errors.As(err, &pe) || pe.Type() != "TimeoutError" ||
		!strings.HasPrefix(pe.Exception.Msg(), "feed time limit exceeded: ") || !strings.HasSuffix(pe.Exception.Msg(), " > 400ms") {
		t.Fatalf("got %v, want TimeoutError: feed time limit exceeded: … > 400ms", err)
	}
}

// A session at protocol 5 with a fixed-clock policy reads the fixed
// instant from datetime.now(); the child answers the clock, so no OS
// handler is involved.
func TestSubprocessProtocol5FixedClock(t *testing.T) {
	s := start5(t, session.Config{OsPolicy: &message.OsPolicy{Clock: message.ClockFixed,
		Fixed: message.FixedDateTime{UnixSeconds: 1_700_000_000, Microsecond: 5}}})
	r, err := s.Run(context.Background(), "import datetime\nd = datetime.datetime.now()\n(d.year, d.month, d.day, d.hour, d.minute, d.microsecond)")
	if err != nil || r.Repr() != "(2023, 11, 14, 22, 13, 5)" {
		t.Fatalf("got %v %v", r, err)
	}
}

// A session at protocol 5 gets the per-turn limit, which restarts at each
// resume, and host functions see the empty position the relay reports for
// the released worker (which sends none).
func TestSubprocessProtocol5TurnLimitAndPosition(t *testing.T) {
	s := start5(t, session.Config{Limits: session.Limits{MaxTurnDuration: 400 * time.Millisecond}})
	var pos []message.SourceRange
	reg := session.NewRegistry().MustRegister("f", func(ctx context.Context, c *session.Call) (any, error) {
		pos = append(pos, c.Position)
		return 1, nil
	})
	_, err := s.Run(context.Background(), "f()\nwhile True:\n    pass", session.WithFunctions(reg))
	var pe *session.PythonError
	if !errors.As(err, &pe) || pe.Type() != "TimeoutError" ||
		!strings.HasPrefix(pe.Exception.Msg(), "turn time limit exceeded: ") || !strings.HasSuffix(pe.Exception.Msg(), " > 400ms") {
		t.Fatalf("got %v, want TimeoutError: turn time limit exceeded: … > 400ms", err)
	}
	if len(pos) != 1 || pos[0] != (message.SourceRange{}) {
		t.Fatalf("positions %+v, want one empty range", pos)
	}
}

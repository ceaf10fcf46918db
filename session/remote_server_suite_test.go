//go:build unix

package session_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/session"
)

// TestRealSuiteOverWebSocket runs the real-worker feature cases again
// over a loopback WebSocket against the real Monty server (package
// server, what `montygo serve` runs, with the real worker behind it):
// every session is a RemoteLauncher session, its version negotiated once
// for the URL.
func TestRealSuiteOverWebSocket(t *testing.T) {
	_, url := servertest.Start(t, nil)
	defer session.SetRealLaunch(session.Launch{Launcher: session.RemoteLauncher{URL: url}})()
	for _, c := range session.RealSuiteCases {
		t.Run(c.Name, c.F)
	}
}

// The server enforces max_suspensions itself: the suspension past the
// limit never reaches the parent, and the feed ends with the server's
// RuntimeError. The parent reports it as it reports its own enforcement,
// a *SuspensionLimitError (before, a *PythonError: a remote session broke
// Run's documented error), and the session lives on. The low-level API
// gets it from the Resume that the server answered with the abort.
func TestRemoteSuspensionLimitEnforcedByServer(t *testing.T) {
	_, url := servertest.Start(t, nil)
	s := startRemote(t, session.RemoteLauncher{URL: url}, session.Config{Limits: session.Limits{MaxSuspensions: 3}})
	calls := 0
	reg := session.NewRegistry().MustRegister("f", func(i int) int { calls++; return i })
	ctx := context.Background()
	_, err := s.Run(ctx, "for i in range(10): f(i)", session.WithFunctions(reg))
	var sl *session.SuspensionLimitError
	if !errors.As(err, &sl) || sl.Limit != 3 || sl.Exception.Type != "RuntimeError" ||
		sl.Exception.Msg() != "suspension limit 3 exceeded" || calls != 3 || !session.Survives(err) ||
		s.State() != session.StateIdle {
		t.Fatalf("got %v (%T) after %d calls, state %v", err, err, calls, s.State())
	}
	if _, err := s.Feed(ctx, "for i in range(10): f(i)"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, err = s.Resume(ctx, session.Return(0))
	}
	if !errors.As(err, &sl) || sl.Limit != 3 || s.State() != session.StateIdle {
		t.Fatalf("low-level: %v (%T), state %v", err, err, s.State())
	}
	// Code that raises the same text itself is a Python error (unless
	// it does so right after exactly the limit of suspensions: the
	// parent cannot tell that from the server's abort).
	_, err = s.Run(ctx, "raise RuntimeError('suspension limit 3 exceeded')")
	if errors.As(err, &sl) {
		t.Fatalf("a raise in the sandbox is a SuspensionLimitError: %v", err)
	}
	if r, err := s.Run(ctx, "1 + 2"); err != nil || r.Repr() != "3" {
		t.Fatalf("after the limit: %v %v", r, err)
	}
}

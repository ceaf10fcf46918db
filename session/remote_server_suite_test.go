package session_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomonty/monty/session"
)

// TestRealSuiteOverWebSocket runs the real-worker feature cases again
// over a loopback WebSocket against the real Monty server (package
// server, what `montygo serve` runs, with the real worker behind it):
// every session is a RemoteLauncher session, its version negotiated once
// for the URL.
func TestRealSuiteOverWebSocket(t *testing.T) {
	_, url := remoteServer(t, nil)
	defer session.SetRealLaunch(session.Launch{Launcher: session.RemoteLauncher{URL: url}})()
	for _, c := range session.RealSuiteCases {
		t.Run(c.Name, c.F)
	}
}

// The server enforces max_suspensions itself: the suspension past the
// limit never reaches the parent, the feed ends with the server's
// RuntimeError, and the session lives on.
func TestRemoteSuspensionLimitEnforcedByServer(t *testing.T) {
	_, url := remoteServer(t, nil)
	s := startRemote(t, session.RemoteLauncher{URL: url}, session.Config{Limits: session.Limits{MaxSuspensions: 3}})
	calls := 0
	reg := session.NewRegistry().MustRegister("f", func(i int) int { calls++; return i })
	ctx := context.Background()
	_, err := s.Run(ctx, "for i in range(10): f(i)", session.WithFunctions(reg))
	var pe *session.PythonError
	if !errors.As(err, &pe) || pe.Exception.Type != "RuntimeError" || pe.Exception.Msg() != "suspension limit 3 exceeded" || calls != 3 || !session.Survives(err) {
		t.Fatalf("got %v after %d calls", err, calls)
	}
	if r, err := s.Run(ctx, "1 + 2"); err != nil || r.Repr() != "3" {
		t.Fatalf("after the limit: %v %v", r, err)
	}
}

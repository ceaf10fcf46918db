package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

func TestIdleTimeoutClosesWith4000(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.IdleTimeout = 300 * time.Millisecond })
	c := dialConfigured(t, ts.URL, 4)
	if code := closeCode(t, c); code != CloseIdleTimeout {
		t.Fatalf("close code %d, want %d", code, CloseIdleTimeout)
	}
	// A session that keeps talking stays up past the idle timeout.
	busy := dialConfigured(t, ts.URL, 4)
	for range 6 {
		time.Sleep(100 * time.Millisecond)
		if got := repr(t, busy, "1"); got != "1" {
			t.Fatal(got)
		}
	}
}

func TestSessionTimeoutClosesWith4001(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.SessionTimeout = 500 * time.Millisecond })
	c := dialConfigured(t, ts.URL, 4)
	if code := closeCode(t, c); code != CloseSessionTimeout {
		t.Fatalf("close code %d, want %d", code, CloseSessionTimeout)
	}
}

func TestTurnTimeoutClosesWith4002(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.TurnTimeout = 300 * time.Millisecond })
	c := dialConfigured(t, ts.URL, 4)
	if err := c.Conn.WriteFrame(encodeRequest(t, 4, &message.Feed{Code: "while True:\n    pass"})); err != nil {
		t.Fatal(err)
	}
	if code := closeCode(t, c); code != CloseTurnTimeout {
		t.Fatalf("close code %d, want %d", code, CloseTurnTimeout)
	}
	// The server goes on serving.
	if got := repr(t, dialConfigured(t, ts.URL, 4), "2 * 21"); got != "42" {
		t.Fatal(got)
	}
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="turn_timeout"} 1`)
}

func TestClientCloseEndsSessionOK(t *testing.T) {
	ts := startServer(t, nil)
	c := dial(t, ts.URL, 4, ws.DialOptions{})
	configure(t, c, 4, nil)
	c.Close()
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="ok"} 1`)
	waitMetric(t, ts, `monty_server_sessions_active 0`)
}

// TestTurnTimeoutIsATimeoutToTheSession checks what a Go parent sees of a
// turn the server cut short: a *session.DisconnectedError with code 4002
// that matches session.ErrTimeout, as a local watchdog kill does, so one
// errors.Is covers local and remote workers.
func TestTurnTimeoutIsATimeoutToTheSession(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.TurnTimeout = 300 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := session.Start(ctx, session.Launch{Launcher: session.RemoteLauncher{URL: ts.URL}}, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Run(ctx, "while True:\n    pass")
	var de *session.DisconnectedError
	if !errors.As(err, &de) || de.Code != CloseTurnTimeout || !errors.Is(err, session.ErrTimeout) ||
		errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a turn past --turn-timeout: %v", err)
	}
}

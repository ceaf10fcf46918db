//go:build unix

package server

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// A Load that a drain answers with a ShutdownDump did not run; the
// remote session resumes on another replica and sends it again, and it
// must then restore the dump as it would have on the first replica.
//
// It fails today: package session resumes by loading the ShutdownDump's
// dump (of the configured, not yet started session) and then sends the
// Load again, which the restored session refuses ("Load requires a
// session that has not started"), since a Load counts as its start. The
// fix belongs in package session (a Load interrupted by a ShutdownDump
// needs only a configured session on the new connection, not the dump),
// so the test is skipped until then; MONTY_REPRO_LOAD_RESUME=1 runs it.
// TestChaosSoak counts the cases it meets.
func TestLoadInterruptedByDrainResumes(t *testing.T) {
	if os.Getenv("MONTY_REPRO_LOAD_RESUME") == "" {
		t.Skip("known defect of package session's resume (see the comment); MONTY_REPRO_LOAD_RESUME=1 runs it")
	}
	a := startServer(t, func(c *Config) { c.DrainGrace = time.Minute })
	b := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := func(url string) *session.Session {
		t.Helper()
		s, err := session.Start(ctx, session.Launch{ProtocolVersion: 4, Launcher: session.RemoteLauncher{
			URL: url, Pick: func() string { return b.URL }, Dial: ws.DialOptions{},
		}}, session.Config{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	src := start(b.URL)
	if _, err := src.Run(ctx, "keep = 41"); err != nil {
		t.Fatal(err)
	}
	dump, err := src.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}

	s := start(a.URL)
	a.Drain()
	if _, err := s.Load(ctx, dump); err != nil {
		t.Fatalf("Load during a drain (resumed %d times): %v", s.Resumed(), err)
	}
	if s.Resumed() != 1 {
		t.Fatalf("resumed %d times, want 1", s.Resumed())
	}
	res, err := s.Run(ctx, "keep + 1")
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Repr(); got != "42" {
		t.Fatalf("after the resumed Load: %s, want 42", got)
	}
}

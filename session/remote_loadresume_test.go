//go:build unix

package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/session"
)

// drainPair starts two real servers, a (long drain grace, so that a
// drained session's next request is answered with a ShutdownDump) and b,
// and a source session on b whose dump holds keep = 41. open starts a
// session on a that resumes on b; urlB is b's URL.
func drainPair(t *testing.T) (a *server.Server, urlB string, dump []byte, open func() *session.Session) {
	t.Helper()
	a, urlA := servertest.Start(t, func(c *server.Config) { c.DrainGrace = time.Minute })
	_, urlB = servertest.Start(t, nil)
	src := startRemote(t, session.RemoteLauncher{URL: urlB}, session.Config{})
	ctx := context.Background()
	if _, err := src.Run(ctx, "keep = 41"); err != nil {
		t.Fatal(err)
	}
	dump, err := src.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	open = func() *session.Session {
		return startRemote(t, session.RemoteLauncher{URL: urlA, Pick: func() string { return urlB }}, session.Config{})
	}
	return a, urlB, dump, open
}

// A Load that a drain interrupts succeeds after the automatic resume.
// The session was configured but had not started, so the server's dump
// is of an unstarted session; restoring it on the new replica would
// start that one, and the re-sent Load was refused ("Load requires a
// session that has not started"). The resume now only configures the
// new replica before it sends the Load again.
func TestRemoteLoadInterruptedByDrainResumes(t *testing.T) {
	a, _, dump, open := drainPair(t)
	s := open()
	ctx := context.Background()
	a.Drain()
	if _, err := s.Load(ctx, dump); err != nil {
		t.Fatalf("Load interrupted by the drain: %v", err)
	}
	if s.Resumed() != 1 {
		t.Fatalf("%d resumes, want 1", s.Resumed())
	}
	r, err := s.Run(ctx, "keep + 1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Repr() != "42" {
		t.Fatalf("keep + 1 = %s after the resumed Load, want 42", r.Repr())
	}
}

// A Load that the worker would refuse (the session has already run code,
// or has been dumped, which builds its interpreter) is still refused when
// a drain interrupts it: the resume restores the session's own state
// first, as for any other request, and does not turn the refusal into a
// success. Each case is checked without a drain too, so that the test
// follows the worker's own rule.
func TestRemoteRefusedLoadInterruptedByDrainStaysRefused(t *testing.T) {
	cases := []struct {
		name  string
		setup func(*session.Session) error
	}{
		{"after a run", func(s *session.Session) error {
			_, err := s.Run(context.Background(), "mine = 7")
			return err
		}},
		{"after a dump", func(s *session.Session) error {
			_, err := s.Dump(context.Background())
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, _, dump, open := drainPair(t)
			ctx := context.Background()
			for _, drain := range []bool{false, true} {
				s := open()
				if err := tc.setup(s); err != nil {
					t.Fatal(err)
				}
				if drain {
					a.Drain()
				}
				_, err := s.Load(ctx, dump)
				var pe *session.PythonError
				if !errors.As(err, &pe) || !strings.Contains(err.Error(), "has not started") {
					t.Fatalf("drain %v: Load got %v, want the worker's refusal", drain, err)
				}
				if want := map[bool]int{false: 0, true: 1}[drain]; s.Resumed() != want {
					t.Fatalf("drain %v: %d resumes, want %d", drain, s.Resumed(), want)
				}
				if tc.name == "after a run" {
					// The session's own state came through the resume.
					if r, err := s.Run(ctx, "mine + 1"); err != nil || r.Repr() != "8" {
						t.Fatalf("drain %v: mine + 1 = %v, %v; want 8", drain, r, err)
					}
				}
			}
		})
	}
}

// A Dump of a configured, unstarted session that a drain interrupts
// returns a dump after the resume, and that dump loads into a fresh
// session.
func TestRemoteDumpOfUnstartedSessionInterruptedByDrain(t *testing.T) {
	a, urlB, _, open := drainPair(t)
	s := open()
	ctx := context.Background()
	a.Drain()
	got, err := s.Dump(ctx)
	if err != nil {
		t.Fatalf("Dump interrupted by the drain: %v", err)
	}
	if s.Resumed() != 1 || len(got) == 0 {
		t.Fatalf("%d resumes, %d bytes", s.Resumed(), len(got))
	}
	fresh := startRemote(t, session.RemoteLauncher{URL: urlB}, session.Config{})
	if _, err := fresh.Load(ctx, got); err != nil {
		t.Fatalf("loading the dump: %v", err)
	}
	if r, err := fresh.Run(ctx, "1 + 1"); err != nil || r.Repr() != "2" {
		t.Fatalf("1 + 1 = %v, %v after loading the dump", r, err)
	}
}

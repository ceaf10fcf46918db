//go:build unix

package session_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/session"
)

// drainOnDial returns a launcher for a session started on a real server a
// (long drain grace) that resumes on a second one, b: a drains as soon as
// the start's dial to it has succeeded, so that the upgrade is accepted
// and the start's own Configure is the first request a answers during the
// drain (with a ShutdownDump, and no dump: the session is not configured).
func drainOnDial(t *testing.T, noResume bool) (session.RemoteLauncher, *atomic.Int32) {
	t.Helper()
	a, urlA := servertest.Start(t, func(c *server.Config) { c.DrainGrace = time.Minute })
	_, urlB := servertest.Start(t, nil)
	var once sync.Once
	var picks atomic.Int32
	return session.RemoteLauncher{
		URL:      urlA,
		NoResume: noResume,
		Pick:     func() string { picks.Add(1); return urlB },
		OnDial: func(url string, err error) {
			if url == urlA && err == nil {
				once.Do(a.Drain)
			}
		},
	}, &picks
}

// A drain that answers Start's own Configure does not fail the start when
// Pick names a healthy replica: a session that was only being configured
// has nothing to lose, so it redials and is configured there. Before, the
// Configure was never resumed and Start failed with the *ShutdownError.
func TestRemoteStartConfigureInterruptedByDrainResumes(t *testing.T) {
	l, picks := drainOnDial(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := session.Start(ctx, session.Launch{Launcher: l, ProtocolVersion: 4}, session.Config{})
	if err != nil {
		t.Fatalf("Start with its Configure drained: %v", err)
	}
	defer s.Close()
	if s.Resumed() != 1 || picks.Load() != 1 {
		t.Fatalf("%d resumes, %d picks; want 1 and 1", s.Resumed(), picks.Load())
	}
	r, err := s.Run(ctx, "x = 20\nx + 22")
	if err != nil || r.Repr() != "42" {
		t.Fatalf("Run on the resumed session: %v, %v; want 42", r, err)
	}
}

// With NoResume, Start's drained Configure still fails the start with the
// *ShutdownError (nothing is redialled).
func TestRemoteStartConfigureInterruptedByDrainNoResume(t *testing.T) {
	l, picks := drainOnDial(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := session.Start(ctx, session.Launch{Launcher: l, ProtocolVersion: 4}, session.Config{})
	var se *session.ShutdownError
	if !errors.As(err, &se) || se.Resume != nil {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Start: %v; want a *ShutdownError with no resume", err)
	}
	if picks.Load() != 0 {
		t.Fatalf("%d picks, want none", picks.Load())
	}
}

// A start whose Configure every replica answers with a ShutdownDump is
// resumed at most 8 times, as any request is, and then fails with the
// *ShutdownError saying why.
func TestRemoteStartConfigureResumeIsBounded(t *testing.T) {
	var configures atomic.Int32
	sc := newScripted(t, func(req message.Request) []message.Event {
		if _, ok := req.(*message.Configure); ok {
			configures.Add(1)
		}
		return []message.Event{&message.ShutdownDump{}}
	})
	stop := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			select {
			case <-sc.closed:
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-drained })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := session.Start(ctx, session.Launch{Launcher: session.RemoteLauncher{URL: sc.url}, ProtocolVersion: 4}, session.Config{})
	var se *session.ShutdownError
	if !errors.As(err, &se) || se.Resume == nil || !strings.Contains(se.Resume.Error(), "9 ShutdownDumps") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Start: %v; want a *ShutdownError whose Resume says it gave up", err)
	}
	if n := configures.Load(); n != 9 {
		t.Fatalf("Configure sent %d times, want 9 (the first and 8 resumes)", n)
	}
}

// A Configure sent through Do on a configured session is refused by the
// server with an Error and the session lives on with its state; a drain
// that answers that Configure now leaves the session alike (it resumes,
// restores its state and sends the Configure again, which the new replica
// refuses the same way). Before, the drain ended the session with its
// *ShutdownError.
func TestRemoteConfigureThroughDoUnderDrain(t *testing.T) {
	a, urlA := servertest.Start(t, func(c *server.Config) { c.DrainGrace = time.Minute })
	_, urlB := servertest.Start(t, nil)
	ctx := context.Background()
	for _, drain := range []bool{false, true} {
		s := startRemote(t, session.RemoteLauncher{URL: urlA, Pick: func() string { return urlB }}, session.Config{})
		if _, err := s.Run(ctx, "keep = 41"); err != nil {
			t.Fatal(err)
		}
		if drain {
			a.Drain()
		}
		ev, err := s.Do(ctx, &message.Configure{})
		if err != nil {
			t.Fatalf("drain %v: Do(Configure): %v", drain, err)
		}
		e, ok := ev.Body.(*message.Error)
		if !ok || !strings.Contains(e.Exception.Msg(), "Configure while a session already exists") {
			t.Fatalf("drain %v: Do(Configure) answered %v, want the server's refusal", drain, ev.Body)
		}
		if want := map[bool]int{false: 0, true: 1}[drain]; s.Resumed() != want {
			t.Fatalf("drain %v: %d resumes, want %d", drain, s.Resumed(), want)
		}
		if r, err := s.Run(ctx, "keep + 1"); err != nil || r.Repr() != "42" {
			t.Fatalf("drain %v: keep + 1 = %v, %v; want 42", drain, r, err)
		}
	}
}

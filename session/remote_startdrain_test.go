//go:build unix

package session_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
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

// fronts numbers the URLs front makes.
var fronts atomic.Int64

// front serves h's requests on a URL of its own (with a query no other
// URL of the process has, so the negotiation cache knows nothing of it,
// whatever port the server got), recording the X-Replica header of each.
func front(t *testing.T, h func() http.Handler, query string) (string, func() []string) {
	t.Helper()
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Replica"))
		mu.Unlock()
		h().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	q := url.Values{"case": {query}, "n": {strconv.FormatInt(fronts.Add(1), 10)}}
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/?" + q.Encode(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// A start whose Configure a drains resumes on b (Redial), and b refuses
// the protocol version (the real server speaks 4; an unpinned start asks
// 5 first): the downgrade is negotiated with b, the worker that refused,
// on a new connection to b's URL with b's options, and the version is
// cached under b's URL only. Before, the downgrade redialled the
// launcher's URL a with a's options (here a balancer whose next
// connection reaches a fresh replica; a draining a refuses it with 503),
// so the session ran on a, and version 4 was cached for a, learned from b.
func TestRemoteStartDrainedThenRefusedNegotiatesWithTheNewReplica(t *testing.T) {
	drainer, _ := servertest.Start(t, func(c *server.Config) { c.DrainGrace = time.Minute })
	fresh, _ := servertest.Start(t, nil)
	b, _ := servertest.Start(t, nil)
	var conns atomic.Int32
	urlA, seenA := front(t, func() http.Handler {
		if conns.Add(1) == 1 {
			return drainer.Handler()
		}
		return fresh.Handler()
	}, t.Name())
	urlB, seenB := front(t, b.Handler, t.Name())
	var (
		mu    sync.Mutex
		dials []string
		once  sync.Once
	)
	l := session.RemoteLauncher{
		URL:  urlA,
		Dial: ws.DialOptions{Header: http.Header{"X-Replica": {"a"}}},
		Redial: func() (string, ws.DialOptions) {
			return urlB, ws.DialOptions{Header: http.Header{"X-Replica": {"b"}}}
		},
		OnDial: func(u string, err error) {
			mu.Lock()
			dials = append(dials, u)
			mu.Unlock()
			if u == urlA && err == nil {
				once.Do(drainer.Drain)
			}
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := session.Start(ctx, session.Launch{Launcher: l}, session.Config{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer s.Close()
	mu.Lock()
	got := append([]string(nil), dials...)
	mu.Unlock()
	if want := []string{urlA, urlB, urlB}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("dials %q, want %q: the start on a, the resume on b, the downgrade on b", got, want)
	}
	// (A downgrade refused for capacity, the refused connection still
	// holding its slot, is dialled again: two requests or more.)
	if got := seenB(); len(got) < 2 || strings.Trim(strings.Join(got, ""), "b") != "" {
		t.Errorf("b received X-Replica %q, want b's own options on each of its dials (at least two)", got)
	}
	if got := seenA(); strings.Join(got, " ") != "a" {
		t.Errorf("a received X-Replica %q, want only the start's dial", got)
	}
	if neg := s.Negotiation(); neg.Version != 4 || neg.Attempts != 2 {
		t.Errorf("negotiation %+v, want version 4 in 2 attempts", neg)
	}
	if r, err := s.Run(ctx, "6 * 7"); err != nil || r.Repr() != "42" {
		t.Fatalf("Run: %v, %v; want 42", r, err)
	}
	// The cache learned 4 from b: under b's URL, not a's.
	for _, c := range []struct {
		url    string
		cached bool
	}{{urlB, true}, {urlA, false}} {
		s2, err := session.Start(ctx, session.Launch{Launcher: session.RemoteLauncher{URL: c.url}}, session.Config{})
		if err != nil {
			t.Fatalf("Start on %s: %v", c.url, err)
		}
		neg := s2.Negotiation()
		s2.Close()
		if neg.FromCache != c.cached || neg.Version != 4 {
			t.Errorf("a later start on %s: %+v; want FromCache %v, version 4", c.url, neg, c.cached)
		}
	}
}

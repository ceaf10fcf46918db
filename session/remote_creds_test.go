//go:build unix

package session_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
	"go.opentelemetry.io/otel/trace"
)

// upgrades records the headers of every request a server received.
type upgrades struct {
	mu sync.Mutex
	hs []http.Header
}

func (u *upgrades) all() []http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]http.Header(nil), u.hs...)
}

// tokenServer runs a real server that accepts only the bearer token tok
// (for the client name), behind a handler that records the headers of
// every request it receives. It returns the server, the ws:// URL of the
// recording front and the record.
func tokenServer(t *testing.T, name, tok string) (*server.Server, string, *upgrades) {
	t.Helper()
	toks, err := server.ParseTokens(strings.NewReader(name + ":" + tok + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := servertest.Start(t, func(c *server.Config) { c.Tokens = toks })
	seen := &upgrades{}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.mu.Lock()
		seen.hs = append(seen.hs, r.Header.Clone())
		seen.mu.Unlock()
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return srv, "ws" + strings.TrimPrefix(front.URL, "http") + "/", seen
}

func bearer(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

// onlyToken fails t unless seen holds at least one request and every one
// carried the bearer token want.
func onlyToken(t *testing.T, who string, seen *upgrades, want string) {
	t.Helper()
	hs := seen.all()
	if len(hs) == 0 {
		t.Errorf("%s received no request", who)
	}
	for i, h := range hs {
		if got := h.Get("Authorization"); got != "Bearer "+want {
			t.Errorf("%s: request %d carried Authorization %q, want its own token only", who, i, got)
		}
	}
}

// A resume dials the URL Redial names with the options Redial returns
// with it, never with the launcher's Dial, which belongs to URL: each
// server sees its own token only, and the new one accepts the resume. As
// with Dial, the span's traceparent is sent with Redial's options.
func TestRemoteRedialUsesTheOptionsOfTheURLItNames(t *testing.T) {
	const tokA, tokB = "a-6c2e91f04b7d38a5e0", "b-1f8a4d6e93c70b25d4"
	a, urlA, seenA := tokenServer(t, "alice", tokA)
	_, urlB, seenB := tokenServer(t, "bob", tokB)
	var (
		mu              sync.Mutex
		redials         int
		dialed, resumed []string
	)
	l := session.RemoteLauncher{
		URL:  urlA,
		Dial: ws.DialOptions{Header: bearer(tokA)},
		Redial: func() (string, ws.DialOptions) {
			mu.Lock()
			redials++
			mu.Unlock()
			return urlB, ws.DialOptions{Header: bearer(tokB)}
		},
		OnDial: func(url string, err error) {
			mu.Lock()
			dialed = append(dialed, url)
			mu.Unlock()
		},
		OnResume: func(url string, err error) {
			mu.Lock()
			resumed = append(resumed, url)
			mu.Unlock()
		},
	}
	s := startRemote(t, l, session.Config{})
	if _, err := s.Run(context.Background(), "x = 41"); err != nil {
		t.Fatal(err)
	}
	a.Drain()
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	r, err := s.Run(ctx, "x + 1")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if r.Repr() != "42" || s.Resumed() != 1 || redials != 1 {
		t.Fatalf("got %s after %d resumes and %d redials", r.Repr(), s.Resumed(), redials)
	}
	// The session runs on the URL Redial named: the resume and the dials
	// are reported there.
	if len(dialed) != 2 || dialed[0] != urlA || dialed[1] != urlB || len(resumed) != 1 || resumed[0] != urlB {
		t.Errorf("dials %q, resumes %q; want a's then b's dial and a resume on b", dialed, resumed)
	}
	onlyToken(t, "a", seenA, tokA)
	onlyToken(t, "b", seenB, tokB)
	if hs := seenB.all(); len(hs) != 1 || hs[0].Get("Traceparent") != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {
		t.Errorf("b's upgrades %v, want one carrying the span's traceparent", hs)
	}
}

// After a resume the session's frame cap is the new connection's, set by
// the options its URL was dialled with: a request over it is refused
// before it is sent (a *RequestTooLargeError, and the session lives on),
// as on a session that started there. Before, the session kept sizing
// requests against the old connection's cap.
func TestRemoteResumeTakesTheNewConnectionsFrameCap(t *testing.T) {
	const limit = 64 << 10
	a, urlA := servertest.Start(t, nil)
	_, urlB := servertest.Start(t, nil)
	l := session.RemoteLauncher{
		URL:    urlA,
		Redial: func() (string, ws.DialOptions) { return urlB, ws.DialOptions{MaxFrameLen: limit} },
	}
	s := startRemote(t, l, session.Config{})
	ctx := context.Background()
	if _, err := s.Run(ctx, "x = 41"); err != nil {
		t.Fatal(err)
	}
	a.Drain()
	if r, err := s.Run(ctx, "x + 1"); err != nil || r.Repr() != "42" || s.Resumed() != 1 {
		t.Fatalf("after the drain: %v %v (resumes %d)", r, err, s.Resumed())
	}
	_, err := s.Run(ctx, "y = '"+strings.Repeat("a", 2*limit)+"'")
	var tl *session.RequestTooLargeError
	if !errors.As(err, &tl) || tl.Max != limit {
		t.Fatalf("a Feed of twice b's cap on b: %v, want a *RequestTooLargeError at %d", err, limit)
	}
	if r, err := s.Run(ctx, "y = 'a' * 1024\nx + len(y)"); err != nil || r.Repr() != "1065" {
		t.Fatalf("after the refusal: %v %v", r, err)
	}
}

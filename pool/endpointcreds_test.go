//go:build unix

package pool_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// authSeen records the Authorization header of every request a server
// received.
type authSeen struct {
	mu   sync.Mutex
	auth []string
}

func (a *authSeen) add(v string) {
	a.mu.Lock()
	a.auth = append(a.auth, v)
	a.mu.Unlock()
}

func (a *authSeen) all() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.auth...)
}

// tokenServer runs a real server that accepts only the bearer token tok
// (for the client name), behind a handler that records the Authorization
// header of every request it receives. It returns the server, the ws://
// URL of the recording front and the record.
func tokenServer(t *testing.T, name, tok string) (*server.Server, string, *authSeen) {
	t.Helper()
	toks, err := server.ParseTokens(strings.NewReader(name + ":" + tok + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := servertest.Start(t, func(c *server.Config) { c.Tokens = toks })
	seen := &authSeen{}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.add(r.Header.Get("Authorization"))
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return srv, "ws" + strings.TrimPrefix(front.URL, "http") + "/", seen
}

// onlyToken fails t unless seen holds at least one request and every one
// carried the bearer token want.
func onlyToken(t *testing.T, who string, seen *authSeen, want string) {
	t.Helper()
	got := seen.all()
	if len(got) == 0 {
		t.Errorf("%s received no request", who)
	}
	for i, h := range got {
		if h != "Bearer "+want {
			t.Errorf("%s: request %d carried Authorization %q, want its own token only", who, i, h)
		}
	}
}

// Each endpoint's dial options go to that endpoint only. A session that
// starts on a and resumes on b after a's drain dials b with b's options
// (here b's bearer token, from a header function), never with a's. Before,
// every redial of a resume used the options of the endpoint the session
// started on: a's token went to b (a credential leak if b is run by
// someone else), and b, which knows only its own token, refused the
// resume with 401.
func TestResumeDialsTheNewEndpointWithItsOwnOptions(t *testing.T) {
	const tokA, tokB = "a-3f9c1e7b52d84a06e1", "b-8d2e6a0c47f1953b27"
	a, urlA, seenA := tokenServer(t, "alice", tokA)
	_, urlB, seenB := tokenServer(t, "bob", tokB)
	var bCalls int
	var bMu sync.Mutex
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal: true,
		Endpoints: []pool.Endpoint{
			{Name: "a", URL: urlA, Dial: ws.DialOptions{Header: http.Header{"Authorization": {"Bearer " + tokA}}}},
			{Name: "b", URL: urlB, Dial: ws.DialOptions{HeaderFunc: func(context.Context) (http.Header, error) {
				bMu.Lock()
				bCalls++
				bMu.Unlock()
				return http.Header{"Authorization": {"Bearer " + tokB}}, nil
			}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	s := checkout(t, p) // a and b tie: a first
	defer s.Close()
	if s.Endpoint() != "a" {
		t.Fatalf("started on %s, want a", s.Endpoint())
	}
	run(t, s, "x = 20", "None")
	a.Drain()
	run(t, s, "x + 22", "42")
	if s.Endpoint() != "b" || s.Resumed() != 1 {
		t.Fatalf("on %s after %d resumes, want on b after 1", s.Endpoint(), s.Resumed())
	}
	onlyToken(t, "a", seenA, tokA)
	onlyToken(t, "b", seenB, tokB)
	bMu.Lock()
	calls := bCalls
	bMu.Unlock()
	if calls == 0 {
		t.Errorf("b's header function was never called")
	}
	if st := p.Stat().Endpoints; st[1].DialFailures != 0 || st[1].Refusals != 0 || st[1].Resumes != 1 {
		t.Errorf("b's stats %+v, want one resume and no failed dial", st[1])
	}
}

// A start whose Configure a drains resumes on b inside the start, dialled
// with b's options: b sees its own token only. Before, the start's resume
// dialled b with a's options, a's token included, and b refused it.
func TestStartDrainedResumesWithTheNewEndpointsOptions(t *testing.T) {
	const tokA, tokB = "a-0d7e3b9f61c24a85f2", "b-5a91c0e7d3f46b28e9"
	a, ua := drainingEndpoint(t)
	a.Dial.Header = http.Header{"Authorization": {"Bearer " + tokA}}
	_, urlB, seenB := tokenServer(t, "bob", tokB)
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal: true, ProtocolVersion: 4, Logger: slog.New(slog.DiscardHandler),
		Endpoints: []pool.Endpoint{a, {Name: "b", URL: urlB, Dial: ws.DialOptions{Header: http.Header{"Authorization": {"Bearer " + tokB}}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := p.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatalf("Checkout: %v", err)
	}
	defer s.Close()
	if s.Endpoint() != "b" || s.Resumed() != 1 || ua.count(a.URL) != 1 {
		t.Fatalf("session on %q after %d resumes (%d upgrades on a), want on b after 1", s.Endpoint(), s.Resumed(), ua.count(a.URL))
	}
	run(t, s, "6 * 7", "42")
	onlyToken(t, "b", seenB, tokB)
}

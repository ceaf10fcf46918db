//go:build unix

package pool_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	_ "github.com/gomonty/monty/codec/codecv4"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// configureEndpoint is a protocol-4 endpoint that answers every
// connection's Configure with answer (then waits for the client to
// leave), or, with answer nil, closes the connection with code after
// reading it. It counts the connections that reached it.
func configureEndpoint(t *testing.T, answer message.Event, code int) (string, *atomic.Int32) {
	t.Helper()
	var frame []byte
	if answer != nil {
		cd, _ := codec.ForVersion(4)
		var err error
		if frame, err = cd.AppendEvent(nil, &message.ChildEvent{Body: answer}); err != nil {
			t.Fatal(err)
		}
	}
	var conns atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := ws.Accept(w, r, ws.AcceptOptions{})
		if err != nil {
			return
		}
		defer conn.Close()
		conns.Add(1)
		if _, err := conn.ReadFrame(); err != nil { // the Configure
			return
		}
		if frame == nil {
			conn.CloseWith(code, "not that Configure")
			return
		}
		if conn.WriteFrame(frame) == nil {
			conn.ReadFrame() // until the client leaves
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/", &conns
}

// An endpoint that turns away every Configure, with an Error or by
// closing with 1008 or 1009 (what a Configure's own fault may explain,
// so that alone backs nothing off), must not take the pool's checkouts
// with it. It always has the fewest sessions (none), so every checkout
// chose it first: a refused Configure was returned at once, and four of
// five checkouts failed although a healthy endpoint had room; a close
// cost each checkout a round trip there. Now a checkout tries a refused
// Config on the other endpoints too, and an endpoint that turned away a
// Config another one served is backed off like a broken one.
func TestConfigureRefuserDoesNotTakeTheCheckouts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer message.Event
		code   int
	}{
		{"Error", &message.Error{Exception: message.NewException("ValueError", "this server refuses every Configure")}, 0},
		{"close 1008", nil, 1008},
		{"close 1009", nil, 1009},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad, badConns := configureEndpoint(t, tc.answer, tc.code)
			good, goodConns := configureEndpoint(t, &message.Ok{}, 0)
			p, err := pool.New(context.Background(), pool.Config{
				NoLocal:         true,
				Endpoints:       []pool.Endpoint{{Name: "bad", URL: bad}, {Name: "good", URL: good}},
				EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
				ProtocolVersion: 4,
				Logger:          slog.New(slog.DiscardHandler),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer closeWithin(t, p)
			var held []*pool.Session
			defer func() {
				for _, s := range held {
					s.Close()
				}
			}()
			for i := range 5 {
				s := checkout(t, p) // fails the test on an error
				if s.Endpoint() != "good" {
					t.Fatalf("checkout %d on %s", i, s.Endpoint())
				}
				held = append(held, s)
			}
			if n, m := badConns.Load(), goodConns.Load(); n != 1 || m != 5 {
				t.Fatalf("%d connections reached the refusing endpoint and %d the good one, want 1 and 5", n, m)
			}
			if st := p.Stat().Endpoints[0]; st.StartFailures != 1 || !st.BackedOffUntil.After(time.Now()) {
				t.Fatalf("refusing endpoint: %+v, want one start failure and a backoff", st)
			}
		})
	}
}

// A Config that every endpoint refuses with an Error is the Config's
// fault: the checkout returns the refusal (not ErrNoEndpoint) once each
// endpoint has refused it, and backs none of them off.
func TestConfigureRefusedEverywhereIsReturned(t *testing.T) {
	refusal := &message.Error{Exception: message.NewException("ValueError", "no such Configure")}
	a, aConns := configureEndpoint(t, refusal, 0)
	b, bConns := configureEndpoint(t, refusal, 0)
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:         true,
		Endpoints:       []pool.Endpoint{{Name: "a", URL: a}, {Name: "b", URL: b}},
		EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
		ProtocolVersion: 4,
		Logger:          slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := p.Checkout(ctx, session.Config{})
	if err == nil {
		s.Close()
		t.Fatal("both endpoints refused the Configure, yet the checkout got a session")
	}
	var pe *session.PythonError
	if !errors.As(err, &pe) || errors.Is(err, pool.ErrNoEndpoint) {
		t.Fatalf("checkout = %v, want the refusal (a *session.PythonError), not ErrNoEndpoint", err)
	}
	if n, m := aConns.Load(), bConns.Load(); n != 1 || m != 1 {
		t.Fatalf("connections: a %d, b %d; want one each", n, m)
	}
	for _, st := range p.Stat().Endpoints {
		if st.Backoff != 0 || st.BackedOffUntil.After(time.Now()) {
			t.Fatalf("%s backed off after refusing a Config every endpoint refused: %+v", st.Name, st)
		}
	}
}

// A close with 1008 or 1009 on the Configure, with no other endpoint to
// serve the Config, backs nothing off: it may be that Config's fault (over
// the server's frame cap, say), and another caller's may be fine. Each
// checkout is tried there and fails with an error matching
// ErrNoEndpoint.
func TestLoneConfigureCloseBacksNothingOff(t *testing.T) {
	for _, code := range []int{1008, 1009} {
		u, conns := configureEndpoint(t, nil, code)
		p, err := pool.New(context.Background(), pool.Config{
			NoLocal:         true,
			Endpoints:       []pool.Endpoint{{Name: "strict", URL: u}},
			EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
			ProtocolVersion: 4,
			Logger:          slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			s, err := p.Checkout(ctx, session.Config{})
			cancel()
			if err == nil {
				s.Close()
				t.Fatalf("close %d, checkout %d: got a session", code, i)
			}
			var de *session.DisconnectedError
			if !errors.Is(err, pool.ErrNoEndpoint) || !errors.As(err, &de) || de.Code != code {
				t.Fatalf("close %d, checkout %d: %v, want ErrNoEndpoint with the DisconnectedError", code, i, err)
			}
		}
		if n := conns.Load(); n != 3 {
			t.Errorf("close %d: %d connections, want 3", code, n)
		}
		if st := p.Stat().Endpoints[0]; st.StartFailures != 3 || st.Backoff != 0 || st.BackedOffUntil.After(time.Now()) {
			t.Errorf("close %d: %+v, want three start failures and no backoff", code, st)
		}
		closeWithin(t, p)
	}
}

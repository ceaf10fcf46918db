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

// An endpoint that refuses a checkout's Configure with an Error (the
// session.Config is at fault, since no other endpoint serves it: Checkout
// returns the refusal) is not backed off: one caller's Config must not
// take the endpoint from the others, as a Configure the server closes on
// with 1008 or 1009 does not (TestLoneConfigureCloseBacksNothingOff).
// The refusal still counts as a start failure. Before, the refusal (a
// *session.ProtocolError wrapping the *session.PythonError) backed the
// endpoint off like a broken one, so in a remote-only pool the next
// checkout, whatever its Config, failed with ErrNoEndpoint.
func TestRefusedConfigureDoesNotBackOff(t *testing.T) {
	cd, ok := codec.ForVersion(4)
	if !ok {
		t.Fatal("no protocol 4 codec")
	}
	refusal, err := cd.AppendEvent(nil, &message.ChildEvent{Body: &message.Error{
		Exception: message.NewException("ValueError", "this server refuses that Configure")}})
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := ws.Accept(w, r, ws.AcceptOptions{})
		if err != nil {
			return
		}
		defer conn.Close()
		dials.Add(1)
		if _, err := conn.ReadFrame(); err != nil { // the Configure
			return
		}
		if conn.WriteFrame(refusal) == nil {
			conn.ReadFrame() // until the client closes
		}
	}))
	defer srv.Close()
	var ev events
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:         true,
		Endpoints:       []pool.Endpoint{{Name: "strict", URL: "ws" + strings.TrimPrefix(srv.URL, "http") + "/"}},
		EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
		ProtocolVersion: 4,
		Metrics:         ev.record,
		Logger:          slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		s, err := p.Checkout(ctx, session.Config{})
		cancel()
		if err == nil {
			s.Close()
			t.Fatalf("checkout %d: the endpoint refused its Configure, yet it got a session", i)
		}
		var pe *session.PythonError
		if !errors.As(err, &pe) || errors.Is(err, pool.ErrNoEndpoint) {
			t.Fatalf("checkout %d: %v, want the endpoint's refusal (a *session.PythonError), not ErrNoEndpoint", i, err)
		}
	}
	if n := dials.Load(); n != 2 {
		t.Errorf("%d starts reached the endpoint, want 2", n)
	}
	st := p.Stat().Endpoints[0]
	if st.Backoff != 0 || st.BackedOffUntil.After(time.Now()) || st.StartFailures != 2 {
		t.Errorf("after two refused Configures: %+v, want two start failures and no backoff", st)
	}
}

package pool_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// A remote start whose caller's deadline passes (in the dial, or after
// the upgrade while the Configure is unanswered) says nothing of the
// endpoint, as a cancelled one says nothing: no dial or start failure, no
// backoff, no EventEndpointFailed. Before, only context.Canceled was the
// caller's: a caller with a short deadline charged a healthy endpoint a
// dial failure and backed it off (the chaos soak's impatient checkouts
// showed it), or a start failure with its Warn event.
func TestCallersDeadlineIsNoEndpointFailure(t *testing.T) {
	t.Run("dial", func(t *testing.T) {
		u, conns := rawEndpoint(t, nil) // the upgrade is never answered
		var ev events
		p, err := pool.New(context.Background(), pool.Config{
			NoLocal:         true,
			Endpoints:       []pool.Endpoint{{Name: "slow", URL: u}},
			EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
			Metrics:         ev.record,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer closeWithin(t, p)
		ctx := testenv.NewReachedDeadline()
		go func() {
			c := <-conns
			conns <- c
			ctx.Reached()
		}()
		checkDeadlineCharged(t, p, &ev, ctx)
	})
	t.Run("configure", func(t *testing.T) {
		upgraded := make(chan struct{}, 4)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := ws.Accept(w, r, ws.AcceptOptions{})
			if err != nil {
				return
			}
			defer c.Close()
			if _, err := c.ReadFrame(); err != nil { // the Configure: the dial is over
				return
			}
			upgraded <- struct{}{}
			for {
				if _, err := c.ReadFrame(); err != nil { // never answers
					return
				}
			}
		}))
		defer srv.Close()
		var ev events
		p, err := pool.New(context.Background(), pool.Config{
			NoLocal:         true,
			Endpoints:       []pool.Endpoint{{Name: "mute", URL: "ws" + strings.TrimPrefix(srv.URL, "http") + "/"}},
			EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
			Metrics:         ev.record,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer closeWithin(t, p)
		ctx := testenv.NewReachedDeadline()
		go func() {
			<-upgraded
			ctx.Reached()
		}()
		checkDeadlineCharged(t, p, &ev, ctx)
	})
}

func checkDeadlineCharged(t *testing.T, p *pool.Pool, ev *events, ctx context.Context) {
	t.Helper()
	if _, err := p.Checkout(ctx, session.Config{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("checkout = %v, want context.DeadlineExceeded", err)
	}
	st := p.Stat().Endpoints[0]
	if st.DialFailures != 0 || st.StartFailures != 0 || st.Backoff != 0 || st.BackedOffUntil.After(time.Now()) || st.Outstanding != 0 {
		t.Fatalf("the caller's deadline counted against the endpoint: %+v", st)
	}
	if n := len(ev.of(pool.EventEndpointFailed)); n != 0 {
		t.Fatalf("%d EventEndpointFailed for the caller's deadline", n)
	}
}

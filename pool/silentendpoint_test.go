//go:build unix

package pool_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
)

// An endpoint that never answers (it accepts the connection and never
// answers the upgrade, or upgrades and never answers the Configure) is
// charged and backed off although every checkout's deadline is shorter
// than StartTimeout: the pool checks an endpoint its callers gave up on
// with a start of its own, bounded by StartTimeout alone. Before, the
// caller's deadline made each such start blameless, so the endpoint was
// never backed off and took every checkout.
func TestSilentEndpointIsBackedOffDespiteShortDeadlines(t *testing.T) {
	for _, c := range []struct {
		name     string
		endpoint func(t *testing.T) (string, <-chan struct{})
		dial     bool // charged as a dial failure (else a start failure)
	}{
		{"upgrade", blackholed, true},
		{"configure", muteConfigure, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, reached := c.endpoint(t)
			var ev events
			p, err := pool.New(context.Background(), pool.Config{
				NoLocal:         true,
				Endpoints:       []pool.Endpoint{{Name: "silent", URL: u}},
				StartTimeout:    500 * time.Millisecond,
				EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
				Metrics:         ev.record,
				Logger:          slog.New(slog.DiscardHandler),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer closeWithin(t, p)
			ctx := testenv.NewReachedDeadline()
			go func() {
				<-reached
				ctx.Reached()
			}()
			if _, err := p.Checkout(ctx, session.Config{}); !errors.Is(err, pool.ErrExhausted) {
				t.Fatalf("checkout = %v, want ErrExhausted", err)
			}
			awaitStat(t, func() bool { return len(ev.of(pool.EventEndpointFailed)) > 0 })
			failed := ev.of(pool.EventEndpointFailed)
			var ste *session.StartTimeoutError
			if len(failed) != 1 || !errors.As(failed[0].Err, &ste) {
				t.Fatalf("endpoint failures %+v, want one StartTimeoutError", failed)
			}
			st := p.Stat().Endpoints[0]
			charged := st.StartFailures
			if c.dial {
				charged = st.DialFailures
			}
			if charged != 1 || st.DialFailures+st.StartFailures != 1 || !st.BackedOffUntil.After(time.Now()) || st.Outstanding != 0 {
				t.Fatalf("the silent endpoint was not charged once and backed off: %+v", st)
			}
			// Backed off: the next checkout is not sent there.
			if _, err := p.Checkout(context.Background(), session.Config{}); !errors.Is(err, pool.ErrNoEndpoint) {
				t.Fatalf("checkout with the only endpoint backed off = %v, want ErrNoEndpoint", err)
			}
		})
	}
}

// An endpoint that is slow for one caller (its start outlasts the
// caller's deadline) but answers within StartTimeout is not charged: the
// pool's own check of it gets through, is closed at once, and the
// endpoint serves the next checkout.
func TestSlowEndpointIsNotChargedForItsCallersDeadline(t *testing.T) {
	_, up := servertest.Start(t, nil)
	px := newHoldFirst(t, up)
	var ev events
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:         true,
		Endpoints:       []pool.Endpoint{{Name: "slow", URL: px.url()}},
		EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
		Metrics:         ev.record,
		Logger:          slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	ctx := testenv.NewReachedDeadline()
	go func() {
		<-px.held
		ctx.Reached()
	}()
	if _, err := p.Checkout(ctx, session.Config{}); !errors.Is(err, pool.ErrExhausted) {
		t.Fatalf("checkout = %v, want ErrExhausted", err)
	}
	// The pool's check: a connection of its own, through to the server
	// and closed once its session started.
	select {
	case <-px.passedDone:
	case <-time.After(30 * time.Second):
		t.Fatal("no check of the endpoint within 30s")
	}
	st := p.Stat().Endpoints[0]
	if st.DialFailures != 0 || st.StartFailures != 0 || st.Backoff != 0 || st.BackedOffUntil.After(time.Now()) ||
		st.Outstanding != 0 || st.Checkouts != 0 {
		t.Fatalf("a slow endpoint was charged for its caller's deadline: %+v", st)
	}
	if n := len(ev.of(pool.EventEndpointFailed)); n != 0 {
		t.Fatalf("%d EventEndpointFailed for a slow endpoint", n)
	}
	s := checkout(t, p)
	defer s.Close()
	run(t, s, "1 + 1", "2")
}

// holdFirst is a TCP proxy in front of a server: it holds its first
// connection (never forwarded, never answered: a start too slow for its
// caller) and pipes every later one to the server.
type holdFirst struct {
	l          net.Listener
	held       chan struct{} // closed when the first connection arrived
	passedDone chan struct{} // closed when the first piped connection ended
	mu         sync.Mutex
	conns      []net.Conn
	wg         sync.WaitGroup
}

func newHoldFirst(t *testing.T, upURL string) *holdFirst {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &holdFirst{l: l, held: make(chan struct{}), passedDone: make(chan struct{})}
	u, err := url.Parse(upURL)
	if err != nil {
		t.Fatal(err)
	}
	upAddr := u.Host
	h.wg.Go(func() {
		for n := 0; ; n++ {
			c, err := l.Accept()
			if err != nil {
				return
			}
			h.track(c)
			switch n {
			case 0:
				close(h.held)
			default:
				first := n == 1
				h.wg.Go(func() {
					h.pipe(c, upAddr)
					if first {
						close(h.passedDone)
					}
				})
			}
		}
	})
	t.Cleanup(func() {
		l.Close()
		h.mu.Lock()
		for _, c := range h.conns {
			c.Close()
		}
		h.mu.Unlock()
		h.wg.Wait()
	})
	return h
}

func (h *holdFirst) url() string { return "ws://" + h.l.Addr().String() + "/" }

func (h *holdFirst) track(c net.Conn) {
	h.mu.Lock()
	h.conns = append(h.conns, c)
	h.mu.Unlock()
}

// pipe copies c to and from a new connection to upAddr until both ends
// are done.
func (h *holdFirst) pipe(c net.Conn, upAddr string) {
	defer c.Close()
	up, err := net.Dial("tcp", upAddr)
	if err != nil {
		return
	}
	h.track(up)
	defer up.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(up, c)
		up.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	io.Copy(c, up)
	c.(*net.TCPConn).CloseWrite()
	<-done
}

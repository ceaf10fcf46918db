//go:build unix

package pool_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
)

// checkoutAnswers are the questions a caller asks of a failed Checkout.
type checkoutAnswers struct {
	Exhausted     bool // errors.Is(err, pool.ErrExhausted)
	ExhaustedType bool // errors.As(err, **pool.ExhaustedError)
	CtxErr        bool // errors.Is(err, the context's error)
	Cause         bool // errors.Is(err, the context's cause), when it has one
	NoEndpoint    bool // errors.Is(err, pool.ErrNoEndpoint)
	Closed        bool // errors.Is(err, pool.ErrClosed)
}

func answersOf(err, ctxErr, cause error) checkoutAnswers {
	var ee *pool.ExhaustedError
	a := checkoutAnswers{
		Exhausted:     errors.Is(err, pool.ErrExhausted),
		ExhaustedType: errors.As(err, &ee),
		CtxErr:        errors.Is(err, ctxErr),
		Cause:         cause == nil || errors.Is(err, cause),
		NoEndpoint:    errors.Is(err, pool.ErrNoEndpoint),
		Closed:        errors.Is(err, pool.ErrClosed),
	}
	return a
}

// blackholed is an endpoint that accepts TCP connections and never answers
// the WebSocket upgrade; each accepted connection is sent on the channel.
func blackholed(t *testing.T) (string, <-chan struct{}) {
	u, conns := rawEndpoint(t, nil)
	accepted := make(chan struct{}, 16)
	go func() {
		c, ok := <-conns
		if !ok {
			return
		}
		conns <- c // rawEndpoint's cleanup closes it
		accepted <- struct{}{}
	}()
	return u, accepted
}

// muteConfigure is an endpoint that upgrades and reads the Configure, then
// never answers; each Configure read is sent on the channel.
func muteConfigure(t *testing.T) (string, <-chan struct{}) {
	read := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := ws.Accept(w, r, ws.AcceptOptions{})
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := c.ReadFrame(); err != nil {
			return
		}
		select {
		case read <- struct{}{}:
		default:
		}
		for {
			if _, err := c.ReadFrame(); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/", read
}

func isDialError(err error) bool {
	var de *ws.DialError
	return errors.As(err, &de)
}

func isTimeoutError(err error) bool {
	var te *session.TimeoutError
	return errors.As(err, &te)
}

func isCanceledError(err error) bool {
	var ce *session.CanceledError
	return errors.As(err, &ce)
}

// checkoutEnd is how a scenario ends its checkout's context: the context
// handed to Checkout, and a function that ends it (nil when it has ended
// already, or when CheckoutTimeout ends the checkout).
type checkoutEnd struct {
	ctx    context.Context
	end    func()
	ctxErr error
	cause  error
}

func deadlineEnd() checkoutEnd {
	ctx := testenv.NewReachedDeadline()
	return checkoutEnd{ctx: ctx, end: ctx.Reached, ctxErr: context.DeadlineExceeded}
}

func cancelEnd(t *testing.T, cause error) checkoutEnd {
	ctx, cancel := context.WithCancelCause(context.Background())
	t.Cleanup(func() { cancel(nil) })
	return checkoutEnd{ctx: ctx, end: func() { cancel(cause) }, ctxErr: context.Canceled, cause: cause}
}

func expiredEnd(t *testing.T, cause error) checkoutEnd {
	ctx, cancel := context.WithDeadlineCause(context.Background(), time.Unix(1, 0), cause)
	t.Cleanup(cancel)
	return checkoutEnd{ctx: ctx, ctxErr: context.DeadlineExceeded, cause: cause}
}

// A Checkout whose context ends (or whose CheckoutTimeout passes) before
// it has a session fails alike wherever it went: waiting for a busy local
// worker or dialling an endpoint that never answers the upgrade,
// configuring a local worker that does not answer or a remote session whose
// server does not, or with the context over before it began (a real
// server behind the endpoint). Each time it is an *ExhaustedError that
// matches ErrExhausted, the context's error and its cause, and on the
// remote path the start it cut short is reachable too (the *ws.DialError
// of a dial). Before, the remote path returned the start's own error
// (a *ws.DialError, a *session.TimeoutError): errors.Is(err, ErrExhausted)
// held on the local path only.
func TestCheckoutDeadlineErrorsAlikeLocalAndRemote(t *testing.T) {
	bin := testenv.Worker(t)
	boom := errors.New("the caller's reason")
	// busyLocal holds the only local worker, so that the checkout waits.
	busyLocal := func(t *testing.T, p *pool.Pool) (<-chan struct{}, func()) {
		held := checkout(t, p)
		waiting := make(chan struct{})
		go func() {
			defer close(waiting)
			for deadline := time.Now().Add(30 * time.Second); p.Stat().CheckoutsWaited == 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
		}()
		return waiting, func() { held.Close() }
	}
	// stoppedLocal stops the idle worker, so that the checkout's Configure
	// is not answered until the worker is continued.
	stoppedLocal := func(t *testing.T, p *pool.Pool) (<-chan struct{}, func()) {
		s := checkout(t, p)
		pid := s.Pid()
		s.Close()
		awaitStat(t, func() bool { return p.Stat().Idle == 1 })
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		if !testenv.WaitChildState(pid, 30*time.Second, nil, "T", "t") {
			t.Fatalf("worker %d did not stop", pid)
		}
		return nil, func() { syscall.Kill(pid, syscall.SIGCONT) }
	}
	for _, c := range []struct {
		name string
		// end makes the checkout's context; timeout, when set, is the
		// pool's CheckoutTimeout instead (the context never ends).
		end     func(t *testing.T) checkoutEnd
		timeout time.Duration
		local   func(*testing.T, *pool.Pool) (<-chan struct{}, func())
		remote  func(t *testing.T) (string, <-chan struct{})
		// startErr says whether the remote start's own error, which the
		// ExhaustedError keeps, is what it should be.
		startErr func(error) bool
	}{
		{name: "deadline while waiting or dialling", end: func(*testing.T) checkoutEnd { return deadlineEnd() },
			local: busyLocal, remote: blackholed, startErr: isDialError},
		{name: "cancel with a cause while waiting or dialling", end: func(t *testing.T) checkoutEnd { return cancelEnd(t, boom) },
			local: busyLocal, remote: blackholed, startErr: isDialError},
		{name: "deadline while configuring", end: func(*testing.T) checkoutEnd { return deadlineEnd() },
			local: stoppedLocal, remote: muteConfigure, startErr: isTimeoutError},
		{name: "cancel with a cause while configuring", end: func(t *testing.T) checkoutEnd { return cancelEnd(t, boom) },
			local: stoppedLocal, remote: muteConfigure, startErr: isCanceledError},
		{name: "deadline passed before the checkout", end: func(t *testing.T) checkoutEnd { return expiredEnd(t, boom) },
			local: func(*testing.T, *pool.Pool) (<-chan struct{}, func()) { return nil, nil },
			remote: func(t *testing.T) (string, <-chan struct{}) {
				_, u := servertest.Start(t, nil)
				return u, nil
			}, startErr: isDialError},
		{name: "CheckoutTimeout while waiting or dialling", timeout: 200 * time.Millisecond,
			local: busyLocal, remote: blackholed, startErr: isDialError},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := map[string]checkoutAnswers{}
			want := checkoutAnswers{Exhausted: true, ExhaustedType: true, CtxErr: true, Cause: true}
			for _, where := range []string{"local", "remote"} {
				var (
					cfg     pool.Config
					started <-chan struct{}
					after   func()
				)
				var prepare func(*testing.T, *pool.Pool) (<-chan struct{}, func())
				if where == "local" {
					cfg = pool.Config{MinWorkers: 1, MaxWorkers: 1, Worker: worker.Config{Binary: bin}}
					prepare = c.local
				} else {
					u, ch := c.remote(t)
					cfg = pool.Config{NoLocal: true, Endpoints: []pool.Endpoint{{Name: "remote", URL: u}}}
					started = ch
				}
				cfg.CheckoutTimeout = c.timeout
				cfg.Logger = slog.New(slog.DiscardHandler)
				p, err := pool.New(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if prepare != nil {
					started, after = prepare(t, p)
				}
				end := checkoutEnd{ctx: context.Background(), ctxErr: context.DeadlineExceeded}
				if c.end != nil {
					end = c.end(t)
				}
				if end.end != nil {
					go func() {
						if started != nil {
							<-started
						}
						end.end()
					}()
				}
				_, err = p.Checkout(end.ctx, session.Config{})
				if after != nil {
					after()
				}
				got[where] = answersOf(err, end.ctxErr, end.cause)
				if got[where] != want {
					t.Errorf("%s: %v (%T): answers %+v, want %+v", where, err, err, got[where], want)
				}
				var ee *pool.ExhaustedError
				switch {
				case where == "local" || !errors.As(err, &ee):
				case c.startErr == nil && ee.Start != nil:
					t.Errorf("remote: %v: Start set with no start cut short", err)
				case c.startErr != nil && (ee.Start == nil || !c.startErr(err)):
					t.Errorf("remote: %v: the start cut short is not reachable as it should be (Start %v)", err, ee.Start)
				}
				closeWithin(t, p)
			}
			if got["local"] != got["remote"] {
				t.Errorf("local %+v, remote %+v", got["local"], got["remote"])
			}
		})
	}
}

// awaitStat polls cond until it holds, for up to 30 s.
func awaitStat(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

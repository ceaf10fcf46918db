//go:build unix

package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// sickServer is a test server whose pool trips its restart cap (one
// failure allowed within window) once killIdle has killed two of its idle
// workers from outside, as an operator or the OOM killer might.
type sickServer struct {
	*testServer
	spawned   chan int       // pids of the workers the pool starts
	unhealthy chan time.Time // when the cap tripped, once
}

func startSickServer(t *testing.T, window time.Duration) *sickServer {
	t.Helper()
	ss := &sickServer{spawned: make(chan int, 64), unhealthy: make(chan time.Time, 1)}
	ss.testServer = startServer(t, func(c *Config) {
		c.Prewarm = 1
		c.pool = func(pc *pool.Config) {
			pc.MaxRestarts = 1
			pc.RestartWindow = window
			pc.Metrics = func(ev pool.Event) {
				switch ev.Kind {
				case pool.EventSpawn:
					ss.spawned <- ev.Pid
				case pool.EventUnhealthy:
					ss.unhealthy <- time.Now()
				}
			}
		}
	})
	return ss
}

// trip kills idle workers, each as the pool starts it, until the restart
// cap trips, and returns when it did.
func (ss *sickServer) trip(t *testing.T) time.Time {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case pid := <-ss.spawned:
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatalf("kill %d: %v", pid, err)
			}
		case at := <-ss.unhealthy:
			return at
		case <-timeout:
			t.Fatal("the restart cap never tripped")
		}
	}
}

// While the worker pool is unhealthy, /readyz answers 503, and an upgrade
// is refused at once the same way: 503, the reason "unhealthy" and a
// Retry-After of the time left until the pool starts workers again. Before,
// the upgrade was taken and the session ended after its Configure with
// 1011, without saying why or when to come back.
func TestUnhealthyPoolRefusesUpgrades(t *testing.T) {
	ss := startSickServer(t, time.Minute)
	ss.trip(t)

	resp, err := http.Get(ss.HTTP + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz: %d, want 503", resp.StatusCode)
	}
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Fatalf("/readyz Retry-After %q, want 1 to 60 s", resp.Header.Get("Retry-After"))
	}

	de := dialErr(t, ss.URL, nil)
	if de.StatusCode != http.StatusServiceUnavailable || de.Reason != ReasonUnhealthy ||
		de.RetryAfter < time.Second || de.RetryAfter > time.Minute || !de.Overloaded() {
		t.Fatalf("upgrade while unhealthy: %d %q retry %v, want 503 %q with a Retry-After up to the window",
			de.StatusCode, de.Reason, de.RetryAfter, ReasonUnhealthy)
	}
	waitMetric(t, ss.testServer, `monty_server_refusals_total{reason="unhealthy"} 1`)
	waitMetric(t, ss.testServer, `monty_server_pool_healthy 0`)
	if n, _ := ss.adm.count(); n != 0 {
		t.Fatalf("%d sessions admitted while unhealthy", n)
	}
}

// A pool of remote endpoints treats an unhealthy server's refusal as it
// treats a full one's: the endpoint is backed off for the Retry-After and
// the checkout goes on to the next endpoint; with no other endpoint the
// checkout's error is the *ws.DialError naming the reason.
func TestPoolClientSkipsUnhealthyEndpoint(t *testing.T) {
	sick := startSickServer(t, time.Minute)
	well := startServer(t, nil)
	sick.trip(t)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := pool.New(ctx, pool.Config{NoLocal: true, Endpoints: []pool.Endpoint{
		{Name: "sick", URL: sick.URL}, {Name: "well", URL: well.URL},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	before := time.Now()
	s, err := p.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatalf("checkout with a healthy endpoint left: %v", err)
	}
	if s.Endpoint() != "well" {
		t.Fatalf("checkout went to %q", s.Endpoint())
	}
	s.Close()
	eps := p.Stat().Endpoints
	if eps[0].Refusals != 1 || eps[0].DialFailures != 0 || eps[0].BackedOffUntil.Before(before.Add(30*time.Second)) {
		t.Fatalf("sick endpoint: %+v, want one refusal, backed off for the Retry-After", eps[0])
	}

	only, err := pool.New(ctx, pool.Config{NoLocal: true, Endpoints: []pool.Endpoint{{Name: "sick", URL: sick.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	defer only.Close(ctx)
	_, err = only.Checkout(ctx, session.Config{})
	var de *ws.DialError
	if !errors.Is(err, pool.ErrNoEndpoint) || !errors.As(err, &de) || de.StatusCode != http.StatusServiceUnavailable ||
		de.Reason != ReasonUnhealthy || de.RetryAfter < time.Second {
		t.Fatalf("checkout on the unhealthy endpoint alone: %v, want ErrNoEndpoint and a 503 %q *ws.DialError", err, ReasonUnhealthy)
	}
}

// An unhealthy pool recovers when its restart window has passed: /readyz
// answers 200 again, upgrades are admitted, and a session runs on a fresh
// worker.
func TestUnhealthyPoolRecoversAndAdmits(t *testing.T) {
	const window = 2 * time.Second
	ss := startSickServer(t, window)
	waitMetric(t, ss.testServer, `monty_server_pool_healthy 1`)
	tripped := ss.trip(t)
	if time.Since(tripped) < window/2 {
		// Checked only while the trip is surely on (a loaded machine may
		// take longer than the window to get here), and judged only if the
		// dial also ended inside the window: the server decided before it
		// ended, so a refusal was due; a dial that a loaded machine kept
		// past the window may rightly have been admitted.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c, err := dialRaw(ctx, ss.URL, 4, ws.DialOptions{})
		cancel()
		inside := time.Since(tripped) < window
		var de *ws.DialError
		switch {
		case err == nil:
			c.Close()
			if inside {
				t.Fatal("upgrade admitted while unhealthy")
			}
		case !errors.As(err, &de):
			t.Fatalf("upgrade while unhealthy: %v, want a *ws.DialError", err)
		case inside && (de.StatusCode != http.StatusServiceUnavailable || de.Reason != ReasonUnhealthy):
			t.Fatalf("upgrade while unhealthy: %d %q", de.StatusCode, de.Reason)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, _ := get(t, ss.HTTP+"/readyz")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d a minute after the trip", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if time.Since(tripped) < window {
		t.Fatalf("ready again %v after the trip, before its %v window", time.Since(tripped), window)
	}
	waitMetric(t, ss.testServer, `monty_server_pool_healthy 1`)
	c := dial(t, ss.URL, 4, ws.DialOptions{})
	configure(t, c, 4, nil)
	if got := repr(t, c, "6 * 7"); got != "42" {
		t.Fatalf("after recovery: %s", got)
	}
}

// A session admitted while the pool was healthy whose Configure finds it
// unhealthy (the cap tripped in between) is closed with 1013 (try again
// later) and the reason, not 1011 as if its worker had failed: a client
// backs off and dials again, here or elsewhere.
func TestConfigureOnUnhealthyPoolClosesTryAgainLater(t *testing.T) {
	ss := startSickServer(t, time.Minute)
	c := dial(t, ss.URL, 4, ws.DialOptions{}) // admitted while healthy
	ss.trip(t)
	if err := c.Conn.WriteFrame(encodeRequest(t, 4, &message.Configure{ProtocolVersion: 4, ScriptName: "main.py"})); err != nil {
		t.Fatal(err)
	}
	var ce *ws.CloseError
	for {
		_, err := c.Conn.ReadFrame()
		if err == nil {
			continue // the FatalError child.Serve sends before the close
		}
		if !errors.As(err, &ce) {
			t.Fatalf("read: %v, want a close", err)
		}
		break
	}
	if ce.Code != CloseTryAgainLater || ce.Reason != "worker pool unhealthy" {
		t.Fatalf("closed with %d %q, want %d %q", ce.Code, ce.Reason, CloseTryAgainLater, "worker pool unhealthy")
	}
	waitMetric(t, ss.testServer, `monty_server_sessions_ended_total{outcome="`+OutcomePoolUnhealthy+`"} 1`)
}

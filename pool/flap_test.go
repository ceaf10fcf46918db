//go:build unix

package pool_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/hostile/hostilebuild"
	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/internal/telemetrytest"
	"github.com/gomonty/monty/internal/wsframe"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// flapper is a TCP proxy in front of a real Monty server: every
// connection is passed through until the client has sent its upgrade and
// its first WebSocket frame (the Configure) and the server has answered;
// when the client starts its next frame (the first turn) the proxy cuts
// both sides, the way drop says. The sessions it serves start fine and
// then fail mid-turn, every one: an endpoint that flaps.
type flapper struct {
	l    net.Listener
	up   string // the server's host:port
	drop func(client net.Conn)
	pass atomic.Bool // set: sessions are passed through whole, not dropped
	wg   sync.WaitGroup
}

// Ways a flapper ends a session mid-turn.
var (
	// dropReset resets the TCP connection: no Close frame (what a crashed
	// server or a broken middlebox leaves).
	dropReset = func(c net.Conn) {
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
	// dropEOF closes the TCP connection without a Close frame.
	dropEOF = func(c net.Conn) { c.Close() }
)

// dropClosing ends the WebSocket with a Close frame of code and reason
// (the server's own failure, or its going away, mid-turn).
func dropClosing(code int, reason string) func(net.Conn) {
	return func(c net.Conn) {
		payload := binary.BigEndian.AppendUint16(nil, uint16(code))
		c.Write(wsframe.Server(true, 0x8, append(payload, reason...)))
		c.Close()
	}
}

// startFlapper proxies to the server at wsURL, cutting sessions mid-turn
// with drop, and returns the proxy's ws:// URL and the switch that makes
// it pass sessions through whole instead. It is closed, and its
// goroutines waited for, when the test ends.
func startFlapper(t *testing.T, wsURL string, drop func(net.Conn)) (string, *atomic.Bool) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &flapper{l: l, up: strings.TrimSuffix(strings.TrimPrefix(wsURL, "ws://"), "/"), drop: drop}
	var mu sync.Mutex
	open := map[net.Conn]struct{}{}
	track := func(c net.Conn) {
		mu.Lock()
		open[c] = struct{}{}
		mu.Unlock()
	}
	f.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			track(c)
			f.wg.Go(func() { f.serve(c, track) })
		}
	})
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for c := range open {
			c.Close()
		}
		mu.Unlock()
		f.wg.Wait()
	})
	return "ws://" + l.Addr().String() + "/", &f.pass
}

// serve passes one connection through to the server until the client's
// second frame begins, then drops it.
func (f *flapper) serve(c net.Conn, track func(net.Conn)) {
	defer c.Close()
	up, err := net.Dial("tcp", f.up)
	if err != nil {
		return
	}
	track(up)
	defer up.Close()
	down := make(chan struct{})
	go func() {
		defer close(down)
		io.Copy(c, up)
	}()
	// The upgrade request, byte for byte up to its blank line, then one
	// whole frame: both copied to the server as they are read.
	tee := io.TeeReader(c, up)
	var head []byte
	b := make([]byte, 1)
	for !bytes.HasSuffix(head, []byte("\r\n\r\n")) {
		if _, err := io.ReadFull(tee, b); err != nil {
			return
		}
		head = append(head, b[0])
	}
	if _, _, err := wsframe.Read(tee); err != nil {
		return
	}
	// The client speaks again only once the Configure is answered
	// (strict alternation): its next byte starts the first turn.
	if _, err := io.ReadFull(c, b); err != nil {
		return
	}
	if f.pass.Load() {
		if _, err := up.Write(b); err == nil {
			io.Copy(up, c)
		}
		up.Close()
		<-down
		return
	}
	up.Close()
	<-down // nothing of the server's is in flight to the client any more
	f.drop(c)
}

// runOn checks a session out of p, runs 1 + 1 in it and closes it,
// returning the endpoint it ran on and the run's error.
func runOn(t *testing.T, p *pool.Pool) (string, error) {
	t.Helper()
	s := checkout(t, p)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := s.Run(ctx, "1 + 1")
	if err == nil && r.Repr() != "2" {
		t.Fatalf("1 + 1 on %s = %s", s.Endpoint(), r.Repr())
	}
	return s.Endpoint(), err
}

// An endpoint that accepts sessions and drops every one mid-turn (a reset
// connection, one closed without a Close frame, a server closing with
// 1011 for its own failure or going away with 1001) is backed off after
// dropsToBackOff of them in a row: the checkouts after go to the healthy
// endpoint beside it. The drops are still the callers' errors. Before,
// such an endpoint was never backed off: with the fewest sessions it was
// every checkout's first choice, and every session placed there failed.
func TestFlappingEndpointIsBackedOff(t *testing.T) {
	_, good := servertest.Start(t, nil)
	_, behind := servertest.Start(t, nil)
	for _, c := range []struct {
		name string
		drop func(net.Conn)
		code int
	}{
		{"reset", dropReset, -1},
		{"eof", dropEOF, -1},
		{"internal-error", dropClosing(1011, "internal error"), 1011},
		{"going-away", dropClosing(1001, "restarting"), 1001},
	} {
		t.Run(c.name, func(t *testing.T) {
			flap, _ := startFlapper(t, behind, c.drop)
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			defer mp.Shutdown(context.Background())
			var ev events
			p, err := pool.New(context.Background(), pool.Config{
				NoLocal: true,
				// The flapper is listed first: with no session outstanding
				// anywhere it wins the tie.
				Endpoints:       []pool.Endpoint{{Name: "flap", URL: flap}, {Name: "good", URL: good}},
				EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
				Metrics:         ev.record,
				MeterProvider:   mp,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer closeWithin(t, p)
			const threshold, checkouts = 3, 8
			var on []string
			for i := range checkouts {
				ep, err := runOn(t, p)
				on = append(on, ep)
				switch ep {
				case "flap":
					var de *session.DisconnectedError
					if !errors.As(err, &de) || de.Code != c.code {
						t.Fatalf("checkout %d on the flapper: %v, want a disconnect with code %d", i, err, c.code)
					}
				case "good":
					if err != nil {
						t.Fatalf("checkout %d on the healthy endpoint: %v", i, err)
					}
				}
			}
			want := []string{"flap", "flap", "flap", "good", "good", "good", "good", "good"}
			if strings.Join(on, " ") != strings.Join(want[:checkouts], " ") {
				t.Fatalf("checkouts went to %v, want %d on the flapper, then the healthy endpoint", on, threshold)
			}
			st := p.Stat().Endpoints
			if st[0].Drops != threshold || st[0].StartFailures != 0 || !st[0].BackedOffUntil.After(time.Now().Add(30*time.Minute)) {
				t.Errorf("flapper %+v, want %d drops, no start failure and an hour's backoff", st[0], threshold)
			}
			if st[1].Drops != 0 || !st[1].BackedOffUntil.IsZero() {
				t.Errorf("healthy endpoint %+v, want no drop and no backoff", st[1])
			}
			dropped := ev.of(pool.EventEndpointDropped)
			if len(dropped) != threshold {
				t.Fatalf("%d EventEndpointDropped, want %d", len(dropped), threshold)
			}
			for i, d := range dropped {
				var de *session.DisconnectedError
				if d.Endpoint != "flap" || !errors.As(d.Err, &de) || de.Code != c.code || (d.Duration > 0) != (i == threshold-1) {
					t.Errorf("EventEndpointDropped %d: %+v, want the flapper's drop, with a backoff only at the %dth", i, d, threshold)
				}
			}
			if d := dropped[threshold-1].Duration; d < 30*time.Minute || d > time.Hour {
				t.Errorf("the drop that backed the flapper off says %v, want about an hour", d)
			}
			drops := telemetrytest.Collect(t, reader)[pool.MetricEndpointDrops]
			sum, ok := drops.Data.(metricdata.Sum[int64])
			if !ok || len(sum.DataPoints) != 1 || sum.DataPoints[0].Value != threshold {
				t.Fatalf("%s = %+v, want %d for the flapper", pool.MetricEndpointDrops, drops.Data, threshold)
			}
			if v, _ := sum.DataPoints[0].Attributes.Value(pool.AttrEndpoint); v.AsString() != "flap" {
				t.Fatalf("%s counted on %s", pool.MetricEndpointDrops, v.AsString())
			}
		})
	}
}

// A flapper's backoff runs its course and the endpoint is tried again,
// as after a refusal; its start succeeding does not clear the drops (the
// flapper starts every session fine), so the next drop backs it off at
// once, twice as long. A session that ends clean there resets the streak:
// one drop after it backs nothing off.
func TestFlappingEndpointIsRetriedAfterItsBackoff(t *testing.T) {
	_, good := servertest.Start(t, nil)
	_, behind := servertest.Start(t, nil)
	flap, pass := startFlapper(t, behind, dropReset)
	const initial = 100 * time.Millisecond
	var ev events
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:         true,
		Endpoints:       []pool.Endpoint{{Name: "flap", URL: flap}, {Name: "good", URL: good}},
		EndpointBackoff: pool.Backoff{Initial: initial, Max: time.Hour},
		Metrics:         ev.record,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	for i := range 3 {
		if ep, err := runOn(t, p); ep != "flap" || !errors.Is(err, session.ErrDisconnected) {
			t.Fatalf("checkout %d: on %s, %v; want a drop on the flapper", i, ep, err)
		}
	}
	st := p.Stat().Endpoints[0]
	if st.Backoff != initial || st.BackedOffUntil.IsZero() {
		t.Fatalf("after 3 drops: %+v, want a backoff of %v", st, initial)
	}
	// Past the backoff the flapper (listed first, both idle) is chosen
	// again: its start succeeds and its session drops.
	time.Sleep(time.Until(st.BackedOffUntil))
	if ep, err := runOn(t, p); ep != "flap" || !errors.Is(err, session.ErrDisconnected) {
		t.Fatalf("after the backoff: on %s, %v; want the flapper tried again, and a drop", ep, err)
	}
	// The backoff's length, not whether it still runs: a busy machine may
	// take longer than it to get here.
	st = p.Stat().Endpoints[0]
	if st.Backoff != 2*initial || st.Drops != 4 {
		t.Fatalf("after the 4th drop: %+v, want a backoff of %v", st, 2*initial)
	}
	if d := ev.of(pool.EventEndpointDropped); len(d) != 4 || d[3].Duration != 2*initial {
		t.Fatalf("EventEndpointDropped %+v, want the 4th to back the flapper off for %v", d, 2*initial)
	}
	// The endpoint recovers: its next session, past the backoff, ends
	// clean, and that resets the streak: one drop after it backs nothing
	// off.
	pass.Store(true)
	time.Sleep(time.Until(st.BackedOffUntil))
	if ep, err := runOn(t, p); ep != "flap" || err != nil {
		t.Fatalf("the recovered endpoint: on %s, %v; want a clean session on the flapper", ep, err)
	}
	pass.Store(false)
	if ep, err := runOn(t, p); ep != "flap" || !errors.Is(err, session.ErrDisconnected) {
		t.Fatalf("after a clean session: on %s, %v; want a drop on the flapper", ep, err)
	}
	if st := p.Stat().Endpoints[0]; st.Drops != 5 || st.BackedOffUntil.After(time.Now()) {
		t.Fatalf("one drop after a clean session: %+v, want no backoff", st)
	}
	if ep, _ := runOn(t, p); ep != "flap" {
		t.Fatalf("one drop after a clean session: the next checkout went to %s", ep)
	}
}

// Sessions that end by their own code or their caller never back their
// endpoint off, however many in a row: a worker killed at its memory
// limit (4003), one that crashed, by a signal or after announcing a fatal
// error, while it ran the session's code (1011, "worker failed: ..."), a
// turn past the server's turn timeout (4002), the caller's deadline. Each
// server here is the real one, over the hostile worker playing the
// failure or over the real worker; after more failures than it takes
// drops to back an endpoint off, the next checkout still goes there.
func TestUserFailuresDoNotBackOffTheEndpoint(t *testing.T) {
	_, good := servertest.Start(t, nil)
	hostile := func(scenario string) func(*server.Config) {
		bin := hostilebuild.Build(t)
		return func(c *server.Config) {
			c.Worker = worker.Config{Binary: bin, Env: []string{"HOSTILE_SCENARIO=" + scenario, "HOSTILE_LIFETIME=60s"}}
		}
	}
	closedWith := func(code int, reason string) func(error) bool {
		return func(err error) bool {
			var de *session.DisconnectedError
			return errors.As(err, &de) && de.Code == code && strings.HasPrefix(de.Reason, reason)
		}
	}
	for _, c := range []struct {
		name   string
		server func(*server.Config)
		code   string
		ctx    time.Duration // the turn's deadline; 0: 30 s
		want   func(error) bool
	}{
		{"memory-limit", hostile("oom_exit"), "1", 0, func(err error) bool {
			return errors.Is(err, worker.ErrMemoryLimit) && closedWith(4003, "")(err)
		}},
		{"worker-exit", hostile("exit_4"), "1", 0, closedWith(1011, "worker failed")},
		{"worker-signal", hostile("sigsegv"), "1", 0, closedWith(1011, "worker failed")},
		{"worker-fatal", hostile("fatal_then_exit"), "1", 0, closedWith(1011, "worker failed")},
		// The server's turn timeout also bounds each session's Configure
		// (its start): 200 ms was too short for a loaded machine starting
		// a relayed worker, whose start then failed (and rightly backed
		// the endpoint off) before any user code ran.
		{"turn-timeout", func(c *server.Config) { c.TurnTimeout = time.Second }, "while True:\n    pass\n", 0, func(err error) bool {
			return errors.Is(err, session.ErrTimeout) && closedWith(4002, "")(err)
		}},
		{"caller-deadline", nil, "while True:\n    pass\n", 200 * time.Millisecond, func(err error) bool {
			return errors.Is(err, context.DeadlineExceeded)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, u := servertest.Start(t, c.server)
			var ev events
			p, err := pool.New(context.Background(), pool.Config{
				NoLocal:         true,
				Endpoints:       []pool.Endpoint{{Name: "user", URL: u}, {Name: "good", URL: good}},
				EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
				Metrics:         ev.record,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer closeWithin(t, p)
			for i := range 5 {
				s := checkout(t, p)
				if s.Endpoint() != "user" {
					s.Close()
					t.Fatalf("checkout %d went to %s after %d failures of the sessions' own", i, s.Endpoint(), i)
				}
				d := c.ctx
				if d == 0 {
					d = 30 * time.Second
				}
				ctx, cancel := context.WithTimeout(context.Background(), d)
				_, err := s.Run(ctx, c.code)
				cancel()
				s.Close()
				if !c.want(err) {
					t.Fatalf("run %d: %v (%#v), not the failure wanted", i, err, err)
				}
			}
			if st := p.Stat().Endpoints[0]; st.Drops != 0 || !st.BackedOffUntil.IsZero() {
				t.Errorf("endpoint after its sessions' own failures: %+v, want no drop and no backoff", st)
			}
			if d := ev.of(pool.EventEndpointDropped); len(d) != 0 {
				t.Errorf("EventEndpointDropped %+v, want none", d)
			}
		})
	}
}

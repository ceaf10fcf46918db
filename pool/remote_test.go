package pool_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/internal/telemetrytest"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// events collects a pool's events.
type events struct {
	mu  sync.Mutex
	evs []pool.Event
}

func (e *events) record(ev pool.Event) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
}

func (e *events) of(k pool.EventKind) []pool.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []pool.Event
	for _, ev := range e.evs {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

func run(t *testing.T, s *pool.Session, code, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := s.Run(ctx, code)
	if err != nil {
		t.Fatalf("%s on %s: %v", code, s.Endpoint(), err)
	}
	if r.Repr() != want {
		t.Fatalf("%s on %s = %s, want %s", code, s.Endpoint(), r.Repr(), want)
	}
}

func checkout(t *testing.T, p *pool.Pool) *pool.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := p.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// One pool, one real local worker and two real servers: checkouts go to
// the least-loaded endpoint (the local workers win ties and are skipped
// once saturated), remote sessions are single-use connections while the
// local worker is reset and reused, and Stat and the events say which
// endpoint served what.
func TestMixedPoolSpreadsAcrossLocalAndRemote(t *testing.T) {
	_, urlA := servertest.Start(t, nil)
	_, urlB := servertest.Start(t, nil)
	var evs events
	p, err := pool.New(context.Background(), pool.Config{
		MinWorkers: 1, MaxWorkers: 1,
		Worker:    worker.Config{Binary: testenv.Worker(t)},
		Endpoints: []pool.Endpoint{{Name: "a", URL: urlA}, {URL: urlB}},
		Metrics:   evs.record,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)

	local := checkout(t, p)
	onA := checkout(t, p) // local saturated (MaxWorkers 1): a and b tie, a first
	onB := checkout(t, p)
	onA2 := checkout(t, p) // a and b at one each
	if local.Endpoint() != pool.LocalEndpoint || local.Pid() == 0 ||
		onA.Endpoint() != "a" || onB.Endpoint() != "remote-1" || onA2.Endpoint() != "a" {
		t.Fatalf("endpoints %s %s %s %s", local.Endpoint(), onA.Endpoint(), onB.Endpoint(), onA2.Endpoint())
	}
	if onA.Pid() != 0 || onA.WorkerID() != 0 {
		t.Fatalf("a remote session has pid %d, worker %d", onA.Pid(), onA.WorkerID())
	}
	for i, s := range []*pool.Session{local, onA, onB, onA2} {
		run(t, s, "x = 40 + "+string(rune('0'+i)), "None")
	}
	run(t, onB, "x", "42")
	st := p.Stat()
	if st.Busy != 1 || len(st.Endpoints) != 2 || st.Checkouts != 4 ||
		st.Endpoints[0].Outstanding != 2 || st.Endpoints[1].Outstanding != 1 ||
		st.Endpoints[0].Checkouts != 2 || st.Endpoints[0].URL != urlA || st.Endpoints[1].Name != "remote-1" {
		t.Fatalf("stat %+v", st)
	}
	if err := onA.Reset(context.Background()); !errors.Is(err, session.ErrSingleUse) {
		t.Fatalf("Reset of a remote checkout: %v", err)
	}

	// The local worker goes back, reset, and serves the next checkout (it
	// is the least loaded again); a remote session's Close ends its
	// connection and frees its slot.
	pid := local.Pid()
	local.Close()
	onA.Close()
	if _, err := onA.Run(context.Background(), "1"); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("a closed remote session ran: %v", err)
	}
	again := checkout(t, p)
	if again.Endpoint() != pool.LocalEndpoint || again.Pid() != pid {
		t.Fatalf("the local worker was not reused: %s pid %d (was %d)", again.Endpoint(), again.Pid(), pid)
	}
	again.Close()
	st = p.Stat()
	if st.Endpoints[0].Outstanding != 1 || st.Idle != 1 {
		t.Fatalf("after the closes: %+v", st)
	}
	co := evs.of(pool.EventCheckout)
	if len(co) != 5 || co[0].Endpoint != pool.LocalEndpoint || co[1].Endpoint != "a" || co[2].Endpoint != "remote-1" {
		t.Fatalf("checkout events %+v", co)
	}
	if cl := evs.of(pool.EventEndpointClosed); len(cl) != 1 || cl[0].Endpoint != "a" || cl[0].Reason != "" {
		t.Fatalf("endpoint close events %+v", cl)
	}

	// Close with remote sessions still out: they are ended at the
	// deadline, their connections closed, every goroutine joined.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close with sessions out: %v", err)
	}
	if _, err := onB.Run(context.Background(), "1"); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("a remote session survived Close: %v", err)
	}
	for _, e := range p.Stat().Endpoints {
		if e.Outstanding != 0 {
			t.Fatalf("outstanding after Close: %+v", e)
		}
	}
	onB.Close()
	onA2.Close()
}

// Endpoints that cannot be dialled, or refuse with 503 (draining) or 429
// (the per-client cap), are backed off and the checkout goes elsewhere:
// to the local workers, waiting for one when they are busy.
func TestMixedPoolBacksOffEndpoints(t *testing.T) {
	draining, urlD := servertest.Start(t, nil)
	_, urlC := servertest.Start(t, func(c *server.Config) { c.MaxSessionsPerClient = 1 })
	p, err := pool.New(context.Background(), pool.Config{
		MinWorkers: 1, MaxWorkers: 1,
		Worker: worker.Config{Binary: testenv.Worker(t)},
		Endpoints: []pool.Endpoint{
			{Name: "capped", URL: urlC},
			{Name: "dead", URL: "ws://127.0.0.1:1/"},
			{Name: "draining", URL: urlD},
		},
		EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	draining.Drain()

	local := checkout(t, p)
	capped := checkout(t, p)
	if local.Endpoint() != pool.LocalEndpoint || capped.Endpoint() != "capped" {
		t.Fatalf("endpoints %s %s", local.Endpoint(), capped.Endpoint())
	}
	run(t, capped, "1 + 1", "2")

	// The next checkout tries dead (load 0, fails to dial), draining (503)
	// and capped (429), backs each off, and waits for the local worker.
	done := make(chan *pool.Session, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := p.Checkout(ctx, session.Config{})
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()
	deadline := time.Now().Add(30 * time.Second)
	for p.Stat().Waiting == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the checkout never waited for the local worker")
		}
		time.Sleep(5 * time.Millisecond)
	}
	local.Close()
	waited := <-done
	if waited == nil {
		t.FailNow()
	}
	defer waited.Close()
	if waited.Endpoint() != pool.LocalEndpoint {
		t.Fatalf("the waiting checkout went to %s", waited.Endpoint())
	}
	st := p.Stat().Endpoints
	now := time.Now()
	if st[1].DialFailures != 1 || !st[1].BackedOffUntil.After(now.Add(30*time.Minute)) ||
		st[2].Refusals != 1 || !st[2].BackedOffUntil.After(now) ||
		st[0].Refusals != 1 || !st[0].BackedOffUntil.After(now) || st[0].Outstanding != 1 {
		t.Fatalf("endpoint stats %+v", st)
	}

	// Everything backed off and the local worker busy: a checkout waits
	// for the local worker and gives up at its deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := p.Checkout(ctx, session.Config{}); !errors.Is(err, pool.ErrExhausted) {
		t.Fatalf("want ErrExhausted, got %v", err)
	}
	capped.Close()
}

// A pool without local workers: checkouts spread across the servers, a
// failed dial backs its endpoint off, a session on a draining server
// resumes on the other with nothing lost (its slot moves with it), and
// when nothing is left the checkout fails with ErrNoEndpoint.
func TestRemoteOnlyPool(t *testing.T) {
	a, urlA := servertest.Start(t, nil)
	_, urlB := servertest.Start(t, nil)
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:         true,
		Endpoints:       []pool.Endpoint{{Name: "dead", URL: "ws://127.0.0.1:1/"}, {Name: "a", URL: urlA}, {Name: "b", URL: urlB}},
		EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	if p.Binary() != "" || p.Stat().Live != 0 {
		t.Fatalf("a NoLocal pool started something: %q %+v", p.Binary(), p.Stat())
	}
	s1 := checkout(t, p)
	s2 := checkout(t, p)
	defer s1.Close()
	defer s2.Close()
	onA := s1
	if s1.Endpoint() != "a" {
		onA = s2
	}
	if s1.Endpoint() == s2.Endpoint() {
		t.Fatalf("both sessions on %s", s1.Endpoint())
	}
	run(t, onA, "x = 41", "None")
	a.Drain()
	run(t, onA, "x + 1", "42")
	if onA.Resumed() != 1 || onA.Endpoint() != "b" {
		t.Fatalf("after the drain: resumes %d, on %s", onA.Resumed(), onA.Endpoint())
	}
	st := p.Stat().Endpoints
	if st[0].DialFailures != 1 || st[1].Outstanding != 0 || st[2].Outstanding != 2 || st[2].Resumes != 1 {
		t.Fatalf("endpoint stats %+v", st)
	}
	s3 := checkout(t, p) // a refuses (503) and is backed off
	defer s3.Close()
	if s3.Endpoint() != "b" || p.Stat().Endpoints[1].Refusals != 1 {
		t.Fatalf("during a's drain: %s %+v", s3.Endpoint(), p.Stat().Endpoints[1])
	}
}

func TestRemoteOnlyNoEndpoint(t *testing.T) {
	p, err := pool.New(context.Background(), pool.Config{NoLocal: true, Endpoints: []pool.Endpoint{{URL: "ws://127.0.0.1:1/"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	for range 2 { // failed to dial, then backed off
		if _, err := p.Checkout(context.Background(), session.Config{}); !errors.Is(err, pool.ErrNoEndpoint) {
			t.Fatalf("got %v", err)
		}
	}
	if st := p.Stat().Endpoints[0]; st.DialFailures != 1 || st.Backoff != pool.DefaultBackoffInitial {
		t.Fatalf("stat %+v", st)
	}
}

// An endpoint URL's password and token reach neither the checkout's
// error, nor the pool's log, nor Stat.
func TestEndpointCredentialsAreMasked(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:   true,
		Endpoints: []pool.Endpoint{{URL: "ws://alice:s3cretPassw0rd@127.0.0.1:1/ws?token=TOPSECRETTOKEN"}},
		Logger:    slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	_, err = p.Checkout(context.Background(), session.Config{})
	if !errors.Is(err, pool.ErrNoEndpoint) {
		t.Fatalf("got %v", err)
	}
	st := p.Stat().Endpoints[0]
	mu.Lock()
	defer mu.Unlock()
	for what, text := range map[string]string{"error": err.Error(), "log": logs.String(), "Stat URL": st.URL} {
		for _, secret := range []string{"s3cretPassw0rd", "TOPSECRETTOKEN"} {
			if strings.Contains(text, secret) {
				t.Errorf("the %s holds %q: %s", what, secret, text)
			}
		}
	}
	if st.URL != "ws://alice:xxxxx@127.0.0.1:1/ws?token=xxxxx" {
		t.Errorf("Stat URL = %q", st.URL)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func TestEndpointConfigRefused(t *testing.T) {
	for _, c := range []pool.Config{
		{NoLocal: true},
		{NoLocal: true, Endpoints: []pool.Endpoint{{URL: "http://x/"}}},
		{NoLocal: true, Endpoints: []pool.Endpoint{{Name: "x", URL: "ws://a/"}, {Name: "x", URL: "ws://b/"}}},
		{NoLocal: true, Endpoints: []pool.Endpoint{{Name: pool.LocalEndpoint, URL: "ws://a/"}}},
	} {
		if p, err := pool.New(context.Background(), c); err == nil {
			p.Close(context.Background())
			t.Fatalf("accepted %+v", c)
		}
	}
}

// The pool's metrics carry the endpoint as a name from the
// configuration (never its URL or its headers' token): checkout waits and
// session durations per endpoint, local ones included, and failed remote
// starts per endpoint.
func TestMixedPoolMetricsPerEndpoint(t *testing.T) {
	_, url := servertest.Start(t, nil)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	p, err := pool.New(context.Background(), pool.Config{
		MinWorkers: 1, MaxWorkers: 1,
		Worker: worker.Config{Binary: testenv.Worker(t)},
		Endpoints: []pool.Endpoint{
			{Name: "dead", URL: "ws://127.0.0.1:1/?token=secret"},
			{Name: "srv", URL: url, Dial: ws.DialOptions{Header: http.Header{"Authorization": {"Bearer secret"}}}},
		},
		MeterProvider: mp,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	local := checkout(t, p)
	remote := checkout(t, p) // dead fails, srv serves
	if remote.Endpoint() != "srv" {
		t.Fatalf("on %s", remote.Endpoint())
	}
	run(t, remote, "2 + 2", "4")
	remote.Close()
	local.Close()

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	seen := map[string]map[string]bool{} // metric → endpoint values
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			visit := func(s attribute.Set) {
				for _, kv := range s.ToSlice() {
					if strings.Contains(kv.Value.String(), "secret") || strings.Contains(kv.Value.String(), "ws://") {
						t.Errorf("%s carries %s=%s", m.Name, kv.Key, kv.Value.String())
					}
				}
				if v, ok := s.Value(pool.AttrEndpoint); ok {
					if seen[m.Name] == nil {
						seen[m.Name] = map[string]bool{}
					}
					seen[m.Name][v.AsString()] = true
				}
			}
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					visit(dp.Attributes)
				}
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					visit(dp.Attributes)
				}
			}
		}
	}
	for metric, want := range map[string][]string{
		pool.MetricCheckoutWait:     {pool.LocalEndpoint, "srv"},
		pool.MetricSessionDuration:  {pool.LocalEndpoint, "srv"},
		pool.MetricEndpointFailures: {"dead"},
	} {
		for _, ep := range want {
			if !seen[metric][ep] {
				t.Errorf("%s: no point for endpoint %s (have %v)", metric, ep, seen[metric])
			}
		}
	}
}

// Many goroutines check out of one mixed pool at once: every session
// computes its own answer wherever it lands, both kinds of endpoint serve,
// and every slot is given back.
func TestMixedPoolConcurrentCheckouts(t *testing.T) {
	_, urlA := servertest.Start(t, func(c *server.Config) { c.MaxSessionsPerClient = -1 })
	_, urlB := servertest.Start(t, func(c *server.Config) { c.MaxSessionsPerClient = -1 })
	p, err := pool.New(context.Background(), pool.Config{
		MinWorkers: 1, MaxWorkers: 2,
		Worker:    worker.Config{Binary: testenv.Worker(t)},
		Endpoints: []pool.Endpoint{{Name: "a", URL: urlA}, {Name: "b", URL: urlB}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	const workers, each = 6, 5
	var mu sync.Mutex
	served := map[string]int{}
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				s, err := p.Checkout(ctx, session.Config{})
				if err != nil {
					cancel()
					t.Error(err)
					return
				}
				n := g*100 + i
				// A few milliseconds of work per session, so that sessions
				// overlap and the local workers (at most 2) saturate however
				// fast a round trip is (on one CPU a goroutine could otherwise
				// run all its sessions before another checks out, and every
				// checkout would find a local worker free).
				_, err = s.Run(ctx, "n = "+strconv.Itoa(n)+" + 0 * sum(range(100000))")
				var r *session.Result
				if err == nil {
					r, err = s.Run(ctx, "n * 2")
				}
				cancel()
				if err != nil || r.Repr() != strconv.Itoa(2*n) {
					t.Errorf("session %d on %s: %v %v", n, s.Endpoint(), r, err)
				}
				mu.Lock()
				served[s.Endpoint()]++
				mu.Unlock()
				s.Close()
			}
		})
	}
	wg.Wait()
	if served[pool.LocalEndpoint] == 0 || served["a"]+served["b"] == 0 {
		t.Fatalf("served %v", served)
	}
	st := p.Stat()
	for _, e := range st.Endpoints {
		if e.Outstanding != 0 {
			t.Fatalf("outstanding after the run: %+v", e)
		}
	}
	if st.Checkouts != workers*each || st.Busy != 0 {
		t.Fatalf("stat %+v (served %v)", st, served)
	}
	t.Logf("served %v", served)
}

// A resume whose first pick cannot be dialled backs that endpoint off and
// picks again: the session lands on the live server, nothing lost, and
// its slot is counted there only.
func TestRemoteResumeSkipsAnEndpointThatFailsToDial(t *testing.T) {
	a, urlA := servertest.Start(t, nil)
	_, urlB := servertest.Start(t, nil)
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:         true,
		Endpoints:       []pool.Endpoint{{Name: "a", URL: urlA}, {Name: "b", URL: urlB}, {Name: "dead", URL: "ws://127.0.0.1:1/"}},
		EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	s1 := checkout(t, p)
	defer s1.Close()
	s2 := checkout(t, p)
	defer s2.Close()
	if s1.Endpoint() != "a" || s2.Endpoint() != "b" {
		t.Fatalf("on %s and %s", s1.Endpoint(), s2.Endpoint())
	}
	run(t, s1, "x = 20", "None")
	a.Drain()
	run(t, s1, "x + 22", "42") // the least loaded other endpoint is dead (0): tried, backed off, then b
	st := p.Stat().Endpoints
	if s1.Endpoint() != "b" || s1.Resumed() != 1 || st[2].DialFailures != 1 || !st[2].BackedOffUntil.After(time.Now()) ||
		st[0].Outstanding != 0 || st[1].Outstanding != 2 || st[2].Outstanding != 0 || st[1].Resumes != 1 || st[2].Resumes != 0 {
		t.Fatalf("on %s after %d resumes: %+v", s1.Endpoint(), s1.Resumed(), st)
	}
}

// closeWithin closes p with a deadline, so that a test failing while it
// still holds a session ends (Close destroys what is still out at its
// deadline) instead of waiting for that session forever.
func closeWithin(t *testing.T, p *pool.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil && !t.Failed() {
		t.Errorf("pool close: %v", err)
	}
}

// With endpoints, CheckoutTimeout bounds the whole checkout: a server that
// accepts the connection and never answers Configure (StartTimeout far
// off) costs no more than the checkout's own budget, and the checkout
// fails as exhausted.
func TestRemoteCheckoutBoundedByCheckoutTimeout(t *testing.T) {
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := ws.Accept(w, r, ws.AcceptOptions{})
		if err != nil {
			return
		}
		defer c.Close()
		for {
			if _, err := c.ReadFrame(); err != nil {
				return
			}
		}
	}))
	defer silent.Close()
	url := "ws" + strings.TrimPrefix(silent.URL, "http") + "/"
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:         true,
		Endpoints:       []pool.Endpoint{{Name: "silent", URL: url}},
		StartTimeout:    time.Minute,
		CheckoutTimeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	start := time.Now()
	_, err = p.Checkout(context.Background(), session.Config{})
	took := time.Since(start)
	var ee *pool.ExhaustedError
	if !errors.As(err, &ee) || !errors.Is(err, pool.ErrExhausted) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want an exhausted checkout, got %v", err)
	}
	if took > 20*time.Second || ee.Waited < 300*time.Millisecond {
		t.Fatalf("checkout took %v (waited %v), CheckoutTimeout 300ms, StartTimeout 1m", took, ee.Waited)
	}
	if !strings.Contains(err.Error(), "CheckoutTimeout 300ms") {
		t.Fatalf("error %q does not name CheckoutTimeout", err)
	}
	if st := p.Stat(); st.Exhausted != 1 || st.Endpoints[0].Outstanding != 0 {
		t.Fatalf("stats after the timeout: %+v", st)
	}
}

// A session resumed after its server drained is counted on the endpoint
// it resumed on (monty.pool.session.resumed, outcome ok), and the dump it
// carried there is a loaded snapshot (monty.snapshot.bytes, load).
func TestRemoteResumeMetrics(t *testing.T) {
	a, urlA := servertest.Start(t, nil)
	_, urlB := servertest.Start(t, nil)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:       true,
		Endpoints:     []pool.Endpoint{{Name: "a", URL: urlA}, {Name: "b", URL: urlB}},
		MeterProvider: mp,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	s := checkout(t, p)
	defer s.Close()
	if s.Endpoint() != "a" {
		t.Fatalf("on %s", s.Endpoint())
	}
	run(t, s, "x = 20", "None")
	a.Drain()
	run(t, s, "x + 22", "42")
	if s.Endpoint() != "b" || s.Resumed() != 1 {
		t.Fatalf("on %s after %d resumes", s.Endpoint(), s.Resumed())
	}

	got := telemetrytest.Collect(t, reader)
	resumed := map[string]int64{} // endpoint/outcome → count
	if m, ok := got[pool.MetricSessionResumed]; ok {
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			ep, _ := dp.Attributes.Value(pool.AttrEndpoint)
			o, _ := dp.Attributes.Value(pool.AttrCheckoutOutcome)
			resumed[ep.AsString()+"/"+o.AsString()] += dp.Value
		}
	}
	var loads, loadBytes uint64
	if m, ok := got[session.MetricSnapshotBytes]; ok {
		for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
			if op, _ := dp.Attributes.Value(session.AttrSnapshotOp); op.AsString() == "load" {
				loads += dp.Count
				loadBytes += uint64(dp.Sum)
			}
		}
	}
	if len(resumed) != 1 || resumed["b/ok"] != 1 {
		t.Errorf("%s: %v, want one ok resume on b", pool.MetricSessionResumed, resumed)
	}
	if loads != 1 || loadBytes < 8 {
		t.Errorf("%s: %d loads of %d bytes, want the resume's dump", session.MetricSnapshotBytes, loads, loadBytes)
	}
}

// A checkout that fails for its own reason (here a header the endpoint
// cannot be sent, from its header function) records its wait with outcome
// error, on the endpoint it tried; one that tried no endpoint (a closed
// pool) carries none.
func TestCheckoutErrorOutcomePerEndpoint(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal: true,
		Endpoints: []pool.Endpoint{{Name: "bad", URL: "ws://127.0.0.1:1/",
			Dial: ws.DialOptions{HeaderFunc: func(context.Context) (http.Header, error) {
				return http.Header{"X-Bad": {"a\nb"}}, nil
			}}}},
		MeterProvider: mp,
	})
	if err != nil {
		t.Fatal(err)
	}
	var he *ws.HeaderError
	if _, err := p.Checkout(context.Background(), session.Config{}); !errors.As(err, &he) {
		t.Fatalf("checkout: %v", err)
	}
	closeWithin(t, p)
	if _, err := p.Checkout(context.Background(), session.Config{}); !errors.Is(err, pool.ErrClosed) {
		t.Fatalf("checkout of a closed pool: %v", err)
	}
	got := map[string]uint64{} // endpoint ("-" for none) → error outcomes
	if m, ok := telemetrytest.Collect(t, reader)[pool.MetricCheckoutWait]; ok {
		for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
			if o, _ := dp.Attributes.Value(pool.AttrCheckoutOutcome); o.AsString() != "error" {
				t.Errorf("a %s checkout recorded", o.AsString())
				continue
			}
			ep := "-"
			if v, ok := dp.Attributes.Value(pool.AttrEndpoint); ok {
				ep = v.AsString()
			}
			got[ep] += dp.Count
		}
	}
	if len(got) != 2 || got["bad"] != 1 || got["-"] != 1 {
		t.Fatalf("error checkouts by endpoint %v, want one on bad and one on none", got)
	}
}

// A resume with nowhere to go (the only server draining) is recorded with
// outcome error, and the run fails with the shutdown error.
func TestRemoteResumeFailureMetric(t *testing.T) {
	a, urlA := servertest.Start(t, nil)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:       true,
		Endpoints:     []pool.Endpoint{{Name: "a", URL: urlA}},
		MeterProvider: mp,
		StartTimeout:  5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	s := checkout(t, p)
	defer s.Close()
	run(t, s, "x = 20", "None")
	a.Drain()
	if _, err := s.Run(context.Background(), "x + 22"); !errors.Is(err, session.ErrShutdown) {
		t.Fatalf("run after the only server drained: %v", err)
	}
	outcomes := map[string]int64{}
	if m, ok := telemetrytest.Collect(t, reader)[pool.MetricSessionResumed]; ok {
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			o, _ := dp.Attributes.Value(pool.AttrCheckoutOutcome)
			outcomes[o.AsString()] += dp.Value
		}
	}
	if outcomes["error"] != 1 || outcomes["ok"] != 0 {
		t.Fatalf("%s outcomes %v, want one error", pool.MetricSessionResumed, outcomes)
	}
}

// A server's Retry-After is honoured when longer than the backoff, but
// only up to a bound: an endpoint answering 503 with a Retry-After of
// decades is tried again within minutes, not never.
func TestRetryAfterIsBounded(t *testing.T) {
	for _, c := range []struct {
		header   string
		min, max time.Duration
	}{
		{"90", 89 * time.Second, 91 * time.Second}, // honoured: longer than the backoff
		{"999999999", 299 * time.Second, 301 * time.Second},
		{"99999999999999999999", 299 * time.Second, 301 * time.Second},
	} {
		refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", c.header)
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		p, err := pool.New(context.Background(), pool.Config{
			NoLocal:         true,
			Endpoints:       []pool.Endpoint{{Name: "refusing", URL: "ws" + strings.TrimPrefix(refusing.URL, "http")}},
			EndpointBackoff: pool.Backoff{Initial: time.Second, Max: 10 * time.Second},
		})
		if err != nil {
			t.Fatal(err)
		}
		// The checkout waits out the backoff after the refusal, so it is
		// ended once the refusal is counted (a fixed 200 ms context could
		// end before a loaded machine had dialled at all).
		ctx, cancel := context.WithCancel(context.Background())
		before := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := p.Checkout(ctx, session.Config{})
			done <- err
		}()
		deadline := time.Now().Add(30 * time.Second)
		for p.Stat().Endpoints[0].Refusals == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		after := time.Now()
		cancel()
		if err := <-done; err == nil {
			t.Fatal("a checkout from a refusing endpoint succeeded")
		}
		// The backoff runs from the refusal, which came between before and
		// after: bounding each end from its own side keeps the dial's
		// latency, however long on a loaded machine, out of the window.
		st := p.Stat().Endpoints[0]
		if from, to := st.BackedOffUntil.Sub(before), st.BackedOffUntil.Sub(after); st.Refusals != 1 || from < c.min || to > c.max {
			t.Errorf("Retry-After %s: %d refusals, backed off for %v (from before the checkout) and %v (from the refusal seen), want %v to %v",
				c.header, st.Refusals, from, to, c.min, c.max)
		}
		closeWithin(t, p)
		refusing.Close()
	}
}

// A dial refused with a status other than 503 and 429 is a failed dial
// too (Config.EndpointBackoff): a 502 or 504 from a load balancer with no
// healthy backend, or a 401, backs the endpoint off, honouring a
// Retry-After, so later checkouts do not each pay for it (a gateway
// timeout can take the balancer's whole timeout) before failing over.
func TestRefusedDialBacksOff(t *testing.T) {
	for _, c := range []struct {
		status   int
		header   string
		min, max time.Duration
	}{
		{http.StatusBadGateway, "90", 89 * time.Second, 91 * time.Second},
		{http.StatusGatewayTimeout, "", 9 * time.Second, 11 * time.Second},
		{http.StatusUnauthorized, "", 9 * time.Second, 11 * time.Second},
	} {
		refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c.header != "" {
				w.Header().Set("Retry-After", c.header)
			}
			w.WriteHeader(c.status)
		}))
		p, err := pool.New(context.Background(), pool.Config{
			NoLocal:         true,
			Endpoints:       []pool.Endpoint{{Name: "refusing", URL: "ws" + strings.TrimPrefix(refusing.URL, "http")}},
			EndpointBackoff: pool.Backoff{Initial: 10 * time.Second, Max: 20 * time.Second},
		})
		if err != nil {
			t.Fatal(err)
		}
		before := time.Now()
		var de *ws.DialError
		if _, err := p.Checkout(context.Background(), session.Config{}); !errors.As(err, &de) || de.StatusCode != c.status || !errors.Is(err, pool.ErrNoEndpoint) {
			t.Errorf("HTTP %d: checkout = %v, want ErrNoEndpoint with the DialError", c.status, err)
		}
		after := time.Now()
		// The backoff runs from the failure, between before and after;
		// each end of the window is measured from its own side, so a slow
		// dial on a loaded machine does not push the backoff past max.
		st := p.Stat().Endpoints[0]
		if from, to := st.BackedOffUntil.Sub(before), st.BackedOffUntil.Sub(after); st.DialFailures != 1 || from < c.min || to > c.max {
			t.Errorf("HTTP %d (Retry-After %q): %d dial failures, backed off for %v (from before) and %v (from after), want %v to %v",
				c.status, c.header, st.DialFailures, from, to, c.min, c.max)
		}
		closeWithin(t, p)
		refusing.Close()
	}
}

// A checkout its caller cancels while the dial is in progress says
// nothing about the endpoint: it is neither counted as a dial failure
// nor backed off (a web service whose clients hang up would otherwise
// back a healthy endpoint off, doubling up to EndpointBackoff.Max).
func TestCanceledCheckoutDoesNotBackOff(t *testing.T) {
	u, conns := rawEndpoint(t, nil) // the upgrade is never answered: the caller gives up first
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:         true,
		Endpoints:       []pool.Endpoint{{Name: "slow", URL: u}},
		EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c := <-conns
		conns <- c
		cancel()
	}()
	if _, err := p.Checkout(ctx, session.Config{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("checkout = %v, want context.Canceled", err)
	}
	st := p.Stat().Endpoints[0]
	if st.DialFailures != 0 || st.Backoff != 0 || st.BackedOffUntil.After(time.Now()) || st.Outstanding != 0 {
		t.Fatalf("a cancelled checkout counted against the endpoint: %+v", st)
	}
}

// A start its caller gives up on after the dial (the endpoint upgraded
// and has not answered the Configure yet) says nothing of the endpoint,
// as a cancelled dial says nothing: no start failure, no backoff, no
// EventEndpointFailed (whose metric and Warn log would blame the server).
func TestCanceledStartIsNoEndpointFailure(t *testing.T) {
	upgraded := make(chan struct{}, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := ws.Accept(w, r, ws.AcceptOptions{})
		if err != nil {
			return
		}
		defer c.Close()
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
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-upgraded
		cancel()
	}()
	if _, err := p.Checkout(ctx, session.Config{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("checkout = %v, want context.Canceled", err)
	}
	st := p.Stat().Endpoints[0]
	if st.StartFailures != 0 || st.DialFailures != 0 || st.Backoff != 0 || st.Outstanding != 0 {
		t.Fatalf("a cancelled start counted against the endpoint: %+v", st)
	}
	if n := len(ev.of(pool.EventEndpointFailed)); n != 0 {
		t.Fatalf("%d EventEndpointFailed for a cancelled start", n)
	}
}

// A Config the session cannot encode is the caller's mistake, found by
// the remote start before anything is sent: the checkout fails with it
// at once, as a local one does, and no endpoint is charged a start
// failure, reported failed or tried in turn.
func TestInvalidConfigIsNoEndpointFailure(t *testing.T) {
	_, urlA := servertest.Start(t, nil)
	_, urlB := servertest.Start(t, nil)
	var ev events
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:   true,
		Endpoints: []pool.Endpoint{{Name: "a", URL: urlA}, {Name: "b", URL: urlB}},
		Metrics:   ev.record,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	_, err = p.Checkout(context.Background(), session.Config{ScriptName: "bad\xffname.py"})
	var ire *session.InvalidRequestError
	if !errors.As(err, &ire) || errors.Is(err, pool.ErrNoEndpoint) {
		t.Fatalf("checkout = %v, want a bare *session.InvalidRequestError", err)
	}
	for _, st := range p.Stat().Endpoints {
		if st.StartFailures != 0 || st.Outstanding != 0 || st.Backoff != 0 {
			t.Errorf("an invalid Config counted against endpoint %s: %+v", st.Name, st)
		}
	}
	if n := len(ev.of(pool.EventEndpointFailed)); n != 0 {
		t.Fatalf("%d EventEndpointFailed for an invalid Config", n)
	}
	// The endpoints still serve.
	s := checkout(t, p)
	defer s.Close()
	run(t, s, "1 + 1", "2")
}

// A remote session whose connection the server dropped is reported by
// its EventEndpointClosed as a crash of the remote worker, as a local
// worker's would be (vanished; timeout when the server killed its worker
// for running a turn too long), not as if the caller had destroyed it.
func TestRemoteDropIsACrashReason(t *testing.T) {
	for _, c := range []struct {
		name string
		turn string
		want pool.Reason
	}{
		{"vanished", "1", pool.ReasonVanished},
		{"turn-timeout", "while True:\n    pass\n", pool.ReasonTimeout},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, u := servertest.Start(t, func(cfg *server.Config) { cfg.TurnTimeout = 200 * time.Millisecond })
			var ev events
			p, err := pool.New(context.Background(), pool.Config{
				NoLocal: true, Endpoints: []pool.Endpoint{{Name: "a", URL: u}}, Metrics: ev.record,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer closeWithin(t, p)
			s := checkout(t, p)
			if c.want == pool.ReasonVanished {
				srv.Close()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := s.Run(ctx, c.turn); !errors.Is(err, session.ErrDisconnected) || session.Survives(err) {
				t.Fatalf("run = %v, want a disconnect", err)
			}
			s.Close()
			closed := ev.of(pool.EventEndpointClosed)
			if len(closed) != 1 || closed[0].Reason != c.want || closed[0].Endpoint != "a" {
				t.Fatalf("EventEndpointClosed %+v, want one with reason %s", closed, c.want)
			}
			if st := p.Stat().Endpoints[0]; st.Outstanding != 0 {
				t.Fatalf("stat %+v", st)
			}
		})
	}
}

// Close ends a remote checkout still dialling (an endpoint that accepts
// the connection and never upgrades it) before it returns: the checkout
// fails with ErrClosed rather than when its dial times out, after Close
// (reporting to Metrics then), and the endpoint is not charged for it.
func TestCloseEndsARemoteDial(t *testing.T) {
	u, accepted := rawEndpoint(t, nil)
	var ev events
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:      true,
		Endpoints:    []pool.Endpoint{{Name: "mute", URL: u}},
		StartTimeout: time.Hour,
		Metrics:      ev.record,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Checkout(context.Background(), session.Config{})
		done <- err
	}()
	c := <-accepted
	defer c.Close()
	closeWithin(t, p)
	// Close has waited for the dial to end; the Checkout that made it may
	// still be on its way back. Without the cut, the dial would hang for
	// its hour-long StartTimeout.
	select {
	case err := <-done:
		if !errors.Is(err, pool.ErrClosed) {
			t.Fatalf("checkout = %v, want ErrClosed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not end a checkout still dialling")
	}
	if st := p.Stat().Endpoints[0]; st.DialFailures != 0 || st.StartFailures != 0 || st.Outstanding != 0 || st.Backoff != 0 {
		t.Fatalf("the closed dial counted against the endpoint: %+v", st)
	}
	if n := len(ev.of(pool.EventEndpointFailed)); n != 0 {
		t.Fatalf("%d EventEndpointFailed for a dial Close ended", n)
	}
}

// A resume's Pick that comes after the session was destroyed (Destroy
// racing with a ShutdownDump) moves nothing: the session's endpoint slot
// was released already, and the outstanding counts stay exact.
func TestPickAfterReleaseMovesNoSlot(t *testing.T) {
	_, urlA := servertest.Start(t, nil)
	_, urlB := servertest.Start(t, nil)
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:   true,
		Endpoints: []pool.Endpoint{{Name: "a", URL: urlA}, {Name: "b", URL: urlB}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	s := checkout(t, p)
	s.Destroy()
	pool.PickAfterRelease(s)
	for _, st := range p.Stat().Endpoints {
		if st.Outstanding != 0 {
			t.Fatalf("after the session's release: %+v", p.Stat().Endpoints)
		}
	}
}

// A resume with nowhere to go fails fast: the only endpoint drained, its
// one redial (a balancer's URL may reach another replica) was refused
// and backed it off, and the resume stops there instead of redialling it
// again and again; the run's *session.ShutdownError says why, matching
// session.ErrNoReplica, with the refused dial.
func TestLoneDrainingEndpointIsRedialledOnce(t *testing.T) {
	a, urlA := servertest.Start(t, nil)
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:   true,
		Endpoints: []pool.Endpoint{{Name: "a", URL: urlA}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	s := checkout(t, p)
	defer s.Close()
	run(t, s, "x = 20", "None")
	a.Drain()
	_, err = s.Run(context.Background(), "x + 22")
	var (
		se *session.ShutdownError
		de *ws.DialError
	)
	if !errors.As(err, &se) || !errors.Is(err, session.ErrNoReplica) || !errors.As(err, &de) || !de.Overloaded() {
		t.Fatalf("run after the only server drained: %v, want a ShutdownError matching ErrNoReplica with the 503", err)
	}
	if st := p.Stat().Endpoints[0]; st.Refusals != 1 || st.Outstanding != 1 {
		t.Fatalf("after the failed resume: %+v, want one refusal", st)
	}
}

// A static upgrade header that cannot be sent is a mistake in the
// endpoint's configuration, not a failure of the endpoint: New refuses
// it with the *ws.HeaderError, naming the endpoint, before anything is
// dialled or counted.
func TestBadStaticHeaderIsAConfigError(t *testing.T) {
	for _, h := range []http.Header{{"X-Bad": {"a\nb"}}, {"X:Bad": {"v"}}, {"X-Ok": {"a\nb", "fine"}, "Y Bad": nil}} {
		p, err := pool.New(context.Background(), pool.Config{
			NoLocal:   true,
			Endpoints: []pool.Endpoint{{Name: "bad", URL: "ws://127.0.0.1:1/", Dial: ws.DialOptions{Header: h}}},
		})
		var he *ws.HeaderError
		if err == nil {
			p.Close(context.Background())
		}
		if !errors.As(err, &he) || !strings.Contains(err.Error(), `"bad"`) {
			t.Fatalf("New with header %q = %v, want a config error naming the endpoint with its *ws.HeaderError", h, err)
		}
	}
}

// A header that the endpoint's HeaderFunc returns and that cannot be sent
// fails the checkout with the *ws.HeaderError at once, as a checkout's own
// mistake: nothing was dialled, so the endpoint is charged no start
// failure and reported failed by no EventEndpointFailed.
func TestBadHeaderFuncIsNoStartFailure(t *testing.T) {
	var ev events
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal: true,
		Endpoints: []pool.Endpoint{{Name: "bad", URL: "ws://127.0.0.1:1/", Dial: ws.DialOptions{
			HeaderFunc: func(context.Context) (http.Header, error) { return http.Header{"X-Bad": {"a\nb"}}, nil },
		}}},
		Metrics: ev.record,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	var he *ws.HeaderError
	if _, err := p.Checkout(context.Background(), session.Config{}); !errors.As(err, &he) {
		t.Fatalf("checkout = %v, want the *ws.HeaderError", err)
	}
	if st := p.Stat().Endpoints[0]; st.StartFailures != 0 || st.DialFailures != 0 || st.Outstanding != 0 || st.Backoff != 0 {
		t.Fatalf("a header error counted against the endpoint: %+v", st)
	}
	if n := len(ev.of(pool.EventEndpointFailed)); n != 0 {
		t.Fatalf("%d EventEndpointFailed for a header error", n)
	}
}

// CheckEndpointURL is the check New makes of an Endpoint's URL (and
// montygo of --remote): ws:// or wss:// with a host; its error matches
// ErrEndpointURL and masks the URL's secrets.
func TestCheckEndpointURL(t *testing.T) {
	for _, u := range []string{"ws://a/", "wss://a:8443/x?y=z", "ws://u:p@a"} {
		if err := pool.CheckEndpointURL(u); err != nil {
			t.Errorf("CheckEndpointURL(%q) = %v", u, err)
		}
	}
	for _, u := range []string{"", "http://a/", "ws:///x", "127.0.0.1:8000", "ws://a b/", "wss://u:hunter2@/?token=hunter2"} {
		err := pool.CheckEndpointURL(u)
		if !errors.Is(err, pool.ErrEndpointURL) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("CheckEndpointURL(%q) = %v, want ErrEndpointURL without the secret", u, err)
		}
		_, err = pool.New(context.Background(), pool.Config{NoLocal: true, Endpoints: []pool.Endpoint{{URL: u}}})
		if !errors.Is(err, pool.ErrEndpointURL) {
			t.Errorf("New with URL %q = %v, want ErrEndpointURL", u, err)
		}
	}
}

// A remote-only pool's exhausted checkout says what exists: no local
// workers (Live and Max 0), not "0/N live" with N the MaxWorkers that
// NoLocal ignores.
func TestRemoteOnlyExhaustedCountsNoLocalWorkers(t *testing.T) {
	mute, _ := rawEndpoint(t, nil)
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:         true,
		MaxWorkers:      3,
		Endpoints:       []pool.Endpoint{{Name: "mute", URL: mute}},
		StartTimeout:    time.Minute,
		CheckoutTimeout: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	_, err = p.Checkout(context.Background(), session.Config{})
	var ee *pool.ExhaustedError
	if !errors.As(err, &ee) {
		t.Fatalf("checkout = %v, want an *ExhaustedError", err)
	}
	if ee.Live != 0 || ee.Max != 0 || strings.Contains(err.Error(), "/3") || !strings.Contains(err.Error(), "no local workers") {
		t.Fatalf("exhausted %+v: %q, want no local workers counted", ee, err)
	}
}

// A remote session its server drained, and that was not resumed (NoResume,
// or a resume with nowhere to go), is reported by its EventEndpointClosed
// as drained, whether the caller then closes or destroys it: neither the
// caller's Destroy nor a crash. A drop the caller follows with Destroy
// is still the drop (vanished), as for a local worker.
func TestDrainedRemoteSessionIsReportedDrained(t *testing.T) {
	for _, c := range []struct {
		name     string
		noResume bool
		destroy  bool
		drop     bool
		want     pool.Reason
	}{
		{"no-resume-close", true, false, false, pool.ReasonDrained},
		{"no-resume-destroy", true, true, false, pool.ReasonDrained},
		{"resume-failed-close", false, false, false, pool.ReasonDrained},
		{"drop-destroy", false, true, true, pool.ReasonVanished},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, u := servertest.Start(t, nil)
			var ev events
			p, err := pool.New(context.Background(), pool.Config{
				NoLocal: true, Endpoints: []pool.Endpoint{{Name: "a", URL: u}}, NoResume: c.noResume, Metrics: ev.record,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer closeWithin(t, p)
			s := checkout(t, p)
			run(t, s, "x = 1", "None")
			want := session.ErrShutdown
			if c.drop {
				srv.Close()
				want = session.ErrDisconnected
			} else {
				srv.Drain()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := s.Run(ctx, "x"); !errors.Is(err, want) {
				t.Fatalf("run = %v, want %v", err, want)
			}
			if c.destroy {
				s.Destroy()
			} else {
				s.Close()
			}
			ev.wantClosed(t, c.want)
		})
	}
}

// A remote session still out when Close's deadline passes is closed by
// the pool, and its EventEndpointClosed says so (closing), not that the
// caller destroyed it.
func TestCloseDeadlineRemoteSessionIsClosing(t *testing.T) {
	var ev events
	p := remoteOnlyPool(t, &ev)
	s := checkout(t, p)
	defer s.Close()
	run(t, s, "x = 1", "None")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close = %v, want its context's error", err)
	}
	if _, err := s.Run(context.Background(), "x"); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("run after Close's deadline = %v, want session.ErrClosed", err)
	}
	ev.wantClosed(t, pool.DestroyClosing)
}

// NoLocal says MinWorkers and MaxWorkers have no effect: a remote-only
// pool given the worker counts of a local one (MinWorkers beyond the
// default MaxWorkers, runtime.NumCPU()) starts, rather than failing on
// settings it ignores.
func TestRemoteOnlyIgnoresWorkerCounts(t *testing.T) {
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:    true,
		MinWorkers: 1 << 20,
		Endpoints:  []pool.Endpoint{{Name: "a", URL: "ws://127.0.0.1:1/"}},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	closeWithin(t, p)
}

// A remote session its caller killed (Session.Kill) and then closed is
// reported destroyed, as a local one is, not as a session that ended idle
// and unbroken (reason "", a session duration with outcome ok).
func TestKilledRemoteSessionIsReportedDestroyed(t *testing.T) {
	var ev events
	p := remoteOnlyPool(t, &ev)
	defer closeWithin(t, p)
	s := checkout(t, p)
	run(t, s, "x = 1", "None")
	s.Kill()
	if _, err := s.Run(context.Background(), "x"); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("run after Kill = %v, want session.ErrClosed", err)
	}
	s.Close()
	ev.wantClosed(t, pool.DestroyRequested)
}

// A remote session closed while a turn is in flight on another goroutine
// is reported busy (a session duration with outcome abandoned), as a
// local one is, not as one that ended idle and unbroken.
func TestBusyRemoteSessionIsReportedBusy(t *testing.T) {
	var ev events
	p := remoteOnlyPool(t, &ev)
	defer closeWithin(t, p)
	entered, release := make(chan struct{}), make(chan struct{})
	reg := session.NewRegistry()
	reg.MustRegister("block", func() int {
		close(entered)
		<-release
		return 1
	})
	s := checkout(t, p)
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(context.Background(), "block()", session.WithFunctions(reg))
		done <- err
	}()
	<-entered
	s.Close()
	close(release)
	if err := <-done; !errors.Is(err, session.ErrClosed) {
		t.Fatalf("run closed under it = %v, want session.ErrClosed", err)
	}
	ev.wantClosed(t, pool.DestroyBusy)
}

// A checkout that CheckoutTimeout cut short during a remote start is
// recorded exhausted on the endpoint it was starting on, in its
// EventExhausted and in monty.pool.checkout.wait, not on the local
// workers, which a remote-only pool does not have.
func TestRemoteExhaustedIsRecordedOnItsEndpoint(t *testing.T) {
	mute, _ := rawEndpoint(t, nil)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	var ev events
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:         true,
		Endpoints:       []pool.Endpoint{{Name: "mute", URL: mute}},
		StartTimeout:    time.Minute,
		CheckoutTimeout: 100 * time.Millisecond,
		MeterProvider:   mp,
		Metrics:         ev.record,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	if _, err := p.Checkout(context.Background(), session.Config{}); !errors.Is(err, pool.ErrExhausted) {
		t.Fatalf("checkout = %v, want exhausted", err)
	}
	if ex := ev.of(pool.EventExhausted); len(ex) != 1 || ex[0].Endpoint != "mute" {
		t.Fatalf("EventExhausted %+v, want one on mute", ex)
	}
	got := map[string]uint64{} // endpoint/outcome → count
	if m, ok := telemetrytest.Collect(t, reader)[pool.MetricCheckoutWait]; ok {
		for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
			ep, _ := dp.Attributes.Value(pool.AttrEndpoint)
			o, _ := dp.Attributes.Value(pool.AttrCheckoutOutcome)
			got[ep.AsString()+"/"+o.AsString()] += dp.Count
		}
	}
	if len(got) != 1 || got["mute/exhausted"] != 1 {
		t.Fatalf("%s: %v, want one exhausted checkout on mute", pool.MetricCheckoutWait, got)
	}
}

// An endpoint that upgrades every connection and drops it before
// answering the Configure fails every start there: it is backed off like
// one that refuses the dial, so that later checkouts go to the endpoints
// that work instead of each paying for a failed start first (its load,
// 0, made it everyone's first choice). A close that may be the
// Configure's own fault (1009: over the server's frame cap; 1008: a
// request it could not parse) backs nothing off by itself: one caller's
// oversized Config must not take the endpoint from every other
// (TestLoneConfigureCloseBacksNothingOff). Here the good endpoint serves
// the same Config right after, so it was not at fault, and those closes
// back the dropper off too (TestConfigureRefuserDoesNotTakeTheCheckouts).
func TestDroppingEndpointBacksOff(t *testing.T) {
	_, good := servertest.Start(t, nil)
	for _, code := range []int{1011, 1000, 1009, 1008} {
		dropper := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, err := ws.Accept(w, r, ws.AcceptOptions{})
			if err != nil {
				return
			}
			conn.ReadFrame() // the Configure
			conn.CloseWith(code, "refused")
		}))
		p, err := pool.New(context.Background(), pool.Config{
			NoLocal:         true,
			Endpoints:       []pool.Endpoint{{Name: "dropper", URL: "ws" + strings.TrimPrefix(dropper.URL, "http") + "/"}, {Name: "good", URL: good}},
			EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
			ProtocolVersion: 4,
		})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			s := checkout(t, p)
			if s.Endpoint() != "good" {
				t.Fatalf("close code %d: checkout on %s", code, s.Endpoint())
			}
			run(t, s, "1 + 1", "2")
			s.Close()
		}
		st := p.Stat().Endpoints[0]
		if st.StartFailures != 1 || !st.BackedOffUntil.After(time.Now()) {
			t.Errorf("close code %d: dropper after 3 checkouts: %+v, want one start failure and a backoff", code, st)
		}
		closeWithin(t, p)
		dropper.Close()
	}
}

// A remote session whose feed its context aborted (the worker answered
// the AbortFeed; the session stays open) is reported interrupted when it
// is closed, as a local one is, not as a clean end: Reusable said
// ErrSingleUse for every remote session before it looked at the abort.
func TestInterruptedRemoteSessionIsReportedInterrupted(t *testing.T) {
	var ev events
	p := remoteOnlyPool(t, &ev)
	defer closeWithin(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := session.NewRegistry()
	reg.MustRegister("stop", func() int {
		cancel()
		return 1
	})
	s := checkout(t, p)
	if _, err := s.Run(ctx, "stop()", session.WithFunctions(reg)); !errors.Is(err, context.Canceled) {
		t.Fatalf("run whose context ended = %v, want context.Canceled", err)
	}
	if err := s.Reusable(); !errors.Is(err, session.ErrInterrupted) {
		t.Fatalf("Reusable = %v, want session.ErrInterrupted", err)
	}
	s.Close()
	ev.wantClosed(t, pool.DestroyInterrupted)
}

// remoteOnlyPool is a pool over one endpoint "a" (a real montygo-style
// server) and no local workers, whose events ev records. The caller
// closes it.
func remoteOnlyPool(t *testing.T, ev *events) *pool.Pool {
	t.Helper()
	_, u := servertest.Start(t, nil)
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal: true, Endpoints: []pool.Endpoint{{Name: "a", URL: u}}, Metrics: ev.record,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rawEndpoint listens on a local port where no WebSocket server answers.
// Each connection it accepts is handed to answer, when not nil, to write
// what it will (false: the connection is closed and dropped), then sent on
// the returned channel, which holds 4. With answer nil the endpoint never
// answers an upgrade (a dial that hangs). It returns the endpoint's URL;
// the listener and the connections left in the channel are closed when
// the test ends.
func rawEndpoint(t *testing.T, answer func(net.Conn) bool) (string, chan net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if answer != nil && !answer(c) {
				c.Close()
				continue
			}
			conns <- c
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for len(conns) > 0 {
			(<-conns).Close()
		}
	})
	return "ws://" + l.Addr().String() + "/", conns
}

// A resume that got through ends its endpoint's backoff, as a start that
// got through does: before, the backoff step stayed, so the endpoint's
// next refusal backed it off twice as long although it had served since.
func TestResumeEndsTheEndpointsBackoff(t *testing.T) {
	a, urlA := servertest.Start(t, nil)
	b, _ := servertest.Start(t, nil)
	var upgrades atomic.Int32
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if upgrades.Add(1) == 1 {
			http.Error(w, "draining", http.StatusServiceUnavailable) // once
			return
		}
		b.Handler().ServeHTTP(w, r)
	}))
	defer flaky.Close()
	urlB := "ws" + strings.TrimPrefix(flaky.URL, "http") + "/"
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:         true,
		Endpoints:       []pool.Endpoint{{Name: "a", URL: urlA}, {Name: "b", URL: urlB}},
		EndpointBackoff: pool.Backoff{Initial: time.Millisecond, Max: time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	s1 := checkout(t, p)
	defer s1.Close()
	s2 := checkout(t, p) // b refuses it once (backed off), then a takes it
	defer s2.Close()
	if s1.Endpoint() != "a" || s2.Endpoint() != "a" {
		t.Fatalf("on %s and %s, want both on a", s1.Endpoint(), s2.Endpoint())
	}
	if st := p.Stat().Endpoints[1]; st.Backoff == 0 {
		t.Fatalf("b after its refusal: %+v, want a backoff", st)
	}
	for time.Now().Before(p.Stat().Endpoints[1].BackedOffUntil) {
		time.Sleep(time.Millisecond)
	}
	run(t, s1, "x = 20", "None")
	a.Drain()
	run(t, s1, "x + 22", "42") // resumed on b
	if st := p.Stat().Endpoints[1]; s1.Endpoint() != "b" || st.Resumes != 1 || st.Backoff != 0 || !st.BackedOffUntil.IsZero() {
		t.Fatalf("on %s; b after the resume: %+v, want no backoff", s1.Endpoint(), st)
	}
}

// wantClosed fails t unless ev holds exactly one EventEndpointClosed, with
// reason want.
func (e *events) wantClosed(t *testing.T, want pool.Reason) {
	t.Helper()
	if closed := e.of(pool.EventEndpointClosed); len(closed) != 1 || closed[0].Reason != want {
		t.Fatalf("EventEndpointClosed %+v, want one with reason %s", closed, want)
	}
}

// A server that throttles a client for its failed logins answers 429
// with reason auth_throttled and a Retry-After: an authentication
// failure, counted as a dial failure like the 401s that caused it, not as
// a refusal of a full server, and the endpoint is backed off for the
// Retry-After. The checkout's error carries the throttling DialError.
func TestAuthThrottledIsADialFailure(t *testing.T) {
	tokens, err := server.ParseTokens(strings.NewReader("alice:tok-alice-0123456789\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, url := servertest.Start(t, func(c *server.Config) {
		c.Tokens = tokens
		c.MaxAuthFailures = 1
		c.Prewarm = 0
	})
	newPool := func(token string, ev *events) *pool.Pool {
		t.Helper()
		p, err := pool.New(context.Background(), pool.Config{
			NoLocal: true,
			Endpoints: []pool.Endpoint{{Name: "a", URL: url,
				Dial: ws.DialOptions{Header: http.Header{"Authorization": {"Bearer " + token}}}}},
			EndpointBackoff: pool.Backoff{Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond},
			Metrics:         ev.record,
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// One wrong token from this address spends its allowance (a 401).
	var guessEvents events
	guess := newPool("guess-0000000000000001", &guessEvents)
	defer closeWithin(t, guess)
	var de *ws.DialError
	if _, err := guess.Checkout(context.Background(), session.Config{}); !errors.As(err, &de) || de.StatusCode != http.StatusUnauthorized {
		t.Fatalf("checkout with a wrong token: %v, want a 401", err)
	}

	// The right token from the same address is throttled now.
	var ev events
	p := newPool("tok-alice-0123456789", &ev)
	defer closeWithin(t, p)
	before := time.Now()
	_, err = p.Checkout(context.Background(), session.Config{})
	if !errors.As(err, &de) || de.StatusCode != http.StatusTooManyRequests || de.Reason != server.ReasonAuthThrottled ||
		de.RetryAfter <= 0 || !errors.Is(err, pool.ErrNoEndpoint) {
		t.Fatalf("throttled checkout: %v, want ErrNoEndpoint with the 429 auth_throttled", err)
	}
	if de.Overloaded() {
		t.Errorf("%v is Overloaded: a throttled login is no capacity refusal", de)
	}
	st := p.Stat().Endpoints[0]
	if st.DialFailures != 1 || st.Refusals != 0 || st.StartFailures != 0 || st.Outstanding != 0 {
		t.Errorf("after the throttled dial: %+v, want one dial failure and no refusal", st)
	}
	if wait := st.BackedOffUntil.Sub(before); wait < de.RetryAfter-time.Second {
		t.Errorf("backed off for %v, want at least the Retry-After %v", wait, de.RetryAfter)
	}
	failed := ev.of(pool.EventEndpointFailed)
	if len(failed) != 1 || failed[0].Endpoint != "a" || !errors.As(failed[0].Err, &de) || de.Reason != server.ReasonAuthThrottled {
		t.Errorf("EventEndpointFailed %+v, want one with the auth_throttled DialError", failed)
	}
}

// An endpoint whose HeaderFunc fails (the token service behind it is
// down) backs off like any failed dial: it failed every checkout alike,
// each one calling the header function again and charging a start
// failure, with no backoff, so a checkout storm hammered a token service
// that was down.
func TestFailingHeaderFuncBacksOff(t *testing.T) {
	var calls atomic.Int32
	down := errors.New("token service down")
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal: true,
		Endpoints: []pool.Endpoint{{Name: "tok", URL: "ws://127.0.0.1:1/", Dial: ws.DialOptions{
			HeaderFunc: func(context.Context) (http.Header, error) { calls.Add(1); return nil, down },
		}}},
		EndpointBackoff: pool.Backoff{Initial: 10 * time.Second, Max: 20 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	before := time.Now()
	if _, err := p.Checkout(context.Background(), session.Config{}); !errors.Is(err, down) || !errors.Is(err, pool.ErrNoEndpoint) {
		t.Fatalf("checkout = %v, want ErrNoEndpoint with the header function's error", err)
	}
	after := time.Now() // the backoff runs from the failure, between the two
	st := p.Stat().Endpoints[0]
	if st.DialFailures != 1 || st.StartFailures != 0 || st.BackedOffUntil.Sub(before) < 9*time.Second || st.BackedOffUntil.Sub(after) > 11*time.Second {
		t.Fatalf("after a failing HeaderFunc: %+v; want 1 dial failure, backed off for 10 s", st)
	}
	if _, err := p.Checkout(context.Background(), session.Config{}); !errors.Is(err, pool.ErrNoEndpoint) {
		t.Fatalf("second checkout = %v, want ErrNoEndpoint", err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the header function was called %d times, want once (the endpoint backed off)", n)
	}
}

//go:build unix

package pool_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/internal/telemetrytest"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// upgrades is an http.RoundTripper for the endpoints' dials that counts
// the upgrades each server (by host) accepted and drains the server of
// drainHost as soon as its first one is accepted: the start's Configure,
// sent next, is then answered with a ShutdownDump. (A resume dials the
// endpoint it goes to with that endpoint's own options: the tests give
// each endpoint whose upgrades they count these, in Dial.HTTPClient.)
type upgrades struct {
	t         http.Transport
	drain     *server.Server
	drainHost string
	once      sync.Once
	mu        sync.Mutex
	n         map[string]int
}

func (u *upgrades) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := u.t.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusSwitchingProtocols {
		u.mu.Lock()
		u.n[r.URL.Host]++
		u.mu.Unlock()
		if r.URL.Host == u.drainHost {
			u.once.Do(u.drain.Drain)
		}
	}
	return resp, err
}

func (u *upgrades) count(url string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n[hostOf(url)]
}

func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	return u.Host
}

// drainingEndpoint is endpoint "a", a real server (long drain grace) that
// drains once its first upgrade is accepted; its dials (and those of the
// sessions' resumes) go through the returned transport.
func drainingEndpoint(t *testing.T) (pool.Endpoint, *upgrades) {
	t.Helper()
	srv, url := servertest.Start(t, func(c *server.Config) { c.DrainGrace = time.Minute })
	u := &upgrades{drain: srv, drainHost: hostOf(url), n: map[string]int{}}
	return pool.Endpoint{Name: "a", URL: url, Dial: ws.DialOptions{HTTPClient: &http.Client{Transport: u}}}, u
}

func outstanding(p *pool.Pool) map[string]int {
	m := map[string]int{}
	for _, e := range p.Stat().Endpoints {
		m[e.Name] = e.Outstanding
	}
	return m
}

// A checkout whose start a drains during its Configure resumes on b inside
// the start (session.Start resumes a drained Configure): one session, on
// b, started once there, its slot counted on b and released on Close.
func TestCheckoutStartDrainedResumesOnce(t *testing.T) {
	a, ua := drainingEndpoint(t)
	_, urlB := servertest.Start(t, nil)
	b := pool.Endpoint{Name: "b", URL: urlB, Dial: a.Dial}
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal: true, Endpoints: []pool.Endpoint{a, b}, ProtocolVersion: 4,
		Logger: slog.New(slog.DiscardHandler),
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
	if s.Endpoint() != "b" || s.Resumed() != 1 {
		t.Fatalf("session on %q after %d resumes, want b after 1", s.Endpoint(), s.Resumed())
	}
	if na, nb := ua.count(a.URL), ua.count(urlB); na != 1 || nb != 1 {
		t.Fatalf("%d upgrades on a, %d on b; want one each (no second start)", na, nb)
	}
	if got := outstanding(p); got["a"] != 0 || got["b"] != 1 {
		t.Fatalf("outstanding %v with the session on b, want a:0 b:1", got)
	}
	run(t, s, "6 * 7", "42")
	s.Close()
	if got := outstanding(p); got["a"] != 0 || got["b"] != 0 {
		t.Fatalf("outstanding %v after Close, want none", got)
	}
}

// A start drained at a that resumes on b and then fails there (b refuses
// the Configure) releases its slot where it is, on b. Before, the failed
// start released a's slot, which the resume had already moved to b: a
// was left at -1 and b at 1 for good.
func TestFailedStartAfterResumeReleasesItsSlot(t *testing.T) {
	a, _ := drainingEndpoint(t)
	cd, _ := codec.ForVersion(4)
	refusal, err := cd.AppendEvent(nil, &message.ChildEvent{Body: &message.Error{
		Exception: message.NewException("ValueError", "this server refuses that Configure")}})
	if err != nil {
		t.Fatal(err)
	}
	strict := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := ws.Accept(w, r, ws.AcceptOptions{})
		if err != nil {
			return
		}
		defer conn.Close()
		if _, err := conn.ReadFrame(); err != nil { // the Configure
			return
		}
		if conn.WriteFrame(refusal) == nil {
			conn.ReadFrame() // until the client closes
		}
	}))
	defer strict.Close()
	b := pool.Endpoint{Name: "b", URL: "ws" + strings.TrimPrefix(strict.URL, "http") + "/"}
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal: true, Endpoints: []pool.Endpoint{a, b}, ProtocolVersion: 4,
		Logger: slog.New(slog.DiscardHandler),
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
		t.Fatal("Checkout got a session, though a drained and b refuses every Configure")
	}
	if got := outstanding(p); got["a"] != 0 || got["b"] != 0 {
		t.Fatalf("outstanding %v after the failed checkout (%v), want none", got, err)
	}
}

// A start that a drained, whose resume was refused by a (draining: 503)
// on the way and then got through on c, leaves a backed off: the start
// did not get through on a. Before, the successful start ended a's
// backoff as if a had served it, so the next checkout went to the
// draining a first.
func TestStartResumedElsewhereKeepsTheDrainedEndpointBacked(t *testing.T) {
	a, _ := drainingEndpoint(t)
	// b refuses every connection: the resume's first pick fails, and the
	// next pick is a again (the least loaded), which refuses the upgrade.
	urlB, _ := rawEndpoint(t, func(net.Conn) bool { return false })
	_, urlC := servertest.Start(t, nil)
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal: true, ProtocolVersion: 4, Logger: slog.New(slog.DiscardHandler),
		Endpoints:       []pool.Endpoint{a, {Name: "b", URL: urlB, Dial: a.Dial}, {Name: "c", URL: urlC, Dial: a.Dial}},
		EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
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
	if s.Endpoint() != "c" || s.Resumed() != 1 {
		t.Fatalf("session on %q after %d resumes, want c after 1", s.Endpoint(), s.Resumed())
	}
	for _, e := range p.Stat().Endpoints {
		if e.Name == "a" && !e.BackedOffUntil.After(time.Now()) {
			t.Fatalf("a, which drained the start and refused its redial, is not backed off: %+v", e)
		}
	}
	if got := outstanding(p); got["a"] != 0 || got["b"] != 0 || got["c"] != 1 {
		t.Fatalf("outstanding %v, want the one session on c", got)
	}
}

// A start drained at a that resumes on b is reported on b everywhere: its
// EventCheckout names b, b's Stats count the checkout (a's none), and the
// checkout's wait is recorded with b as its AttrEndpoint, as
// Session.Endpoint and the session's duration already said. Before, the
// event, the Checkouts count and the wait metric named a, the endpoint
// that drained the start and serves nothing.
func TestStartResumedElsewhereIsReportedWhereItRuns(t *testing.T) {
	a, _ := drainingEndpoint(t)
	_, urlB := servertest.Start(t, nil)
	b := pool.Endpoint{Name: "b", URL: urlB, Dial: a.Dial}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	var (
		mu        sync.Mutex
		checkouts []string
	)
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal: true, Endpoints: []pool.Endpoint{a, b}, ProtocolVersion: 4,
		Logger: slog.New(slog.DiscardHandler), MeterProvider: mp,
		Metrics: func(e pool.Event) {
			if e.Kind == pool.EventCheckout {
				mu.Lock()
				checkouts = append(checkouts, e.Endpoint)
				mu.Unlock()
			}
		},
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
	if s.Endpoint() != "b" || s.Resumed() != 1 {
		t.Fatalf("session on %q after %d resumes, want b after 1", s.Endpoint(), s.Resumed())
	}
	mu.Lock()
	got := append([]string(nil), checkouts...)
	mu.Unlock()
	if len(got) != 1 || got[0] != "b" {
		t.Errorf("EventCheckout endpoints %q, want one, on b", got)
	}
	for _, e := range p.Stat().Endpoints {
		want := int64(0)
		if e.Name == "b" {
			want = 1
		}
		if e.Checkouts != want {
			t.Errorf("endpoint %s: Checkouts %d, want %d (the session runs on b)", e.Name, e.Checkouts, want)
		}
	}
	m := telemetrytest.Collect(t, reader)[pool.MetricCheckoutWait]
	if na, nb := telemetrytest.HistCount(m, pool.AttrEndpoint.String("a")), telemetrytest.HistCount(m, pool.AttrEndpoint.String("b")); na != 0 || nb != 1 {
		t.Errorf("checkout waits recorded: %d on a, %d on b; want the one on b", na, nb)
	}
}

// A start drained at a, resumed on b, whose Configure b then refuses for
// its protocol version (the real server speaks 4, an unpinned start asks
// 5 first) negotiates the lower version with b, on a second connection to
// b: the connection that refused, with b's options. That dial is b's
// (b's upgrades count it, and neither a nor b is charged a refusal), and
// the session runs on b at version 4. Before, the downgrade redialled a,
// the launcher's URL, still draining: its 503 was counted as b's refusal,
// b was backed off and the checkout failed with ErrNoEndpoint.
func TestStartResumedElsewhereNegotiatesWithTheNewEndpoint(t *testing.T) {
	a, ua := drainingEndpoint(t)
	_, urlB := servertest.Start(t, nil)
	// URLs no other start of the process used (whatever ports the
	// servers got): the negotiation cache, per URL, holds nothing for
	// them, so the start asks version 5 first, whatever ran before.
	nonce := "?case=" + url.QueryEscape(t.Name()) + "&n=" + strconv.FormatInt(time.Now().UnixNano(), 10)
	a.URL += nonce
	b := pool.Endpoint{Name: "b", URL: urlB + nonce, Dial: a.Dial}
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal: true, Endpoints: []pool.Endpoint{a, b},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := p.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatalf("Checkout: %v (stats %+v)", err, p.Stat().Endpoints)
	}
	defer s.Close()
	if s.Endpoint() != "b" || s.Version() != 4 {
		t.Fatalf("session on %q at version %d, want b at 4", s.Endpoint(), s.Version())
	}
	if na, nb := ua.count(a.URL), ua.count(b.URL); na != 1 || nb != 2 {
		t.Errorf("%d upgrades on a, %d on b; want 1 on a (the drained start), 2 on b (the resume, the downgrade)", na, nb)
	}
	for _, e := range p.Stat().Endpoints {
		if e.Refusals != 0 || e.DialFailures != 0 || e.StartFailures != 0 {
			t.Errorf("endpoint %s charged: %+v", e.Name, e)
		}
		if e.Name == "b" && e.BackedOffUntil.After(time.Now()) {
			t.Errorf("b, which serves the session, is backed off: %+v", e)
		}
	}
	run(t, s, "6 * 7", "42")
}

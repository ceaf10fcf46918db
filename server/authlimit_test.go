package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/transport/ws"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_000_000, 0)} }

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestAuthLimiterBurstAndRefill(t *testing.T) {
	clk := newFakeClock()
	l := newAuthLimiter(3, clk.now)
	take := func(key string) (time.Duration, bool) {
		_, retry, ok := l.take(key)
		return retry, ok
	}
	for i := range 3 {
		if _, ok := take("a"); !ok {
			t.Fatalf("failure %d refused", i+1)
		}
	}
	retry, ok := take("a")
	if ok || retry <= 0 || retry > authFailureRefill {
		t.Fatalf("after the burst: retry %v ok %v", retry, ok)
	}
	if _, ok := take("b"); !ok {
		t.Fatal("another address refused")
	}
	clk.advance(authFailureRefill / 2)
	if retry2, ok := take("a"); ok || retry2 >= retry {
		t.Fatalf("half a refill later: retry %v ok %v (before: %v)", retry2, ok, retry)
	}
	clk.advance(authFailureRefill / 2)
	if _, ok := take("a"); !ok {
		t.Fatal("a refill later: still refused")
	}
	if _, ok := take("a"); ok {
		t.Fatal("the refilled failure was not spent")
	}
	// Refills stop at the burst: a long silence gives back 3, not more.
	clk.advance(100 * authFailureRefill)
	var last authTaken
	for range 3 {
		var ok bool
		if last, _, ok = l.take("a"); !ok {
			t.Fatal("refused within the burst")
		}
	}
	if _, ok := take("a"); ok {
		t.Fatal("a long silence gave more than the burst")
	}
	// A refund (a right token) gives one back, never more than the burst.
	l.refund(last)
	if _, ok := take("a"); !ok {
		t.Fatal("the refund was not given back")
	}
	if _, ok := take("a"); ok {
		t.Fatal("the refund gave more than one back")
	}
	clk.advance(100 * authFailureRefill)
	b1, _, _ := l.take("b")
	b2, _, _ := l.take("b")
	l.refund(b1)
	l.refund(b2)
	l.refund(authTaken{})
	for range 3 {
		if _, ok := take("b"); !ok {
			t.Fatal("refused within the burst")
		}
	}
	if _, ok := take("b"); ok {
		t.Fatal("refunds gave more than the burst")
	}
	if newAuthLimiter(-1, nil) != nil {
		t.Fatal("a negative burst is a limiter")
	}
	var none *authLimiter
	got, _, ok := none.take("a")
	if !ok {
		t.Fatal("no limiter refused")
	}
	none.refund(got)
}

// TestAuthLimiterRefundAfterTheLookup: the token lookup between take and
// refund takes time on a real clock, and other logins from the same
// address may take in between; a right token still gives back all that
// its take spent, no more.
func TestAuthLimiterRefundAfterTheLookup(t *testing.T) {
	clk := newFakeClock()
	l := newAuthLimiter(3, clk.now)
	for range 2 {
		l.take("a")
	}
	right, _, ok := l.take("a")
	if !ok {
		t.Fatal("refused within the burst")
	}
	clk.advance(time.Millisecond) // the lookup
	l.refund(right)
	if _, _, ok := l.take("a"); !ok {
		t.Fatal("a refund after the lookup was not given back")
	}
	if _, _, ok := l.take("a"); ok {
		t.Fatal("the refund gave more than one back")
	}

	// Two right tokens whose lookups overlap give back both takes: the
	// address is as if neither had been counted.
	clk.advance(100 * authFailureRefill)
	first, _, _ := l.take("b")
	clk.advance(time.Second)
	second, _, _ := l.take("b")
	clk.advance(time.Second)
	l.refund(first)
	clk.advance(time.Second)
	l.refund(second)
	for i := range 3 {
		if _, _, ok := l.take("b"); !ok {
			t.Fatalf("take %d refused after two refunds", i+1)
		}
	}
	if _, _, ok := l.take("b"); ok {
		t.Fatal("the refunds gave more than the burst")
	}

	// A guess refused during the lookup (the address is out of failures)
	// does not eat the right token's refund.
	clk.advance(100 * authFailureRefill)
	l.take("c")
	l.take("c")
	clk.advance(authFailureRefill / 2) // 1.5 failures left
	right, _, _ = l.take("c")
	if _, _, ok := l.take("c"); ok { // 0.5 left
		t.Fatal("a take past the burst was allowed")
	}
	l.refund(right)                    // 1.5 again
	clk.advance(authFailureRefill / 2) // 2
	for i := range 2 {
		if _, _, ok := l.take("c"); !ok {
			t.Fatalf("take %d refused: a guess refused during the lookup ate the refund", i+1)
		}
	}
	if _, _, ok := l.take("c"); ok {
		t.Fatal("the refund gave more than one back")
	}
}

// TestAuthLimiterBounded: a hostile pool of addresses cannot grow the
// limiter past its bound, and the full buckets go first.
func TestAuthLimiterBounded(t *testing.T) {
	clk := newFakeClock()
	l := newAuthLimiter(2, clk.now)
	l.max = 100
	sweeps := 0
	for i := range 10 * l.max {
		before := l.size()
		l.take(fmt.Sprintf("pool-%d", i))
		n := l.size()
		if n > l.max {
			t.Fatalf("%d addresses remembered, bound %d", n, l.max)
		}
		if n <= before {
			sweeps++
		}
	}
	// Each sweep makes room for a tenth of the bound: one sweep per ten
	// new addresses here, not one per address.
	if sweeps > 10*l.max/10 {
		t.Fatalf("%d sweeps for %d new addresses", sweeps, 10*l.max)
	}
	// Once the pool's buckets have refilled, the next new address sweeps
	// them all.
	clk.advance(10 * authFailureRefill)
	l.take("y")
	if n := l.size(); n != 1 {
		t.Fatalf("%d addresses remembered after the sweep, want 1", n)
	}
}

// TestFailedLoginsThrottled: a client that keeps presenting wrong tokens
// is answered 429 with Retry-After once it has made MaxAuthFailures
// failures, before its token is looked at (a right token is refused too,
// so guessing stops paying); other addresses are not affected, and it may
// try again once a failure has been given back.
func TestFailedLoginsThrottled(t *testing.T) {
	clk := newFakeClock()
	tokens, err := ParseTokens(strings.NewReader("alice:tok-alice-0123456789\n"))
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *Config) {
		c.Tokens = tokens
		c.MaxAuthFailures = 3
		c.TrustForwardedFor = true
		c.now = clk.now
	})
	ts.Bearer = "tok-alice-0123456789"
	from := func(ip, tok string) http.Header {
		h := http.Header{"X-Forwarded-For": {ip}}
		if tok != "" {
			h.Set("Authorization", "Bearer "+tok)
		}
		return h
	}
	for i, tok := range []string{"guess-000000000000001", "", "guess-000000000000002"} {
		if de := dialErr(t, ts.URL, from("192.0.2.1", tok)); de.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d, want 401", i+1, de.StatusCode)
		}
	}
	for _, tok := range []string{"guess-000000000000003", "tok-alice-0123456789"} {
		de := dialErr(t, ts.URL, from("192.0.2.1", tok))
		if de.StatusCode != http.StatusTooManyRequests || de.RetryAfter <= 0 || de.RetryAfter > authFailureRefill {
			t.Fatalf("past the burst: %d retry %v, want 429 with Retry-After", de.StatusCode, de.RetryAfter)
		}
	}
	// Another address is not throttled.
	dial(t, ts.URL, 4, ws.DialOptions{Header: from("192.0.2.2", "tok-alice-0123456789")})
	clk.advance(authFailureRefill)
	dial(t, ts.URL, 4, ws.DialOptions{Header: from("192.0.2.1", "tok-alice-0123456789")})
	if de := dialErr(t, ts.URL, from("192.0.2.1", "guess-000000000000004")); de.StatusCode != http.StatusUnauthorized {
		t.Fatalf("after a refill: %d, want 401", de.StatusCode)
	}
	if de := dialErr(t, ts.URL, from("192.0.2.1", "tok-alice-0123456789")); de.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the refill spent: %d, want 429", de.StatusCode)
	}
	waitMetric(t, ts, `monty_server_refusals_total{reason="auth_throttled"} 3`)
	waitMetric(t, ts, `monty_server_refusals_total{reason="unauthorized"} 4`)
}

// TestMetricsNeedATokenWhenTokensAreSet: with tokens, /metrics (which
// names the refusal reasons, the sessions open and the process's
// resources) wants a valid token like "/", and counts against the same
// failure limit; OpenMetrics keeps it open for a scraper on a trusted
// network. The probes and /info stay open.
func TestMetricsNeedATokenWhenTokensAreSet(t *testing.T) {
	tokens, err := ParseTokens(strings.NewReader("alice:tok-alice-0123456789\n"))
	if err != nil {
		t.Fatal(err)
	}
	clk := newFakeClock() // no failure comes back during the test
	ts := startServer(t, func(c *Config) { c.Tokens = tokens; c.MaxAuthFailures = 2; c.now = clk.now })
	fetch := func(path, tok string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.HTTP+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := fetch("/metrics", ""); r.StatusCode != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("/metrics without a token: %d %q", r.StatusCode, r.Header.Get("WWW-Authenticate"))
	}
	if r := fetch("/metrics", "tok-alice-0123456789"); r.StatusCode != http.StatusOK {
		t.Fatalf("/metrics with a token: %d", r.StatusCode)
	}
	for _, path := range []string{"/healthz", "/readyz", "/health", "/info", "/"} {
		if r := fetch(path, ""); r.StatusCode != http.StatusOK {
			t.Errorf("%s without a token: %d", path, r.StatusCode)
		}
	}
	if r := fetch("/metrics", "wrong-000000000000000"); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/metrics with a wrong token: %d", r.StatusCode)
	}
	if r := fetch("/metrics", "tok-alice-0123456789"); r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("/metrics past the failure limit: %d", r.StatusCode)
	}

	open := startServer(t, func(c *Config) { c.Tokens = tokens; c.OpenMetrics = true })
	if code, _ := get(t, open.HTTP+"/metrics"); code != http.StatusOK {
		t.Fatalf("OpenMetrics: /metrics without a token: %d", code)
	}
	plain := startServer(t, nil)
	if code, _ := get(t, plain.HTTP+"/metrics"); code != http.StatusOK {
		t.Fatalf("no tokens: /metrics: %d", code)
	}
}

// TestFailedLoginsThrottledUnderConcurrency: a client that fires its
// guesses at once gets no more of them looked at than one that sends
// them one by one (an allowance is taken before the lookup, and given
// back only when the token was right).
func TestFailedLoginsThrottledUnderConcurrency(t *testing.T) {
	clk := newFakeClock()
	tokens, err := ParseTokens(strings.NewReader("alice:tok-alice-0123456789\n"))
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *Config) { c.Tokens = tokens; c.MaxAuthFailures = 3; c.now = clk.now })
	const n = 64
	codes := make(chan int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := httptest.NewRequest("GET", "http://127.0.0.1/", nil)
			r.RemoteAddr = "192.0.2.1:1234"
			r.Header.Set("Connection", "Upgrade")
			r.Header.Set("Upgrade", "websocket")
			r.Header.Set("Authorization", fmt.Sprintf("Bearer guess-%016d", i))
			w := httptest.NewRecorder()
			<-start
			ts.Handler().ServeHTTP(w, r)
			codes <- w.Code
		}()
	}
	close(start)
	wg.Wait()
	close(codes)
	looked := 0
	for c := range codes {
		switch c {
		case http.StatusUnauthorized:
			looked++
		case http.StatusTooManyRequests:
		default:
			t.Errorf("status %d", c)
		}
	}
	if looked != 3 {
		t.Fatalf("%d of %d concurrent guesses were looked at, want 3", looked, n)
	}
	// A right token gives its allowance back: it does not use up the
	// address's failures.
	l := newAuthLimiter(1, clk.now)
	for range 5 {
		taken, _, ok := l.take("a")
		if !ok {
			t.Fatal("a right token was refused")
		}
		l.refund(taken)
	}
}

// Many connections from one address after it authenticated: a client over
// its session quota is answered 429 client_quota every time, and those
// answers, like its successful logins, spend nothing of its address's
// failed-login allowance (which a wrong token then finds whole). Were
// they counted, a client retrying within its quota would lock itself out.
func TestQuotaRefusalsAreNotFailedLogins(t *testing.T) {
	tokens, err := ParseTokens(strings.NewReader("alice:tok-alice-0123456789\n"))
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *Config) {
		c.Tokens = tokens
		c.MaxSessionsPerClient = 1
		c.MaxAuthFailures = 2
		c.now = newFakeClock().now // no refill during the test
	})
	ts.Bearer = "tok-alice-0123456789"
	a := dial(t, ts.URL, 4, ws.DialOptions{Header: bearerHeader("tok-alice-0123456789")})
	configure(t, a, 4, nil)
	for i := range 20 {
		if de := dialErr(t, ts.URL, bearerHeader("tok-alice-0123456789")); de.StatusCode != http.StatusTooManyRequests || de.Reason != ReasonClientQuota {
			t.Fatalf("upgrade %d over the quota: %d %q, want 429 %s", i+2, de.StatusCode, de.Reason, ReasonClientQuota)
		}
	}
	waitMetric(t, ts, `monty_server_refusals_total{reason="client_quota"} 20`)
	for i, want := range []int{http.StatusUnauthorized, http.StatusUnauthorized, http.StatusTooManyRequests} {
		if de := dialErr(t, ts.URL, bearerHeader(fmt.Sprintf("guess-%016d", i))); de.StatusCode != want {
			t.Fatalf("wrong token %d: %d, want %d", i+1, de.StatusCode, want)
		}
	}
	if got := repr(t, a, "'still here'"); got != "'still here'" {
		t.Fatal(got)
	}
}

package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/transport/ws"
)

func dialErr(t testing.TB, url string, h http.Header) *ws.DialError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := dialRaw(ctx, url, 4, ws.DialOptions{Header: h})
	if err == nil {
		c.Close()
		t.Fatal("dial succeeded, want a refusal")
	}
	var de *ws.DialError
	if !errors.As(err, &de) {
		t.Fatalf("dial: %v, want a *ws.DialError", err)
	}
	return de
}

func bearerHeader(tok string) http.Header {
	return http.Header{"Authorization": {"Bearer " + tok}}
}

func TestBearerTokens(t *testing.T) {
	tokens, err := ParseTokens(strings.NewReader("# clients\nalice:tok-alice-0123456789\n\nbob:tok-bob-0123456789\n"))
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *Config) { c.Tokens = tokens; c.MaxSessionsPerClient = 1 })
	ts.Bearer = "tok-alice-0123456789"
	for _, h := range []http.Header{nil, bearerHeader("wrong"), bearerHeader(""), {"Authorization": {"Basic YWxpY2U6eA=="}}} {
		if de := dialErr(t, ts.URL, h); de.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%v: status %d, want 401", h, de.StatusCode)
		}
	}
	a := dial(t, ts.URL, 4, ws.DialOptions{Header: bearerHeader("tok-alice-0123456789")})
	configure(t, a, 4, nil)
	// The token's name is the identity of the per-client cap.
	de := dialErr(t, ts.URL, bearerHeader("tok-alice-0123456789"))
	if de.StatusCode != http.StatusTooManyRequests || de.RetryAfter <= 0 {
		t.Fatalf("second alice session: %d retry %v, want 429 with Retry-After", de.StatusCode, de.RetryAfter)
	}
	b := dial(t, ts.URL, 4, ws.DialOptions{Header: bearerHeader("tok-bob-0123456789")})
	configure(t, b, 4, nil)
	// Reloaded tokens: bob's is gone, carol's is new; open sessions live on.
	reloaded, err := ParseTokens(strings.NewReader("alice:tok-alice-0123456789\ncarol:tok-carol-0123456789\n"))
	if err != nil {
		t.Fatal(err)
	}
	ts.SetTokens(reloaded)
	if de := dialErr(t, ts.URL, bearerHeader("tok-bob-0123456789")); de.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bob after the reload: %d", de.StatusCode)
	}
	dial(t, ts.URL, 4, ws.DialOptions{Header: bearerHeader("tok-carol-0123456789")})
	if got := repr(t, b, "3"); got != "3" {
		t.Fatalf("bob's open session after the reload: %s", got)
	}
	waitMetric(t, ts, `monty_server_refusals_total{reason="unauthorized"} 5`)
	waitMetric(t, ts, `monty_server_refusals_total{reason="client_quota"} 1`)
}

func TestParseTokens(t *testing.T) {
	for _, bad := range []string{"", "# only a comment\n", "alice\n", ":tok\n", "alice:\n", "al ice:tok-0123456789abcdef\n",
		"a:tok-0123456789abcdef\nb:tok-0123456789abcdef\n"} {
		if _, err := ParseTokens(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	tk, err := ParseTokens(strings.NewReader("a:token-one-0123456789\r\nb:token-two:with:colons\n"))
	if err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]string{"token-one-0123456789": "a", "token-two:with:colons": "b", "token-two": "",
		"token-one-0123456789 ": ""} {
		if got, _ := tk.Lookup(tok); got != want {
			t.Errorf("Lookup(%q) = %q, want %q", tok, got, want)
		}
	}
}

// TestParseTokensRefusesShortTokens: a token of a few bytes can be guessed;
// ParseTokens refuses any under MinTokenLen bytes with ErrShortToken, naming
// the line but never the token.
func TestParseTokensRefusesShortTokens(t *testing.T) {
	for _, bad := range []string{"alice:x\n", "alice:abc\n", "ok:0123456789abcdef\nalice:0123456789abcde\n"} {
		_, err := ParseTokens(strings.NewReader(bad))
		if !errors.Is(err, ErrShortToken) {
			t.Errorf("%q: %v, want ErrShortToken", bad, err)
			continue
		}
		if tok := bad[strings.LastIndexByte(bad[:len(bad)-1], ':')+1 : len(bad)-1]; strings.Contains(err.Error(), tok) {
			t.Errorf("%q: the error %q shows the token", bad, err)
		}
		if !strings.Contains(err.Error(), "16 bytes") {
			t.Errorf("%q: the error %q does not say how long a token must be", bad, err)
		}
	}
	if _, err := ParseTokens(strings.NewReader("alice:0123456789abcdef\n")); err != nil {
		t.Errorf("a %d-byte token: %v", MinTokenLen, err)
	}
}

// TestParseTokensRefusesUnpresentable: a token holding a vertical tab, a
// form feed, a carriage return inside the line or another control
// character loaded, though ParseTokens says tokens hold no whitespace, and
// no client can present it (net/http answers such a header 400), so the
// client it names could never connect.
func TestParseTokensRefusesUnpresentable(t *testing.T) {
	for _, bad := range []string{"alice:abc\vdef\n", "alice:abc\fdef\n", "alice:abc\rdef\n", "alice:abc\x00def\n",
		"alice:abc\x7fdef\n", "alice:abc\u00a0def\n", "al\vice:tok-0123456789abcdef\n", "al\x1bice:tok-0123456789abcdef\n"} {
		if _, err := ParseTokens(strings.NewReader(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestAdmissionCapacity(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxSessions = 2; c.MaxSessionsPerClient = -1 })
	a := dialConfigured(t, ts.URL, 4)
	dialConfigured(t, ts.URL, 2)
	de := dialErr(t, ts.URL, nil)
	if de.StatusCode != http.StatusServiceUnavailable || de.RetryAfter <= 0 {
		t.Fatalf("third session: %d retry %v, want 503 with Retry-After", de.StatusCode, de.RetryAfter)
	}
	a.Close()
	waitMetric(t, ts, `monty_server_sessions_active 1`)
	dialConfigured(t, ts.URL, 4)
}

func TestPerClientQuotaByAddress(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxSessionsPerClient = 1; c.TrustForwardedFor = true })
	// The proxy in front appends the address it saw; what comes before it
	// is the client's own text.
	xff := func(sent, seen string) http.Header { return http.Header{"X-Forwarded-For": {sent + ", " + seen}} }
	dial(t, ts.URL, 4, ws.DialOptions{Header: xff("10.0.0.1", "192.0.2.1")})
	if de := dialErr(t, ts.URL, xff("10.0.0.1", "192.0.2.1")); de.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("same forwarded client: %d", de.StatusCode)
	}
	// A client cannot pass for another by writing the header itself.
	if de := dialErr(t, ts.URL, xff("198.51.100.7", "192.0.2.1")); de.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("spoofed first address: %d", de.StatusCode)
	}
	if de := dialErr(t, ts.URL, http.Header{"X-Forwarded-For": {"198.51.100.8", "192.0.2.1"}}); de.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("spoofed header line: %d", de.StatusCode)
	}
	dial(t, ts.URL, 4, ws.DialOptions{Header: xff("10.0.0.1", "192.0.2.2")})

	plain := startServer(t, func(c *Config) { c.MaxSessionsPerClient = 1 })
	dial(t, plain.URL, 4, ws.DialOptions{Header: xff("10.0.0.1", "192.0.2.1")})
	// Without --trust-forwarded-for the header is ignored: both are 127.0.0.1.
	if de := dialErr(t, plain.URL, xff("10.0.0.1", "192.0.2.2")); de.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("untrusted forwarded header: %d", de.StatusCode)
	}
}

// The bearer token is read from exactly one Authorization header: with
// two, which one counts would depend on whoever reads them (a proxy in
// front may check the other), so the request is unauthenticated.
func TestBearerHeaderForms(t *testing.T) {
	for _, tc := range []struct {
		vals []string
		tok  string
		ok   bool
	}{
		{nil, "", false},
		{[]string{"Bearer tok"}, "tok", true},
		{[]string{"bearer tok"}, "tok", true},
		{[]string{"Bearer   tok  "}, "tok", true},
		{[]string{"Bearer "}, "", false},
		{[]string{"Basic dG9rOg=="}, "", false},
		{[]string{"Bearer tok", "Bearer other"}, "", false},
		{[]string{"Bearer wrong", "Bearer tok"}, "", false},
		{[]string{"Bearer tok", ""}, "", false},
	} {
		r, err := http.NewRequest(http.MethodGet, "http://x/", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header["Authorization"] = tc.vals
		tok, ok := bearer(r)
		if tok != tc.tok || ok != tc.ok {
			t.Errorf("%q: got %q %v, want %q %v", tc.vals, tok, ok, tc.tok, tc.ok)
		}
	}
}

// TestPerClientQuotaByIPv6Prefix: an IPv6 client holds a whole /64 (one
// LAN, or one customer of a provider), so its addresses are one client:
// otherwise --max-sessions-per-client would be no cap for it. IPv4
// clients, also mapped into IPv6, are keyed by their address.
func TestPerClientQuotaByIPv6Prefix(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxSessionsPerClient = 1; c.TrustForwardedFor = true })
	xff := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	dial(t, ts.URL, 4, ws.DialOptions{Header: xff("2001:db8:1:2::1")})
	for _, same := range []string{"2001:db8:1:2::2", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:DB8:1:2:0:0:0:3"} {
		if de := dialErr(t, ts.URL, xff(same)); de.StatusCode != http.StatusTooManyRequests {
			t.Errorf("%s, in the same /64: %d, want 429", same, de.StatusCode)
		}
	}
	dial(t, ts.URL, 4, ws.DialOptions{Header: xff("2001:db8:1:3::1")})
	dial(t, ts.URL, 4, ws.DialOptions{Header: xff("192.0.2.1")})
	if de := dialErr(t, ts.URL, xff("::ffff:192.0.2.1")); de.StatusCode != http.StatusTooManyRequests {
		t.Errorf("192.0.2.1 mapped into IPv6: %d, want 429", de.StatusCode)
	}
	dial(t, ts.URL, 4, ws.DialOptions{Header: xff("192.0.2.2")})
}

// TestClientKeyOfPeerAddress: without a forwarding proxy the peer address
// is keyed the same way (by /64 for IPv6).
func TestClientKeyOfPeerAddress(t *testing.T) {
	s := &Server{}
	for remote, want := range map[string]string{
		"192.0.2.1:5000":                "192.0.2.1",
		"[::ffff:192.0.2.1]:5000":       "192.0.2.1",
		"[2001:db8:1:2::1]:5000":        "2001:db8:1:2::/64",
		"[2001:db8:1:2:aaaa:bbbb::9]:1": "2001:db8:1:2::/64",
		"[fe80::1%eth0]:5000":           "fe80::/64",
		"[::1]:5000":                    "::1",
		"not-an-address":                "not-an-address",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		if got, ok := s.identity(r); !ok || got != want {
			t.Errorf("%s: identity %q %v, want %q", remote, got, ok, want)
		}
	}
}

// TestForwardedForForms: the last X-Forwarded-For entry is read with or
// without a port (some proxies, Azure's Application Gateway among them,
// append "ip:port"): before, such an entry fell back to the peer address,
// the proxy's own, so every client behind it was one client.
func TestForwardedForForms(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"192.0.2.1"}, "192.0.2.1"},
		{[]string{"10.0.0.1, 192.0.2.1"}, "192.0.2.1"},
		{[]string{"10.0.0.1", " 192.0.2.1 "}, "192.0.2.1"},
		{[]string{"192.0.2.1:4711"}, "192.0.2.1"},
		{[]string{"10.0.0.1,192.0.2.1:4711"}, "192.0.2.1"},
		{[]string{"2001:db8::1"}, "2001:db8::1"},
		{[]string{"[2001:db8::1]:4711"}, "2001:db8::1"},
		{[]string{"[2001:db8::1]"}, "2001:db8::1"},
		{[]string{"192.0.2.1, unknown"}, ""},
		{[]string{"192.0.2.1, "}, ""},
		{[]string{"192.0.2.1:notaport"}, ""},
		{nil, ""},
	} {
		h := http.Header{"X-Forwarded-For": tc.lines}
		if got := forwardedFor(h); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.lines, got, tc.want)
		}
	}
}

// TestParseTokensBOM: a tokens file saved by an editor that starts it with
// a UTF-8 byte order mark (Notepad does) loaded with the mark, invisible,
// as the first name's first character: the client was logged and counted
// as "\ufeffalice", not "alice". A leading mark is now dropped; one
// anywhere else (files joined with cat) is refused, naming its line, rather
// than making a name or a token differ from what the operator sees.
func TestParseTokensBOM(t *testing.T) {
	tk, err := ParseTokens(strings.NewReader("\ufeffalice:tok-alice-0123456789\nbob:tok-bob-0123456789ab\n"))
	if err != nil {
		t.Fatal(err)
	}
	if name, _ := tk.Lookup("tok-alice-0123456789"); name != "alice" {
		t.Fatalf("first name %q, want %q", name, "alice")
	}
	tk, err = ParseTokens(strings.NewReader("\ufeff# a comment first\nalice:tok-alice-0123456789\n"))
	if err != nil {
		t.Fatal(err)
	}
	if name, _ := tk.Lookup("tok-alice-0123456789"); name != "alice" {
		t.Fatalf("after a comment: name %q, want %q", name, "alice")
	}
	for _, bad := range []string{"alice:tok-alice-0123456789\n\ufeffbob:tok-bob-0123456789ab\n",
		"alice:tok-alice-\ufeff0123456789\n", "\ufeff\ufeffalice:tok-alice-0123456789\n"} {
		if _, err := ParseTokens(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line") {
			t.Errorf("%q: %v, want a line's error", bad, err)
		}
	}
}

// TestParseTokensRefusesInvisibleNames: a name holding a format character
// (a zero-width space, a right-to-left override), a non-ASCII space, a
// private-use or unassigned code point, or bytes that are not UTF-8
// loaded, and then showed in logs and metric labels as another client's
// name, or garbled. Such names and tokens are refused.
func TestParseTokensRefusesInvisibleNames(t *testing.T) {
	for _, name := range []string{"ali\u200bce", "alice\u202e", "\u2060alice", "ali\u3000ce", "ali\u2028ce",
		"alice\ue000", "alice\U000e0001", "alice\u0378", "ali\xffce", "ali\xc3"} {
		line := name + ":tok-alice-0123456789\n"
		if _, err := ParseTokens(strings.NewReader(line)); err == nil {
			t.Errorf("name %q parsed", name)
		}
		line = "alice:tok-" + name + "-0123456789\n"
		if _, err := ParseTokens(strings.NewReader(line)); err == nil {
			t.Errorf("token holding %q parsed", name)
		}
	}
	// Letters, marks and symbols of any script are names.
	if _, err := ParseTokens(strings.NewReader("Zoë-ü\u0301-日本-😀:tok-alice-0123456789\n")); err != nil {
		t.Errorf("a Unicode name: %v", err)
	}
}

// TestParseTokensRefusesWeakTokens: MinTokenLen counts bytes, so a token
// of one repeated character, or a short repeated pattern, passed. A token
// whose character frequencies carry under 24 bits, or that has under 4
// distinct characters, fails with ErrWeakToken (the error names the line,
// not the token); random tokens of MinTokenLen characters, even digits
// only, pass.
func TestParseTokensRefusesWeakTokens(t *testing.T) {
	for _, tok := range []string{"aaaaaaaaaaaaaaaa", strings.Repeat("x", 200), "abababababababab", "aaaaaaaaaaaaaaab",
		strings.Repeat("ab", 11), strings.Repeat("abc", 40)} {
		_, err := ParseTokens(strings.NewReader("alice:" + tok + "\n"))
		if !errors.Is(err, ErrWeakToken) {
			t.Errorf("%q: %v, want ErrWeakToken", tok, err)
			continue
		}
		if strings.Contains(err.Error(), tok) {
			t.Errorf("%q: the error %q shows the token", tok, err)
		}
	}
	for _, tok := range []string{"0123456789abcdef", "abcdabcdabcdabcd", "3141592653589793", "tok-alice-0123456789",
		"J8vX2kQ9zL4mN7pR"} {
		if _, err := ParseTokens(strings.NewReader("alice:" + tok + "\n")); err != nil {
			t.Errorf("%q: %v", tok, err)
		}
	}
}

// A drain that begins while a request authenticates refuses it as the
// drain check before authentication does: 503 with the drain grace as
// Retry-After, not the one second of a full server.
func TestDrainDuringAdmissionRetryAfter(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.DrainGrace = 42 * time.Second })
	ts.authenticated = func() { ts.adm.drain() }
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "websocket")
	w := httptest.NewRecorder()
	ts.root(w, r)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "42" {
		t.Fatalf("drain begun during admission: %d Retry-After %q, want 503 with 42", w.Code, w.Header().Get("Retry-After"))
	}
	if got := strings.TrimSpace(w.Body.String()); got != ReasonDraining {
		t.Fatalf("reason %q, want %q", got, ReasonDraining)
	}
}

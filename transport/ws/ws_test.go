package ws

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/wsframe"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// peer is the server end of a test connection, driven by the test.
type peer struct {
	srv      *httptest.Server
	conns    chan *websocket.Conn
	header   chan http.Header
	upgrades atomic.Int32
}

func newPeer(t testing.TB) *peer {
	t.Helper()
	p := &peer{conns: make(chan *websocket.Conn, 4), header: make(chan http.Header, 4)}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.upgrades.Add(1)
		p.header <- r.Header.Clone()
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.SetReadLimit(-1)
		p.conns <- c
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *peer) url() string { return "ws" + strings.TrimPrefix(p.srv.URL, "http") }

func (p *peer) accept(t *testing.T) *websocket.Conn {
	t.Helper()
	select {
	case c := <-p.conns:
		t.Cleanup(func() { c.CloseNow() })
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no connection reached the server")
		return nil
	}
}

func dial(t *testing.T, p *peer, opts DialOptions) (*Conn, *websocket.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, p.url(), opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, p.accept(t)
}

func ctx10(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestFramesBothWaysAtTheCap(t *testing.T) {
	const limit = 4096
	p := newPeer(t)
	c, s := dial(t, p, DialOptions{MaxFrameLen: limit})

	atCap := bytes.Repeat([]byte{0xab}, limit)
	if err := c.WriteFrame(atCap); err != nil {
		t.Fatalf("WriteFrame at the cap: %v", err)
	}
	typ, got, err := s.Read(ctx10(t))
	if err != nil || typ != websocket.MessageBinary || !bytes.Equal(got, atCap) {
		t.Fatalf("server read %v %d bytes %v, want the binary frame", typ, len(got), err)
	}

	// One byte over: refused before sending, connection kept.
	err = c.WriteFrame(make([]byte, limit+1))
	var tl *frame.TooLargeError
	if !errors.As(err, &tl) || tl.Len != limit+1 || tl.Max != limit {
		t.Fatalf("WriteFrame over the cap = %v, want *frame.TooLargeError{%d, %d}", err, limit+1, limit)
	}
	if err := c.WriteFrame([]byte("after")); err != nil {
		t.Fatalf("WriteFrame after a refusal: %v", err)
	}
	if _, got, err := s.Read(ctx10(t)); err != nil || string(got) != "after" {
		t.Fatalf("server read %q %v; the refused frame must not have been sent", got, err)
	}

	// From the server: exactly the cap arrives, with no length prefix.
	if err := s.Write(ctx10(t), websocket.MessageBinary, atCap); err != nil {
		t.Fatal(err)
	}
	if got, err := c.ReadFrame(); err != nil || !bytes.Equal(got, atCap) {
		t.Fatalf("ReadFrame at the cap: %d bytes, %v", len(got), err)
	}
	if c.Pending() {
		t.Fatal("Pending after reading everything")
	}
}

func TestPeerOverTheCapIsRefused(t *testing.T) {
	const limit = 1024
	p := newPeer(t)
	c, s := dial(t, p, DialOptions{MaxFrameLen: limit})
	go s.Write(context.Background(), websocket.MessageBinary, make([]byte, limit+1))
	_, err := c.ReadFrame()
	if !errors.Is(err, frame.ErrTooLarge) {
		t.Fatalf("ReadFrame of an oversized message = %v, want frame.ErrTooLarge", err)
	}
}

func TestTextMessageIsRefused(t *testing.T) {
	p := newPeer(t)
	c, s := dial(t, p, DialOptions{})
	if err := s.Write(ctx10(t), websocket.MessageText, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadFrame(); !errors.Is(err, ErrNotBinary) {
		t.Fatalf("ReadFrame of a text message = %v, want ErrNotBinary", err)
	}
	// The server sees a policy-violation close.
	_, _, err := s.Read(ctx10(t))
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Fatalf("server read after a text message: %v, want close 1008", err)
	}
}

func TestPingsAnsweredWhileIdle(t *testing.T) {
	p := newPeer(t)
	_, s := dial(t, p, DialOptions{})
	// The server must keep reading for its own pong handling.
	ctx := s.CloseRead(context.Background())
	_ = ctx
	for i := range 3 {
		pctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := s.Ping(pctx)
		cancel()
		if err != nil {
			t.Fatalf("ping %d to an idle client: %v", i, err)
		}
	}
}

func TestPendingSeesUnsolicitedFrames(t *testing.T) {
	p := newPeer(t)
	c, s := dial(t, p, DialOptions{})
	if err := s.Write(ctx10(t), websocket.MessageBinary, []byte{1}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !c.Pending() {
		if time.Now().After(deadline) {
			t.Fatal("an unsolicited frame never showed in Pending")
		}
		time.Sleep(time.Millisecond)
	}
	if b, err := c.ReadFrame(); err != nil || !bytes.Equal(b, []byte{1}) {
		t.Fatalf("ReadFrame = %v %v", b, err)
	}
}

func TestCloseSendsACloseFrame(t *testing.T) {
	for _, tc := range []struct {
		name   string
		close  func(*Conn) error
		code   websocket.StatusCode
		reason string
	}{
		{"Close", (*Conn).Close, websocket.StatusNormalClosure, ""},
		{"CloseWith", func(c *Conn) error { return c.CloseWith(4000, "abandoned") }, 4000, "abandoned"},
		// A reason over 123 bytes is cut on a character boundary: the
		// reason must be valid UTF-8 (RFC 6455 §5.5.1; some peers fail
		// the connection otherwise).
		{"CloseWith long reason", func(c *Conn) error { return c.CloseWith(4000, strings.Repeat("é", 100)) }, 4000, strings.Repeat("é", 61)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPeer(t)
			c, s := dial(t, p, DialOptions{})
			got := make(chan error, 1)
			go func() { _, _, err := s.Read(context.Background()); got <- err }()
			if err := tc.close(c); err != nil {
				t.Fatalf("close: %v", err)
			}
			err := <-got
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != tc.code || ce.Reason != tc.reason {
				t.Fatalf("server saw %v, want close %d %q", err, tc.code, tc.reason)
			}
			if _, err := c.ReadFrame(); !errors.Is(err, net.ErrClosed) {
				t.Fatalf("ReadFrame after Close = %v, want net.ErrClosed", err)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		})
	}
}

// A write after this side's Close fails with net.ErrClosed, as ReadFrame
// and Err do then: not a *CloseError saying the connection dropped
// without a close frame, which matched ErrDisconnected, the peer's end.
func TestWriteAfterCloseIsErrClosed(t *testing.T) {
	p := newPeer(t)
	c, _ := dial(t, p, DialOptions{})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	err := c.WriteFrame([]byte{1})
	var ce *CloseError
	if !errors.Is(err, net.ErrClosed) || errors.Is(err, ErrDisconnected) || errors.As(err, &ce) {
		t.Fatalf("WriteFrame after Close = %v (%T), want net.ErrClosed", err, err)
	}
}

func TestCloseWaitIsBounded(t *testing.T) {
	p := newPeer(t)
	c, _ := dial(t, p, DialOptions{CloseWait: 50 * time.Millisecond})
	// The server never reads, so it never answers the Close frame; the
	// library's own handshake wait is 5 s.
	start := time.Now()
	c.Close()
	// The wrong behaviour, the library's wait, cannot end before 5 s; the
	// bound sits just below that to leave a loaded machine the most room.
	if d := time.Since(start); d > 4500*time.Millisecond {
		t.Fatalf("Close against a silent peer took %v; the wait must be bounded by CloseWait", d)
	}
}

func TestPeerCloseCodeAndDrop(t *testing.T) {
	t.Run("close frame", func(t *testing.T) {
		p := newPeer(t)
		c, s := dial(t, p, DialOptions{})
		go s.Close(4003, "memory limit")
		_, err := c.ReadFrame()
		var ce *CloseError
		if !errors.As(err, &ce) || ce.Code != 4003 || ce.Reason != "memory limit" {
			t.Fatalf("ReadFrame = %v, want CloseError 4003", err)
		}
		if !errors.Is(err, ErrDisconnected) || errors.Is(err, io.EOF) {
			t.Fatalf("a 4003 close must match ErrDisconnected and not io.EOF: %v", err)
		}
	})
	t.Run("normal closure is EOF", func(t *testing.T) {
		p := newPeer(t)
		c, s := dial(t, p, DialOptions{})
		go s.Close(websocket.StatusNormalClosure, "")
		if _, err := c.ReadFrame(); !errors.Is(err, io.EOF) {
			t.Fatalf("ReadFrame after a normal closure = %v, want io.EOF", err)
		}
	})
	t.Run("drop", func(t *testing.T) {
		p := newPeer(t)
		c, s := dial(t, p, DialOptions{})
		s.CloseNow()
		_, err := c.ReadFrame()
		var ce *CloseError
		if !errors.As(err, &ce) || ce.Code != -1 {
			t.Fatalf("ReadFrame after a TCP drop = %v, want CloseError with code -1", err)
		}
	})
}

func TestUpgradeHeaders(t *testing.T) {
	p := newPeer(t)
	calls := 0
	opts := DialOptions{
		Header: http.Header{"X-Static": {"a"}, "X-Dup": {"first", "last"}},
		HeaderFunc: func(ctx context.Context) (http.Header, error) {
			calls++
			return http.Header{"Authorization": {"Bearer t" + string(rune('0'+calls))}}, nil
		},
		TraceHeaders: func(context.Context) (string, string) {
			return "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "k=v"
		},
	}
	for want := 1; want <= 2; want++ {
		c, _ := dial(t, p, opts)
		h := <-p.header
		for name, v := range map[string]string{
			"User-Agent":    "gomonty/" + Version,
			"X-Static":      "a",
			"X-Dup":         "last",
			"Authorization": "Bearer t" + string(rune('0'+want)),
			"Traceparent":   "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
			"Tracestate":    "k=v",
		} {
			if got := h.Get(name); got != v {
				t.Errorf("dial %d: header %s = %q, want %q", want, name, got, v)
			}
		}
		c.Close()
	}

	// A header of the caller replaces a default of the same name.
	opts.Header = http.Header{"User-Agent": {"mine/1"}}
	c, _ := dial(t, p, opts)
	if got := (<-p.header).Get("User-Agent"); got != "mine/1" {
		t.Errorf("User-Agent = %q, want the caller's", got)
	}
	c.Close()
}

func TestInvalidHeadersFailBeforeIO(t *testing.T) {
	p := newPeer(t)
	for _, tc := range []struct {
		name string
		opts DialOptions
	}{
		{"bad name", DialOptions{Header: http.Header{"Bad Name": {"x"}}}},
		{"bad value", DialOptions{Header: http.Header{"X-A": {"line\r\nbreak"}}}},
		{"bad func value", DialOptions{HeaderFunc: func(context.Context) (http.Header, error) {
			return http.Header{"Authorization": {"a\x00b"}}, nil
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Dial(ctx10(t), p.url(), tc.opts)
			var he *HeaderError
			if !errors.As(err, &he) {
				t.Fatalf("Dial = %v, want *HeaderError", err)
			}
		})
	}
	t.Run("func error", func(t *testing.T) {
		boom := errors.New("token refresh failed")
		_, err := Dial(ctx10(t), p.url(), DialOptions{HeaderFunc: func(context.Context) (http.Header, error) { return nil, boom }})
		if !errors.Is(err, boom) {
			t.Fatalf("Dial = %v, want the header function's error", err)
		}
	})
	if n := p.upgrades.Load(); n != 0 {
		t.Fatalf("%d requests reached the server; header errors must stop the dial before any I/O", n)
	}
}

func TestRefusedUpgrade(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		http.Error(w, "draining", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	_, err := Dial(ctx10(t), "ws"+strings.TrimPrefix(srv.URL, "http"), DialOptions{})
	var de *DialError
	if !errors.As(err, &de) || de.StatusCode != 503 || de.RetryAfter != 7*time.Second || de.Reason != "draining" {
		t.Fatalf("Dial = %#v, want DialError 503 with Retry-After 7s and reason draining", err)
	}
	if !strings.Contains(err.Error(), "HTTP 503 (draining)") {
		t.Errorf("error text %q does not say why", err)
	}
	if _, err := Dial(ctx10(t), "http://x", DialOptions{}); err == nil {
		t.Fatal("an http:// URL must be refused")
	}
}

// A refusal's reason is the first line of its body, bounded and printable:
// a hostile server's body cannot flood the error text or put control
// characters (terminal escapes) into logs.
func TestRefusalReason(t *testing.T) {
	for body, want := range map[string]string{
		"auth_throttled\n":           "auth_throttled",
		"":                           "",
		"  spaced  \r\nsecond line":  "spaced",
		"\x1b[31mred\x1b[0m\tbell\a": "[31mred[0mbell",
		strings.Repeat("x", 10000):   strings.Repeat("x", maxReason),
		"caf\xc3\xa9 \xff":           "caf",
	} {
		if got := refusalReason(strings.NewReader(body)); got != want {
			t.Errorf("refusalReason(%.40q) = %q, want %q", body, got, want)
		}
	}
}

func TestParseHeader(t *testing.T) {
	n, v, err := ParseHeader("Authorization:  Bearer abc ")
	if err != nil || n != "Authorization" || v != "Bearer abc" {
		t.Fatalf("ParseHeader = %q %q %v", n, v, err)
	}
	for _, bad := range []string{"no colon", ": empty name", "Bad Name: x", "X: a\nb"} {
		if _, _, err := ParseHeader(bad); err == nil {
			t.Errorf("ParseHeader(%q) accepted", bad)
		}
	}
}

// Overloaded is true for the capacity refusals only.
func TestDialErrorOverloaded(t *testing.T) {
	for code, want := range map[int]bool{0: false, 401: false, 403: false, 429: true, 500: false, 503: true} {
		if got := (&DialError{StatusCode: code}).Overloaded(); got != want {
			t.Errorf("status %d: Overloaded %v, want %v", code, got, want)
		}
	}
	// A 429 for failed logins is an authentication failure, not a full
	// server; a 429 for another reason (a per-client cap) is capacity.
	for reason, want := range map[string]bool{"auth_throttled": false, "client_quota": true, "": true} {
		if got := (&DialError{StatusCode: 429, Reason: reason}).Overloaded(); got != want {
			t.Errorf("429 %q: Overloaded %v, want %v", reason, got, want)
		}
	}
}

// Done tells that the peer left without a ReadFrame, and frames sent
// before the Close still come first.
func TestDoneAndErrWithoutReading(t *testing.T) {
	p := newPeer(t)
	c, s := dial(t, p, DialOptions{})
	if c.Err() != nil {
		t.Fatalf("Err while open = %v", c.Err())
	}
	if err := s.Write(ctx10(t), websocket.MessageBinary, []byte("last")); err != nil {
		t.Fatal(err)
	}
	go s.Close(4003, "bye")
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done was not closed after the peer's Close")
	}
	var ce *CloseError
	if err := c.Err(); !errors.As(err, &ce) || ce.Code != 4003 {
		t.Fatalf("Err = %v, want CloseError 4003", err)
	}
	if b, err := c.ReadFrame(); err != nil || string(b) != "last" {
		t.Fatalf("ReadFrame = %q, %v; want the frame sent before the Close", b, err)
	}
	if _, err := c.ReadFrame(); !errors.As(err, &ce) {
		t.Fatalf("ReadFrame = %v, want the CloseError", err)
	}
	c.Close()
	if !errors.Is(c.Err(), net.ErrClosed) {
		t.Fatalf("Err after Close = %v, want net.ErrClosed", c.Err())
	}
}

// A refused upgrade leaves no connection behind: the HTTP transport a
// Dial makes would otherwise keep the refused connection alive (two
// goroutines and a socket per dial, until the server's idle timeout), and
// a pool retrying a draining endpoint dials again and again.
func TestRefusedUpgradeKeepsNoConnection(t *testing.T) {
	var open atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "draining", http.StatusServiceUnavailable)
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	defer srv.Close()
	for range 10 {
		if _, err := Dial(ctx10(t), "ws"+strings.TrimPrefix(srv.URL, "http"), DialOptions{}); err == nil {
			t.Fatal("the upgrade was not refused")
		}
	}
	for deadline := time.Now().Add(10 * time.Second); open.Load() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d refused connections still open", open.Load())
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"7":                             7 * time.Second,
		" 7 ":                           7 * time.Second,
		"-3":                            0,
		"soon":                          0,
		"9223372036":                    9223372036 * time.Second,
		"9223372037":                    math.MaxInt64, // would overflow a Duration
		"99999999999999999999999":       math.MaxInt64,
		"Wed, 21 Oct 2015 07:28:00 GMT": 0, // in the past
	} {
		if got := parseRetryAfter(v); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
	if got := parseRetryAfter(time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)); got < 58*time.Minute || got > time.Hour {
		t.Errorf("an HTTP date an hour ahead: %v", got)
	}
}

// A redirect is not followed: the URL is dialled exactly as given, and a
// wss:// endpoint that redirects to plain http:// must not receive the
// upgrade headers (a bearer token) in clear text. The 3xx surfaces as a
// DialError.
func TestRedirectIsNotFollowed(t *testing.T) {
	var reached atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		if c, err := websocket.Accept(w, r, nil); err == nil {
			c.Close(websocket.StatusNormalClosure, "")
		}
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer secure.Close()
	cfg := secure.Client().Transport.(*http.Transport).TLSClientConfig
	c, err := Dial(ctx10(t), "wss"+strings.TrimPrefix(secure.URL, "https"), DialOptions{
		TLSConfig: cfg,
		Header:    http.Header{"Authorization": {"Bearer secret"}},
	})
	if c != nil {
		c.Close()
	}
	var de *DialError
	if !errors.As(err, &de) || de.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("Dial = %v, want a DialError with status 307", err)
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the redirect target was dialled %d times", n)
	}
}

// Dial honours its context after the upgrade response too: a server that
// answers 101 with a handshake the client must refuse (here an
// unrequested subprotocol) and then stays silent held Dial for the 3 s
// the WebSocket library spends reading the rest of the response, however
// soon the context ended. The server ends the context as it answers,
// before writing the 101: it used to end it just after, but since
// refuseBadUpgrade the client refuses this 101 at once, so under load
// Dial returned before the server's cancel ran, with only the refusal to
// report (about 1 run in 5 at 24 in parallel).
func TestDialContextBoundsABadHandshake(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cancel() // the request is in: the dial's context ends before its answer
		w.Header().Set("Sec-WebSocket-Protocol", "unrequested")
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.Read(context.Background())
	}))
	defer srv.Close()
	start := time.Now()
	_, err := Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), DialOptions{})
	var de *DialError
	if !errors.As(err, &de) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial = %v, want a DialError matching context.Canceled", err)
	}
	// A Dial that missed the cancellation would wait on the library's 3 s
	// read, which cannot end sooner: the bound sits just below it.
	if took := time.Since(start); took > 2900*time.Millisecond {
		t.Fatalf("Dial returned %v after its context ended", took)
	}
}

// A dial whose context is cancelled while the upgrade request is in
// flight fails with a DialError matching context.Canceled, even though
// closing the socket may reach the HTTP transport first (it then sees
// only a closed connection); callers tell their own cancellation from
// the endpoint's failure by it.
func TestDialCanceledMatchesContext(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 32)
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns <- c // never answered
		}
	}()
	defer func() {
		l.Close()
		<-accepting
		close(conns)
		for c := range conns {
			c.Close()
		}
	}()
	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		reached := make(chan net.Conn, 1)
		go func() {
			c := <-conns // the dial reached the server
			cancel()
			reached <- c
		}()
		_, err := Dial(ctx, "ws://"+l.Addr().String(), DialOptions{})
		(<-reached).Close()
		var de *DialError
		if !errors.As(err, &de) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Dial = %v, want a DialError matching context.Canceled", err)
		}
	}
}

// A dial whose context ends during the handshake returns a DialError
// matching the context's error and closes its connection, whether the
// server has not answered yet or has answered with a refusal whose body
// it never finishes. In the second case the HTTP exchange is over: the
// WebSocket library reads the body (for up to 3 s, to quote it), then
// reports the refusal alone, not the context. Dial closes the socket when
// the context ends and says that the context ended, the refusal's status
// kept, so a caller still tells its own cancellation from the endpoint's
// failure.
func TestDialContextEndDuringHandshake(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer string // what the server writes after reading the request
		status int    // the DialError's StatusCode
	}{
		{"no answer", "", 0},
		{"refusal body never ends", "HTTP/1.1 403 Forbidden\r\nContent-Length: 1000\r\n\r\nnot yet", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			for attempt := 1; !dialEndsWithContext(t, tc.answer, tc.status); attempt++ {
				// The library's own 3 s read ended before the test's
				// cancel came (a machine too busy to run the test's
				// goroutine for seconds): nothing was judged.
				if attempt == 5 {
					t.Fatal("the context never ended before the library's 3 s read did")
				}
			}
		})
	}
}

// dialEndsWithContext dials a server that reads the upgrade request,
// writes answer and stays silent. The dial's context ends once the answer
// is written, and when status is set (the answer is a response) once the
// HTTP transport has also handed the response over. It fails the test
// unless Dial returns a DialError matching context.Canceled with
// StatusCode status and the server then sees the connection closed. It
// reports false, judging nothing, when the dial ended before its context
// did.
func dialEndsWithContext(t *testing.T, answer string, status int) bool {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	answered := make(chan struct{})
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		if _, err := io.WriteString(c, answer); err != nil {
			return
		}
		close(answered)
		io.Copy(io.Discard, br) // until the client closes the connection
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dialed := make(chan struct{})
	canceledAt := make(chan time.Time, 1) // zero: not canceled
	go func() {
		select {
		case <-answered:
		case <-closed:
			canceledAt <- time.Time{}
			return
		}
		if status != 0 && !awaitNoRoundTrip(dialed) {
			canceledAt <- time.Time{}
			return
		}
		at := time.Now()
		cancel()
		canceledAt <- at
	}()
	_, err = Dial(ctx, "ws://"+l.Addr().String(), DialOptions{})
	close(dialed)
	at := <-canceledAt
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the dial's connection is still open after Dial returned")
	}
	if !errors.Is(err, context.Canceled) && (at.IsZero() || time.Since(at) > 2500*time.Millisecond) {
		// Not canceled, or canceled only after so long that the library's
		// 3 s read may have ended first.
		return false
	}
	var de *DialError
	if !errors.As(err, &de) || !errors.Is(err, context.Canceled) || de.StatusCode != status {
		t.Fatalf("Dial = %v, want a DialError with status %d matching context.Canceled", err, status)
	}
	return true
}

// awaitNoRoundTrip waits until no goroutine is inside net/http's
// persistConn.roundTrip, that is until the HTTP transport has handed the
// response it read over to the dial, and reports true; or until dialed is
// closed first, and reports false. The transport watches the context
// until then: a context that ended sooner would end the exchange there,
// without a response.
func awaitNoRoundTrip(dialed <-chan struct{}) bool {
	buf := make([]byte, 1<<20)
	for {
		select {
		case <-dialed:
			return false
		default:
		}
		if !bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("net/http.(*persistConn).roundTrip(")) {
			return true
		}
		time.Sleep(time.Millisecond)
	}
}

// A URL's password and query token never reach a DialError's text, which
// callers log: not for a refused upgrade, a refused connection or a URL
// that does not parse, nor in the lower layers' error text it quotes.
func TestDialErrorMasksCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	secrets := []string{"s3cret", "Passw0rd", "TOPSECRETTOKEN"}
	for _, raw := range []string{
		strings.Replace(srv.URL, "http://", "ws://alice:s3cretPassw0rd@", 1) + "/ws?token=TOPSECRETTOKEN&x=1",
		"ws://alice:s3cretPassw0rd@" + closed + "/ws?token=TOPSECRETTOKEN",
		"ws://alice:s3cretPassw0rd@[::1/?token=TOPSECRETTOKEN",
		// An unescaped '/' in the password (base64 tokens hold one):
		// url.Parse fails and quotes the password's first piece as a port.
		"ws://alice:s3cret/Passw0rd@" + closed + "/ws?token=TOPSECRETTOKEN",
	} {
		_, err := Dial(context.Background(), raw, DialOptions{})
		var de *DialError
		if !errors.As(err, &de) {
			t.Fatalf("Dial(%q) = %v, want a *DialError", raw, err)
		}
		if de.URL != raw {
			t.Errorf("DialError.URL = %q, want it as given", de.URL)
		}
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) {
				t.Errorf("Dial(%q): error text %q holds %q", raw, err, s)
			}
		}
		if !strings.Contains(err.Error(), "xxxxx@") {
			t.Errorf("Dial(%q): error text %q does not name the endpoint", raw, err)
		}
	}
}

// A close code that cannot travel in a Close frame (0, the reserved
// 1004–1006 and 1015, anything outside 1000–1014 and 3000–4999) still
// closes with a Close frame, as every way of closing does: the library
// would refuse to marshal it and drop the socket with none, which a load
// balancer may never forward. The code sent instead is 1011.
func TestCloseWithUnsendableCode(t *testing.T) {
	for _, code := range []int{0, 999, 1004, 1005, 1006, 1015, 2000, 5000, -1} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			p := newPeer(t)
			c, s := dial(t, p, DialOptions{})
			got := make(chan error, 1)
			go func() { _, _, err := s.Read(context.Background()); got <- err }()
			if err := c.CloseWith(code, "bad code"); err != nil {
				t.Fatalf("CloseWith(%d) = %v", code, err)
			}
			err := <-got
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.StatusInternalError || ce.Reason != "bad code" {
				t.Fatalf("server saw %v, want close 1011 %q", err, "bad code")
			}
		})
	}
}

// The library hands over a peer's close reason as raw bytes (it checks
// neither UTF-8 nor anything else), and the reason ends up in error texts
// and logs: a hostile peer could forge log lines with it. Invalid UTF-8 and
// control characters are replaced with U+FFFD; the code is kept.
func TestPeerCloseReasonIsSanitized(t *testing.T) {
	p := newPeer(t)
	c, s := dial(t, p, DialOptions{})
	go s.Close(4000, "bad\xff\nlevel=error msg=forged \x1b[31mred\u0085")
	_, err := c.ReadFrame()
	var ce *CloseError
	if !errors.As(err, &ce) || ce.Code != 4000 {
		t.Fatalf("ReadFrame = %v, want CloseError 4000", err)
	}
	if want := "bad\uFFFD level=error msg=forged \uFFFD[31mred "; ce.Reason != want {
		t.Fatalf("Reason = %q, want %q", ce.Reason, want)
	}
	if !utf8.ValidString(err.Error()) || strings.ContainsAny(err.Error(), "\n\x1b") {
		t.Fatalf("error text %q carries the peer's raw bytes", err.Error())
	}
}

// unwrapWriter is a middleware's response writer in the style
// http.ResponseController understands: it does not implement Hijack
// itself but exposes the writer it wraps.
type unwrapWriter struct{ w http.ResponseWriter }

func (u *unwrapWriter) Header() http.Header         { return u.w.Header() }
func (u *unwrapWriter) Write(b []byte) (int, error) { return u.w.Write(b) }
func (u *unwrapWriter) WriteHeader(code int)        { u.w.WriteHeader(code) }
func (u *unwrapWriter) Unwrap() http.ResponseWriter { return u.w }

// Accept works behind a middleware whose writer only offers Unwrap, as the
// library alone does: the writer that records the hijacked socket must
// look for the hijacker down the Unwrap chain too.
func TestAcceptBehindUnwrappingMiddleware(t *testing.T) {
	conns := make(chan *Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Accept(&unwrapWriter{w}, r, AcceptOptions{})
		if err != nil {
			t.Errorf("Accept: %v", err)
			return
		}
		conns <- c
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer cl.CloseNow()
	var c *Conn
	select {
	case c = <-conns:
	case <-ctx.Done():
		t.Fatal("Accept never returned a connection")
	}
	defer c.Close()
	if err := cl.Write(ctx10(t), websocket.MessageBinary, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	if got, err := c.ReadFrame(); err != nil || string(got) != "ping" {
		t.Fatalf("ReadFrame = %q, %v", got, err)
	}
}

// A writer that cannot be hijacked at all is refused with the library's
// 501 before anything else is written, not answered 101 Switching
// Protocols and then failed.
func TestAcceptWithoutHijacker(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "websocket")
	r.Header.Set("Sec-WebSocket-Version", "13")
	r.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	w := httptest.NewRecorder()
	if c, err := Accept(w, r, AcceptOptions{}); err == nil {
		c.Close()
		t.Fatal("Accept succeeded without a hijacker")
	}
	if w.Code != http.StatusNotImplemented {
		t.Fatalf("response status %d, want 501", w.Code)
	}
}

// A 101 whose handshake the client must refuse (an unrequested
// subprotocol or extension, a wrong Sec-WebSocket-Accept) from a server
// that then stays silent fails the dial at once, still with its 101 in
// the DialError: the WebSocket library read on for up to 3 s (for the
// response's body, to quote it) before it reported the refusal, so each
// dial of a misconfigured endpoint (a proxy that answers with its own
// subprotocol) cost 3 s with no deadline set.
func TestBadHandshakeFailsFast(t *testing.T) {
	for _, tc := range []struct {
		name, header, value string
	}{
		{"subprotocol", "Sec-WebSocket-Protocol", "unrequested"},
		{"extension", "Sec-WebSocket-Extensions", "x-unknown"},
		{"accept", "Sec-WebSocket-Accept", "d3Jvbmc="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hj, _ := w.(http.Hijacker)
				c, rw, err := hj.Hijack()
				if err != nil {
					return
				}
				defer c.Close()
				accept := wsframe.Accept(r.Header.Get("Sec-WebSocket-Key"))
				if tc.header == "Sec-WebSocket-Accept" {
					accept = tc.value
				}
				fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n", accept)
				if tc.header != "Sec-WebSocket-Accept" {
					fmt.Fprintf(rw, "%s: %s\r\n", tc.header, tc.value)
				}
				fmt.Fprint(rw, "\r\n")
				rw.Flush()
				<-held // silent until the test ends
			}))
			defer srv.Close()
			defer close(held)
			start := time.Now()
			_, err := Dial(ctx10(t), "ws"+strings.TrimPrefix(srv.URL, "http"), DialOptions{})
			var de *DialError
			if !errors.As(err, &de) || de.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("Dial = %v, want a DialError with status 101", err)
			}
			// The library's 3 s read cannot end sooner; the bound sits
			// just below it, as far as it can from the refusal's time.
			if took := time.Since(start); took > 2900*time.Millisecond {
				t.Fatalf("Dial refused the handshake after %v (the library's 3 s read)", took)
			}
		})
	}
}

// A message over the cap is reported as a *frame.TooLargeError, as the
// stream transport reports a frame over it, so errors.As works the same on
// both transports: Max is the cap, Len the length the message's header
// announced (the dialed connection refuses it from the header, before
// its body). It was a plain error wrapping frame.ErrTooLarge, which only
// errors.Is matched, and then one with Len 0, while the client counted
// the cap against the body.
func TestPeerOverTheCapIsATooLargeError(t *testing.T) {
	const limit = 1024
	p := newPeer(t)
	c, s := dial(t, p, DialOptions{MaxFrameLen: limit})
	go s.Write(context.Background(), websocket.MessageBinary, make([]byte, 3*limit))
	_, err := c.ReadFrame()
	var tl *frame.TooLargeError
	if !errors.As(err, &tl) || tl.Max != limit || tl.Len != 3*limit {
		t.Fatalf("ReadFrame of an oversized message = %v (%#v), want a *frame.TooLargeError{Len: %d, Max: %d}", err, tl, 3*limit, limit)
	}
	if !strings.Contains(err.Error(), "frame of 3072 bytes") {
		t.Fatalf("error text %q does not give the announced length", err)
	}
}

//go:build unix

package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/transport/ws"
)

// dialFrom opens a TCP connection to ts from the loopback address from.
func dialFrom(t *testing.T, ts *testServer, from string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	nc, err := d.Dial("tcp", strings.TrimPrefix(ts.HTTP, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// answer sends a GET /info on nc and returns the status and body.
func answer(t *testing.T, nc net.Conn) (int, string) {
	t.Helper()
	return answerPath(t, nc, "/info")
}

// answerPath sends a GET of path on nc and returns the status and body.
func answerPath(t *testing.T, nc net.Conn, path string) (int, string) {
	t.Helper()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(nc, "GET "+path+" HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
		t.Error("a 503 without Retry-After")
	}
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// A peer address holding its share of connections that send nothing gets
// a 503 for the next one, at once; another address is served meanwhile,
// and the peer's place comes back as its connections close.
func TestHostileConnectionsPerPeer(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxConnectionsPerClient = 4 })
	var idle []net.Conn
	for range 4 {
		idle = append(idle, dialFrom(t, ts, "127.0.0.1"))
	}
	// The four are held (Accept counts a connection when it takes it, so
	// the fifth is seen after them).
	if code, body := answer(t, dialFrom(t, ts, "127.0.0.1")); code != http.StatusServiceUnavailable || body != ReasonTooManyConnections {
		t.Fatalf("a fifth connection: %d %q, want 503 %s", code, body, ReasonTooManyConnections)
	}
	// Another address: a whole session.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	c, err := dialRaw(ctx, ts.URL, 4, ws.DialOptions{NetDialer: d})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	configure(t, c, 4, nil)
	if got := repr(t, c, "'other peer'"); got != "'other peer'" {
		t.Fatal(got)
	}
	for _, nc := range idle {
		nc.Close()
	}
	// Every refusal is counted: the fifth connection's, and those of the
	// tries below made before the server has seen the closes.
	refused := 1
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _ := answer(t, dialFrom(t, ts, "127.0.0.1"))
		if code == http.StatusOK {
			break
		}
		refused++
		if time.Now().After(deadline) {
			t.Fatalf("the peer's places never came back: %d", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitMetric(t, ts, `monty_server_refusals_total{reason="too_many_connections"} `+strconv.Itoa(refused))
}

// The server-wide cap counts every connection, upgraded or not: an open
// session keeps working while idle connections fill the rest.
func TestHostileConnectionsServerWide(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxConnections = 4; c.MaxConnectionsPerClient = -1 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := dialRaw(ctx, ts.URL, 4, ws.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	configure(t, c, 4, nil)
	for range 3 {
		dialFrom(t, ts, "127.0.0.3")
	}
	if code, _ := answer(t, dialFrom(t, ts, "127.0.0.4")); code != http.StatusServiceUnavailable {
		t.Fatalf("a connection over the cap: %d", code)
	}
	if got := repr(t, c, "'still served'"); got != "'still served'" {
		t.Fatal(got)
	}
}

// The defaults leave room for the session caps, and a server behind a
// proxy (TrustForwardedFor, every connection from the proxy's address)
// has no per-address cap unless it asks for one.
func TestConnectionCapDefaults(t *testing.T) {
	for _, c := range []struct {
		cfg          Config
		max, perPeer int
	}{
		{Config{}, DefaultMaxConnections, DefaultMaxConnectionsPerClient},
		{Config{MaxSessions: 5000, MaxSessionsPerClient: 100}, 5256, 132},
		{Config{TrustForwardedFor: true}, DefaultMaxConnections, -1},
		{Config{TrustForwardedFor: true, MaxConnectionsPerClient: 8}, DefaultMaxConnections, 8},
		{Config{MaxConnections: -1, MaxConnectionsPerClient: -1}, -1, -1},
	} {
		got := c.cfg.withDefaults()
		if got.MaxConnections != c.max || got.MaxConnectionsPerClient != c.perPeer {
			t.Errorf("%+v: %d, %d; want %d, %d", c.cfg, got.MaxConnections, got.MaxConnectionsPerClient, c.max, c.perPeer)
		}
	}
}

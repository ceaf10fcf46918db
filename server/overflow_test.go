//go:build unix

package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/transport/ws"
)

// holdFrom opens n connections from the loopback address from that send
// nothing.
func holdFrom(t *testing.T, ts *testServer, from string, n int) []net.Conn {
	t.Helper()
	var held []net.Conn
	for range n {
		held = append(held, dialFrom(t, ts, from))
	}
	return held
}

// A health probe from an address at its connection cap is answered (a
// kubelet probes from the node's address, which may carry a flood of
// clients too); anything else from it is still refused with 503
// too_many_connections, an upgrade included. The probe's connection is
// closed after its answer. They were all refused.
func TestProbeAnsweredOverConnectionCap(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxConnectionsPerClient = 4 })
	holdFrom(t, ts, "127.0.0.1", 4)
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready", "/health": "ready"} {
		nc := dialFrom(t, ts, "127.0.0.1")
		if code, body := answerPath(t, nc, path); code != http.StatusOK || body != want {
			t.Errorf("%s over the cap: %d %q, want 200 %q", path, code, body, want)
		}
		if _, err := nc.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("%s over the cap: the connection was not closed after the answer: %v", path, err)
		}
	}
	for _, path := range []string{"/info", "/metrics", "/"} {
		if code, body := answerPath(t, dialFrom(t, ts, "127.0.0.1"), path); code != http.StatusServiceUnavailable || body != ReasonTooManyConnections {
			t.Errorf("%s over the cap: %d %q, want 503 %s", path, code, body, ReasonTooManyConnections)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1")}}
	_, err := ws.Dial(ctx, ts.URL, ws.DialOptions{NetDialer: d})
	var de *ws.DialError
	if !errors.As(err, &de) || de.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("an upgrade over the cap: %v, want 503", err)
	}
}

// waitOverflow waits until n connections hold a place in ts's overflow
// (a probe's place is given back a moment after its answer, once net/http
// has closed the connection).
func waitOverflow(t *testing.T, ts *testServer, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for ts.conns.Load().overflowed() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections in the overflow, want %d", ts.conns.Load().overflowed(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A connection over the caps gets one answer, whatever it is: a request
// refused for its Host (the DNS-rebinding check) closes it too, so that
// a second request pipelined behind it is not answered.
func TestOverflowConnectionGetsOneAnswer(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxConnectionsPerClient = 1 })
	holdFrom(t, ts, "127.0.0.1", 1)
	nc := dialFrom(t, ts, "127.0.0.1")
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(nc, "GET /healthz HTTP/1.1\r\nHost: rebound.example\r\n\r\nGET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a rebound Host over the cap: %d, want 403", resp.StatusCode)
	}
	if resp, err := http.ReadResponse(br, nil); err == nil {
		t.Fatalf("a second answer on a connection over the cap: %d", resp.StatusCode)
	}
}

// The connections read over the caps are bounded: overflowPerPeer per
// address, overflowConns server-wide, each for at most overflowLife. Past
// them a connection is refused at once, a probe too, so a client cannot
// use probes (or connections that send nothing) to get around the caps.
func TestProbesOverTheCapsAreBounded(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxConnections = 4; c.MaxConnectionsPerClient = -1 })
	holdFrom(t, ts, "127.0.0.2", 4)
	first := holdFrom(t, ts, "127.0.0.3", overflowPerPeer)
	waitOverflow(t, ts, overflowPerPeer)
	// 127.0.0.3 holds its share of the overflow: even its probe is refused.
	if code, body := answerPath(t, dialFrom(t, ts, "127.0.0.3"), "/healthz"); code != http.StatusServiceUnavailable || body != ReasonTooManyConnections {
		t.Fatalf("a probe past the address's overflow share: %d %q", code, body)
	}
	// Another address probes in what is left, then fills it.
	if code, _ := answerPath(t, dialFrom(t, ts, "127.0.0.4"), "/healthz"); code != http.StatusOK {
		t.Fatalf("a probe from another address: %d", code)
	}
	waitOverflow(t, ts, overflowPerPeer)
	for i := overflowPerPeer; i < overflowConns; i += overflowPerPeer {
		holdFrom(t, ts, "127.0.0."+strconv.Itoa(10+i), overflowPerPeer)
	}
	waitOverflow(t, ts, overflowConns)
	if code, body := answerPath(t, dialFrom(t, ts, "127.0.0.5"), "/healthz"); code != http.StatusServiceUnavailable || body != ReasonTooManyConnections {
		t.Fatalf("a probe past the server's overflow: %d %q", code, body)
	}
	// An overflow connection that sends nothing is closed by the server
	// (at overflowLife), and its place comes back.
	first[0].SetReadDeadline(time.Now().Add(overflowLife + 30*time.Second))
	if _, err := first[0].Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("an idle connection over the cap: %v, want it closed by the server", err)
	}
	waitOverflow(t, ts, 0)
	if code, body := answerPath(t, dialFrom(t, ts, "127.0.0.5"), "/healthz"); code != http.StatusOK {
		t.Fatalf("a probe once the overflow emptied: %d %q", code, body)
	}
}

// With TLS, a connection over the caps gets the same answers as plain
// HTTP (503 too_many_connections, a probe its answer) after its
// handshake, within the bounded overflow; it was dropped before the
// handshake, which a client cannot tell from a network failure.
func TestTLSConnectionOverCapAnswered(t *testing.T) {
	pki := newPKI(t)
	ts := startServer(t, func(c *Config) {
		c.TLS = &tls.Config{Certificates: []tls.Certificate{pki.server}, MinVersion: tls.VersionTLS12}
		c.MaxConnectionsPerClient = 2
	})
	addr := strings.TrimPrefix(ts.HTTP, "https://")
	for range 2 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
	}
	for path, want := range map[string]struct {
		code int
		body string
	}{"/info": {http.StatusServiceUnavailable, ReasonTooManyConnections}, "/healthz": {http.StatusOK, "ok"}} {
		nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 30 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pki.pool})
		if err != nil {
			t.Fatalf("%s: handshake over the cap: %v", path, err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(30 * time.Second))
		io.WriteString(nc, "GET "+path+" HTTP/1.1\r\nHost: localhost\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil {
			t.Fatalf("%s over the cap: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want.code || strings.TrimSpace(string(b)) != want.body {
			t.Errorf("%s over the cap: %d %q, want %d %q", path, resp.StatusCode, b, want.code, want.body)
		}
	}
	// Past the overflow a TLS connection is dropped before its handshake
	// (an answer would cost one handshake per connection, without bound).
	waitOverflow(t, ts, 0)
	for range overflowPerPeer {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
	}
	waitOverflow(t, ts, overflowPerPeer)
	nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 30 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pki.pool})
	if err == nil {
		nc.Close()
		t.Fatal("a handshake past the overflow succeeded")
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("a connection past the overflow was kept: %v", err)
	}
}

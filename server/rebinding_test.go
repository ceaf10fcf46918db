package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestOpenLoopbackServerRefusesForeignHosts: a server with no
// authentication listening on loopback answers only requests addressed to
// a loopback name. A web page whose DNS name is rebound to 127.0.0.1
// addresses the server by that name, and the WebSocket Origin check
// passes (the origin is the page's own), so without this a page could run
// code on the server and read /info and /metrics.
func TestOpenLoopbackServerRefusesForeignHosts(t *testing.T) {
	ts := startServer(t, nil)
	port := ts.HTTP[strings.LastIndexByte(ts.HTTP, ':'):]
	get := func(host, path string, upgrade bool) int {
		t.Helper()
		req, err := http.NewRequest("GET", ts.HTTP+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		if upgrade {
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "websocket")
			req.Header.Set("Sec-WebSocket-Version", "13")
			req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
			req.Header.Set("Origin", "http://"+host)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, host := range []string{"evil.example" + port, "evil.example", "127.0.0.1.evil.example" + port, "localhost.evil.example" + port} {
		for _, path := range []string{"/", "/info", "/metrics"} {
			if code := get(host, path, path == "/"); code != http.StatusForbidden {
				t.Errorf("Host %q %s: status %d, want 403", host, path, code)
			}
		}
	}
	for _, host := range []string{"127.0.0.1" + port, "localhost" + port, "LOCALHOST" + port, "[::1]" + port, "127.0.0.2", "app.localhost" + port} {
		if code := get(host, "/info", false); code != http.StatusOK {
			t.Errorf("Host %q /info: status %d, want 200", host, code)
		}
	}
	waitMetric(t, ts, `monty_server_refusals_total{reason="host_rejected"} 12`)

	// With tokens, the token is the guard: any Host name is served.
	tokens, err := ParseTokens(strings.NewReader("ci:s3cret-token-value\n"))
	if err != nil {
		t.Fatal(err)
	}
	authed := startServer(t, func(c *Config) { c.Tokens = tokens })
	req, _ := http.NewRequest("GET", authed.HTTP+"/info", nil)
	req.Host = "monty.internal.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with tokens, Host monty.internal.example: status %d", resp.StatusCode)
	}
}

// TestLoopbackHost: one helper answers both "does this Host header name
// the loopback" and "is this listen host the loopback" (montygo serve's
// check before listening without tokens).
func TestLoopbackHost(t *testing.T) {
	for _, h := range []string{"localhost", "LOCALHOST", "localhost.", "localhost:8000", "app.localhost", "127.0.0.1",
		"127.0.0.2:80", "::1", "[::1]", "[::1]:8000", "::ffff:127.0.0.1"} {
		if !LoopbackHost(h) {
			t.Errorf("LoopbackHost(%q) = false", h)
		}
	}
	for _, h := range []string{"", "0.0.0.0", ":8000", "::", "[::]:80", "10.0.0.1", "evil.example", "localhost.evil.example",
		"127.0.0.1.evil.example", "localhostx", "xlocalhost"} {
		if LoopbackHost(h) {
			t.Errorf("LoopbackHost(%q) = true", h)
		}
	}
}

//go:build unix

package server

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gomonty/monty/internal/wsframe"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport/ws"
)

// rawUpgrade opens a TCP connection to ts and upgrades it by hand; the
// test then writes frames of its own making.
func rawUpgrade(t *testing.T, ts *testServer) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("tcp", strings.TrimPrefix(ts.HTTP, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	io.WriteString(nc, "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade answered %d", resp.StatusCode)
	}
	return nc, br
}

// untilClosed reads server frames until the connection ends and returns
// the close code of the server's Close frame (0 when none came).
func untilClosed(t *testing.T, nc net.Conn, br *bufio.Reader) int {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	code := 0
	for {
		op, p, err := wsframe.Read(br)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the server did not end the connection")
			}
			return code
		}
		if op == 8 && len(p) >= 2 && code == 0 {
			code = int(binary.BigEndian.Uint16(p))
		}
	}
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	// Idle keep-alive connections of the test's own HTTP client (and their
	// server ends) are not what is counted.
	http.DefaultClient.CloseIdleConnections()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(es)
}

// settles waits until f reports at most want (goroutines, descriptors),
// which ended connections release asynchronously.
func settles(t *testing.T, what string, want int, f func() int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	got := f()
	for got > want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		got = f()
	}
	if got > want {
		t.Fatalf("%s: %d, baseline %d", what, got, want)
	}
}

// noLingering waits until no goroutine of net/http is lingering on a
// connection it refused (it waits half a second for the client to read
// the refusal before dropping it), so the package's leak check does not
// find one.
func noLingering(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := runtime.Stack(buf, true)
		if !strings.Contains(string(buf[:n]), "net/http.(*conn).closeWriteAndWait") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a refused connection's goroutine never ended")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A message sent as thousands of one-byte fragments is one frame to the
// server; fragments around a ping, and a ping flood the client never
// reads the pongs of, leave the session and its neighbours working.
func TestHostileFragmentsAndPings(t *testing.T) {
	ts := startServer(t, nil)
	check := victim(t, ts)
	nc, br := rawUpgrade(t, ts)
	cfg := encodeRequest(t, 4, &message.Configure{ProtocolVersion: 4})
	var msg []byte
	for i, b := range cfg {
		op := byte(0) // continuation
		if i == 0 {
			op = 2
		}
		msg = append(msg, wsframe.Client(i == len(cfg)-1, op, []byte{b})...)
		if i == 1 {
			msg = append(msg, wsframe.Client(true, 9, []byte("mid"))...)
		}
	}
	if _, err := nc.Write(msg); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	for {
		op, p, err := wsframe.Read(br)
		if err != nil {
			t.Fatal(err)
		}
		if op == 10 {
			continue // the pong
		}
		if ev := decodeEvent(t, 4, p); ev.Body.EventKind() != message.KindOk {
			t.Fatalf("fragmented Configure answered %s", describe(ev))
		}
		break
	}
	// A ping flood nobody reads the answers of: the server's pongs fill
	// the socket, and it must drop the connection rather than block.
	g0 := runtime.NumGoroutine()
	ping := wsframe.Client(true, 9, make([]byte, 125))
	flood := make(chan error, 1)
	go func() {
		buf := bytesRepeat(ping, 512)
		for {
			if _, err := nc.Write(buf); err != nil {
				flood <- err
				return
			}
		}
	}()
	select {
	case <-flood:
	case <-time.After(90 * time.Second):
		t.Fatal("the server still reads a ping flood whose pongs nobody reads")
	}
	check()
	waitMetric(t, ts, "monty_server_sessions_active 1")
	settles(t, "goroutines", g0, runtime.NumGoroutine)
}

func bytesRepeat(b []byte, n int) []byte {
	out := make([]byte, 0, len(b)*n)
	for range n {
		out = append(out, b...)
	}
	return out
}

// A client that announces a frame and goes away halfway through it, or
// sends a reserved opcode or a control frame over 125 bytes, ends only
// its own session.
func TestHostileBrokenFrames(t *testing.T) {
	ts := startServer(t, nil)
	check := victim(t, ts)
	fd0 := openFDs(t)
	for name, send := range map[string][]byte{
		"half a frame":    wsframe.Client(true, 2, make([]byte, 1000))[:500],
		"reserved opcode": wsframe.Client(true, 3, []byte("x")),
		"long ping":       wsframe.Client(true, 9, make([]byte, 200)),
		"unmasked":        {0x82, 0x01, 0x00},
		"rsv bits":        {0xf2, 0x81, 0, 0, 0, 0, 0},
		"fragmented ping": wsframe.Client(false, 9, []byte("x")),
	} {
		t.Run(name, func(t *testing.T) {
			nc, br := rawUpgrade(t, ts)
			if _, err := nc.Write(send); err != nil {
				t.Fatal(err)
			}
			if name == "half a frame" {
				nc.(*net.TCPConn).CloseWrite()
			}
			untilClosed(t, nc, br)
			nc.Close()
		})
	}
	check()
	waitMetric(t, ts, "monty_server_sessions_active 1")
	settles(t, "open descriptors", fd0, func() int { return openFDs(t) })
}

// Upgrades the WebSocket library refuses (a wrong version, no key, a
// subprotocol nobody offered to speak) take no place under the caps: with
// a cap of one session, a proper upgrade still gets in after many of them.
func TestHostileBadUpgradesTakeNoPlace(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxSessions = 1; c.MaxSessionsPerClient = 1 })
	addr := strings.TrimPrefix(ts.HTTP, "http://")
	for _, h := range []string{
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 12\r\n",
		"Sec-WebSocket-Version: 13\r\n",
		"Sec-WebSocket-Key: x\r\nSec-WebSocket-Version: 13\r\n",
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: http://evil.example\r\n",
	} {
		for range 3 {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(nc, "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+h+"\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
			nc.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode == http.StatusSwitchingProtocols || resp.StatusCode < 400 {
				t.Fatalf("%q: %d", h, resp.StatusCode)
			}
		}
	}
	// A subprotocol is not negotiated: the upgrade succeeds without one.
	c := dial(t, ts.URL, 4, ws.DialOptions{Header: http.Header{"Sec-WebSocket-Protocol": {"evil"}}})
	configure(t, c, 4, nil)
	if got := repr(t, c, "1 + 1"); got != "2" {
		t.Fatal(got)
	}
}

// A TLS client that connects and never finishes its handshake is dropped
// within the header timeout; the server keeps serving others meanwhile.
func TestHostileTLSHandshakeNeverFinishes(t *testing.T) {
	pki := newPKI(t)
	ts := startServer(t, func(c *Config) {
		c.TLS = &tls.Config{Certificates: []tls.Certificate{pki.server}, MinVersion: tls.VersionTLS12}
		c.ReadHeaderTimeout = 300 * time.Millisecond
	})
	addr := strings.TrimPrefix(ts.HTTP, "https://")
	var stalled []net.Conn
	for i := range 20 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		if i%2 == 1 {
			// Half a ClientHello record.
			nc.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01})
		}
		stalled = append(stalled, nc)
	}
	c := dial(t, ts.URL, 4, ws.DialOptions{TLSConfig: &tls.Config{RootCAs: pki.pool}})
	configure(t, c, 4, nil)
	if got := repr(t, c, "'served'"); got != "'served'" {
		t.Fatal(got)
	}
	for _, nc := range stalled {
		nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		start := time.Now()
		_, err := io.Copy(io.Discard, nc)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("a stalled TLS handshake was kept open %v", time.Since(start))
		}
	}
}

// Headers over the server's limit are refused with 431 before any
// upgrade.
func TestHostileHugeHeaders(t *testing.T) {
	ts := startServer(t, nil)
	check := victim(t, ts)
	nc, err := net.Dial("tcp", strings.TrimPrefix(ts.HTTP, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	go func() {
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n")
		for range 4096 {
			if _, err := io.WriteString(nc, "X-Pad: "+strings.Repeat("a", 1000)+"\r\n"); err != nil {
				return
			}
		}
	}()
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("4 MB of headers: %d", resp.StatusCode)
	}
	check()
	nc.Close()
	noLingering(t)
}

// The limits a client asks for are clamped to the ceilings however it
// asks (huge values, at either protocol the server speaks).
func TestHostileConfigureHugeLimits(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.MaxDuration = 500 * time.Millisecond
		c.MaxMemory = 16 << 20
		c.MaxRecursionDepth = 50
		c.TurnTimeout = time.Hour
	})
	huge := uint64(1) << 62
	for _, v := range []uint32{2, 4} {
		c := dial(t, ts.URL, v, ws.DialOptions{})
		l := &message.ResourceLimits{MaxDurationMicros: &huge, MaxMemoryBytes: &huge, MaxRecursionDepth: &huge, GCInterval: &huge}
		configure(t, c, v, l)
		wantPrefix(t, repr(t, c, "def f(n):\n    return f(n + 1)\nf(0)"), "Error RecursionError")
		wantPrefix(t, repr(t, c, "x = 'a' * (64 * 1024 * 1024)"), "Error MemoryError")
		start := time.Now()
		wantPrefix(t, repr(t, c, "while True:\n    pass"), "Error TimeoutError")
		if d := time.Since(start); d > 30*time.Second {
			t.Fatalf("protocol %d: the loop ran %v under a 500 ms ceiling", v, d)
		}
	}
}

// headerStatus sends a GET of path with pad bytes of one extra header and
// returns the status.
func headerStatus(t *testing.T, base, path string, pad int) int {
	t.Helper()
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Pad", strings.Repeat("a", pad))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Config.MaxHeaderBytes is the header cap: lowered, it refuses what the
// default takes (net/http reads 4 KiB past the cap before refusing, so
// the sizes keep clear of that slack).
func TestHostileHeaderCap(t *testing.T) {
	small := startServer(t, func(c *Config) { c.MaxHeaderBytes = 4 << 10 })
	def := startServer(t, nil)
	// An upgrade within the cap works.
	c := dial(t, small.URL, 4, ws.DialOptions{Header: http.Header{"X-Pad": {strings.Repeat("b", 2<<10)}}})
	configure(t, c, 4, nil)
	c.Close()
	if code := headerStatus(t, small.HTTP, "/healthz", 2<<10); code != http.StatusOK {
		t.Fatalf("2 KiB of headers under a 4 KiB cap: %d", code)
	}
	if code := headerStatus(t, small.HTTP, "/healthz", 16<<10); code != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("16 KiB of headers under a 4 KiB cap: %d, want 431", code)
	}
	if code := headerStatus(t, def.HTTP, "/healthz", 16<<10); code != http.StatusOK {
		t.Fatalf("16 KiB of headers under the default cap: %d", code)
	}
	if code := headerStatus(t, def.HTTP, "/healthz", 80<<10); code != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("80 KiB of headers under the default cap: %d, want 431", code)
	}
	noLingering(t)
}

// children returns the processes whose parent is this one, and how many
// of them are zombies (exited, not reaped).
func children(t *testing.T) (live, zombies int) {
	t.Helper()
	es, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	me := strconv.Itoa(os.Getpid())
	for _, e := range es {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after
		// its closing parenthesis.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[1] != me {
			continue
		}
		live++
		if f[0] == "Z" {
			zombies++
		}
	}
	return live, zombies
}

// Clients that leave mid-turn (a Close frame, a dropped socket), stop
// reading a print flood, or outlast the turn timeout cost nothing that
// outlives them: after each round the worker processes are what the pool
// counts (none left unreaped), and goroutines and descriptors come back
// to what the first round left, however many rounds run.
func TestHostileAttacksLeaveNothingBehind(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.MaxSessions = 2
		c.MaxDuration = time.Hour
		c.TurnTimeout = 2 * time.Second
		c.IdleTimeout = time.Second
	})
	round := func() {
		// Gone mid-turn, by Close frame and by a dropped socket.
		for _, drop := range []bool{false, true} {
			c := dialTCP(t, ts)
			c.send(t, &message.Configure{ProtocolVersion: 4})
			if _, _, err := c.c.Read(context.Background()); err != nil {
				t.Fatal(err)
			}
			c.send(t, &message.Feed{Code: "while True:\n    pass"})
			if drop {
				c.nc.Close()
			} else {
				c.c.Close(websocket.StatusNormalClosure, "")
			}
		}
		waitMetric(t, ts, "monty_server_sessions_active 0")
		// A print flood nobody reads, and a turn past the timeout.
		for _, code := range []string{"for i in range(100000):\n    print('x' * 10000)", "while True:\n    pass"} {
			c := dialTCP(t, ts)
			c.send(t, &message.Configure{ProtocolVersion: 4})
			if _, _, err := c.c.Read(context.Background()); err != nil {
				t.Fatal(err)
			}
			c.send(t, &message.Feed{Code: code})
			waitMetric(t, ts, "monty_server_sessions_active 0")
			c.c.CloseNow()
		}
		waitMetric(t, ts, "monty_server_workers_busy 0")
		if got := repr(t, dialConfigured(t, ts.URL, 4), "'next'"); got != "'next'" {
			t.Fatal(got)
		}
		waitMetric(t, ts, "monty_server_sessions_active 0")
		waitMetric(t, ts, "monty_server_workers_busy 0")
	}
	workersMatch := func() {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			live, zombies := children(t)
			want := ts.pool.Stat().Live
			if zombies == 0 && live == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d child processes (%d unreaped), the pool counts %d workers", live, zombies, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	round()
	workersMatch()
	g0, fd0 := runtime.NumGoroutine(), openFDs(t)
	t.Logf("baseline: %d goroutines, %d descriptors, %+v", g0, fd0, ts.pool.Stat())
	for range 3 {
		round()
		workersMatch()
	}
	t.Logf("end: %d goroutines, %d descriptors, %+v", runtime.NumGoroutine(), openFDs(t), ts.pool.Stat())
	settles(t, "goroutines", g0, runtime.NumGoroutine)
	settles(t, "open descriptors", fd0, func() int { return openFDs(t) })
}

// Requests out of the state table's order, before and after Configure,
// are answered (or end only their own session) and leave the session
// usable when the table says so.
func TestHostileRequestsOutOfOrder(t *testing.T) {
	ts := startServer(t, nil)
	check := victim(t, ts)
	c := dial(t, ts.URL, 4, ws.DialOptions{})
	// Before Configure: a resume with nothing suspended and a Dump.
	for _, req := range []message.Request{resumeBool(7, true), &message.Dump{}} {
		ev := do(t, c, req).Event
		if k := ev.Body.EventKind(); k != message.KindError && k != message.KindFatalError {
			t.Fatalf("%s before Configure answered %s", req.RequestKind(), describe(ev))
		}
		if ev.Body.EventKind() == message.KindFatalError {
			c = dial(t, ts.URL, 4, ws.DialOptions{})
		}
	}
	configure(t, c, 4, nil)
	// Configured, idle: resumes of every kind with nothing suspended.
	for _, req := range []message.Request{resumeBool(7, true), &message.AbortFeed{Exception: message.NewException("RuntimeError", "x")}} {
		ev := do(t, c, req).Event
		if ev.Body.EventKind() != message.KindError {
			t.Fatalf("%s while idle answered %s", req.RequestKind(), describe(ev))
		}
	}
	if got := repr(t, c, "'in order again'"); got != "'in order again'" {
		t.Fatal(got)
	}
	check()
}

// A client that sends thousands of requests without waiting for the
// answers, and never reads them, ends only its own session: the answers
// fill its socket, the server's write stalls past the idle timeout, and
// the worker goes back to the pool.
func TestHostilePipelinedRequestsNeverRead(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.IdleTimeout = 500 * time.Millisecond })
	nc, _ := rawUpgrade(t, ts)
	nc.(*net.TCPConn).SetReadBuffer(4096)
	var burst []byte
	burst = append(burst, wsframe.Client(true, 2, encodeRequest(t, 4, &message.Configure{ProtocolVersion: 4}))...)
	feed := wsframe.Client(true, 2, encodeRequest(t, 4, &message.Feed{Code: "print('y' * 1000)"}))
	for range 2000 {
		burst = append(burst, feed...)
	}
	go nc.Write(burst)
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="idle_timeout"} 1`)
	waitMetric(t, ts, "monty_server_sessions_active 0")
	waitMetric(t, ts, "monty_server_workers_busy 0")
	if got := repr(t, dialConfigured(t, ts.URL, 4), "'next'"); got != "'next'" {
		t.Fatal(got)
	}
}

// deflated is n zero bytes compressed as a permessage-deflate message
// body (RFC 7692: raw DEFLATE, the final empty block's 00 00 ff ff left
// off): a few KiB that inflate to n.
func deflated(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := flate.NewWriter(&buf, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for ; n > 0; n -= len(zeros) {
		w.Write(zeros[:min(n, len(zeros))])
	}
	w.Flush()
	return bytes.TrimSuffix(buf.Bytes(), []byte{0, 0, 0xff, 0xff})
}

// Compression is never negotiated, however a client offers it, so a
// compressed message (RSV1 set) is a protocol error the server refuses
// from its header: a decompression bomb, a few KiB inflating to 16 MiB,
// is never inflated. (Were compression on, the read limit would count the
// inflated bytes: such a message would end with 1009 once past the cap.)
func TestHostileDeflateNotNegotiated(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxFrameLen = 1 << 20 })
	check := victim(t, ts)
	bomb := deflated(t, 16<<20)
	for _, offer := range []string{
		"permessage-deflate",
		"permessage-deflate; client_no_context_takeover; server_no_context_takeover",
		"permessage-deflate; client_max_window_bits, x-webkit-deflate-frame",
	} {
		nc, err := net.Dial("tcp", strings.TrimPrefix(ts.HTTP, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"+
			"Sec-WebSocket-Extensions: "+offer+"\r\n\r\n")
		br := bufio.NewReader(nc)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("%q: upgrade answered %d", offer, resp.StatusCode)
		}
		if ext := resp.Header.Values("Sec-WebSocket-Extensions"); len(ext) != 0 {
			t.Fatalf("%q: the server accepted extensions %q", offer, ext)
		}
		f := wsframe.Client(true, 2, bomb)
		f[0] |= 0x40 // RSV1: compressed
		go nc.Write(f)
		if code := untilClosed(t, nc, br); code != int(websocket.StatusProtocolError) {
			t.Fatalf("%q: a compressed message closed with %d, want %d", offer, code, websocket.StatusProtocolError)
		}
	}
	check()
}

// A client that keeps bytes coming without ever finishing a request (half
// a frame and silence, or a message that never ends: empty continuation
// fragments and pings trickling in) is still waiting for its next request
// as far as the idle timeout goes: it is closed with 4000, before and
// after Configure, however busy its socket.
func TestHostileTrickleNeverFinishes(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.IdleTimeout = time.Second })
	configured := func(t *testing.T, nc net.Conn, br *bufio.Reader) {
		if _, err := nc.Write(wsframe.Client(true, 2, encodeRequest(t, 4, &message.Configure{ProtocolVersion: 4}))); err != nil {
			t.Fatal(err)
		}
		nc.SetReadDeadline(time.Now().Add(60 * time.Second))
		if _, p, err := wsframe.Read(br); err != nil || decodeEvent(t, 4, p).Body.EventKind() != message.KindOk {
			t.Fatalf("Configure: %v", err)
		}
	}
	ended := 0
	for _, c := range []struct {
		name    string
		first   []byte
		trickle []byte // sent every 20 ms until the server closes
	}{
		{"half a frame", wsframe.Client(true, 2, make([]byte, 1000))[:500], nil},
		{"endless message", wsframe.Client(false, 2, []byte{0x1a}), wsframe.Client(false, 0, nil)},
		{"pings in an endless message", wsframe.Client(false, 2, []byte{0x1a}),
			append(wsframe.Client(true, 9, []byte("keepalive")), wsframe.Client(false, 0, nil)...)},
	} {
		for _, configure := range []bool{false, true} {
			t.Run(c.name+"/configured="+strconv.FormatBool(configure), func(t *testing.T) {
				nc, br := rawUpgrade(t, ts)
				if configure {
					configured(t, nc, br)
				}
				if _, err := nc.Write(c.first); err != nil {
					t.Fatal(err)
				}
				stop := make(chan struct{})
				defer close(stop)
				if c.trickle != nil {
					go func() {
						tick := time.NewTicker(20 * time.Millisecond)
						defer tick.Stop()
						for {
							select {
							case <-stop:
								return
							case <-tick.C:
								if _, err := nc.Write(c.trickle); err != nil {
									return
								}
							}
						}
					}()
				}
				if code := untilClosed(t, nc, br); code != CloseIdleTimeout {
					t.Fatalf("closed with %d, want %d", code, CloseIdleTimeout)
				}
				ended++
			})
		}
	}
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="idle_timeout"} `+strconv.Itoa(ended))
}

// A client that never reads while its worker prints without end costs the
// server nothing that grows: once the socket is full the server's write
// blocks, the printer with it, the relay stops reading the worker's pipe
// and the worker blocks on its stdout, so the server allocates nothing
// more and starts no goroutine (the idle and turn timeouts, which would
// end the stall, are an hour here). When the client goes, the worker is
// freed.
func TestHostileNeverReadsHoldsNothing(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.IdleTimeout = time.Hour
		c.TurnTimeout = time.Hour
		c.MaxDuration = time.Hour
	})
	nc, br := rawUpgrade(t, ts)
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	if _, err := nc.Write(wsframe.Client(true, 2, encodeRequest(t, 4, &message.Configure{ProtocolVersion: 4}))); err != nil {
		t.Fatal(err)
	}
	if _, p, err := wsframe.Read(br); err != nil || decodeEvent(t, 4, p).Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %v", err)
	}
	nc.(*net.TCPConn).SetReadBuffer(4096)
	var ms runtime.MemStats
	allocated := func() uint64 {
		runtime.ReadMemStats(&ms)
		return ms.TotalAlloc
	}
	live := func() uint64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	heap0, goroutines0 := live(), runtime.NumGoroutine()
	if _, err := nc.Write(wsframe.Client(true, 2, encodeRequest(t, 4, &message.Feed{Code: "while True:\n    print('x' * 100000)"}))); err != nil {
		t.Fatal(err)
	}
	// The stall: five periods in a row in which the server allocates
	// under 1 MiB (an unread print stream at the worker's pace is
	// hundreds of MiB a second).
	prev, flat, g0 := allocated(), 0, 0
	for deadline := time.Now().Add(30 * time.Second); flat < 5; {
		if time.Now().After(deadline) {
			t.Fatalf("the server never stops working for a client that does not read: %d MiB in the last 100 ms, %d goroutines",
				(allocated()-prev)>>20, runtime.NumGoroutine())
		}
		time.Sleep(100 * time.Millisecond)
		cur := allocated()
		if cur-prev >= 1<<20 {
			flat = 0
		} else if flat++; flat == 1 {
			g0 = runtime.NumGoroutine()
		}
		prev = cur
	}
	// A few may come and go (a print flush timer waiting for the blocked
	// printer); one per unsent frame would be hundreds.
	if g := runtime.NumGoroutine(); g > g0+8 || g > goroutines0+16 {
		t.Errorf("goroutines grew: %d before the feed, %d as the stall began, %d now", goroutines0, g0, g)
	}
	// What the stalled session holds: a few frames, not the stream.
	if h := live(); h > heap0+32<<20 {
		t.Errorf("live heap %d MiB during the stall, %d MiB before the feed", h>>20, heap0>>20)
	}
	nc.Close()
	waitMetric(t, ts, "monty_server_sessions_active 0")
	waitMetric(t, ts, "monty_server_workers_busy 0")
}

// fragmented is one binary message of body, sent as continuation
// fragments of n bytes each.
func fragmented(body []byte, n int) []byte {
	var out []byte
	for i := 0; i < len(body); i += n {
		op := byte(0)
		if i == 0 {
			op = 2
		}
		end := min(i+n, len(body))
		out = append(out, wsframe.Client(end == len(body), op, body[i:end])...)
	}
	return out
}

// The frame cap counts a whole message, however it is fragmented: a
// request under the cap in 1 KiB fragments (beyond the WebSocket
// library's own default limit of 32 KiB) is served, and one over it in
// fragments each far under it ends the session with 1009.
func TestHostileFragmentedOversize(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxFrameLen = 64 << 10 })
	check := victim(t, ts)
	nc, br := rawUpgrade(t, ts)
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	for _, req := range []message.Request{
		&message.Configure{ProtocolVersion: 4},
		&message.Feed{Code: "len('" + strings.Repeat("a", 60<<10) + "')"},
	} {
		if _, err := nc.Write(fragmented(encodeRequest(t, 4, req), 1<<10)); err != nil {
			t.Fatal(err)
		}
		op, p, err := wsframe.Read(br)
		if err != nil {
			t.Fatal(err)
		}
		if op != 2 {
			t.Fatalf("%s in fragments: the server sent opcode %d (% x)", req.RequestKind(), op, p)
		}
		if got := describe(decodeEvent(t, 4, p)); got != "Ok" && got != strconv.Itoa(60<<10) {
			t.Fatalf("%s in fragments answered %s", req.RequestKind(), got)
		}
	}
	over := fragmented(encodeRequest(t, 4, &message.Feed{Code: strings.Repeat("#", 1<<20)}), 1<<10)
	go nc.Write(over)
	if code := untilClosed(t, nc, br); code != CloseTooLarge {
		t.Fatalf("1 MiB in 1 KiB fragments under a 64 KiB cap: close %d, want %d", code, CloseTooLarge)
	}
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="oversize"} 1`)
	check()
}

// A browser's Origin must name the host it asked for (a cross-site page
// is refused with 403, before the WebSocket exists: with client
// certificates, a browser would otherwise lend a page its user's
// identity), and no subprotocol is ever agreed, whatever a client offers:
// the 101 names none.
func TestHostileOriginsAndSubprotocols(t *testing.T) {
	ts := startServer(t, nil)
	addr := strings.TrimPrefix(ts.HTTP, "http://")
	for _, c := range []struct {
		header string
		want   int
	}{
		{"Origin: http://localhost\r\n", http.StatusSwitchingProtocols},
		{"Origin: https://LOCALHOST\r\n", http.StatusSwitchingProtocols},
		{"Origin: null\r\n", http.StatusForbidden},
		{"Origin: file://\r\n", http.StatusForbidden},
		{"Origin: http://localhost:1\r\n", http.StatusForbidden},
		{"Origin: http://localhost.evil.example\r\n", http.StatusForbidden},
		{"Origin: http://evil.example\r\nOrigin: http://localhost\r\n", http.StatusForbidden},
		{"Origin: ://\r\n", http.StatusForbidden},
		{"Sec-WebSocket-Protocol: monty, chat\r\n", http.StatusSwitchingProtocols},
		{"Sec-WebSocket-Protocol: monty\r\nSec-WebSocket-Protocol: " + strings.Repeat("p,", 4000) + "p\r\n", http.StatusSwitchingProtocols},
		{"Sec-WebSocket-Protocol: \r\n", http.StatusSwitchingProtocols},
		{"Sec-WebSocket-Protocol: a\x01b\r\n", http.StatusBadRequest},
	} {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"+c.header+"\r\n")
		nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		nc.Close()
		if err != nil {
			t.Fatalf("%q: %v", c.header, err)
		}
		if resp.StatusCode != c.want {
			t.Errorf("%.80q: %d, want %d", c.header, resp.StatusCode, c.want)
		}
		if p := resp.Header.Values("Sec-WebSocket-Protocol"); len(p) != 0 {
			t.Errorf("%.80q: the server agreed to subprotocol %q", c.header, p)
		}
	}
	waitMetric(t, ts, "monty_server_sessions_active 0")
	waitMetric(t, ts, `monty_server_refusals_total{reason="upgrade_rejected"} 6`)
}

// A client whose frames break the WebSocket protocol (a reserved opcode,
// an unmasked frame) is a protocol violation, not a client that went
// away: the session's outcome says so, as it does for a text message.
func TestHostileBrokenFramesAreProtocolViolations(t *testing.T) {
	ts := startServer(t, nil)
	frames := [][]byte{
		wsframe.Client(true, 3, []byte("x")), // reserved opcode
		{0x82, 0x01, 0x00},                   // unmasked
	}
	for _, send := range frames {
		nc, br := rawUpgrade(t, ts)
		if _, err := nc.Write(send); err != nil {
			t.Fatal(err)
		}
		untilClosed(t, nc, br)
		nc.Close()
	}
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="protocol_violation"} `+strconv.Itoa(len(frames)))
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="client_dropped"} 0`)
}

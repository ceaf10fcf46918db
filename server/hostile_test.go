package server

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport/ws"
)

// victim is a configured session whose globals must survive whatever the
// hostile clients do.
func victim(t *testing.T, ts *testServer) func() {
	t.Helper()
	c := dialConfigured(t, ts.URL, 4)
	repr(t, c, "v = 10")
	return func() {
		t.Helper()
		if got := repr(t, c, "v + 1"); got != "11" {
			t.Fatalf("the victim session was disturbed: %s", got)
		}
	}
}

func rawDial(t *testing.T, ts *testServer) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func rawCloseCode(t *testing.T, c *websocket.Conn) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

func TestHostileTextFrame(t *testing.T) {
	ts := startServer(t, nil)
	check := victim(t, ts)
	c := rawDial(t, ts)
	ctx := context.Background()
	if err := c.Write(ctx, websocket.MessageText, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if code := rawCloseCode(t, c); code != CloseProtocol {
		t.Fatalf("text frame: close %d, want %d", code, CloseProtocol)
	}
	check()
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="protocol_violation"} 1`)
}

func TestHostileOversizeFrame(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxFrameLen = 64 << 10 })
	check := victim(t, ts)
	c := rawDial(t, ts)
	c.SetReadLimit(-1)
	// The frame header announces more than the cap: the server refuses it
	// from the header, before reading (let alone buffering) the body.
	w, err := c.Writer(context.Background(), websocket.MessageBinary)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w.Write(make([]byte, 1<<20))
		w.Close()
	}()
	if code := rawCloseCode(t, c); code != CloseTooLarge {
		t.Fatalf("oversize: close %d, want %d", code, CloseTooLarge)
	}
	check()
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="oversize"} 1`)
}

func TestHostileGarbageBeforeConfigure(t *testing.T) {
	ts := startServer(t, nil)
	check := victim(t, ts)
	c := dial(t, ts.URL, 4, ws.DialOptions{})
	for _, b := range [][]byte{{0x00}, {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, []byte(strings.Repeat("\x08\x01", 100))} {
		if err := c.Conn.WriteFrame(b); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Conn.ReadFrame(); err != nil {
			t.Fatal(err)
		}
	}
	configure(t, c, 4, nil)
	if got := repr(t, c, "'still fine'"); got != "'still fine'" {
		t.Fatal(got)
	}
	check()
}

func TestHostileSlowUpgradeHeaders(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.ReadHeaderTimeout = 300 * time.Millisecond })
	check := victim(t, ts)
	addr := strings.TrimPrefix(ts.HTTP, "http://")
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	io.WriteString(nc, "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n") // never finished
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	start := time.Now()
	_, err = bufio.NewReader(nc).ReadString('\n')
	if err == nil || time.Since(start) > 20*time.Second {
		t.Fatalf("the server kept an unfinished upgrade open: %v after %v", err, time.Since(start))
	}
	check()
}

// A client that pipelines plain HTTP requests and never reads the
// responses fills its socket; the server's blocked response write must
// time out and drop the connection rather than hold it (and a goroutine)
// forever.
func TestHostileHTTPClientNeverReads(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.ReadHeaderTimeout = 300 * time.Millisecond })
	check := victim(t, ts)
	addr := strings.TrimPrefix(ts.HTTP, "http://")
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.(*net.TCPConn).SetReadBuffer(1024)
	dropped := make(chan error, 1)
	go func() {
		req := []byte("GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
		for {
			if _, err := nc.Write(req); err != nil {
				dropped <- err
				return
			}
		}
	}()
	select {
	case <-dropped:
	case <-time.After(60 * time.Second):
		nc.Close()
		<-dropped
		t.Fatal("the server still holds a connection whose client never reads")
	}
	check()
}

func TestHostileThousandsOfConnections(t *testing.T) {
	const maxSessions = 4
	ts := startServer(t, func(c *Config) {
		c.MaxSessions = maxSessions
		c.MaxSessionsPerClient = -1
		c.ReadHeaderTimeout = 2 * time.Second
		// The subject is the session cap: the connection caps, which
		// would refuse most of these from one address first, are
		// TestHostileConnectionsPerPeer's and ServerWide's.
		c.MaxConnections, c.MaxConnectionsPerClient = -1, -1
	})
	check := victim(t, ts)
	addr := strings.TrimPrefix(ts.HTTP, "http://")
	// 1000 upgrades at once, plus 500 connections that never send a byte.
	var idle []net.Conn
	for range 500 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, nc)
	}
	defer func() {
		for _, nc := range idle {
			nc.Close()
		}
	}()
	var wg sync.WaitGroup
	var accepted, refused, other atomic.Int64
	var mu sync.Mutex
	var open []*websocket.Conn
	sem := make(chan struct{}, 64)
	for range 1000 {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, resp, err := websocket.Dial(ctx, ts.URL, nil)
			switch {
			case err == nil:
				accepted.Add(1)
				mu.Lock()
				open = append(open, c)
				mu.Unlock()
			case resp != nil && resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
				refused.Add(1)
			default:
				other.Add(1)
			}
		}()
	}
	wg.Wait()
	if got := accepted.Load(); got > maxSessions-1 {
		t.Errorf("%d upgrades accepted beside the victim, cap %d", got, maxSessions)
	}
	if other.Load() != 0 || refused.Load()+accepted.Load() != 1000 {
		t.Errorf("accepted %d, refused %d, other %d", accepted.Load(), refused.Load(), other.Load())
	}
	check()
	for _, c := range open {
		c.CloseNow()
	}
	waitMetric(t, ts, "monty_server_sessions_active 1")
	check()
}

func TestHostileClientStopsReading(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.IdleTimeout = 500 * time.Millisecond })
	c := rawDial(t, ts)
	c.SetReadLimit(-1)
	ctx := context.Background()
	for _, req := range []message.Request{&message.Configure{ProtocolVersion: 4}, &message.Feed{Code: "for i in range(2000):\n    print('x' * 100000)"}} {
		if err := c.Write(ctx, websocket.MessageBinary, encodeRequest(t, 4, req)); err != nil {
			t.Fatal(err)
		}
		if _, ok := req.(*message.Configure); ok {
			if _, _, err := c.Read(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Never read: the prints fill the socket, the server's write stalls and
	// the session ends, and its worker goes back to serving others.
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="idle_timeout"} 1`)
	if got := repr(t, dialConfigured(t, ts.URL, 4), "'next'"); got != "'next'" {
		t.Fatal(got)
	}
}

// tcpClient is a raw WebSocket client whose TCP connection the test can
// drop without a Close frame.
type tcpClient struct {
	c  *websocket.Conn
	nc net.Conn
}

func dialTCP(t *testing.T, ts *testServer) *tcpClient {
	t.Helper()
	tc := &tcpClient{}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		tc.nc = c
		return c, err
	}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, ts.URL, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	tc.c = c
	t.Cleanup(func() { c.CloseNow() })
	return tc
}

func (tc *tcpClient) send(t *testing.T, req message.Request) {
	t.Helper()
	if err := tc.c.Write(context.Background(), websocket.MessageBinary, encodeRequest(t, 4, req)); err != nil {
		t.Fatal(err)
	}
}

// A client that goes away while its turn runs (its own turn timeout sends
// a Close frame; a crashed client's kernel resets the connection) frees
// its worker and its place under the caps at once, not when the turn
// would have ended (here: never within the test).
func TestHostileClientGoneMidTurn(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.MaxSessions = 1
		c.MaxDuration = time.Hour
		c.TurnTimeout = time.Hour
	})
	for i, leave := range []struct {
		name    string
		f       func(*tcpClient)
		outcome string
	}{
		{"close frame", func(tc *tcpClient) { tc.c.Close(websocket.StatusNormalClosure, "turn timed out") }, OutcomeOK},
		{"tcp drop", func(tc *tcpClient) { tc.nc.Close() }, OutcomeClientDropped},
	} {
		t.Run(leave.name, func(t *testing.T) {
			waitMetric(t, ts, "monty_server_sessions_active 0")
			c := dialTCP(t, ts)
			c.send(t, &message.Configure{ProtocolVersion: 4})
			if _, _, err := c.c.Read(context.Background()); err != nil {
				t.Fatal(err)
			}
			c.send(t, &message.Feed{Code: "while True:\n    pass"})
			// The feed has passed the gate.
			waitMetric(t, ts, `monty_server_frames_total{direction="in"} `+strconv.Itoa(4*i+2))
			leave.f(c)
			waitMetric(t, ts, "monty_server_sessions_active 0")
			waitMetric(t, ts, "monty_server_workers_busy 0")
			waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="`+leave.outcome+`"} 1`)
			if got := repr(t, dialConfigured(t, ts.URL, 4), "'next'"); got != "'next'" {
				t.Fatal(got)
			}
		})
	}
}

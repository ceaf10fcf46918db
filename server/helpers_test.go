package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

var testKey = []byte("0123456789abcdef-test-dump-key")

// testServer is a server on a loopback port with the real worker behind it.
type testServer struct {
	*Server
	URL  string
	HTTP string
	done chan error
	// Bearer, when set, is sent with every /metrics request of waitMetric.
	Bearer string
}

func startServer(t testing.TB, mutate func(*Config)) *testServer {
	t.Helper()
	bin := testenv.Worker(t)
	cfg := Config{
		DumpKey: testKey,
		Worker:  worker.Config{Binary: bin},
		Prewarm: 1,
		Logger:  slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	ts := &testServer{Server: srv, URL: "ws://" + l.Addr().String() + "/", HTTP: "http://" + l.Addr().String(), done: make(chan error, 1)}
	if cfg.TLS != nil {
		ts.URL = "wss://" + l.Addr().String() + "/"
		ts.HTTP = "https://" + l.Addr().String()
	}
	go func() { ts.done <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-ts.done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ts
}

func dial(t testing.TB, url string, version uint32, opts ws.DialOptions) *rawClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := dialRaw(ctx, url, version, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func do(t testing.TB, c *rawClient, req message.Request) *rawTurn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	turn, err := c.Do(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", req.RequestKind(), err)
	}
	return turn
}

func configure(t testing.TB, c *rawClient, version uint32, limits *message.ResourceLimits) {
	t.Helper()
	turn := do(t, c, &message.Configure{ProtocolVersion: version, ScriptName: "main.py", Limits: limits})
	if _, ok := turn.Event.Body.(*message.Ok); !ok {
		t.Fatalf("Configure answered %s", describe(turn.Event))
	}
}

// repr feeds code and returns the repr of its result (or the error text).
func repr(t testing.TB, c *rawClient, code string) string {
	t.Helper()
	return describe(do(t, c, &message.Feed{Code: code}).Event)
}

func describe(ev *message.ChildEvent) string {
	switch b := ev.Body.(type) {
	case *message.Complete:
		return b.Values.Repr(b.Value)
	case *message.Error:
		return "Error " + b.Exception.Type + ": " + b.Exception.Msg()
	case *message.OsCall:
		return "OsCall " + b.Path
	}
	return ev.Body.EventKind().String()
}

func wantPrefix(t testing.TB, got, prefix string) {
	t.Helper()
	if !strings.HasPrefix(got, prefix) {
		t.Fatalf("got %q, want prefix %q", got, prefix)
	}
}

// closeCode waits for the server to end the session and returns its close
// code.
func closeCode(t testing.TB, c *rawClient) int {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := c.Conn.ReadFrame()
		done <- err
	}()
	select {
	case err := <-done:
		var ce *ws.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("read: %v, want a close", err)
		}
		return ce.Code
	case <-time.After(60 * time.Second):
		t.Fatal("the server did not close the session")
	}
	return 0
}

func resumeBool(callID uint32, v bool) *message.ResumeCall {
	rc := &message.ResumeCall{CallID: callID, Result: &message.ExtResult{Kind: message.ResultReturn}}
	rc.Result.Value = rc.Values.Add(value.Bool(v))
	return rc
}

func get(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func encodeRequest(t testing.TB, version uint32, req message.Request) []byte {
	t.Helper()
	cd, ok := codec.ForVersion(version)
	if !ok {
		t.Fatalf("no codec %d", version)
	}
	b, err := cd.AppendRequest(nil, &message.ParentRequest{Body: req})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitMetric polls /metrics until a line equals want.
func waitMetric(t testing.TB, ts *testServer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		body = ts.metrics(t)
		for _, line := range strings.Split(body, "\n") {
			if line == want {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("metric %q never appeared; /metrics has:\n%s", want, grepMonty(body))
}

// metrics returns the body of /metrics, sending ts.Bearer when set.
func (ts *testServer) metrics(t testing.TB) string {
	t.Helper()
	req, err := http.NewRequest("GET", ts.HTTP+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Bearer != "" {
		req.Header.Set("Authorization", "Bearer "+ts.Bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

func grepMonty(body string) string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "monty_") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func decodeEvent(t testing.TB, version uint32, b []byte) *message.ChildEvent {
	t.Helper()
	cd, _ := codec.ForVersion(version)
	ev, err := cd.DecodeEvent(b, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

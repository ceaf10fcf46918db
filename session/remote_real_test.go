package session_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
	"go.opentelemetry.io/otel/trace"
)

func startRemote(t testing.TB, l session.RemoteLauncher, cfg session.Config) *session.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := session.Start(ctx, session.Launch{Launcher: l, ProtocolVersion: 4}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRemoteRunAndSingleUse(t *testing.T) {
	_, url := servertest.Start(t, nil)
	var out strings.Builder
	s := startRemote(t, session.RemoteLauncher{URL: url}, session.Config{Print: session.Writers(&out, io.Discard)})
	ctx := context.Background()
	reg := session.NewRegistry()
	reg.MustRegister("double", func(ctx context.Context, n int) (int, error) { return 2 * n, nil })
	r, err := s.Run(ctx, "print('hi')\ndouble(21)", session.WithFunctions(reg))
	if err != nil {
		t.Fatal(err)
	}
	if r.Repr() != "42" || out.String() != "hi\n" {
		t.Fatalf("got %s, printed %q", r.Repr(), out.String())
	}
	if err := s.Reset(ctx); !errors.Is(err, session.ErrSingleUse) {
		t.Fatalf("Reset on a remote session: %v", err)
	}
	if err := s.Reusable(); !errors.Is(err, session.ErrSingleUse) {
		t.Fatalf("Reusable on a remote session: %v", err)
	}
	if _, err := s.Detach(ctx); !errors.Is(err, session.ErrSingleUse) {
		t.Fatalf("Detach on a remote session: %v", err)
	}
	// Still usable after the refusals.
	if r, err := s.Run(ctx, "1 + 1"); err != nil || r.Repr() != "2" {
		t.Fatalf("after refusals: %v %v", r, err)
	}
}

func TestRemoteHeaderValidationBeforeDial(t *testing.T) {
	// Nothing listens here: a header error must come before any I/O.
	l := session.RemoteLauncher{URL: "ws://127.0.0.1:1/", Dial: ws.DialOptions{Header: http.Header{"Bad Name": {"x"}}}}
	_, err := session.Start(context.Background(), session.Launch{Launcher: l, ProtocolVersion: 4}, session.Config{})
	var he *ws.HeaderError
	if !errors.As(err, &he) {
		t.Fatalf("want a *ws.HeaderError, got %v", err)
	}
	l.Dial.Header = http.Header{"X-Token": {"a\nb"}}
	if _, err := session.Start(context.Background(), session.Launch{Launcher: l, ProtocolVersion: 4}, session.Config{}); !errors.As(err, &he) {
		t.Fatalf("want a *ws.HeaderError for a bad value, got %v", err)
	}
}

func TestRemoteDialFailureIsDialError(t *testing.T) {
	l := session.RemoteLauncher{URL: "ws://127.0.0.1:1/"}
	_, err := session.Start(context.Background(), session.Launch{Launcher: l, ProtocolVersion: 4}, session.Config{})
	var de *ws.DialError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "ws://127.0.0.1:1/") {
		t.Fatalf("want a *ws.DialError naming the URL, got %v", err)
	}
}

func TestRemoteDropMidTurnIsDisconnected(t *testing.T) {
	srv, url := servertest.Start(t, nil)
	printed := make(chan struct{})
	var once sync.Once
	s := startRemote(t, session.RemoteLauncher{URL: url}, session.Config{
		LineBufferedPrint: true,
		Print:             func(message.PrintStream, string) { once.Do(func() { close(printed) }) },
	})
	go func() {
		<-printed
		srv.Close()
	}()
	// The server goes away while the code runs: no turn ender arrives.
	_, err := s.Run(context.Background(), "print('started')\nn = 0\nwhile True:\n    n += 1")
	var de *session.DisconnectedError
	if !errors.As(err, &de) || !errors.Is(err, session.ErrDisconnected) {
		t.Fatalf("want a DisconnectedError, got %v", err)
	}
	if de.URL != url || de.Code != 1001 {
		t.Fatalf("url %q, close code %d (%s)", de.URL, de.Code, de.Reason)
	}
	if _, err := s.Run(context.Background(), "1"); !errors.Is(err, session.ErrClosed) || !errors.Is(err, session.ErrDisconnected) {
		t.Fatalf("after the drop: %v", err)
	}
}

func TestRemoteShutdownWithoutResume(t *testing.T) {
	srv, url := servertest.Start(t, nil)
	s := startRemote(t, session.RemoteLauncher{URL: url, NoResume: true}, session.Config{})
	ctx := context.Background()
	if _, err := s.Run(ctx, "x = 41"); err != nil {
		t.Fatal(err)
	}
	srv.Drain()
	_, err := s.Run(ctx, "x + 1")
	var se *session.ShutdownError
	if !errors.As(err, &se) || !errors.Is(err, session.ErrShutdown) || len(se.Dump) == 0 {
		t.Fatalf("want a ShutdownError with a dump, got %v", err)
	}
	if !errors.Is(s.Cause(), session.ErrShutdown) {
		t.Fatalf("cause %v", s.Cause())
	}
}

func TestRemoteShutdownResumesElsewhere(t *testing.T) {
	a, urlA := servertest.Start(t, nil)
	_, urlB := servertest.Start(t, nil)
	s := startRemote(t, session.RemoteLauncher{URL: urlA, Pick: func() string { return urlB }}, session.Config{})
	ctx := context.Background()
	if _, err := s.Run(ctx, "x = 41"); err != nil {
		t.Fatal(err)
	}
	a.Drain()
	r, err := s.Run(ctx, "x + 1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Repr() != "42" || s.Resumed() != 1 {
		t.Fatalf("got %s after %d resumes", r.Repr(), s.Resumed())
	}
	if r, err := s.Run(ctx, "x * 2"); err != nil || r.Repr() != "82" {
		t.Fatalf("after resume: %v %v", r, err)
	}
}

func TestRemoteSuspendedSessionResumesAtTheSameCall(t *testing.T) {
	a, urlA := servertest.Start(t, nil)
	_, urlB := servertest.Start(t, nil)
	s := startRemote(t, session.RemoteLauncher{URL: urlA, Pick: func() string { return urlB }}, session.Config{})
	ctx := context.Background()
	ev, err := s.Feed(ctx, "y = 1\nask(20) + ask(1) + y")
	if err != nil {
		t.Fatal(err)
	}
	fc, ok := ev.Body.(*message.FunctionCall)
	if !ok || fc.FunctionName != "ask" {
		t.Fatalf("want ask(), got %v", ev.Body)
	}
	a.Drain()
	ev, err = s.Resume(ctx, session.Return(20))
	if err != nil {
		t.Fatal(err)
	}
	fc2, ok := ev.Body.(*message.FunctionCall)
	if !ok || fc2.CallID <= fc.CallID || s.Resumed() != 1 {
		t.Fatalf("after resume: %v (resumes %d)", ev.Body, s.Resumed())
	}
	if n := s.SuspensionCount(); n != 2 {
		t.Fatalf("suspension count %d, want 2 (carried over)", n)
	}
	ev, err = s.Resume(ctx, session.Return(1))
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := ev.Body.(*message.Complete); !ok || c == nil {
		t.Fatalf("want Complete, got %v", ev.Body)
	}
}

// outcomes records the outcome of every session the server ends.
type outcomes struct {
	mu  sync.Mutex
	got []string
	ch  chan struct{}
}

func (o *outcomes) Enabled(context.Context, slog.Level) bool { return true }
func (o *outcomes) WithAttrs([]slog.Attr) slog.Handler       { return o }
func (o *outcomes) WithGroup(string) slog.Handler            { return o }
func (o *outcomes) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "session end" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "outcome" {
			o.mu.Lock()
			o.got = append(o.got, a.Value.String())
			o.mu.Unlock()
			o.ch <- struct{}{}
		}
		return true
	})
	return nil
}

func (o *outcomes) next(t *testing.T) string {
	t.Helper()
	select {
	case <-o.ch:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not end the session")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.got[len(o.got)-1]
}

// Every way a remote session ends sends a Close frame: the server records
// "ok" (a Close frame came) rather than "client_dropped" (a bare TCP
// disconnect).
func TestRemoteCloseFrameOnEveryTeardown(t *testing.T) {
	o := &outcomes{ch: make(chan struct{}, 16)}
	// The server notices a Close frame even while a turn runs (it ends the
	// session and stops the worker at once); the duration ceiling is a
	// backstop for the busy loops below.
	_, url := servertest.Start(t, func(c *server.Config) {
		c.Logger = slog.New(o)
		c.MaxDuration = time.Second
	})
	snoop, snoopURL := newCloseSnoop(t, url)
	l := session.RemoteLauncher{URL: snoopURL}
	cases := []struct {
		name string
		end  func(t *testing.T, s *session.Session)
	}{
		{"close idle", func(t *testing.T, s *session.Session) { s.Close() }},
		{"kill idle", func(t *testing.T, s *session.Session) { s.Kill(); s.Close() }},
		{"abandoned while suspended", func(t *testing.T, s *session.Session) {
			if _, err := s.Feed(context.Background(), "f(1)"); err != nil {
				t.Fatal(err)
			}
			s.Close()
		}},
		{"timed-out turn", func(t *testing.T, s *session.Session) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, err := s.Run(ctx, "while True:\n    pass")
			if !errors.Is(err, session.ErrTimeout) {
				t.Fatalf("want a timeout, got %v", err)
			}
			s.Close()
		}},
		{"cancelled turn", func(t *testing.T, s *session.Session) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			if _, err := s.Run(ctx, "while True:\n    pass"); err == nil {
				t.Fatal("a cancelled turn succeeded")
			}
			s.Close()
		}},
		{"shutdown", func(t *testing.T, s *session.Session) {
			if err := s.Shutdown(context.Background()); err != nil {
				t.Logf("Shutdown: %v", err)
			}
			s.Close()
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startRemote(t, l, session.Config{})
			c.end(t, s)
			if code := snoop.next(t); code != 1000 && code != 1001 {
				t.Fatalf("client Close frame with code %d", code)
			}
			// Mid-turn or between turns, the server sees the Close
			// frame ("ok").
			if got := o.next(t); got != "ok" {
				t.Fatalf("server outcome %q, want ok (a Close frame)", got)
			}
		})
	}
}

// A request of exactly the frame cap goes through; one byte more is
// refused before sending and the session lives on.
func TestRemoteFrameCapEdges(t *testing.T) {
	const limit = 64 << 10
	_, url := servertest.Start(t, nil)
	s := startRemote(t, session.RemoteLauncher{URL: url, Dial: ws.DialOptions{MaxFrameLen: limit}}, session.Config{})
	ctx := context.Background()
	// Find the code length whose Feed frame is exactly the cap.
	base := "x = '"
	var tl *session.RequestTooLargeError
	_, err := s.Feed(ctx, base+strings.Repeat("a", limit)+"'")
	if !errors.As(err, &tl) || tl.Len <= limit {
		t.Fatalf("oversized Feed: %v", err)
	}
	over := tl.Len - limit
	code := base + strings.Repeat("a", limit-over) + "'"
	if _, err := s.Run(ctx, code); err != nil {
		t.Fatalf("a Feed of exactly the cap: %v", err)
	}
	code = base + strings.Repeat("a", limit-over+1) + "'"
	_, err = s.Run(ctx, code)
	if !errors.As(err, &tl) || tl.Len != limit+1 || tl.Max != limit {
		t.Fatalf("a Feed of cap+1: %v", err)
	}
	if r, err := s.Run(ctx, "len(x)"); err != nil || r.Repr() != strconv.Itoa(limit-over) {
		t.Fatalf("after the refusal: %v %v", r, err)
	}
}

// closeSnoop is a TCP proxy in front of a server that parses the client's
// WebSocket frames and reports the code of each Close frame it forwards.
type closeSnoop struct {
	l     net.Listener
	codes chan int
}

func newCloseSnoop(t *testing.T, target string) (*closeSnoop, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &closeSnoop{l: l, codes: make(chan int, 16)}
	host := strings.TrimSuffix(strings.TrimPrefix(target, "ws://"), "/")
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", host)
			if err != nil {
				c.Close()
				continue
			}
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(c, u); c.Close() }()
			go func() { defer wg.Done(); p.scan(c, u); u.Close() }()
		}
	}()
	t.Cleanup(func() { l.Close(); wg.Wait() })
	return p, "ws://" + l.Addr().String() + "/"
}

// scan forwards the client's bytes: first the HTTP upgrade request, then
// WebSocket frames, whose headers it parses.
func (p *closeSnoop) scan(c net.Conn, u net.Conn) {
	r := bufio.NewReader(c)
	for { // upgrade request headers
		line, err := r.ReadString('\n')
		if _, werr := u.Write([]byte(line)); err != nil || werr != nil {
			return
		}
		if line == "\r\n" {
			break
		}
	}
	for {
		var h [2]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return
		}
		n := uint64(h[1] & 0x7f)
		ext := []byte{}
		switch n {
		case 126:
			ext = make([]byte, 2)
		case 127:
			ext = make([]byte, 8)
		}
		if _, err := io.ReadFull(r, ext); err != nil {
			return
		}
		if len(ext) == 2 {
			n = uint64(binary.BigEndian.Uint16(ext))
		} else if len(ext) == 8 {
			n = binary.BigEndian.Uint64(ext)
		}
		var mask [4]byte
		if h[1]&0x80 != 0 {
			if _, err := io.ReadFull(r, mask[:]); err != nil {
				return
			}
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return
		}
		if h[0]&0x0f == 0x8 { // Close
			code := -1
			if n >= 2 {
				code = int(payload[0]^mask[0])<<8 | int(payload[1]^mask[1])
			}
			p.codes <- code
		}
		for _, b := range [][]byte{h[:], ext, mask[:len(mask)*int(h[1]>>7)], payload} {
			if _, err := u.Write(b); err != nil {
				return
			}
		}
	}
}

func (p *closeSnoop) next(t *testing.T) int {
	t.Helper()
	select {
	case c := <-p.codes:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no Close frame from the client")
		return 0
	}
}

// Run code on a remote Monty server (`montygo serve`). If the server
// drains, the session redials URL (behind a load balancer, another
// replica) and resumes there from the dump it was handed; set Pick to
// choose the replica yourself. ProtocolVersion 4 spares the first session
// the dial that offers 5, which `montygo serve` refuses (it serves 4 and
// 2). (Not run by go test: it needs a server.)
func ExampleRemoteLauncher() {
	ctx := context.Background()
	l := session.RemoteLauncher{
		URL:  "ws://127.0.0.1:8000/",
		Dial: ws.DialOptions{Header: http.Header{"Authorization": {"Bearer my-token"}}},
	}
	s, err := session.Start(ctx, session.Launch{Launcher: l, ProtocolVersion: 4}, session.Config{})
	if err != nil {
		return // no server listening
	}
	defer s.Close()
	r, err := s.Run(ctx, "6 * 7")
	if err != nil {
		var de *session.DisconnectedError
		if errors.As(err, &de) {
			_ = de.Code // the server's close code, -1 without a Close frame
		}
		return
	}
	_ = r.Repr()
}

// Pick naming a draining replica (503) is asked again; one that never
// offers anything else ends the session with the ShutdownError, dump and
// the resume failure inside.
func TestRemoteResumeRetriesAndGivesUp(t *testing.T) {
	a, urlA := servertest.Start(t, nil)
	_, urlB := servertest.Start(t, nil)
	picks := 0
	s := startRemote(t, session.RemoteLauncher{URL: urlA, Pick: func() string {
		picks++
		if picks == 1 {
			return urlA
		}
		return urlB
	}}, session.Config{})
	stuck := startRemote(t, session.RemoteLauncher{URL: urlA, Pick: func() string { return urlA }}, session.Config{})
	ctx := context.Background()
	for _, x := range []*session.Session{s, stuck} {
		if _, err := x.Run(ctx, "x = 41"); err != nil {
			t.Fatal(err)
		}
	}
	a.Drain()
	if r, err := s.Run(ctx, "x + 1"); err != nil || r.Repr() != "42" || picks != 2 {
		t.Fatalf("resume after a refused pick: %v %v (picks %d)", r, err, picks)
	}
	_, err := stuck.Run(ctx, "x + 1")
	var se *session.ShutdownError
	var de *ws.DialError
	if !errors.As(err, &se) || len(se.Dump) == 0 || !errors.As(err, &de) || de.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("want a ShutdownError carrying the dump and the 503, got %v", err)
	}
}

// The launch context's span travels as the W3C traceparent, beside the
// User-Agent and the caller's headers (the last duplicate wins).
func TestRemoteUpgradeHeaders(t *testing.T) {
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	tid, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	sid, _ := trace.SpanIDFromHex("b7ad6b7169203331")
	ctx := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	l := session.RemoteLauncher{URL: "ws" + strings.TrimPrefix(srv.URL, "http") + "/",
		Dial: ws.DialOptions{Header: http.Header{"X-Token": {"old", "new"}}}}
	_, err := session.Start(ctx, session.Launch{Launcher: l, ProtocolVersion: 4}, session.Config{})
	var de *ws.DialError
	if !errors.As(err, &de) || de.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("want the 503 as a *ws.DialError, got %v", err)
	}
	h := <-got
	if tp := h.Get("Traceparent"); tp != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" {
		t.Fatalf("traceparent %q", tp)
	}
	if h.Get("X-Token") != "new" || !strings.HasPrefix(h.Get("User-Agent"), "gomonty/") {
		t.Fatalf("headers %v", h)
	}
}

// A session idle when its server's drain grace runs out is handed its
// state: the server sends its signed dump in a ShutdownDump before it
// closes the connection, and the session's next request takes it as its
// answer (the request did not run) and resumes elsewhere. Before, the
// server closed such a session with 1001 alone and its state was lost:
// the next request failed as disconnected.
func TestRemoteIdleSessionResumesAfterTheDrainGrace(t *testing.T) {
	a, urlA := servertest.Start(t, func(c *server.Config) { c.DrainGrace = 100 * time.Millisecond })
	_, urlB := servertest.Start(t, nil)
	s := startRemote(t, session.RemoteLauncher{URL: urlA, Pick: func() string { return urlB }}, session.Config{})
	ctx := context.Background()
	if _, err := s.Run(ctx, "x = 41"); err != nil {
		t.Fatal(err)
	}
	if err := a.Shutdown(ctx); err != nil { // waits out the grace, then closes
		t.Fatal(err)
	}
	r, err := s.Run(ctx, "x + 1")
	if err != nil {
		t.Fatalf("the first request after the drain: %v", err)
	}
	if r.Repr() != "42" || s.Resumed() != 1 {
		t.Fatalf("got %s after %d resumes, want 42 after 1", r.Repr(), s.Resumed())
	}
}

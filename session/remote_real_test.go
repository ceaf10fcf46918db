package session_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
)

// remoteServer runs the real server on a loopback port with the real
// worker behind it and returns its ws:// URL.
func remoteServer(t testing.TB, mutate func(*server.Config)) (*server.Server, string) {
	t.Helper()
	cfg := server.Config{
		DumpKey: []byte("0123456789abcdef-session-remote-test"),
		Worker:  worker.Config{Binary: testenv.Worker(t)},
		Prewarm: 1,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv, err := server.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv, "ws://" + l.Addr().String() + "/"
}

func startRemote(t testing.TB, l session.RemoteLauncher, cfg session.Config) *session.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := session.Start(ctx, session.Launch{Launcher: l}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRemoteRunAndSingleUse(t *testing.T) {
	_, url := remoteServer(t, nil)
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
	srv, url := remoteServer(t, nil)
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
	srv, url := remoteServer(t, nil)
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
	a, urlA := remoteServer(t, nil)
	_, urlB := remoteServer(t, nil)
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
	a, urlA := remoteServer(t, nil)
	_, urlB := remoteServer(t, nil)
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

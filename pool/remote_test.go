package pool_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

func remoteServer(t *testing.T) (*server.Server, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv, err := server.New(ctx, server.Config{
		DumpKey: []byte("0123456789abcdef-pool-remote-test"),
		Worker:  worker.Config{Binary: testenv.Worker(t)},
		Prewarm: 1,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
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

func TestRemoteSpreadsBacksOffAndResumes(t *testing.T) {
	a, urlA := remoteServer(t)
	_, urlB := remoteServer(t)
	dead := "ws://127.0.0.1:1/"
	r := pool.NewRemote(pool.RemoteConfig{
		Endpoints: []pool.Endpoint{{URL: dead}, {URL: urlA}, {URL: urlB}},
		Backoff:   pool.Backoff{Initial: time.Hour, Max: time.Hour},
	})
	ctx := context.Background()

	// The dead endpoint is tried first (all at 0), fails to dial and is
	// backed off; the two sessions spread across a and b.
	s1, err := r.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	s2, err := r.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	st := r.Stat()
	if st[0].Failures != 1 || st[0].BackedOffUntil.IsZero() || st[1].Outstanding != 1 || st[2].Outstanding != 1 {
		t.Fatalf("stat after two checkouts: %+v", st)
	}
	onA := s1
	if s1.Endpoint() != urlA {
		onA = s2
	}
	if err := onA.Reset(ctx); !errors.Is(err, session.ErrSingleUse) {
		t.Fatalf("Reset of a remote checkout: %v", err)
	}
	if _, err := onA.Run(ctx, "x = 41"); err != nil {
		t.Fatal(err)
	}

	// a drains: the session on it resumes on b with nothing lost, and new
	// checkouts skip a (503) and back it off.
	a.Drain()
	res, err := onA.Run(ctx, "x + 1")
	if err != nil || res.Repr() != "42" || onA.Resumed() != 1 {
		t.Fatalf("after the drain: %v %v (resumes %d)", res, err, onA.Resumed())
	}
	s3, err := r.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s3.Endpoint() != urlB {
		t.Fatalf("checkout during a's drain went to %s", s3.Endpoint())
	}
	st = r.Stat()
	if st[1].Failures != 1 || st[1].BackedOffUntil.IsZero() {
		t.Fatalf("a not backed off: %+v", st[1])
	}
	s3.Close()
	s1.Close()
	s2.Close()
	for _, e := range r.Stat() {
		if e.Outstanding != 0 {
			t.Fatalf("outstanding after Close: %+v", e)
		}
	}
}

func TestRemoteNoEndpoint(t *testing.T) {
	r := pool.NewRemote(pool.RemoteConfig{Endpoints: []pool.Endpoint{{URL: "ws://127.0.0.1:1/"}}})
	_, err := r.Checkout(context.Background(), session.Config{})
	if !errors.Is(err, pool.ErrNoEndpoint) {
		t.Fatalf("got %v", err)
	}
	if _, err := r.Checkout(context.Background(), session.Config{}); !errors.Is(err, pool.ErrNoEndpoint) {
		t.Fatalf("backed off: %v", err)
	}
}

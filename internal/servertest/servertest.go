// Package servertest runs the real Monty server (package server, what
// `montygo serve` runs) for the tests of its clients, session's remote
// sessions and pool's remote endpoints: on a loopback port, with the real
// worker behind it. Test support only.
package servertest

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
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/worker"
)

// Start runs a server with one prewarmed worker (the one testenv finds), a
// fixed dump key and a silent logger, as mutate (if not nil) changes that
// configuration, and returns it with its ws:// URL. When the test ends the
// server is closed, and Serve must have ended with http.ErrServerClosed.
func Start(t testing.TB, mutate func(*server.Config)) (*server.Server, string) {
	t.Helper()
	cfg := server.Config{
		DumpKey: []byte("0123456789abcdef-servertest"),
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

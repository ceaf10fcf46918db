package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/session"
)

// A server on a loopback port, and one session through it.
func Example() {
	ctx := context.Background()
	srv, err := server.New(ctx, server.Config{
		DumpKey: []byte("a key shared by every replica"),
		Logger:  slog.New(slog.NewJSONHandler(io.Discard, nil)),
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(l)

	// A parent reaches it with session.RemoteLauncher (or a pool with
	// Endpoints): one connection per session.
	rl := session.RemoteLauncher{URL: "ws://" + l.Addr().String() + "/"}
	s, err := session.Start(ctx, session.Launch{Launcher: rl}, session.Config{Print: session.Writers(os.Stdout, os.Stderr)})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	r, err := s.Run(ctx, "print('hello'); 6 * 7")
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Repr())
	fmt.Println(s.Reset(ctx)) // a connection is one session
	// Output:
	// hello
	// 42
	// monty session: a remote session is single-use (no Reset, no Detach)
}

package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/gomonty/monty/internal/remoteclient"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/transport/ws"
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

	c, err := remoteclient.Dial(ctx, "ws://"+l.Addr().String()+"/", 4, ws.DialOptions{})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for _, req := range []message.Request{
		&message.Configure{ProtocolVersion: 4},
		&message.Feed{Code: "print('hello'); 6 * 7"},
		&message.Reset{}, // refused: a connection is one session
	} {
		turn, err := c.Do(ctx, req)
		if err != nil {
			panic(err)
		}
		switch ev := turn.Event.Body.(type) {
		case *message.Complete:
			fmt.Print(turn.Stdout)
			fmt.Println(ev.Values.Repr(ev.Value))
		case *message.Error:
			fmt.Println(ev.Exception.Type+":", ev.Exception.Msg())
		default:
			fmt.Println(ev.EventKind())
		}
	}
	// Output:
	// Ok
	// hello
	// 42
	// RuntimeError: protocol violation: Reset is refused by this server (open a new connection for a new session)
}

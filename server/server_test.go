package server

import (
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport/ws"
)

func TestSessionProtocols4And2(t *testing.T) {
	ts := startServer(t, nil)
	for _, v := range []uint32{4, 2} {
		c := dial(t, ts.URL, v, ws.DialOptions{})
		configure(t, c, v, nil)
		turn := do(t, c, &message.Feed{Code: "print('hi'); x = 40\nx + 2"})
		if got := describe(turn.Event); got != "42" || turn.Stdout != "hi\n" {
			t.Fatalf("v%d: %q stdout %q", v, got, turn.Stdout)
		}
		if got := repr(t, c, "x"); got != "40" {
			t.Fatalf("v%d: globals: %s", v, got)
		}
	}
}

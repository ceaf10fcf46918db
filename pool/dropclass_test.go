package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// droppedByEndpoint tells the endpoint's failures (a connection lost
// without a Close frame, a server failing, restarting or going away, a
// broken protocol) from the session's own ends (its worker's crash or
// limits, its timeouts, a request the server could not take, its
// caller's cancel) by the error that ended the session, whatever wraps
// it.
func TestDroppedByEndpoint(t *testing.T) {
	closed := func(code int, reason string) error {
		return &session.DisconnectedError{URL: "ws://x/", Code: code, Reason: reason, Op: "waiting for a reply",
			Err: &ws.CloseError{Code: code, Reason: reason, Err: io.ErrUnexpectedEOF}}
	}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"no close frame", closed(-1, ""), true},
		{"normal closure mid-session", closed(1000, ""), true},
		{"going away", closed(1001, "server shutting down"), true},
		{"websocket protocol error", closed(1002, ""), true},
		{"no status", closed(1005, ""), true},
		{"internal error", closed(1011, "session failed"), true},
		{"internal error, no reason", closed(1011, ""), true},
		{"service restart", closed(1012, ""), true},
		{"try again later", closed(1013, "worker pool unhealthy"), true},
		{"bad gateway", closed(1014, ""), true},
		{"wrapped", fmt.Errorf("turn: %w", closed(-1, "")), true},
		{"protocol violation", &session.ProtocolError{Msg: "worker sent another event after its answer", Err: session.ErrStrayEvent}, true},
		{"websocket violation", &session.ProtocolError{Msg: "invalid frame from worker", Err: ws.ErrProtocol}, true},
		{"malformed frame", &session.ProtocolError{Msg: "invalid payload from worker", Err: fmt.Errorf("arena: %w", codec.ErrMalformed)}, true},

		{"worker crashed", closed(1011, "worker failed: monty worker crashed (exit status 4)"), false},
		{"unsupported data", closed(1003, ""), false},
		{"invalid payload", closed(1007, ""), false},
		{"policy violation", closed(1008, "bad request"), false},
		{"too large", closed(1009, ""), false},
		{"extension", closed(1010, ""), false},
		{"idle timeout", closed(4000, "idle timeout"), false},
		{"session timeout", closed(4001, "session timeout"), false},
		{"turn timeout", closed(4002, "turn timeout"), false},
		{"memory limit", closed(4003, "worker memory limit"), false},
		{"duration backstop", closed(4004, "max_duration overrun"), false},
		{"unknown private code", closed(4099, ""), false},
		{"registered code", closed(3000, ""), false},
		{"frame over the cap", &session.ProtocolError{Msg: "invalid frame from worker", Err: fmt.Errorf("read: %w", frame.ErrTooLarge)}, false},
		{"over the decode budget", &session.ProtocolError{Msg: "invalid payload from worker", Err: fmt.Errorf("list: %w", codec.ErrBudget)}, false},
		{"announced fatal error", &session.RemoteCrashError{URL: "ws://x/", Message: "panicked"}, false},
		{"drained, resume lost", &session.ShutdownError{URL: "ws://x/", Resume: closed(-1, "")}, false},
		{"caller's deadline", &session.TimeoutError{Killed: true}, false},
		{"caller's cancel", context.Canceled, false},
		{"other", errors.New("something"), false},
		{"none", nil, false},
	} {
		if got := droppedByEndpoint(c.err); got != c.want {
			t.Errorf("%s: droppedByEndpoint(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

package pool_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// TestNoEndpointErrorIsOneLine: a checkout that no endpoint serves
// failed with errors.Join(ErrNoEndpoint, last), whose text is two lines
// (a log line or an HTTP error body broke in the middle). It is one line
// now, which still matches ErrNoEndpoint and the last failure (the dial's
// *ws.DialError) and quotes that failure.
func TestNoEndpointErrorIsOneLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close() // nothing listens there now
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:   true,
		Endpoints: []pool.Endpoint{{URL: "ws://127.0.0.1:1/ws"}, {URL: "ws://" + closed + "/ws"}},
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	_, err = p.Checkout(context.Background(), session.Config{})
	var de *ws.DialError
	if !errors.Is(err, pool.ErrNoEndpoint) || !errors.As(err, &de) {
		t.Fatalf("checkout: %v, want ErrNoEndpoint and a *ws.DialError", err)
	}
	text := err.Error()
	if strings.Contains(text, "\n") {
		t.Errorf("the error is more than one line: %q", text)
	}
	if !strings.HasPrefix(text, pool.ErrNoEndpoint.Error()) || !strings.Contains(text, de.Error()) {
		t.Errorf("%q does not say %q and then the last failure %q", text, pool.ErrNoEndpoint, de)
	}
}

package pool_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// A refused upgrade is the endpoint's answer even when the caller gives
// up while its body is still being read: the server said 403 (a montygo
// server's host_rejected), and would say it to every checkout. The
// endpoint is counted a dial failure and backed off, and the refusal
// reported (EventEndpointFailed), as when the body is read to its end;
// the checkout still fails with the caller's cancellation, carrying the
// *ws.DialError with the status. Before, the cancellation wrapped into
// the DialError made it read as the caller's alone: no failure counted,
// no backoff, so every checkout went on dialling the refusing endpoint.
func TestRefusalCutShortByCancelBacksOff(t *testing.T) {
	u, answered := rawEndpoint(t, func(c net.Conn) bool {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return false
		}
		req.Body.Close()
		// The status and the first bytes of a body that never ends.
		c.Write([]byte("HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\nhost_re"))
		return true
	})
	var ev events
	p, err := pool.New(context.Background(), pool.Config{
		NoLocal:         true,
		Endpoints:       []pool.Endpoint{{Name: "forbidding", URL: u}},
		EndpointBackoff: pool.Backoff{Initial: time.Hour, Max: time.Hour},
		Metrics:         ev.record,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer closeWithin(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c := <-answered
		answered <- c
		// Once the dial has the 403 and waits for the rest of its body
		// (the WebSocket library reads some of a refusal's body to quote
		// it), the caller gives up.
		awaitStack("io.ReadAll")
		cancel()
	}()
	before := time.Now()
	_, err = p.Checkout(ctx, session.Config{})
	var de *ws.DialError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &de) || de.StatusCode != http.StatusForbidden {
		t.Fatalf("checkout = %v, want the caller's cancellation with the DialError of the 403", err)
	}
	st := p.Stat().Endpoints[0]
	if st.DialFailures != 1 || st.Outstanding != 0 || st.BackedOffUntil.Sub(before) < 59*time.Minute {
		t.Fatalf("a 403 cut short by the caller's cancel: %+v, want one dial failure and an hour's backoff", st)
	}
	if n := len(ev.of(pool.EventEndpointFailed)); n != 1 {
		t.Fatalf("%d EventEndpointFailed for the refusal, want 1", n)
	}
}

// awaitStack waits until some goroutine's stack holds both
// "coder/websocket.dial" and frame.
func awaitStack(frame string) {
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, "coder/websocket.dial") && strings.Contains(g, frame) {
				return
			}
		}
	}
}

//go:build unix

package conform

import (
	"context"
	"testing"

	"github.com/gomonty/monty/transport/ws"
)

// closedConn is a connection whose every read reports err; the methods a
// read does not call are the nil embedded ones'.
type closedConn struct {
	conn
	err error
}

func (c closedConn) ReadFrame() ([]byte, error) { return nil, c.err }

// A WebSocket worker's normal closure is a clean end of stream, as EOF is
// a stream worker's: it matches io.EOF through errors.Is, not by ==.
func TestExpectEOFAcceptsAWebSocketNormalClosure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		clean bool
	}{
		{"normal closure", &ws.CloseError{Code: 1000}, true},
		{"going away", &ws.CloseError{Code: 1001, Reason: "drain"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &rt{ctx: context.Background(), status: Pass}
			s := &sess{t: r, c: closedConn{err: tc.err}}
			done := make(chan struct{})
			go func() { // Failf ends its goroutine
				defer close(done)
				s.ExpectEOF("after the close")
			}()
			<-done
			if failed := r.status == Fail; failed == tc.clean {
				t.Fatalf("ExpectEOF on %v: status %v (%s), want clean=%v", tc.err, r.status, r.detail, tc.clean)
			}
		})
	}
}

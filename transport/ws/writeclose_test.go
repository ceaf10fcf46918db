//go:build unix

package ws

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A peer that refuses a frame over its cap sends Close 1009 and drops the
// connection while the rest of the frame is still on its way, so the
// sender's write fails (broken pipe, reset). WriteFrame reported that
// failure as a connection dropped without a Close frame although the
// peer's Close had arrived: the reader had not read it yet. WriteFrame
// now waits for the reader after a failed write, and reports the Close.
func TestWriteCutShortByThePeersCloseReportsIt(t *testing.T) {
	const limit = 1024
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Accept(w, r, AcceptOptions{MaxFrameLen: limit})
		if err != nil {
			return
		}
		c.ReadFrame() // over the cap: Close 1009 and the socket dropped
		c.Close()
	}))
	defer srv.Close()
	for i := range 10 {
		c, err := Dial(ctx10(t), "ws"+strings.TrimPrefix(srv.URL, "http"), DialOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// More than the socket buffers hold, as a rule: the write is
		// still going when the peer drops the connection.
		err = c.WriteFrame(make([]byte, 32<<20))
		if err == nil { // the socket buffers held it all after all
			_, err = c.ReadFrame()
		}
		c.Close()
		var ce *CloseError
		if !errors.As(err, &ce) || ce.Code != 1009 {
			t.Fatalf("attempt %d: WriteFrame = %v, want the peer's Close 1009", i, err)
		}
	}
}

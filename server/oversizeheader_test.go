//go:build unix

package server

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/wsframe"
	"github.com/gomonty/monty/message"
)

// A frame whose header announces more than the cap is refused from that
// header (1009), as docs/PROTOCOL.md's close-code table says: the server
// does not wait for the body. A client that sends the header and then
// stalls (or trickles the body) was held until the idle timeout and
// ended with 4000, the WebSocket library counting the cap against the
// bytes of the body as they came. Announced over several fragments, the
// message's total counts.
func TestOversizeRefusedFromTheHeader(t *testing.T) {
	const limit = 64 << 10
	ts := startServer(t, func(c *Config) {
		c.MaxFrameLen = limit
		c.IdleTimeout = 10 * time.Minute // far beyond the test's wait
	})
	header := func(fin bool, op byte, n uint64) []byte {
		b := []byte{op, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0} // 64-bit length, zero mask key
		if fin {
			b[0] |= 0x80
		}
		binary.BigEndian.PutUint64(b[2:10], n)
		return b
	}
	for _, tc := range []struct {
		name  string
		bytes func(t *testing.T) []byte
	}{
		{"one frame", func(*testing.T) []byte { return header(true, 2, limit+1) }},
		{"after a Configure", func(t *testing.T) []byte {
			b := wsframe.Client(true, 2, encodeRequest(t, 4, &message.Configure{ProtocolVersion: 4}))
			return append(b, header(true, 2, 1<<30)...)
		}},
		{"fragments", func(*testing.T) []byte {
			b := append(header(false, 2, limit/2), make([]byte, limit/2)...)
			return append(b, header(true, 0, limit/2+1)...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, br := rawUpgrade(t, ts)
			if _, err := nc.Write(tc.bytes(t)); err != nil {
				t.Fatal(err)
			}
			nc.SetReadDeadline(time.Now().Add(30 * time.Second))
			code := 0
			for code == 0 {
				op, p, err := wsframe.Read(br)
				if err != nil {
					if ne, ok := err.(net.Error); ok && ne.Timeout() {
						t.Fatal("the server waited for the body of a frame announced over the cap")
					}
					t.Fatalf("connection ended without a Close frame: %v", err)
				}
				if op == 8 && len(p) >= 2 {
					code = int(binary.BigEndian.Uint16(p))
				}
			}
			if code != CloseTooLarge {
				t.Fatalf("close code %d, want %d", code, CloseTooLarge)
			}
		})
	}
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="oversize"} 3`)
}

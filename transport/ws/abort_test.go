//go:build unix

package ws

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

// Abort on an accepted connection whose client never reads, a write to
// it stuck on the client's full window, resets the connection: the
// client gets what its socket already holds and then ECONNRESET, and the
// stuck write fails. Under TLS too (the hijacked connection is a
// *tls.Conn, the TCP socket under it reached through NetConn).
func TestAbortResetsAPeerThatStoppedReading(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		name := "plain"
		if useTLS {
			name = "TLS"
		}
		t.Run(name, func(t *testing.T) {
			conns := make(chan *Conn, 1)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c, err := Accept(w, r, AcceptOptions{}); err == nil {
					conns <- c
				}
			})
			srv := httptest.NewUnstartedServer(h)
			if useTLS {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			tcp, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer tcp.Close()
			tcp.(*net.TCPConn).SetReadBuffer(4096)
			nc := tcp
			if useTLS {
				cfg := srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
				cfg.ServerName = "example.com" // the test certificate's name
				nc = tls.Client(tcp, cfg)
			}
			nc.SetDeadline(time.Now().Add(60 * time.Second))
			io.WriteString(nc, "GET / HTTP/1.1\r\nHost: example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
				"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
			br := bufio.NewReader(nc)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("upgrade: %v %v", resp, err)
			}
			c := <-conns
			// More than the sockets between the two ends hold: the write
			// sticks, the client never reading.
			wrote := make(chan error, 1)
			go func() { wrote <- c.WriteFrame(make([]byte, 32<<20)) }()
			if _, err := br.Peek(1); err != nil { // the write has begun
				t.Fatal(err)
			}
			c.Abort(4000, "client not reading")
			if err := <-wrote; err == nil {
				t.Fatal("the write to a client that never read succeeded")
			}
			n, err := io.Copy(io.Discard, br)
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("the client read %d bytes, then %v; want ECONNRESET", n, err)
			}
		})
	}
}

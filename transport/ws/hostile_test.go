package ws

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/wsframe"
)

// handServer answers every upgrade request by hand: answer gets the
// connection and the request's Sec-WebSocket-Key, writes what it will
// and returns; the connection is then closed. It returns the ws:// URL.
func handServer(t *testing.T, answer func(rw *bufio.ReadWriter, key string)) string {
	t.Helper()
	return handServerReq(t, func(rw *bufio.ReadWriter, r *http.Request) { answer(rw, r.Header.Get("Sec-WebSocket-Key")) })
}

// handServerReq is handServer with the whole upgrade request.
func handServerReq(t *testing.T, answer func(rw *bufio.ReadWriter, r *http.Request)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			br := bufio.NewReader(c)
			if req, err := http.ReadRequest(br); err == nil {
				rw := bufio.NewReadWriter(br, bufio.NewWriter(c))
				answer(rw, req)
				rw.Flush()
			}
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-served
	})
	return "ws://" + ln.Addr().String() + "/"
}

// switching writes the head of a 101 that accepts key, without the blank
// line that ends it.
func switching(rw *bufio.ReadWriter, key string) {
	fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n", wsframe.Accept(key))
}

// A server's answer to the upgrade is read whole before anything else
// happens, and Go's HTTP transport allows 10 MB of response headers: a
// hostile server could make every dial (a pool redials an endpoint again
// and again) hold megabytes of junk header lines as strings. The
// header block is capped at maxResponseHeader; a 101 past it fails the
// dial with a *DialError, one well within it still connects.
func TestHugeResponseHeadersFailTheDial(t *testing.T) {
	junk := "X-Junk: " + strings.Repeat("j", 1000) + "\r\n"
	for _, tc := range []struct {
		name  string
		bytes int
		ok    bool
	}{
		{"within", maxResponseHeader / 2, true},
		{"2 MiB", 2 << 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := handServer(t, func(rw *bufio.ReadWriter, key string) {
				switching(rw, key)
				for n := 0; n < tc.bytes; n += len(junk) {
					if _, err := rw.WriteString(junk); err != nil {
						return
					}
				}
				rw.WriteString("\r\n")
			})
			c, err := Dial(ctx10(t), u, DialOptions{})
			if c != nil {
				c.Close()
			}
			if tc.ok {
				if err != nil {
					t.Fatalf("Dial with %d bytes of headers: %v", tc.bytes, err)
				}
				return
			}
			var de *DialError
			if !errors.As(err, &de) || de.StatusCode != 0 || !strings.Contains(err.Error(), "exceeded") {
				t.Fatalf("Dial with %d bytes of headers = %v, want a *DialError for headers over the cap", tc.bytes, err)
			}
		})
	}
}

// A wss:// server whose certificate does not verify (self-signed, or for
// another name) fails the dial with a *DialError wrapping the
// certificate's *tls.CertificateVerificationError, unless the caller's
// TLSConfig trusts it: the certificate is checked as Go's TLS client
// checks it, never skipped by default.
func TestUntrustedCertificateFailsTheDial(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := websocket.Accept(w, r, nil); err == nil {
			c.CloseNow()
		}
	}))
	defer srv.Close()
	u := "wss" + strings.TrimPrefix(srv.URL, "https")
	trusted := srv.Client().Transport.(*http.Transport).TLSClientConfig
	otherName := trusted.Clone()
	otherName.ServerName = "elsewhere.example" // the certificate names example.com
	for _, tc := range []struct {
		name string
		cfg  *tls.Config
	}{
		{"no config", nil},
		{"empty config", &tls.Config{}},
		{"wrong name", otherName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Dial(ctx10(t), u, DialOptions{TLSConfig: tc.cfg})
			if c != nil {
				c.Close()
			}
			var de *DialError
			var cv *tls.CertificateVerificationError
			if !errors.As(err, &de) || !errors.As(err, &cv) {
				t.Fatalf("Dial = %v, want a *DialError wrapping a *tls.CertificateVerificationError", err)
			}
		})
	}
	c, err := Dial(ctx10(t), u, DialOptions{TLSConfig: trusted})
	if err != nil {
		t.Fatalf("Dial trusting the server's certificate: %v", err)
	}
	c.Close()
}

// Compression is never negotiated: the upgrade offers no
// permessage-deflate, a 101 that turns it on anyway is refused, and a
// message marked compressed (RSV1) breaks the protocol and ends the
// connection unread, so a
// server cannot send a small message that inflates past the frame cap
// (a deflate bomb) for the client to inflate.
func TestCompressionIsNeverNegotiated(t *testing.T) {
	// 8 MiB of zeros deflate to a few kilobytes.
	var bomb bytes.Buffer
	fw, _ := flate.NewWriter(&bomb, flate.BestCompression)
	fw.Write(make([]byte, 8<<20))
	fw.Flush()
	compressed := wsframe.Server(true, 2, bomb.Bytes()[:bomb.Len()-4]) // without the 00 00 ff ff tail, as RFC 7692 sends it
	compressed[0] |= 0x40                                              // RSV1: "this message is compressed"
	offers := make(chan string, 2)
	u := handServerReq(t, func(rw *bufio.ReadWriter, r *http.Request) {
		offers <- r.Header.Get("Sec-WebSocket-Extensions")
		switching(rw, r.Header.Get("Sec-WebSocket-Key"))
		if r.URL.Path == "/agree" {
			rw.WriteString("Sec-WebSocket-Extensions: permessage-deflate\r\n")
		}
		rw.WriteString("\r\n")
		rw.Write(compressed)
		rw.Flush()
		rw.ReadByte() // until the client leaves
	})
	c, err := Dial(ctx10(t), u+"agree", DialOptions{MaxFrameLen: 1 << 20})
	if c != nil {
		c.Close()
	}
	var de *DialError
	if !errors.As(err, &de) || de.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("Dial to a server that turns compression on = %v, want a *DialError with its 101", err)
	}
	c, err = Dial(ctx10(t), u, DialOptions{MaxFrameLen: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b, err := c.ReadFrame()
	if !errors.Is(err, ErrProtocol) || b != nil {
		t.Fatalf("ReadFrame of a compressed message = %d bytes, %v; want no frame and an error matching ErrProtocol", len(b), err)
	}
	for range 2 {
		if offer := <-offers; offer != "" {
			t.Fatalf("the upgrade offered extensions %q, want none", offer)
		}
	}
}

// A Close frame's payload is at most 125 bytes (RFC 6455 §5.5): one that
// claims a megabyte of close reason breaks the protocol, and ends the
// connection with an error matching ErrProtocol, without the client
// reading the megabyte into its error. (The WebSocket library refuses
// it; this test pins that down.)
func TestOversizedCloseFrameEndsTheConnection(t *testing.T) {
	u := handServer(t, func(rw *bufio.ReadWriter, key string) {
		switching(rw, key)
		rw.WriteString("\r\n")
		rw.Write(wsframe.Server(true, 8, append([]byte{0x0f, 0xa0}, bytes.Repeat([]byte("r"), 1<<20)...)))
		rw.Flush()
		rw.ReadByte() // until the client leaves
	})
	c, err := Dial(ctx10(t), u, DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.ReadFrame()
	if !errors.Is(err, ErrProtocol) || len(err.Error()) > 1024 {
		t.Fatalf("ReadFrame after a 1 MiB close reason = %.200v, want an error matching ErrProtocol without the reason", err)
	}
}

// A server that breaks the WebSocket protocol itself (a frame no
// conforming peer sends) ends the connection with an error matching
// ErrProtocol, as a text message ends it with ErrNotBinary: not a
// *CloseError saying the connection dropped without a Close frame, which
// is what it was reported as (the client answers such a frame with a
// protocol-error Close of its own). A server that drops the connection,
// cleanly or in the middle of a frame, still gives that *CloseError.
func TestPeerProtocolViolationIsErrProtocol(t *testing.T) {
	frame := func(b0 byte, payload []byte) []byte {
		f := wsframe.Server(true, 2, payload)
		f[0] = b0
		return f
	}
	for _, tc := range []struct {
		name   string
		stream []byte
		broken bool // a protocol violation, else a drop
	}{
		{"reserved bit", frame(0x80|0x20|2, []byte{1}), true},
		{"unknown opcode", frame(0x80|3, []byte{1}), true},
		{"continuation first", frame(0x80, []byte{1}), true}, // FIN, opcode 0
		{"fragmented ping", frame(9, []byte("p")), true},
		{"long ping", wsframe.Server(true, 9, bytes.Repeat([]byte("p"), 126)), true},
		{"close payload of one byte", wsframe.Server(true, 8, []byte{3}), true},
		{"close code 999", wsframe.Server(true, 8, []byte{0x03, 0xe7}), true},
		{"new message inside another", append(wsframe.Server(false, 2, []byte{1}), wsframe.Server(true, 2, []byte{2})...), true},
		{"drop", nil, false},
		{"drop mid-frame", wsframe.Server(true, 2, bytes.Repeat([]byte{1}, 100))[:50], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := handServer(t, func(rw *bufio.ReadWriter, key string) {
				switching(rw, key)
				rw.WriteString("\r\n")
				rw.Write(tc.stream)
				rw.Flush()
				if tc.broken {
					rw.ReadByte() // until the client leaves
				}
			})
			c, err := Dial(ctx10(t), u, DialOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.ReadFrame()
			var ce *CloseError
			if tc.broken {
				if !errors.Is(err, ErrProtocol) || errors.As(err, &ce) || errors.Is(err, ErrDisconnected) {
					t.Fatalf("ReadFrame = %v, want an error matching ErrProtocol and not a *CloseError", err)
				}
				return
			}
			if !errors.As(err, &ce) || ce.Code != -1 || errors.Is(err, ErrProtocol) {
				t.Fatalf("ReadFrame = %v, want a *CloseError with code -1", err)
			}
		})
	}
}

// A wss:// server that accepts the TCP connection and never answers the
// TLS handshake holds Dial only until its context ends, and the server
// then sees the connection closed: the handshake runs under the dial's
// context. (The HTTP transport returns when the context ends whatever
// the dial does, but a handshake not bound to it would go on in the
// background, a socket and a goroutine for as long as the server likes:
// the socket is not recorded for closing until the handshake is done.)
// The Dial fails with a *DialError matching context.Canceled.
func TestDialContextEndsASilentTLSHandshake(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	hello := make(chan struct{})
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var b [1]byte
		if _, err := c.Read(b[:]); err != nil { // the ClientHello is on its way
			return
		}
		close(hello)
		io.Copy(io.Discard, c) // never answers; until the client closes
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-hello:
			cancel()
		case <-closed:
		}
	}()
	done := make(chan error, 1)
	go func() {
		c, err := Dial(ctx, "wss://"+ln.Addr().String()+"/", DialOptions{})
		if c != nil {
			c.Close()
		}
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		ln.Close()
		t.Fatal("Dial still waits on a TLS handshake a minute after its context ended")
	}
	var de *DialError
	if !errors.As(err, &de) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial = %v, want a *DialError matching context.Canceled", err)
	}
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("the server never saw the connection closed")
	}
}

// An endpoint that redirects to itself for ever costs a Dial one request:
// Dial never follows a redirect, and reports the 3xx. A caller's own
// HTTPClient without a CheckRedirect follows up to 10, net/http's
// default. It followed them until the context ended (147035 requests in
// the 10 s of this test's context): the WebSocket library wraps a nil
// CheckRedirect into one that allows every redirect.
func TestRedirectLoopIsBounded(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/again", http.StatusFound)
	}))
	defer srv.Close()
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
	_, err := Dial(ctx10(t), u, DialOptions{})
	var de *DialError
	if !errors.As(err, &de) || de.StatusCode != http.StatusFound {
		t.Fatalf("Dial = %v, want a *DialError with status 302", err)
	}
	if n := hits.Swap(0); n != 1 {
		t.Fatalf("Dial made %d requests, want 1", n)
	}
	_, err = Dial(ctx10(t), u, DialOptions{HTTPClient: &http.Client{}})
	if !errors.As(err, &de) {
		t.Fatalf("Dial with a client following redirects = %v, want a *DialError", err)
	}
	if n := hits.Load(); n > 11 {
		t.Fatalf("Dial with a client following redirects made %d requests", n)
	}
}

// A server that announces a message over the frame cap and then stalls
// (the body trickles, or never comes) has the client's read fail at once
// with a *frame.TooLargeError carrying the announced length, and gets a
// Close with 1009: the dialed connection checks each frame header as an
// accepted one does. Before, the client counted the cap against the body
// as it arrived, so its read waited on the server for as long as the
// server liked (a turn held until the caller's own timeouts). With
// Dial's own transport and with a caller's HTTPClient alike; a message
// split into fragments counts whole.
func TestDialRefusesOversizeFromTheHeader(t *testing.T) {
	const limit = 64 << 10
	header := func(fin bool, op byte, n uint64) []byte {
		b := []byte{op, 127, 0, 0, 0, 0, 0, 0, 0, 0} // 64-bit length, unmasked
		if fin {
			b[0] |= 0x80
		}
		binary.BigEndian.PutUint64(b[2:], n)
		return b
	}
	for _, tc := range []struct {
		name   string
		stream []byte
		n      uint64
	}{
		{"one frame", append(header(true, 2, limit+1), make([]byte, 100)...), limit + 1},
		{"a huge length", header(true, 2, 1<<40), 1 << 40},
		{"fragments", append(append(header(false, 2, limit/2), make([]byte, limit/2)...), header(true, 0, limit/2+1)...), limit + 1},
	} {
		for _, client := range []*http.Client{nil, {}} {
			t.Run(fmt.Sprintf("%s/HTTPClient=%t", tc.name, client != nil), func(t *testing.T) {
				closed := make(chan int, 1)
				u := handServer(t, func(rw *bufio.ReadWriter, key string) {
					switching(rw, key)
					rw.WriteString("\r\n")
					rw.Write(tc.stream)
					rw.Flush()
					// Stall: the rest of the message never comes. Read
					// what the client sends until it leaves.
					code := -1
					for {
						op, p, err := wsframe.Read(rw)
						if err != nil {
							break
						}
						if op == 8 && len(p) >= 2 {
							code = int(binary.BigEndian.Uint16(p))
						}
					}
					closed <- code
				})
				c, err := Dial(ctx10(t), u, DialOptions{MaxFrameLen: limit, HTTPClient: client})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				read := make(chan error, 1)
				go func() {
					_, err := c.ReadFrame()
					read <- err
				}()
				select {
				case err = <-read:
				case <-time.After(30 * time.Second):
					c.Close()
					<-read
					t.Fatal("the client waited for the body of a message announced over its cap")
				}
				var tl *frame.TooLargeError
				if !errors.As(err, &tl) || tl.Len != tc.n || tl.Max != limit {
					t.Fatalf("ReadFrame = %v, want a *frame.TooLargeError{Len: %d, Max: %d}", err, tc.n, limit)
				}
				if code := <-closed; code != int(websocket.StatusMessageTooBig) {
					t.Fatalf("the client closed with %d, want %d", code, websocket.StatusMessageTooBig)
				}
			})
		}
	}
}

//go:build unix

package ws

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/wsframe"
)

// FuzzDialAgainstAPeer dials a hostile server: it answers the upgrade
// with a 101 carrying the right accept key and fuzzed extra header lines,
// or (mode odd) with a fuzzed status line and headers, then sends fuzzed
// bytes as the WebSocket stream and closes. The dial fails with a
// *DialError whose refusal reason is short printable ASCII, or the
// connection reads frames within the cap and ends with a *CloseError
// whose reason is valid UTF-8 without control characters, ErrNotBinary,
// an error matching ErrProtocol, or a *frame.TooLargeError.
func FuzzDialAgainstAPeer(f *testing.F) {
	var stream []byte
	stream = append(stream, wsframe.Server(true, 2, []byte{1, 2, 3})...)
	stream = append(stream, wsframe.Server(false, 2, []byte("ab"))...)
	stream = append(stream, wsframe.Server(true, 0, []byte("cd"))...)
	stream = append(stream, wsframe.Server(true, 9, []byte("ping"))...)
	f.Add(uint8(0), []byte(""), stream)
	f.Add(uint8(0), []byte("X-A: b\r\n"), append(wsframe.Server(true, 2, bytes.Repeat([]byte{7}, 300)), wsframe.Server(true, 8, []byte("\x03\xe8bye\x00\xff"))...))
	f.Add(uint8(0), []byte("Sec-WebSocket-Extensions: permessage-deflate\r\n"), []byte{})
	f.Add(uint8(0), []byte(""), wsframe.Server(true, 1, []byte("text")))
	f.Add(uint8(0), []byte(""), wsframe.Server(true, 2, bytes.Repeat([]byte{1}, 2000)))
	f.Add(uint8(0), []byte(""), wsframe.Server(true, 8, []byte{0x0f, 0xa0}))
	f.Add(uint8(1), []byte("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\nContent-Length: 9\r\n"), []byte("draining\n"))
	f.Add(uint8(1), []byte("HTTP/1.1 429 Too Many Requests\r\nRetry-After: Wed, 21 Oct 2099 07:28:00 GMT\r\n"), []byte("slow \x01down\xff\r\nmore"))
	f.Add(uint8(1), []byte("HTTP/1.1 302 Found\r\nLocation: http://evil/\r\n"), []byte{})
	const maxFrame = 1024
	// One listener for every input: a listener per input leaves its port
	// in TIME_WAIT with the connection it accepted, and a few tens of
	// thousands of inputs used up the ephemeral ports. Every input's dial
	// connects (the URL and options are valid), so each input's server
	// accepts exactly its own connection.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ln.Close() })
	f.Fuzz(func(t *testing.T, mode uint8, head, stream []byte) {
		served := make(chan struct{})
		go func() {
			defer close(served)
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			req, err := http.ReadRequest(bufio.NewReader(c))
			if err != nil {
				return
			}
			var resp []byte
			if mode&1 == 0 {
				resp = []byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
					wsframe.Accept(req.Header.Get("Sec-WebSocket-Key")) + "\r\n")
			}
			resp = append(resp, head...)
			resp = append(resp, "\r\n"...)
			resp = append(resp, stream...)
			c.Write(resp)
			c.(*net.TCPConn).CloseWrite()
			io.Copy(io.Discard, c)
		}()
		// Not a deadline the test waits on: the peer closes its side, so
		// every read ends; this only bounds a hang should one appear.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cn, err := Dial(ctx, "ws://"+ln.Addr().String()+"/", DialOptions{MaxFrameLen: maxFrame, CloseWait: time.Second})
		if err != nil {
			var de *DialError
			if !errors.As(err, &de) {
				t.Fatalf("dial: %T %v", err, err)
			}
			if len(de.Reason) > maxReason || strings.ContainsFunc(de.Reason, func(r rune) bool { return r < 0x20 || r >= 0x7f }) {
				t.Fatalf("refusal reason %q", de.Reason)
			}
			if de.RetryAfter < 0 {
				t.Fatalf("Retry-After %v", de.RetryAfter)
			}
			<-served
			return
		}
		for {
			b, err := cn.ReadFrame()
			if err == nil {
				if len(b) > maxFrame {
					t.Fatalf("frame of %d bytes over the cap", len(b))
				}
				continue
			}
			var ce *CloseError
			var tl *frame.TooLargeError
			switch {
			case errors.As(err, &ce):
				if !utf8.ValidString(ce.Reason) || strings.ContainsFunc(ce.Reason, unicode.IsControl) {
					t.Fatalf("close reason %q", ce.Reason)
				}
				if !errors.Is(err, ErrDisconnected) {
					t.Fatalf("%v does not match ErrDisconnected", err)
				}
			case errors.Is(err, ErrNotBinary), errors.Is(err, ErrProtocol), errors.As(err, &tl):
			default:
				t.Fatalf("read: %T %v", err, err)
			}
			break
		}
		cn.Close()
		<-served
	})
}

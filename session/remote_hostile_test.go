//go:build unix

package session_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/wsframe"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// hostileEndpoint is a protocol-4 WebSocket endpoint that answers the
// Configure with Ok and then hands the connection to play, with a
// context that ends when the test does and enc, which encodes an event.
// The connection is dropped when play returns.
func hostileEndpoint(t *testing.T, play func(ctx context.Context, c *websocket.Conn, enc func(message.Event) []byte)) string {
	t.Helper()
	cd, _ := codec.ForVersion(4)
	enc := func(e message.Event) []byte {
		b, err := cd.AppendEvent(nil, &message.ChildEvent{Body: e})
		if err != nil {
			t.Errorf("hostile endpoint: %v", err)
		}
		return b
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wg.Add(1)
		defer wg.Done()
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(-1)
		if _, _, err := c.Read(ctx); err != nil { // the Configure
			return
		}
		if c.Write(ctx, websocket.MessageBinary, enc(&message.Ok{})) != nil {
			return
		}
		play(ctx, c, enc)
	}))
	t.Cleanup(func() {
		cancel()
		srv.Close()
		wg.Wait()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/"
}

func completeOne() *message.Complete {
	c := &message.Complete{}
	c.Value = c.Values.Add(value.Int(1))
	return c
}

func startHostile(t *testing.T, url string, cfg session.Config) *session.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := session.Start(ctx, session.Launch{Launcher: session.RemoteLauncher{URL: url}, ProtocolVersion: 4}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// feedWithin runs s.Feed(ctx, code) and returns its error, failing the
// test if the feed is still going after a long while (session.Within):
// the behaviours these tests guard against wait for ever.
func feedWithin(t *testing.T, s *session.Session, ctx context.Context, code string) error {
	t.Helper()
	return session.Within(t, s, "feed", func() error {
		_, err := s.Feed(ctx, code)
		return err
	})
}

// A server that holds a turn open without ending it (silent, answering
// one byte a second, pinging without end, or no longer reading what the
// client sends) cannot hold the caller past its context: the turn ends
// with the context's deadline (a *session.TimeoutError matching
// context.DeadlineExceeded) and the session is closed.
func TestRemoteHostileTurnEndsWithTheContext(t *testing.T) {
	for _, tc := range []struct {
		name string
		code string
		play func(ctx context.Context, c *websocket.Conn, enc func(message.Event) []byte)
	}{
		{"silent", "1", func(ctx context.Context, c *websocket.Conn, _ func(message.Event) []byte) {
			c.Read(ctx)
			<-ctx.Done()
		}},
		{"one byte a second", "1", func(ctx context.Context, c *websocket.Conn, enc func(message.Event) []byte) {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
			w, err := c.Writer(ctx, websocket.MessageBinary)
			if err != nil {
				return
			}
			for _, b := range enc(completeOne()) {
				if _, err := w.Write([]byte{b}); err != nil {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
			}
		}},
		{"endless pings", "1", func(ctx context.Context, c *websocket.Conn, _ func(message.Event) []byte) {
			if _, _, err := c.Read(ctx); err != nil { // the Feed
				return
			}
			c.CloseRead(ctx) // reads the pongs
			for ctx.Err() == nil {
				pctx, cancel := context.WithTimeout(ctx, time.Second)
				err := c.Ping(pctx)
				cancel()
				if err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
					return
				}
			}
		}},
		// The Feed is larger than the socket buffers hold, so the
		// client's write blocks on a server that reads nothing.
		{"not reading", "x = '" + strings.Repeat("a", 32<<20) + "'", func(ctx context.Context, c *websocket.Conn, _ func(message.Event) []byte) {
			<-ctx.Done()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startHostile(t, hostileEndpoint(t, tc.play), session.Config{})
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			err := feedWithin(t, s, ctx, tc.code)
			var te *session.TimeoutError
			if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("feed = %v, want a *session.TimeoutError matching context.DeadlineExceeded", err)
			}
			if st := s.State(); st != session.StateClosed {
				t.Fatalf("session state %v after the turn was cut, want closed", st)
			}
		})
	}
}

// A server that never ends a turn, under a context that never ends,
// holds it no longer than the parent's own watchdog allows: a feed, the
// session's duration limit plus the grace, as for a local worker that does
// not stop itself; a Dump, which runs no code, the reply bound (the
// longer of that limit and the StartTimeout, plus the grace; see
// Config.WatchdogGrace). Either ends with the watchdog's
// *session.TimeoutError, naming the limit.
func TestRemoteSilentTurnEndsAtTheWatchdog(t *testing.T) {
	for name, c := range map[string]struct {
		call  func(*session.Session) error
		limit session.DurationLimit
	}{
		"feed": {func(s *session.Session) error { _, err := s.Feed(context.Background(), "1"); return err }, session.LimitDuration},
		"dump": {func(s *session.Session) error { _, err := s.Dump(context.Background()); return err }, session.LimitReply},
	} {
		t.Run(name, func(t *testing.T) {
			url := hostileEndpoint(t, func(ctx context.Context, c *websocket.Conn, _ func(message.Event) []byte) {
				c.Read(ctx)
				<-ctx.Done()
			})
			s := startHostile(t, url, session.Config{
				Limits:        session.Limits{MaxDuration: 100 * time.Millisecond},
				StartTimeout:  2 * time.Second,
				WatchdogGrace: 100 * time.Millisecond,
			})
			err := session.Within(t, s, name, func() error { return c.call(s) })
			var te *session.TimeoutError
			if !errors.As(err, &te) || !te.Watchdog || te.Limit != c.limit || !errors.Is(err, session.ErrTimeout) {
				t.Fatalf("%s = %v, want the watchdog's *session.TimeoutError for %v", name, err, c.limit)
			}
		})
	}
}

// A server that answers one Feed twice breaks strict alternation: the
// second answer is never taken for the answer to the next request. The
// session ends with a *session.ProtocolError matching ErrStrayEvent, on
// this feed (when the second answer is already there as the first is
// read) or on the next one, which is not sent.
func TestRemoteFeedAnsweredTwice(t *testing.T) {
	feeds := make(chan int, 4)
	url := hostileEndpoint(t, func(ctx context.Context, c *websocket.Conn, enc func(message.Event) []byte) {
		for n := 1; ; n++ {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
			feeds <- n
			answer := enc(completeOne())
			for range 2 {
				if c.Write(ctx, websocket.MessageBinary, answer) != nil {
					return
				}
			}
		}
	})
	s := startHostile(t, url, session.Config{})
	var err error
	for i := 0; i < 2 && err == nil; i++ {
		err = feedWithin(t, s, context.Background(), "1")
		if err == nil {
			// Wait for the second answer to arrive, so that the next
			// feed finds it.
			time.Sleep(50 * time.Millisecond)
		}
	}
	var pe *session.ProtocolError
	if !errors.As(err, &pe) || !errors.Is(err, session.ErrStrayEvent) {
		t.Fatalf("feeds = %v, want a *session.ProtocolError matching ErrStrayEvent", err)
	}
	if n := len(feeds); n != 1 {
		t.Fatalf("%d feeds reached the server, want 1: the feed after a stray answer must not be sent", n)
	}
}

// A server's FatalError text reaches error messages, logs and terminals
// (montygo run prints it), as a close reason does: a hostile server could
// put a megabyte, forged log lines or terminal escapes there. The
// *session.RemoteCrashError (and the *worker.CrashError it unwraps to)
// keeps the text as sent in Message, which is data, and its error text
// quotes at most the first 1 KiB of it, cut at a character boundary, with
// control characters replaced by U+FFFD, as ws.CloseError does for a
// close reason.
func TestRemoteFatalErrorTextIsBounded(t *testing.T) {
	const head = "boom\nlevel=ERROR msg=forged \x1b[31mred é"
	sc := newScripted(t, func(req message.Request) []message.Event {
		return []message.Event{&message.FatalError{Message: head + strings.Repeat("é", 1<<20)}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := session.Start(ctx, session.Launch{Launcher: session.RemoteLauncher{URL: sc.url}, ProtocolVersion: 4}, session.Config{})
	if err == nil {
		s.Close()
		t.Fatal("Start succeeded against a server that answered with a FatalError")
	}
	var rc *session.RemoteCrashError
	var ce *worker.CrashError
	if !errors.As(err, &rc) || !errors.As(err, &ce) {
		t.Fatalf("Start = %v, want a *session.RemoteCrashError", err)
	}
	if full := head + strings.Repeat("é", 1<<20); rc.Message != full || ce.Message != full {
		t.Fatalf("Message of %d bytes (crash error's %d): want the server's text as sent (%d bytes)", len(rc.Message), len(ce.Message), len(full))
	}
	text := err.Error()
	if len(text) > 2048 || !utf8.ValidString(text) || strings.ContainsFunc(text, unicode.IsControl) {
		t.Fatalf("error text of %d bytes, %.80q…: want at most 2 KiB of valid UTF-8 without control characters", len(text), text)
	}
	if want := "boom level=ERROR msg=forged \uFFFD[31mred é"; !strings.Contains(text, want) || !strings.Contains(text, "é…") {
		t.Fatalf("error text %.100q…: want it to quote %q and end the quote with a cut", text, want)
	}
}

// A server that answers a Feed with a frame that breaks the WebSocket
// protocol (here one with a reserved bit set) broke the protocol: the
// session ends with a *session.ProtocolError wrapping ws.ErrProtocol, as
// for a text message, not with a *session.DisconnectedError claiming
// the server dropped the connection without a Close frame.
func TestRemoteWebSocketViolationIsProtocolError(t *testing.T) {
	cd, _ := codec.ForVersion(4)
	ok, err := cd.AppendEvent(nil, &message.ChildEvent{Body: &message.Ok{}})
	if err != nil {
		t.Fatal(err)
	}
	bad := wsframe.Server(true, 2, []byte{1})
	bad[0] |= 0x20 // RSV2, which no extension gives a meaning
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		fmt.Fprintf(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
			wsframe.Accept(req.Header.Get("Sec-WebSocket-Key")))
		if _, _, err := wsframe.Read(br); err != nil { // the Configure
			return
		}
		c.Write(wsframe.Server(true, 2, ok))
		if _, _, err := wsframe.Read(br); err != nil { // the Feed
			return
		}
		c.Write(bad)
		io.Copy(io.Discard, br) // until the client leaves
	}()
	defer func() {
		ln.Close()
		<-served
	}()
	s := startHostile(t, "ws://"+ln.Addr().String()+"/", session.Config{})
	err = feedWithin(t, s, context.Background(), "1")
	var pe *session.ProtocolError
	if !errors.As(err, &pe) || !errors.Is(err, ws.ErrProtocol) || errors.Is(err, session.ErrDisconnected) {
		t.Fatalf("feed answered with a broken frame = %v, want a *session.ProtocolError wrapping ws.ErrProtocol", err)
	}
}

// A server that closes the connection in the middle of a turn ends it
// with a *session.DisconnectedError carrying the close code and reason
// (the reason's control characters replaced), matching ErrDisconnected
// always, worker.ErrMemoryLimit for 4003 and ErrTimeout for 4002 and
// 4004 (the codes of a worker killed for its memory or its time), and
// neither for any other code.
func TestRemoteCloseCodesMidTurn(t *testing.T) {
	for _, code := range []websocket.StatusCode{4000, 4001, 4002, 4003, 4004, 4999, 3000, 1001, 1011} {
		t.Run(fmt.Sprint(int(code)), func(t *testing.T) {
			url := hostileEndpoint(t, func(ctx context.Context, c *websocket.Conn, _ func(message.Event) []byte) {
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
				c.Close(code, "bye\n\x1b[2J")
			})
			s := startHostile(t, url, session.Config{})
			err := feedWithin(t, s, context.Background(), "1")
			var de *session.DisconnectedError
			if !errors.As(err, &de) || !errors.Is(err, session.ErrDisconnected) {
				t.Fatalf("feed = %v, want a *session.DisconnectedError", err)
			}
			if de.Code != int(code) || de.Reason != "bye \uFFFD[2J" {
				t.Fatalf("close code %d, reason %q; want %d and the reason with its control characters replaced", de.Code, de.Reason, code)
			}
			if got, want := errors.Is(err, worker.ErrMemoryLimit), code == 4003; got != want {
				t.Errorf("errors.Is(ErrMemoryLimit) = %v", got)
			}
			if got, want := errors.Is(err, session.ErrTimeout), code == 4002 || code == 4004; got != want {
				t.Errorf("errors.Is(ErrTimeout) = %v", got)
			}
		})
	}
}

// A server that answers a Feed with the header of a message over the
// client's frame cap and then stalls (the body never comes) ends the turn
// at once, with an error matching frame.ErrTooLarge that carries the
// announced length (*frame.TooLargeError), and the server gets a Close
// with 1009: the client refuses the message from its header. It used to
// count the cap against the body as it arrived, so the turn waited on
// the server until the session's own timeouts.
func TestRemoteOversizeAnnouncedEndsTheTurnAtOnce(t *testing.T) {
	cd, _ := codec.ForVersion(4)
	ok, err := cd.AppendEvent(nil, &message.ChildEvent{Body: &message.Ok{}})
	if err != nil {
		t.Fatal(err)
	}
	const announced = 1 << 40
	header := []byte{0x82, 127, 0, 0, 0, 0, 0, 0, 0, 0} // FIN, binary, 64-bit length
	binary.BigEndian.PutUint64(header[2:], announced)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan int, 1)
	go func() {
		code := -1
		defer func() { closed <- code }()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		fmt.Fprintf(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
			wsframe.Accept(req.Header.Get("Sec-WebSocket-Key")))
		if _, _, err := wsframe.Read(br); err != nil { // the Configure
			return
		}
		c.Write(wsframe.Server(true, 2, ok))
		if _, _, err := wsframe.Read(br); err != nil { // the Feed
			return
		}
		c.Write(append(header, "the rest never comes"...))
		for { // until the client leaves
			op, p, err := wsframe.Read(br)
			if err != nil {
				return
			}
			if op == 8 && len(p) >= 2 {
				code = int(binary.BigEndian.Uint16(p))
			}
		}
	}()
	defer ln.Close()
	s := startHostile(t, "ws://"+ln.Addr().String()+"/", session.Config{})
	err = feedWithin(t, s, context.Background(), "1")
	var tl *frame.TooLargeError
	if !errors.As(err, &tl) || tl.Len != announced {
		t.Fatalf("feed answered with a message announced over the cap = %v, want an error carrying a *frame.TooLargeError{Len: %d}", err, uint64(announced))
	}
	s.Close()
	if code := <-closed; code != int(websocket.StatusMessageTooBig) {
		t.Fatalf("the client closed with %d, want %d", code, websocket.StatusMessageTooBig)
	}
}

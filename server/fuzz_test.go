package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/peek"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport/ws"
)

// FuzzSessionFrames sends arbitrary frames on a configured session: each
// one must be answered with a turn-ending event, or end the session with a
// close frame, in bounded time; and the server must go on serving others.
// The input is a sequence of frames, each a length byte and that many
// bytes.
func FuzzSessionFrames(f *testing.F) {
	ts := startServer(f, func(c *Config) {
		c.Prewarm = 2
		c.MaxDuration = 200 * time.Millisecond
		c.TurnTimeout = 5 * time.Second
		c.MaxFrameLen = 1 << 10
		c.MaxSessionsPerClient = -1
	})
	seed := func(reqs ...message.Request) []byte {
		var out []byte
		for _, r := range reqs {
			b := encodeRequest(f, 4, r)
			out = append(out, byte(len(b)))
			out = append(out, b...)
		}
		return out
	}
	f.Add(seed(&message.Feed{Code: "1 + 1"}, &message.Dump{}))
	f.Add(seed(&message.Reset{}, &message.Configure{ProtocolVersion: 4}, &message.Shutdown{}))
	f.Add(seed(&message.Feed{Code: "from pathlib import Path\nPath('/a').exists()"}, resumeBool(1, true), resumeBool(7, false)))
	f.Add(seed(&message.Load{State: []byte("MONTYSIG\x02xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")}, &message.AbortFeed{}))
	f.Add([]byte{3, 0xff, 0xff, 0xff, 0, 1, 0x0a})
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		c, err := dialRaw(ctx, ts.URL, 4, ws.DialOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if turn, err := c.Do(ctx, &message.Configure{ProtocolVersion: 4}); err != nil || turn.Event.Body.EventKind() != message.KindOk {
			t.Fatalf("Configure: %v", err)
		}
		for len(data) > 0 {
			n := min(int(data[0]), len(data)-1)
			frame := data[1 : 1+n]
			data = data[1+n:]
			if err := c.Conn.WriteFrame(frame); err != nil {
				break // the server ended the session
			}
			if !answered(t, c) {
				break
			}
		}
		if turn, err := c.Do(ctx, &message.Feed{Code: "'alive'"}); err == nil {
			// The session survived: it must still compute (or refuse).
			if k := turn.Event.Body.EventKind(); k != message.KindComplete && k != message.KindError && k != message.KindShutdownDump {
				t.Fatalf("after the frames a Feed was answered %s", k)
			}
		}
		other := dialConfigured(t, ts.URL, 4)
		if got := repr(t, other, "6 * 7"); got != "42" {
			t.Fatalf("another session after the frames: %s", got)
		}
	})
}

// answered reads events up to a turn-ending one; false means the session
// was closed.
func answered(t *testing.T, c *rawClient) bool {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		for {
			b, err := c.Conn.ReadFrame()
			if err != nil {
				done <- err
				return
			}
			if k, ok := peek.Event(b); ok && k != peek.EventPrint {
				done <- nil
				return
			}
		}
	}()
	select {
	case err := <-done:
		var ce *ws.CloseError
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("read: %v", err)
		}
		return err == nil
	case <-time.After(30 * time.Second):
		t.Fatal("a frame was neither answered nor did it end the session")
	}
	return false
}

// FuzzGateSeesTheDecodedKind: whatever request a frame decodes to, at
// protocol 5, 4 or 2, the gate classifies the frame as that kind, so a
// refused request cannot pass it in disguise.
func FuzzGateSeesTheDecodedKind(f *testing.F) {
	for _, v := range []uint32{5, 4, 2} {
		for _, req := range []message.Request{&message.Reset{}, &message.Shutdown{}, &message.Configure{ProtocolVersion: v}, &message.Feed{Code: "1"}} {
			b := encodeRequest(f, v, req)
			f.Add(b)
			f.Add(append(b, 0x7a, 0x00))
			f.Add(append(b, 0x98, 0x01, 0x00))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, known := requestKind(b)
		for _, v := range []uint32{5, 4, 2} {
			cd, _ := codec.ForVersion(v)
			req, err := cd.DecodeRequest(b, codec.Limits{})
			if err != nil || req.Body == nil {
				continue
			}
			if got := req.Body.RequestKind(); !known || got != k {
				t.Fatalf("v%d decodes %s, the gate sees %s (known %v)", v, got, k, known)
			}
		}
	})
}

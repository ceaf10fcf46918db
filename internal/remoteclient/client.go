// Package remoteclient is the minimal client side of a Monty server
// session: one WebSocket, one protocol version, requests in and
// turn-ending events out. It is what examples/remote and the server tests
// need; the full remote parent (auto-resume, pool endpoints) is a later
// package.
//
// A Client is used by one goroutine at a time; Close may be called from any
// goroutine.
package remoteclient

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gomonty/monty/codec"
	_ "github.com/gomonty/monty/codec/codecv2" // protocol 2
	_ "github.com/gomonty/monty/codec/codecv4" // protocol 4
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport/ws"
)

// Client is one session on a Monty server.
type Client struct {
	Conn  *ws.Conn
	codec codec.Codec
	buf   []byte
}

// Dial opens a session at url speaking protocol version (4 or 2). It does
// not send Configure.
func Dial(ctx context.Context, url string, version uint32, opts ws.DialOptions) (*Client, error) {
	cd, ok := codec.ForVersion(version)
	if !ok {
		return nil, fmt.Errorf("remoteclient: no codec for protocol %d", version)
	}
	c, err := ws.Dial(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	return &Client{Conn: c, codec: cd}, nil
}

// Turn is the outcome of one request: the turn-ending event and the print
// output that came before it.
type Turn struct {
	Event  *message.ChildEvent
	Stdout string
	Stderr string
}

// Do sends req and reads events up to the turn-ending one. A done ctx
// closes the connection.
func (c *Client) Do(ctx context.Context, req message.Request) (*Turn, error) {
	stop := context.AfterFunc(ctx, func() { c.Conn.Close() })
	defer stop()
	b, err := c.codec.AppendRequest(c.buf[:0], &message.ParentRequest{Body: req})
	if err != nil {
		return nil, err
	}
	c.buf = b
	if err := c.Conn.WriteFrame(b); err != nil {
		return nil, c.ctxErr(ctx, err)
	}
	var out, errs strings.Builder
	for {
		fb, err := c.Conn.ReadFrame()
		if err != nil {
			return nil, c.ctxErr(ctx, err)
		}
		ev, err := c.codec.DecodeEvent(fb, codec.Limits{})
		if err != nil {
			return nil, err
		}
		if p, ok := ev.Body.(*message.Print); ok {
			for _, seg := range p.Segments {
				if seg.Stream == message.StreamStderr {
					errs.WriteString(seg.Text)
				} else {
					out.WriteString(seg.Text)
				}
			}
			continue
		}
		if ev.Body == nil {
			return nil, errors.New("remoteclient: event without a kind")
		}
		return &Turn{Event: ev, Stdout: out.String(), Stderr: errs.String()}, nil
	}
}

func (c *Client) ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Close ends the session (a normal-closure Close frame).
func (c *Client) Close() error { return c.Conn.Close() }

package server

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

// rawClient is one session on a Monty server at the wire level: requests
// in, turn-ending events out, nothing checked or resumed, so the tests
// see exactly what the server sends. Used by one goroutine at a time;
// Close may be called from any goroutine.
type rawClient struct {
	Conn  *ws.Conn
	codec codec.Codec
	buf   []byte
}

// dialRaw opens a session at url speaking protocol version (4 or 2). It does
// not send Configure.
func dialRaw(ctx context.Context, url string, version uint32, opts ws.DialOptions) (*rawClient, error) {
	cd, ok := codec.ForVersion(version)
	if !ok {
		return nil, fmt.Errorf("raw client: no codec for protocol %d", version)
	}
	c, err := ws.Dial(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	return &rawClient{Conn: c, codec: cd}, nil
}

// rawTurn is the outcome of one request: the turn-ending event and the print
// output that came before it.
type rawTurn struct {
	Event  *message.ChildEvent
	Stdout string
	Stderr string
}

// Do sends req and reads events up to the turn-ending one. A done ctx
// closes the connection.
func (c *rawClient) Do(ctx context.Context, req message.Request) (*rawTurn, error) {
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
			return nil, errors.New("raw client: event without a kind")
		}
		return &rawTurn{Event: ev, Stdout: out.String(), Stderr: errs.String()}, nil
	}
}

func (c *rawClient) ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Close ends the session (a normal-closure Close frame).
func (c *rawClient) Close() error { return c.Conn.Close() }

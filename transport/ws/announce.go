package ws

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync/atomic"
)

// errAnnouncedTooLarge is what an accepted connection's reader returns,
// in place of a frame header, once the header announces a message over
// the frame cap; the read loop reports it as a *frame.TooLargeError.
var errAnnouncedTooLarge = errors.New("ws: peer announced a message over the frame cap")

// announcedTooLarge carries, through the library's read error, the
// length the peer announced.
type announcedTooLarge struct{ n uint64 }

func (e *announcedTooLarge) Error() string { return errAnnouncedTooLarge.Error() }
func (e *announcedTooLarge) Unwrap() error { return errAnnouncedTooLarge }

// capReader reads a WebSocket byte stream (what the peer sends) the way
// the WebSocket library reads it, with every frame header passing through
// a check of the message length it announces (the sum of a fragmented
// message's frames), so that a message over the cap is refused from its
// header. The library itself counts the cap against the body as it
// arrives, which lets a peer that announces a huge message and then
// stalls hold the connection, its refusal waiting on bytes that never
// come.
//
// It reads the header of each frame whole before handing any of it on,
// and the payload through untouched; what it cannot parse it hands on
// for the library to refuse. It also records the length the first frame
// of the latest data message announced (see announced), which the read
// loop sizes its buffer from.
type capReader struct {
	src io.Reader
	max uint64

	hdr     [14]byte
	pending []byte // header bytes read and not yet handed on
	payload uint64 // bytes of the current frame's payload still to come
	message uint64 // data bytes of the current message so far
	err     error  // a read error held until pending is handed on

	// first is the length the first frame of the latest data message
	// announced, shifted left by one, with the low bit set when that
	// frame was the whole message (FIN). It is atomic because the
	// library may read frames from another goroutine while closing (it
	// reads the peer's Close frame) as the read loop looks at it.
	first atomic.Uint64
}

// announced returns what the first frame of the latest data message
// announced: its payload length (at most the cap), and whether it is the
// whole message.
func (c *capReader) announced() (n uint64, whole bool) {
	v := c.first.Load()
	return v >> 1, v&1 != 0
}

// capConn is the socket of an accepted connection as the WebSocket
// library reads it: through a capReader.
type capConn struct {
	net.Conn
	r *capReader
}

func (c *capConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// capBody is the body of a dialed connection's 101 answer (the socket,
// as net/http hands it to the WebSocket library) read through a
// capReader.
type capBody struct {
	io.ReadWriteCloser
	r *capReader
}

func (b *capBody) Read(p []byte) (int, error) { return b.r.Read(p) }

func (c *capReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
	if c.payload > 0 {
		if uint64(len(p)) > c.payload {
			p = p[:c.payload]
		}
		n, err := c.src.Read(p)
		c.payload -= uint64(n)
		return n, err
	}
	return c.readHeader(p)
}

// readHeader reads the next frame header and checks it.
func (c *capReader) readHeader(p []byte) (int, error) {
	h := c.hdr[:2]
	if n, err := io.ReadFull(c.src, h); err != nil {
		return c.handOn(h[:n], err, p)
	}
	size := 2
	switch h[1] & 0x7f {
	case 126:
		size += 2
	case 127:
		size += 8
	}
	if h[1]&0x80 != 0 {
		size += 4 // the mask key
	}
	h = c.hdr[:size]
	if n, err := io.ReadFull(c.src, h[2:]); err != nil {
		return c.handOn(h[:2+n], err, p)
	}
	var length uint64
	switch h[1] & 0x7f {
	case 126:
		length = uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		length = binary.BigEndian.Uint64(h[2:10])
	default:
		length = uint64(h[1] & 0x7f)
	}
	switch op := h[0] & 0x0f; op {
	case 0x1, 0x2: // a new text or binary message
		c.message = 0
		fallthrough
	case 0x0: // a continuation of the message
		if length > c.max || c.message+length > c.max {
			n := length
			if length <= c.max {
				n += c.message
			}
			// Every later read fails alike: nothing more of this
			// connection is read as frames.
			c.err = &announcedTooLarge{n: n}
			return 0, c.err
		}
		c.message += length
		if op != 0x0 {
			v := length << 1
			if h[0]&0x80 != 0 {
				v |= 1
			}
			c.first.Store(v)
		}
	}
	c.payload = length
	return c.handOn(h, nil, p)
}

// handOn hands header bytes on to the library, and err after them.
func (c *capReader) handOn(h []byte, err error, p []byte) (int, error) {
	c.err = err
	n := copy(p, h)
	c.pending = h[n:]
	if n == 0 && err != nil {
		return 0, err
	}
	return n, nil
}

// Package tap records every frame of a connection, both ways, for
// debugging any parent or child: a [Conn] wraps a transport.Conn and
// appends each frame it reads or writes to a record stream, which a
// [Reader] reads back (`montygo decode --record FILE` renders it).
//
// The record format is a header line "monty-tap 1\n" followed by one
// record per frame: a direction byte ('>' read by the wrapped side,
// usually parent to child; '<' written by it), the time as 8 bytes of
// little-endian Unix nanoseconds, the body length as 4 bytes little
// endian, and the body.
package tap

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport"
)

// Header starts every record stream.
const Header = "monty-tap 1\n"

// Direction says which way a recorded frame went. It is a plain value,
// safe for concurrent use.
type Direction byte

// The directions, seen from the wrapped connection's owner.
const (
	// In is a frame the owner read (for a child: a request).
	In Direction = '>'
	// Out is a frame the owner wrote (for a child: an event).
	Out Direction = '<'
)

// Record is one recorded frame.
//
// A Record is plain data, safe to share.
type Record struct {
	Dir  Direction
	Time time.Time
	Body []byte
}

// Conn is a transport.Conn that records every frame. It follows the
// transport.Conn concurrency rules; recording is serialized internally.
type Conn struct {
	conn transport.Conn
	mu   sync.Mutex
	w    *bufio.Writer
	err  error
	now  func() time.Time
}

// New wraps conn, writing the header and then every frame to w. A failed
// record write stops the recording (see Err) but never the connection.
func New(conn transport.Conn, w io.Writer) *Conn {
	c := &Conn{conn: conn, w: bufio.NewWriter(w), now: time.Now}
	if _, err := c.w.WriteString(Header); err != nil {
		c.err = err
	}
	return c
}

func (c *Conn) record(d Direction, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	var hdr [13]byte
	hdr[0] = byte(d)
	binary.LittleEndian.PutUint64(hdr[1:], uint64(c.now().UnixNano()))
	binary.LittleEndian.PutUint32(hdr[9:], uint32(len(body)))
	if _, err := c.w.Write(hdr[:]); err != nil {
		c.err = err
		return
	}
	if _, err := c.w.Write(body); err != nil {
		c.err = err
		return
	}
	c.err = c.w.Flush()
}

// ReadFrame reads and records a frame.
func (c *Conn) ReadFrame() ([]byte, error) {
	b, err := c.conn.ReadFrame()
	if err == nil {
		c.record(In, b)
	}
	return b, err
}

// WriteFrame records and writes a frame.
func (c *Conn) WriteFrame(body []byte) error {
	c.record(Out, body)
	return c.conn.WriteFrame(body)
}

// Close closes the wrapped connection.
func (c *Conn) Close() error { return c.conn.Close() }

// Pending reports whether the wrapped connection has unread bytes.
func (c *Conn) Pending() bool { return c.conn.Pending() }

// MaxFrameLen returns the wrapped connection's frame cap.
func (c *Conn) MaxFrameLen() int { return c.conn.MaxFrameLen() }

// Err returns the error that stopped the recording, if any.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// ErrNotRecord is returned by NewReader for a stream without the header.
var ErrNotRecord = errors.New("not a monty-tap record stream")

// FormatError reports a record stream that breaks the format after its
// header: a record cut short, an unknown direction byte, or a body over the
// reader's cap. It is not modified after it is returned; it is safe to read
// concurrently.
type FormatError struct {
	// Reason says what is wrong, e.g. "truncated record body".
	Reason string
	// Err is the read error behind a truncated record, else nil.
	Err error
}

// Error renders the reason, followed by the read error when there is one.
func (e *FormatError) Error() string {
	if e.Err != nil {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

// Unwrap returns the read error behind a truncated record.
func (e *FormatError) Unwrap() error { return e.Err }

// Reader reads a record stream. It is not safe for concurrent use.
type Reader struct {
	r   *bufio.Reader
	max int
}

// NewReader checks the header and returns a reader; bodies over maxLen
// bytes (<= 0: the protocol's frame cap) are refused.
func NewReader(r io.Reader, maxLen int) (*Reader, error) {
	br := bufio.NewReader(r)
	hdr := make([]byte, len(Header))
	if _, err := io.ReadFull(br, hdr); err != nil || string(hdr) != Header {
		return nil, ErrNotRecord
	}
	if maxLen <= 0 || maxLen > protocol.MaxFrameLen {
		maxLen = protocol.MaxFrameLen
	}
	return &Reader{r: br, max: maxLen}, nil
}

// Next returns the next record, or io.EOF at the end of the stream. A
// stream that breaks the format fails with a *FormatError.
func (r *Reader) Next() (Record, error) {
	var hdr [13]byte
	n, err := io.ReadFull(r.r, hdr[:])
	if n == 0 && errors.Is(err, io.EOF) {
		return Record{}, io.EOF
	}
	if err != nil {
		return Record{}, &FormatError{Reason: "truncated record header", Err: err}
	}
	d := Direction(hdr[0])
	if d != In && d != Out {
		return Record{}, &FormatError{Reason: fmt.Sprintf("invalid record direction %q", hdr[0])}
	}
	size := binary.LittleEndian.Uint32(hdr[9:])
	if uint64(size) > uint64(r.max) {
		return Record{}, &FormatError{Reason: fmt.Sprintf("record of %d bytes exceeds maximum of %d bytes", size, r.max)}
	}
	// Grow as bytes arrive rather than trusting the length.
	var body []byte
	if _, err := io.CopyN(&sliceWriter{&body}, r.r, int64(size)); err != nil {
		if err == io.EOF {
			// CopyN's io.EOF means the body was cut short: to a caller it
			// must not read as the clean end of the stream.
			err = io.ErrUnexpectedEOF
		}
		return Record{}, &FormatError{Reason: "truncated record body", Err: err}
	}
	ns := int64(binary.LittleEndian.Uint64(hdr[1:]))
	return Record{Dir: d, Time: time.Unix(0, ns), Body: body}, nil
}

type sliceWriter struct{ b *[]byte }

func (w *sliceWriter) Write(p []byte) (int, error) { *w.b = append(*w.b, p...); return len(p), nil }

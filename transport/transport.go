// Package transport carries protocol frames between a parent and one Monty
// worker.
//
// A [Conn] moves whole frame bodies: the caller hands it encoded protobuf
// messages and gets encoded messages back, with no knowledge of their
// meaning. [Stream] is the implementation for byte streams that use the
// protocol's 4-byte little-endian length prefix, such as the stdin and
// stdout pipes of a `monty subprocess` child.
//
// The package does not spawn processes (see package worker) and does not
// decode messages (see package codec).
package transport

import (
	"bufio"
	"errors"
	"io"
	"reflect"
	"sync"

	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/protocol"
)

// Conn is a frame-level connection to one worker: a child's pipes, a
// WebSocket, an in-memory pipe to a Go child.
//
// Implementations allow one goroutine to read while another writes, but
// ReadFrame calls must not overlap each other, nor WriteFrame calls each
// other. Close may be called at any time from any goroutine.
type Conn interface {
	// ReadFrame returns the next frame body. The caller owns the slice.
	// At a clean end of stream it returns an error matching io.EOF under
	// errors.Is: io.EOF itself from a Stream, a *ws.CloseError carrying
	// the peer's close code and reason from a WebSocket (package
	// transport/ws), so compare with errors.Is, not ==.
	ReadFrame() ([]byte, error)
	// WriteFrame sends one frame body. It does not retain body. A body
	// over MaxFrameLen is refused before anything is written.
	WriteFrame(body []byte) error
	// Pending reports whether the peer has sent bytes that no ReadFrame
	// has consumed yet, as far as the connection can tell without
	// blocking. Under strict alternation nothing may be pending when the
	// parent is about to send a request, so true exposes an unsolicited
	// frame. A connection that cannot look ahead reports false. Call it
	// from the reading goroutine only.
	Pending() bool
	// MaxFrameLen is the largest frame body the connection carries in
	// either direction.
	MaxFrameLen() int
	// Close releases the connection. Later reads and writes fail.
	Close() error
}

// Op is what the parent was doing with a connection when it was lost.
//
// An Op is a plain value, safe for concurrent use.
type Op string

// The operations a loss is attributed to.
const (
	// OpSending: the parent was writing a request.
	OpSending Op = "sending a request"
	// OpWaiting: the parent was waiting for the reply to a request.
	OpWaiting Op = "waiting for a reply"
	// OpAborting: the parent was aborting a feed.
	OpAborting Op = "aborting a feed"
)

// Loss describes how a connection to a worker ended, for the worker's
// lifecycle to classify into a typed error (see package worker's
// CrashError for processes).
//
// A Loss is plain data, safe to share.
type Loss struct {
	// Announced is set when the worker sent a FatalError frame; Message
	// is its text.
	Announced bool
	Message   string
	// Op is what the parent was doing when the connection failed
	// (unannounced losses).
	Op Op
	// Err is the I/O error that revealed the loss, or nil.
	Err error
}

// readBufferSize is the read-ahead buffer of a Stream. A small frame and
// its prefix then usually arrive with one read system call.
const readBufferSize = 16 << 10

// Stream is a [Conn] over a byte stream pair using length-prefixed frames.
//
// A Stream follows the Conn concurrency rules: one reader and one writer
// may run at the same time, and Close is safe from any goroutine.
//
// Get a Stream from [NewStream]; the zero Stream is not usable.
type Stream struct {
	br     *bufio.Reader
	r      *frame.Reader
	w      *frame.Writer
	rc, wc io.Closer
	probe  interface{ Pending() bool }
	max    int

	closeOnce sync.Once
	closeErr  error
}

// NewStream returns a Stream that reads frames from r and writes frames to
// w, refusing bodies longer than maxFrameLen bytes in either direction
// (<= 0 means the protocol maximum, 256 MiB). If r or w implement
// io.Closer, Close closes them, w first. If r has a Pending() bool method
// (a pipe that can report readable bytes), Pending asks it too.
func NewStream(r io.Reader, w io.Writer, maxFrameLen int) *Stream {
	if maxFrameLen <= 0 || maxFrameLen > protocol.MaxFrameLen {
		maxFrameLen = protocol.MaxFrameLen
	}
	br := bufio.NewReaderSize(r, readBufferSize)
	s := &Stream{
		br:  br,
		r:   frame.NewReader(br, maxFrameLen),
		w:   frame.NewWriter(w, maxFrameLen),
		max: maxFrameLen,
	}
	if p, ok := r.(interface{ Pending() bool }); ok {
		s.probe = p
	}
	if c, ok := r.(io.Closer); ok {
		s.rc = c
	}
	if c, ok := w.(io.Closer); ok {
		s.wc = c
	}
	return s
}

// ReadFrame reads the next frame body; see [frame.Reader.ReadFrame] for the
// errors.
func (s *Stream) ReadFrame() ([]byte, error) { return s.r.ReadFrame() }

// Buffered returns the number of bytes read ahead from the stream but not
// yet consumed by ReadFrame. Under strict alternation it is 0 whenever no
// request is outstanding; anything else is an unsolicited frame. Call it
// from the reading goroutine only.
func (s *Stream) Buffered() int { return s.br.Buffered() }

// Pending reports whether bytes are read ahead, or (when the reader can
// tell) waiting in the underlying stream; see [Conn].
func (s *Stream) Pending() bool {
	return s.br.Buffered() > 0 || (s.probe != nil && s.probe.Pending())
}

// MaxFrameLen returns the frame cap of both directions.
func (s *Stream) MaxFrameLen() int { return s.max }

// WriteFrame writes one frame and flushes it; see
// [frame.Writer.WriteFrame] for the errors.
func (s *Stream) WriteFrame(body []byte) error { return s.w.WriteFrame(body) }

// Close closes the write side, then the read side (once when they are the
// same value). It is idempotent and returns the close errors joined.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		var errs []error
		if s.wc != nil {
			errs = append(errs, s.wc.Close())
		}
		if s.rc != nil && !sameCloser(s.rc, s.wc) {
			errs = append(errs, s.rc.Close())
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// sameCloser reports whether a and b are one value. Two values of a type
// that is not comparable (a struct holding a slice, passed by value) are
// taken to be distinct, so both are closed: comparing them would panic.
func sameCloser(a, b io.Closer) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if reflect.TypeOf(a) != reflect.TypeOf(b) || !reflect.ValueOf(a).Comparable() {
		return false
	}
	return a == b
}

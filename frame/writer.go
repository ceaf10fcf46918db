package frame

import "io"

// retainMax is the largest internal buffer a Writer keeps between frames;
// a bigger one, needed for a single big frame, is released afterwards.
const retainMax = 4 << 20

// Writer writes frames to an io.Writer.
//
// A Writer is not safe for concurrent use: it reuses one internal buffer,
// so calls to WriteFrame must not overlap. Callers that share a Writer
// must serialize access themselves.
//
// After WriteFrame returns an *IOError, an unknown part of the frame may
// have reached the destination; the stream should be treated as broken.
type Writer struct {
	w     io.Writer
	limit int
	buf   []byte
}

// NewWriter returns a Writer that writes frames to w and refuses bodies
// longer than limit bytes. A limit <= 0 means MaxFrameLen, and a limit
// above MaxFrameLen is lowered to it.
func NewWriter(w io.Writer, limit int) *Writer {
	return &Writer{w: w, limit: effectiveLimit(limit)}
}

// Limit returns the body length limit in force.
func (w *Writer) Limit() int {
	return w.limit
}

// WriteFrame writes body as one frame. The length is checked first: an
// oversize body yields a *TooLargeError and nothing is written. Otherwise
// the prefix and body are passed to the destination in a single Write
// call, and if the destination has a Flush() error method (as bufio.Writer
// does) it is called afterwards, so every frame is flushed. Write and
// flush failures, including a short write, are returned as *IOError.
//
// WriteFrame does not retain body.
func (w *Writer) WriteFrame(body []byte) error {
	if err := CheckLen(len(body), w.limit); err != nil {
		return err
	}
	w.buf = AppendFrame(w.buf[:0], body)
	n, err := w.w.Write(w.buf)
	if err == nil && n != len(w.buf) {
		err = io.ErrShortWrite
	}
	if cap(w.buf) > retainMax {
		w.buf = nil
	}
	if err != nil {
		return &IOError{Err: err}
	}
	if f, ok := w.w.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			return &IOError{Err: err}
		}
	}
	return nil
}

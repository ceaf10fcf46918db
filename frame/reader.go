package frame

import (
	"encoding/binary"
	"errors"
	"io"
)

const (
	// exactAllocMax is the largest body that is allocated in full as soon
	// as its prefix has been read.
	exactAllocMax = 64 << 10
	// firstChunk is the size of the first staging chunk of a larger body.
	firstChunk = 64 << 10
	// exactFactor bounds the final allocation of a larger body: the body
	// is allocated at its announced length once that is at most
	// exactFactor times the bytes already received.
	exactFactor = 3
	// maxEmptyReads is how many consecutive (0, nil) results from the
	// underlying reader are tolerated before giving up.
	maxEmptyReads = 100
)

// errBadCount is reported when the underlying reader returns an impossible
// byte count.
var errBadCount = errors.New("reader returned an invalid byte count")

// Reader reads frames from an io.Reader.
//
// A Reader is not safe for concurrent use: one goroutine at a time may call
// ReadFrame. It does no buffering of its own beyond the frame in progress,
// so wrap the source in a bufio.Reader if small reads are expensive.
//
// Any error other than io.EOF leaves the stream position inside, or at an
// unknown point of, a frame. Such errors are therefore sticky: once
// ReadFrame has returned ErrTruncated, a *TooLargeError or an *IOError,
// every later call returns the same error without reading.
type Reader struct {
	r      io.Reader
	limit  int
	err    error
	prefix [PrefixLen]byte
}

// NewReader returns a Reader that reads frames from r and refuses bodies
// longer than limit bytes. A limit <= 0 means MaxFrameLen, and a limit
// above MaxFrameLen is lowered to it.
func NewReader(r io.Reader, limit int) *Reader {
	return &Reader{r: r, limit: effectiveLimit(limit)}
}

// Limit returns the body length limit in force.
func (r *Reader) Limit() int {
	return r.limit
}

// ReadFrame reads the next frame and returns its body. The slice is newly
// allocated for every frame and never reused by the Reader, so the caller
// owns it and may keep or alias it. An empty body is returned as a
// non-nil, zero-length slice.
//
// It returns io.EOF, unwrapped, if the stream ends exactly at a frame
// boundary; ErrTruncated if it ends inside a frame; a *TooLargeError if
// the prefix announces more than Limit bytes (checked before any body
// memory is allocated); and an *IOError for other read failures.
func (r *Reader) ReadFrame() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	body, err := r.readFrame()
	if err != nil && err != io.EOF {
		r.err = err
	}
	return body, err
}

func (r *Reader) readFrame() ([]byte, error) {
	n, err := r.fill(r.prefix[:])
	if err != nil {
		if err == io.EOF {
			if n == 0 {
				return nil, io.EOF
			}
			return nil, ErrTruncated
		}
		return nil, &IOError{Err: err}
	}
	size := uint64(binary.LittleEndian.Uint32(r.prefix[:]))
	if size > uint64(r.limit) {
		return nil, &TooLargeError{Len: size, Max: uint64(r.limit)}
	}
	want := int(size)

	if want <= exactAllocMax {
		body := make([]byte, want)
		if _, err := r.fill(body); err != nil {
			return nil, bodyError(err)
		}
		return body, nil
	}

	return r.readLarge(want)
}

// readLarge reads a body of want > exactAllocMax bytes so that memory use
// tracks what the peer has really sent rather than what it announced,
// without copying the body over and over as it grows.
//
// The first bytes are staged in chunks that double the staged total (64
// KiB, 64 KiB, 128 KiB, …) and are never copied while they fill. Once the
// announced length is at most exactFactor times the bytes received, the
// body is allocated at exactly that length, the staged bytes are copied
// into it once, and the rest is read in place. At any point the memory
// allocated for the frame is thus at most (exactFactor+1) times what has
// arrived, plus the first chunk; a 10 MB body costs 14 MB of allocation
// and 4 MB of copying.
func (r *Reader) readLarge(want int) ([]byte, error) {
	var stage [24][]byte // 64 KiB doubling to 256 MiB takes 13 chunks
	nst, got := 0, 0
	for want > exactFactor*got {
		// The staged total doubles, so a chunk never reaches the end of
		// the body (want > exactFactor*got > 2*got): chunks stay full.
		c := make([]byte, max(firstChunk, got))
		m, err := r.fill(c)
		if err != nil {
			return nil, bodyError(err)
		}
		stage[nst] = c[:m]
		nst++
		got += m
	}
	body := make([]byte, want)
	off := 0
	for _, c := range stage[:nst] {
		off += copy(body[off:], c)
	}
	if _, err := r.fill(body[got:]); err != nil {
		return nil, bodyError(err)
	}
	return body, nil
}

// bodyError classifies an error met while reading a body.
func bodyError(err error) error {
	if err == io.EOF {
		return ErrTruncated
	}
	return &IOError{Err: err}
}

// fill reads until buf is full. It returns the number of bytes read and
// nil, or the bytes read so far with the first error. io.EOF is returned
// as such (never as io.ErrUnexpectedEOF) whatever the count; the caller
// decides whether it ends the stream cleanly.
func (r *Reader) fill(buf []byte) (int, error) {
	n, empty := 0, 0
	for n < len(buf) {
		m, err := r.r.Read(buf[n:])
		if m < 0 || m > len(buf)-n {
			return n, errBadCount
		}
		n += m
		if n == len(buf) {
			// A full read wins over an error reported alongside it; the
			// error, if persistent, resurfaces on the next read.
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			empty++
			if empty >= maxEmptyReads {
				return n, io.ErrNoProgress
			}
		} else {
			empty = 0
		}
	}
	return n, nil
}

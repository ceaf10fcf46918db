package worker

import "sync"

// ring keeps the last cap bytes written to it. It is safe for concurrent
// use.
type ring struct {
	mu    sync.Mutex
	size  int
	buf   []byte // allocated at full size on first write
	start int    // index of the oldest byte once full
	full  bool
	total int64
}

func newRing(size int) *ring { return &ring{size: size} }

// Write appends p, dropping the oldest bytes beyond the capacity.
func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	r.total += int64(n)
	if r.size == 0 || n == 0 {
		return n, nil
	}
	if r.buf == nil {
		r.buf = make([]byte, 0, r.size)
	}
	c := cap(r.buf)
	if len(p) >= c {
		r.buf = append(r.buf[:0], p[len(p)-c:]...)
		r.start, r.full = 0, true
		return n, nil
	}
	if !r.full {
		room := c - len(r.buf)
		if len(p) <= room {
			r.buf = append(r.buf, p...)
			return n, nil
		}
		r.buf = append(r.buf, p[:room]...)
		p = p[room:]
		r.full = true
		r.start = 0
	}
	for len(p) > 0 {
		k := copy(r.buf[r.start:], p)
		p = p[k:]
		r.start = (r.start + k) % c
	}
	return n, nil
}

// String returns the retained bytes, oldest first.
func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return string(r.buf)
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.start:]...)
	out = append(out, r.buf[:r.start]...)
	return string(out)
}

// Total returns the number of bytes ever written.
func (r *ring) Total() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

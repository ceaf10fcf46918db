package transport

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/gomonty/monty/frame"
)

// pipePair returns two Streams connected back to back over io.Pipe.
func pipePair(limit int) (*Stream, *Stream) {
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	return NewStream(ar, aw, limit), NewStream(br, bw, limit)
}

func TestStreamRoundTrip(t *testing.T) {
	a, b := pipePair(0)
	defer a.Close()
	defer b.Close()
	msgs := [][]byte{{}, []byte("hello"), bytes.Repeat([]byte{7}, 200_000)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, m := range msgs {
			if err := a.WriteFrame(m); err != nil {
				t.Error(err)
			}
		}
		a.Close()
	}()
	for _, want := range msgs {
		got, err := b.ReadFrame()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("got %d bytes, %v; want %d bytes", len(got), err, len(want))
		}
	}
	if _, err := b.ReadFrame(); err != io.EOF {
		t.Fatalf("after close: %v, want io.EOF", err)
	}
	wg.Wait()
}

func TestStreamLimits(t *testing.T) {
	a, b := pipePair(16)
	defer a.Close()
	defer b.Close()
	if err := a.WriteFrame(make([]byte, 17)); !errors.Is(err, frame.ErrTooLarge) {
		t.Fatalf("oversize write: %v", err)
	}
	var _ Conn = a
}

func TestStreamCloseIsIdempotent(t *testing.T) {
	a, b := pipePair(0)
	b.Close()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteFrame([]byte("x")); err == nil {
		t.Fatal("write after close succeeded")
	}
}

// rwc is a read-write-closer whose dynamic type is not comparable (it
// holds a slice), passed by value as both ends of a Stream.
type rwc struct {
	closed []int
	*bytes.Buffer
}

func (c rwc) Close() error { c.closed[0]++; return nil }

// Close compared the two ends as interfaces to avoid closing one value
// twice, which panics when their dynamic type is not comparable.
func TestStreamCloseUncomparableEnds(t *testing.T) {
	c := rwc{closed: make([]int, 1), Buffer: new(bytes.Buffer)}
	s := NewStream(c, c, 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if c.closed[0] == 0 {
		t.Fatal("Close did not close the stream")
	}
}

// anyCloser is comparable as a type, but not when its field holds a slice.
type anyCloser struct {
	v any
	n *int
}

func (c anyCloser) Read([]byte) (int, error)  { return 0, io.EOF }
func (c anyCloser) Write([]byte) (int, error) { return 0, nil }
func (c anyCloser) Close() error              { *c.n++; return nil }

func TestStreamCloseDynamicallyUncomparableEnds(t *testing.T) {
	n := 0
	c := anyCloser{v: []int{1}, n: &n}
	if err := NewStream(c, c, 0).Close(); err != nil || n == 0 {
		t.Fatalf("Close = %v, closed %d times", err, n)
	}
	// One comparable value as both ends is closed once.
	n = 0
	c = anyCloser{v: 1, n: &n}
	if err := NewStream(c, c, 0).Close(); err != nil || n != 1 {
		t.Fatalf("Close = %v, closed %d times, want once", err, n)
	}
}

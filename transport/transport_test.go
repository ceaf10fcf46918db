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

package ws

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/gomonty/monty/internal/wsframe"
)

// capReader hands every byte of a stream within the cap on unchanged,
// however small the reads (a header split over several of them), and
// stops at the header of a message announced over the cap, counting a
// fragmented message's frames together and control frames not at all.
func TestCapReaderChecksAnnouncedLengths(t *testing.T) {
	const limit = 300
	var ok []byte
	ok = append(ok, wsframe.Client(true, 2, bytes.Repeat([]byte{1}, limit))...) // at the cap
	ok = append(ok, wsframe.Client(false, 2, bytes.Repeat([]byte{2}, 200))...)  // 200 of a message
	ok = append(ok, wsframe.Client(true, 9, bytes.Repeat([]byte{3}, 100))...)   // a ping between its fragments
	ok = append(ok, wsframe.Client(true, 0, bytes.Repeat([]byte{4}, 100))...)   // 300 in all
	ok = append(ok, wsframe.Client(true, 2, bytes.Repeat([]byte{5}, 126))...)   // a 16-bit length
	ok = append(ok, wsframe.Client(true, 8, []byte{3, 232})...)                 // a Close
	for _, read := range []func(io.Reader) io.Reader{
		func(r io.Reader) io.Reader { return r },
		iotest.OneByteReader,
		iotest.HalfReader,
	} {
		cc := &capReader{src: bytes.NewReader(ok), max: limit}
		got, err := io.ReadAll(read(cc))
		if err != nil || !bytes.Equal(got, ok) {
			t.Fatalf("within the cap: %d of %d bytes, %v", len(got), len(ok), err)
		}
	}

	for _, tc := range []struct {
		name   string
		stream []byte
		before int // bytes handed on before the refused header
		n      uint64
	}{
		{"one frame", wsframe.Client(true, 2, make([]byte, limit+1)), 0, limit + 1},
		{"fragments", append(wsframe.Client(false, 2, make([]byte, 200)), wsframe.Client(true, 0, make([]byte, 101))...), len(wsframe.Client(false, 2, make([]byte, 200))), limit + 1},
		{"a huge 64-bit length", []byte{0x82, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0, 0xff << 56},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := &capReader{src: bytes.NewReader(tc.stream), max: limit}
			got, err := io.ReadAll(iotest.OneByteReader(cc))
			var at *announcedTooLarge
			if !errors.As(err, &at) || at.n != tc.n {
				t.Fatalf("err %v, want an announced length of %d", err, tc.n)
			}
			if !bytes.Equal(got, tc.stream[:tc.before]) {
				t.Fatalf("handed on %d bytes before the refusal, want %d", len(got), tc.before)
			}
			if _, err := cc.Read(make([]byte, 10)); !errors.Is(err, errAnnouncedTooLarge) {
				t.Fatalf("a read after the refusal: %v", err)
			}
		})
	}
}

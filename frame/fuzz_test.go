package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// splitReader hands out data first as one read of up to split bytes, then
// in reads of at most chunk bytes.
type splitReader struct {
	data  []byte
	split int
	chunk int
	first bool
}

func (s *splitReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := s.chunk
	if !s.first {
		s.first = true
		n = s.split
	}
	n = max(1, min(n, len(p), len(s.data)))
	copy(p, s.data[:n])
	s.data = s.data[n:]
	return n, nil
}

func FuzzReader(f *testing.F) {
	f.Add([]byte{}, 0, 1, 0)
	f.Add([]byte{0, 0, 0, 0}, 2, 1, 0)
	f.Add([]byte{3, 0, 0, 0, 'a', 'b', 'c', 1, 0, 0, 0, 'z'}, 5, 3, 0)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, 1, 1, 1024)
	f.Add([]byte{5, 0}, 1, 1, 0)
	f.Add([]byte{5, 0, 0, 0, 'a'}, 4, 2, 4)
	f.Add([]byte{0, 0, 0, 16, 'x'}, 3, 7, 0)
	f.Fuzz(func(t *testing.T, data []byte, split, chunk, limit int) {
		src := &splitReader{data: data, split: split & 0xffff, chunk: chunk & 0xffff}
		r := NewReader(src, limit)
		var consumed []byte
		var err error
		for {
			var body []byte
			body, err = r.ReadFrame()
			if err != nil {
				if body != nil {
					t.Fatalf("body returned with error %v", err)
				}
				break
			}
			if len(body) > r.Limit() {
				t.Fatalf("frame of %d bytes over limit %d", len(body), r.Limit())
			}
			consumed = AppendFrame(consumed, body)
		}
		if !bytes.HasPrefix(data, consumed) {
			t.Fatalf("re-encoded frames do not match the input prefix")
		}
		rest := data[len(consumed):]
		var tl *TooLargeError
		switch {
		case err == io.EOF:
			if len(rest) != 0 {
				t.Fatalf("EOF with %d bytes unread", len(rest))
			}
		case err == ErrTruncated:
			if len(rest) == 0 {
				t.Fatal("truncated at a frame boundary")
			}
			if len(rest) >= PrefixLen {
				n := binary.LittleEndian.Uint32(rest)
				if uint64(len(rest)-PrefixLen) >= uint64(n) {
					t.Fatalf("truncated but %d body bytes of %d were present", len(rest)-PrefixLen, n)
				}
			}
		case errors.As(err, &tl):
			if len(rest) < PrefixLen {
				t.Fatal("too large without a full prefix")
			}
			n := binary.LittleEndian.Uint32(rest)
			if tl.Len != uint64(n) || tl.Max != uint64(r.Limit()) || tl.Len <= tl.Max {
				t.Fatalf("bad TooLargeError %+v for prefix %d", tl, n)
			}
		default:
			t.Fatalf("unexpected error %v", err)
		}
	})
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("hello world"), []byte{5, 0, 6})
	f.Add([]byte{}, []byte{0, 0})
	f.Add(bytes.Repeat([]byte{7}, 300), []byte{255, 45})
	f.Fuzz(func(t *testing.T, data []byte, lens []byte) {
		// Cut data into bodies whose lengths come from lens; the remainder
		// becomes one final body.
		var bodies [][]byte
		rest := data
		for _, l := range lens {
			n := min(int(l), len(rest))
			bodies = append(bodies, rest[:n])
			rest = rest[n:]
		}
		bodies = append(bodies, rest)

		var out bytes.Buffer
		w := NewWriter(&out, 0)
		var want []byte
		for _, b := range bodies {
			if err := w.WriteFrame(b); err != nil {
				t.Fatal(err)
			}
			want = AppendFrame(want, b)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatal("Writer and AppendFrame disagree")
		}
		r := NewReader(&out, 0)
		for i, b := range bodies {
			got, err := r.ReadFrame()
			if err != nil || !bytes.Equal(got, b) {
				t.Fatalf("frame %d: %v", i, err)
			}
		}
		if _, err := r.ReadFrame(); err != io.EOF {
			t.Fatalf("want EOF, got %v", err)
		}
	})
}

package frame

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

func prefixed(n uint32, body ...byte) []byte {
	return append(binary.LittleEndian.AppendUint32(nil, n), body...)
}

func TestRoundTrip(t *testing.T) {
	bodies := [][]byte{
		[]byte("feed"),
		{},
		bytes.Repeat([]byte{0xab}, 70000), // above the exact-allocation size
		[]byte("ok"),
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, 0)
	for _, b := range bodies {
		if err := w.WriteFrame(b); err != nil {
			t.Fatal(err)
		}
	}
	r := NewReader(&buf, 0)
	for i, want := range bodies {
		got, err := r.ReadFrame()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(got, want) || got == nil {
			t.Fatalf("frame %d: got %d bytes, want %d", i, len(got), len(want))
		}
	}
	if _, err := r.ReadFrame(); err != io.EOF {
		t.Fatalf("after last frame: %v, want io.EOF", err)
	}
	// A clean EOF is not sticky: asking again still says EOF.
	if _, err := r.ReadFrame(); err != io.EOF {
		t.Fatalf("second EOF: %v", err)
	}
}

func TestChunkedReads(t *testing.T) {
	for _, size := range []int{0, 1, 100, 200000} {
		body := bytes.Repeat([]byte("xyz"), size)
		data := AppendFrame(nil, body)
		data = AppendFrame(data, []byte("tail"))
		r := NewReader(iotest.OneByteReader(bytes.NewReader(data)), 0)
		got, err := r.ReadFrame()
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("size %d: %v, %d bytes", size, err, len(got))
		}
		got, err = r.ReadFrame()
		if err != nil || string(got) != "tail" {
			t.Fatalf("size %d tail: %v %q", size, err, got)
		}
		if _, err := r.ReadFrame(); err != io.EOF {
			t.Fatalf("size %d: %v, want EOF", size, err)
		}
	}
}

func TestDataErrReader(t *testing.T) {
	// The last chunk arrives together with io.EOF.
	data := AppendFrame(nil, []byte("hello"))
	r := NewReader(iotest.DataErrReader(bytes.NewReader(data)), 0)
	got, err := r.ReadFrame()
	if err != nil || string(got) != "hello" {
		t.Fatalf("%v %q", err, got)
	}
	if _, err := r.ReadFrame(); err != io.EOF {
		t.Fatalf("%v, want EOF", err)
	}
}

func TestBuffersAreNotReused(t *testing.T) {
	data := AppendFrame(AppendFrame(nil, []byte("aaaa")), []byte("bbbb"))
	r := NewReader(bytes.NewReader(data), 0)
	a, _ := r.ReadFrame()
	b, _ := r.ReadFrame()
	if string(a) != "aaaa" || string(b) != "bbbb" {
		t.Fatalf("%q %q", a, b)
	}
}

// repeatReader serves the same bytes forever.
type repeatReader struct {
	data []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := copy(p, r.data[r.off:])
	r.off = (r.off + n) % len(r.data)
	return n, nil
}

func TestOversizePrefix(t *testing.T) {
	r := NewReader(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3}), 1024)
	_, err := r.ReadFrame()
	var tl *TooLargeError
	if !errors.As(err, &tl) || *tl != (TooLargeError{Len: 0xFFFFFFFF, Max: 1024}) {
		t.Fatalf("got %#v", err)
	}
	if !errors.Is(err, ErrTooLarge) {
		t.Fatal("errors.Is(err, ErrTooLarge) = false")
	}
	if got, want := err.Error(), "frame of 4294967295 bytes exceeds maximum of 1024 bytes"; got != want {
		t.Fatalf("%q != %q", got, want)
	}
	// Sticky: the stream is out of sync, so no further frame is read.
	if _, err2 := r.ReadFrame(); err2 != err {
		t.Fatalf("second read: %v", err2)
	}
}

func TestOversizePrefixDoesNotAllocateBody(t *testing.T) {
	// With the default limit the prefix 2^28+1 is just over the cap; with
	// limit 1024 the prefix is 4 GiB. Neither may allocate body memory.
	for _, c := range []struct {
		prefix uint32
		limit  int
	}{{0xFFFFFFFF, 1024}, {MaxFrameLen + 1, 0}} {
		src := &repeatReader{data: prefixed(c.prefix)}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 100 {
			_, err := NewReader(src, c.limit).ReadFrame()
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("got %v", err)
			}
		}
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
			t.Fatalf("prefix %#x: 100 refusals allocated %d bytes", c.prefix, d)
		}
	}
}

func TestAtLimitAccepted(t *testing.T) {
	body := bytes.Repeat([]byte{1}, 16)
	r := NewReader(bytes.NewReader(AppendFrame(nil, body)), 16)
	if got, err := r.ReadFrame(); err != nil || len(got) != 16 {
		t.Fatalf("%v %d", err, len(got))
	}
	r = NewReader(bytes.NewReader(AppendFrame(nil, append(body, 2))), 16)
	if _, err := r.ReadFrame(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("%v", err)
	}
}

func TestTruncated(t *testing.T) {
	cases := map[string][]byte{
		"prefix 1 byte":  {5},
		"prefix 2 bytes": {5, 0},
		"prefix 3 bytes": {5, 0, 0},
		"empty body":     prefixed(5),
		"short body":     prefixed(5, 'a', 'b', 'c', 'd'),
		"large short":    append(prefixed(100000), make([]byte, 99999)...),
	}
	for name, data := range cases {
		for _, chunked := range []bool{false, true} {
			var src io.Reader = bytes.NewReader(data)
			if chunked {
				src = iotest.OneByteReader(src)
			}
			r := NewReader(src, 0)
			_, err := r.ReadFrame()
			if err != ErrTruncated {
				t.Errorf("%s (chunked=%v): %v, want ErrTruncated", name, chunked, err)
			}
			if err != nil && err.Error() != "stream ended mid-frame" {
				t.Errorf("%s: text %q", name, err)
			}
			if _, err2 := r.ReadFrame(); err2 != ErrTruncated {
				t.Errorf("%s: not sticky: %v", name, err2)
			}
		}
	}
}

func TestTruncatedAfterGoodFrame(t *testing.T) {
	data := append(AppendFrame(nil, []byte("ok")), 9, 0, 0, 0, 'x')
	r := NewReader(bytes.NewReader(data), 0)
	if b, err := r.ReadFrame(); err != nil || string(b) != "ok" {
		t.Fatalf("%v %q", err, b)
	}
	if _, err := r.ReadFrame(); err != ErrTruncated {
		t.Fatalf("%v", err)
	}
}

func TestCleanEOF(t *testing.T) {
	r := NewReader(strings.NewReader(""), 0)
	b, err := r.ReadFrame()
	if err != io.EOF || b != nil {
		t.Fatalf("%v %v", b, err)
	}
}

func TestZeroLengthFrame(t *testing.T) {
	r := NewReader(bytes.NewReader([]byte{0, 0, 0, 0}), 0)
	b, err := r.ReadFrame()
	if err != nil || b == nil || len(b) != 0 {
		t.Fatalf("%v %v", b, err)
	}
	if _, err := r.ReadFrame(); err != io.EOF {
		t.Fatal(err)
	}
}

func TestIOErrorWrapped(t *testing.T) {
	boom := errors.New("boom")
	cases := map[string]io.Reader{
		"at start":  iotest.ErrReader(boom),
		"in prefix": io.MultiReader(bytes.NewReader([]byte{1, 0}), iotest.ErrReader(boom)),
		"in body":   io.MultiReader(bytes.NewReader(prefixed(3, 'a')), iotest.ErrReader(boom)),
		"large":     io.MultiReader(bytes.NewReader(append(prefixed(1<<20), make([]byte, 300000)...)), iotest.ErrReader(boom)),
	}
	for name, src := range cases {
		r := NewReader(src, 0)
		_, err := r.ReadFrame()
		var ioe *IOError
		if !errors.As(err, &ioe) || !errors.Is(err, boom) {
			t.Errorf("%s: %#v", name, err)
			continue
		}
		if err.Error() != "frame I/O error: boom" {
			t.Errorf("%s: text %q", name, err)
		}
		if errors.Is(err, ErrTruncated) || errors.Is(err, io.EOF) || errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: misclassified", name)
		}
		if _, err2 := r.ReadFrame(); err2 != err {
			t.Errorf("%s: not sticky: %v", name, err2)
		}
	}
}

func TestTimeoutReaderIsIOError(t *testing.T) {
	// TimeoutReader fails its second read; the frame is cut short by a
	// non-EOF error, which must not be mistaken for truncation.
	data := AppendFrame(nil, []byte("hello"))
	r := NewReader(iotest.TimeoutReader(iotest.OneByteReader(bytes.NewReader(data))), 0)
	_, err := r.ReadFrame()
	if !errors.Is(err, iotest.ErrTimeout) {
		t.Fatalf("%v", err)
	}
}

type stallReader struct{}

func (stallReader) Read([]byte) (int, error) { return 0, nil }

type liarReader struct{}

func (liarReader) Read(p []byte) (int, error) { return len(p) + 1, nil }

func TestMisbehavingReaders(t *testing.T) {
	if _, err := NewReader(stallReader{}, 0).ReadFrame(); !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("stall: %v", err)
	}
	var ioe *IOError
	if _, err := NewReader(liarReader{}, 0).ReadFrame(); !errors.As(err, &ioe) {
		t.Errorf("liar: %v", err)
	}
}

func TestGrowthIsBounded(t *testing.T) {
	data := append(prefixed(256<<20), []byte("0123456789")...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := NewReader(bytes.NewReader(data), 0).ReadFrame()
	runtime.ReadMemStats(&after)
	if err != ErrTruncated {
		t.Fatalf("%v", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d >= 1<<20 {
		t.Fatalf("announcing 256 MiB and sending 10 bytes allocated %d bytes", d)
	} else {
		t.Logf("allocated %d bytes", d)
	}
}

func TestGrowthTracksReceived(t *testing.T) {
	// 1 MiB announced, 300 KB sent: allocation stays within a small factor
	// of what arrived, not of what was announced.
	const sent = 300000
	data := append(prefixed(64<<20), make([]byte, sent)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := NewReader(bytes.NewReader(data), 0).ReadFrame()
	runtime.ReadMemStats(&after)
	if err != ErrTruncated {
		t.Fatalf("%v", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 4*sent {
		t.Fatalf("allocated %d bytes for %d received", d, sent)
	}
}

func TestLargeFrameExactCapacity(t *testing.T) {
	body := make([]byte, 3<<20+17)
	for i := range body {
		body[i] = byte(i * 7)
	}
	got, err := NewReader(bytes.NewReader(AppendFrame(nil, body)), 0).ReadFrame()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("%v", err)
	}
	if cap(got) != len(body) {
		t.Fatalf("cap %d, len %d", cap(got), len(body))
	}
}

func TestLimits(t *testing.T) {
	for in, want := range map[int]int{-1: MaxFrameLen, 0: MaxFrameLen, 1: 1, 1024: 1024, MaxFrameLen: MaxFrameLen, MaxFrameLen + 1: MaxFrameLen, math.MaxInt: MaxFrameLen} {
		if got := NewReader(nil, in).Limit(); got != want {
			t.Errorf("reader limit %d -> %d, want %d", in, got, want)
		}
		if got := NewWriter(nil, in).Limit(); got != want {
			t.Errorf("writer limit %d -> %d, want %d", in, got, want)
		}
	}
}

func TestCheckLen(t *testing.T) {
	if err := CheckLen(16, 16); err != nil {
		t.Fatal(err)
	}
	if err := CheckLen(0, 1); err != nil {
		t.Fatal(err)
	}
	if err := CheckLen(MaxFrameLen, 0); err != nil {
		t.Fatal(err)
	}
	var tl *TooLargeError
	if err := CheckLen(17, 16); !errors.As(err, &tl) || *tl != (TooLargeError{17, 16}) {
		t.Fatalf("%v", err)
	}
	if err := CheckLen(MaxFrameLen+1, MaxFrameLen*2); !errors.As(err, &tl) || *tl != (TooLargeError{MaxFrameLen + 1, MaxFrameLen}) {
		t.Fatalf("%v", err)
	}
	if err := CheckLen(-1, 16); !errors.As(err, &tl) || tl.Len != math.MaxUint64 {
		t.Fatalf("%v", err)
	}
	if err := CheckMessage(make([]byte, 17), 16); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("%v", err)
	}
	if err := CheckMessage(nil, 16); err != nil {
		t.Fatal(err)
	}
}

func TestAppendFrame(t *testing.T) {
	got := AppendFrame([]byte("x"), []byte("abc"))
	if want := []byte{'x', 3, 0, 0, 0, 'a', 'b', 'c'}; !bytes.Equal(got, want) {
		t.Fatalf("%v", got)
	}
	if got := AppendFrame(nil, make([]byte, 0x0102)); !bytes.Equal(got[:4], []byte{2, 1, 0, 0}) {
		t.Fatalf("little endian: %v", got[:4])
	}
}

type countingWriter struct {
	calls int
	buf   bytes.Buffer
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.calls++
	return c.buf.Write(p)
}

func TestWriterOneWritePerFrame(t *testing.T) {
	cw := &countingWriter{}
	w := NewWriter(cw, 0)
	bodies := [][]byte{nil, []byte("a"), make([]byte, 5000), make([]byte, 2<<20), []byte("z")}
	for i, b := range bodies {
		if err := w.WriteFrame(b); err != nil {
			t.Fatal(err)
		}
		if cw.calls != i+1 {
			t.Fatalf("after frame %d: %d Write calls", i, cw.calls)
		}
	}
	var want []byte
	for _, b := range bodies {
		want = AppendFrame(want, b)
	}
	if !bytes.Equal(cw.buf.Bytes(), want) {
		t.Fatal("output mismatch")
	}
}

func TestWriterOversizeEmitsNothing(t *testing.T) {
	cw := &countingWriter{}
	w := NewWriter(cw, 16)
	err := w.WriteFrame(make([]byte, 17))
	var tl *TooLargeError
	if !errors.As(err, &tl) || *tl != (TooLargeError{17, 16}) {
		t.Fatalf("%v", err)
	}
	if cw.calls != 0 || cw.buf.Len() != 0 {
		t.Fatalf("%d calls, %d bytes written", cw.calls, cw.buf.Len())
	}
	// The stream stays usable.
	if err := w.WriteFrame(make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	if cw.buf.Len() != 20 {
		t.Fatalf("%d bytes", cw.buf.Len())
	}
}

type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) - 1, nil }

type failFlusher struct{ bytes.Buffer }

func (*failFlusher) Flush() error { return errors.New("flush failed") }

func TestWriterErrors(t *testing.T) {
	boom := errors.New("boom")
	var ioe *IOError
	err := NewWriter(shortWriter{}, 0).WriteFrame([]byte("x"))
	if !errors.As(err, &ioe) || !errors.Is(err, io.ErrShortWrite) {
		t.Errorf("short: %v", err)
	}
	pr, pw := io.Pipe()
	pr.CloseWithError(boom)
	err = NewWriter(pw, 0).WriteFrame([]byte("x"))
	if !errors.As(err, &ioe) || !errors.Is(err, boom) || err.Error() != "frame I/O error: boom" {
		t.Errorf("pipe: %v", err)
	}
	err = NewWriter(&failFlusher{}, 0).WriteFrame([]byte("x"))
	if !errors.As(err, &ioe) || err.Error() != "frame I/O error: flush failed" {
		t.Errorf("flush: %v", err)
	}
}

func TestWriterFlushes(t *testing.T) {
	var out bytes.Buffer
	bw := bufio.NewWriterSize(&out, 4096)
	w := NewWriter(bw, 0)
	if err := w.WriteFrame([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), AppendFrame(nil, []byte("hi"))) {
		t.Fatalf("not flushed: %v", out.Bytes())
	}
}

func TestWriterDoesNotRetainBody(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, 0)
	body := []byte("abc")
	if err := w.WriteFrame(body); err != nil {
		t.Fatal(err)
	}
	body[0] = 'X'
	if err := w.WriteFrame([]byte("de")); err != nil {
		t.Fatal(err)
	}
	want := AppendFrame(AppendFrame(nil, []byte("abc")), []byte("de"))
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("%q", out.Bytes())
	}
}

func TestLargeFrameAllocation(t *testing.T) {
	// A complete large body is allocated once at its length, after at most
	// a third of it has been staged.
	const n = 10_000_000
	data := AppendFrame(nil, make([]byte, n))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	body, err := NewReader(bytes.NewReader(data), 0).ReadFrame()
	runtime.ReadMemStats(&after)
	if err != nil || len(body) != n || cap(body) != n {
		t.Fatalf("len %d cap %d: %v", len(body), cap(body), err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > n+n/2 {
		t.Fatalf("reading a %d-byte frame allocated %d bytes", n, d)
	}
	// Truncated anywhere, the allocation stays within a small factor of
	// what arrived.
	for _, sent := range []int{70 << 10, 200 << 10, 1 << 20, 3 << 20, 3<<20 + 1<<19, 9 << 20} {
		data := append(prefixed(n), make([]byte, sent)...)
		runtime.ReadMemStats(&before)
		_, err := NewReader(bytes.NewReader(data), 0).ReadFrame()
		runtime.ReadMemStats(&after)
		if err != ErrTruncated {
			t.Fatalf("sent %d: %v", sent, err)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 4*uint64(sent)+64<<10 {
			t.Errorf("sent %d of %d: allocated %d bytes", sent, n, d)
		}
	}
}

func TestLargeFrameContent(t *testing.T) {
	// Bodies around the staging boundaries, through readers that return
	// short reads and data together with io.EOF.
	for _, n := range []int{64<<10 + 1, 192 << 10, 192<<10 + 1, 384<<10 + 5, 3<<20 + 17} {
		body := make([]byte, n)
		for i := range body {
			body[i] = byte(i*31 + i>>16)
		}
		stream := append(AppendFrame(nil, body), AppendFrame(nil, []byte("next"))...)
		for name, src := range map[string]io.Reader{
			"half":    iotest.HalfReader(bytes.NewReader(stream)),
			"dataerr": iotest.DataErrReader(bytes.NewReader(stream)),
		} {
			r := NewReader(src, 0)
			got, err := r.ReadFrame()
			if err != nil || !bytes.Equal(got, body) || cap(got) != n {
				t.Fatalf("%d bytes, %s: len %d cap %d, %v", n, name, len(got), cap(got), err)
			}
			if got, err := r.ReadFrame(); err != nil || string(got) != "next" {
				t.Fatalf("%d bytes, %s: next frame %q, %v", n, name, got, err)
			}
		}
		// Truncated just before and after each staging boundary.
		for _, cut := range []int{64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, n - 1} {
			for _, c := range []int{cut - 1, cut, cut + 1} {
				if c <= 0 || c >= n {
					continue
				}
				if _, err := NewReader(bytes.NewReader(AppendFrame(nil, body)[:PrefixLen+c]), 0).ReadFrame(); err != ErrTruncated {
					t.Fatalf("%d bytes cut at %d: %v", n, c, err)
				}
			}
		}
	}
}

// A TooLargeError whose length is not known (Len 0: a WebSocket message
// the library stopped reading at the cap) claims none.
func TestTooLargeErrorUnknownLength(t *testing.T) {
	err := &TooLargeError{Max: 1024}
	if got, want := err.Error(), "frame exceeds maximum of 1024 bytes"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

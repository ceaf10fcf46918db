package tap

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/transport"
)

func TestRoundTrip(t *testing.T) {
	var wire bytes.Buffer
	in := transport.NewStream(bytes.NewReader([]byte{3, 0, 0, 0, 'a', 'b', 'c'}), &wire, 0)
	var rec bytes.Buffer
	c := New(in, &rec)
	at := time.Unix(1700000000, 42)
	c.now = func() time.Time { return at }
	b, err := c.ReadFrame()
	if err != nil || string(b) != "abc" {
		t.Fatal(b, err)
	}
	if err := c.WriteFrame([]byte("xy")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadFrame(); err != io.EOF {
		t.Fatal(err)
	}
	r, err := NewReader(&rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		rc, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !rc.Time.Equal(at) {
			t.Fatal(rc.Time)
		}
		got = append(got, string(rc.Dir)+string(rc.Body))
	}
	if strings.Join(got, ",") != ">abc,<xy" {
		t.Fatal(got)
	}
}

func TestHostileRecords(t *testing.T) {
	if _, err := NewReader(strings.NewReader("garbage"), 0); err != ErrNotRecord {
		t.Fatal(err)
	}
	for _, s := range []string{"?", ">1234567", ">12345678\xff\xff\xff\x7f", ">12345678\x05\x00\x00\x00ab", "x12345678\x00\x00\x00\x00"} {
		r, err := NewReader(strings.NewReader(Header+s), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Next(); err == nil || err == io.EOF {
			t.Fatalf("%q: %v", s, err)
		}
	}
}

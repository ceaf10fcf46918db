package tap

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// encode writes recs as a record stream with the Conn's own writer.
func encode(t *testing.T, recs []Record) []byte {
	t.Helper()
	var out bytes.Buffer
	c := &Conn{w: bufio.NewWriter(&out)}
	if _, err := c.w.WriteString(Header); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		c.now = func() time.Time { return r.Time }
		c.record(r.Dir, r.Body)
	}
	if err := c.w.Flush(); err != nil || c.err != nil {
		t.Fatal(err, c.err)
	}
	return out.Bytes()
}

// FuzzReader reads a record stream of hostile bytes: it ends with io.EOF,
// ErrNotRecord or a *FormatError (which does not match io.EOF), never
// reads a body over the cap, and
// the records it read, written again, are the stream up to where it
// stopped (all of it at io.EOF).
func FuzzReader(f *testing.F) {
	f.Add([]byte(Header))
	f.Add([]byte(Header + ">12345678\x03\x00\x00\x00abc<\x00\x00\x00\x00\x00\x00\x00\x80\x00\x00\x00\x00"))
	f.Add([]byte(Header + ">12345678\xff\xff\xff\x7f"))
	f.Add([]byte(Header + ">12345678\x05\x00\x00\x00ab"))
	f.Add([]byte(Header + "x12345678\x00\x00\x00\x00"))
	f.Add([]byte("monty-tap 2\n"))
	const maxLen = 64
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b), maxLen)
		if err != nil {
			if err != ErrNotRecord {
				t.Fatalf("NewReader: %v", err)
			}
			return
		}
		var recs []Record
		for {
			rec, err := r.Next()
			if err == io.EOF {
				if got := encode(t, recs); !bytes.Equal(got, b) {
					t.Fatalf("records written again\n% x\nwant\n% x", got, b)
				}
				return
			}
			if err != nil {
				var fe *FormatError
				if !errors.As(err, &fe) || err.Error() == "" {
					t.Fatalf("error %T %v, want a *FormatError", err, err)
				}
				if errors.Is(err, io.EOF) {
					// Readers stop at io.EOF through errors.Is, as
					// montygo decode --record does.
					t.Fatalf("a broken stream's error %v matches io.EOF, the clean end", err)
				}
				if got := encode(t, recs); !bytes.HasPrefix(b, got) {
					t.Fatalf("records written again\n% x\nare not a prefix of\n% x", got, b)
				}
				return
			}
			if len(rec.Body) > maxLen {
				t.Fatalf("body of %d bytes over the cap of %d", len(rec.Body), maxLen)
			}
			recs = append(recs, rec)
		}
	})
}

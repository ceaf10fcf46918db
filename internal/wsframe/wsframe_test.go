package wsframe

import (
	"bytes"
	"testing"
)

// The header of each length form, masked and not: 7 bits up to 125, a
// 16-bit length up to 65535, a 64-bit one past it.
func TestHeaders(t *testing.T) {
	for _, c := range []struct {
		fin    bool
		op     byte
		n      int
		client []byte
		server []byte
	}{
		{true, 2, 0, []byte{0x82, 0x80, 0, 0, 0, 0}, []byte{0x82, 0x00}},
		{false, 9, 125, []byte{0x09, 0x80 | 125, 0, 0, 0, 0}, []byte{0x09, 125}},
		{true, 1, 126, []byte{0x81, 0x80 | 126, 0, 126, 0, 0, 0, 0}, []byte{0x81, 126, 0, 126}},
		{true, 2, 0xffff, []byte{0x82, 0x80 | 126, 0xff, 0xff, 0, 0, 0, 0}, []byte{0x82, 126, 0xff, 0xff}},
		{true, 0, 0x10000, []byte{0x80, 0x80 | 127, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, []byte{0x80, 127, 0, 0, 0, 0, 0, 1, 0, 0}},
	} {
		payload := bytes.Repeat([]byte{7}, c.n)
		if got := Client(c.fin, c.op, payload); !bytes.Equal(got[:len(c.client)], c.client) || !bytes.Equal(got[len(c.client):], payload) {
			t.Errorf("Client(%v, %d, %d bytes) header % x, want % x", c.fin, c.op, c.n, got[:min(len(got), len(c.client))], c.client)
		}
		if got := Server(c.fin, c.op, payload); !bytes.Equal(got[:len(c.server)], c.server) || !bytes.Equal(got[len(c.server):], payload) {
			t.Errorf("Server(%v, %d, %d bytes) header % x, want % x", c.fin, c.op, c.n, got[:min(len(got), len(c.server))], c.server)
		}
	}
}

// Read gives back the opcode and payload of every length form, masked or
// not, and unmasks a payload written under a nonzero key.
func TestRead(t *testing.T) {
	for _, n := range []int{0, 125, 126, 0xffff, 0x10000} {
		payload := bytes.Repeat([]byte{7}, n)
		for _, f := range [][]byte{Client(true, 2, payload), Server(false, 9, payload)} {
			op, p, err := Read(bytes.NewReader(f))
			if err != nil || op != f[0]&0x0f || !bytes.Equal(p, payload) {
				t.Errorf("Read of a %d-byte frame = %d, %d bytes, %v", n, op, len(p), err)
			}
		}
	}
	masked := []byte{0x81, 0x80 | 2, 1, 2, 3, 4, 'h' ^ 1, 'i' ^ 2}
	if op, p, err := Read(bytes.NewReader(masked)); err != nil || op != 1 || string(p) != "hi" {
		t.Errorf("Read of a masked frame = %d, %q, %v", op, p, err)
	}
	if _, _, err := Read(bytes.NewReader(Server(true, 2, []byte("abc"))[:3])); err == nil {
		t.Error("Read of a torn frame succeeded")
	}
}

// The worked example of RFC 6455, section 1.3.
func TestAccept(t *testing.T) {
	if got, want := Accept("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="; got != want {
		t.Errorf("Accept = %q, want %q", got, want)
	}
}

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

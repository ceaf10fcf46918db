// Package wsframe writes and reads single WebSocket frames (RFC 6455,
// section 5.2) byte for byte, for tests that play a peer by hand: a client
// whose frames the server must refuse, or a hostile server a dial must
// survive. The WebSocket library never writes such frames, so these tests
// write their own. Test support only.
package wsframe

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"io"
)

// Accept is the Sec-WebSocket-Accept value that answers an upgrade
// request's Sec-WebSocket-Key (RFC 6455, section 4.2.2).
func Accept(key string) string {
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Read reads one whole frame from r, masked (a client's) or not (a
// server's), and returns its opcode and its payload, unmasked.
func Read(r io.Reader) (op byte, payload []byte, err error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	var mask [4]byte
	if h[1]&0x80 != 0 {
		if _, err := io.ReadFull(r, mask[:]); err != nil {
			return 0, nil, err
		}
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return 0, nil, err
	}
	for i := range p {
		p[i] ^= mask[i%4]
	}
	return h[0] & 0x0f, p, nil
}

// Client is one client-to-server frame with opcode op and payload, FIN
// set when fin. It is masked, as a client's frame must be, with the key
// 0, which leaves the payload as it is.
func Client(fin bool, op byte, payload []byte) []byte {
	return appendFrame(fin, true, op, payload)
}

// Server is one unmasked server-to-client frame with opcode op and
// payload, FIN set when fin.
func Server(fin bool, op byte, payload []byte) []byte {
	return appendFrame(fin, false, op, payload)
}

func appendFrame(fin, masked bool, op byte, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	var mask byte
	if masked {
		mask = 0x80
	}
	out := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		out = append(out, mask|byte(n))
	case n <= 0xffff:
		out = append(out, mask|126, byte(n>>8), byte(n))
	default:
		out = append(out, mask|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	if masked {
		out = append(out, 0, 0, 0, 0)
	}
	return append(out, payload...)
}

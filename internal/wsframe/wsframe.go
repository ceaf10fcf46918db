// Package wsframe writes single WebSocket frames (RFC 6455, section 5.2)
// byte for byte, for tests that play a peer by hand: a client whose
// frames the server must refuse, or a hostile server a dial must survive.
// The WebSocket library never writes such frames, so these tests write
// their own. Test support only.
package wsframe

import "encoding/binary"

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

package child

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec/peek"
)

// resumeCallID reads the call_id of the ResumeCall in a request frame that
// decoded as far as its fields go but whose result failed its conversion:
// the contract checks the id before it converts the result, so the id is
// needed without the rest. It reads the frame as protobuf merges it: the
// occurrences of the ResumeCall arm merge (the last call_id wins) and
// another arm in between starts it afresh. Every protocol numbers the
// ResumeCall arm 4 and its call_id 1. A frame that does not parse gives 0;
// the caller only has frames the decoder walked whole.
func resumeCallID(frame []byte) uint32 {
	var id uint32
	var prev protowire.Number
	for len(frame) > 0 {
		num, typ, n := protowire.ConsumeTag(frame)
		if n < 0 {
			return 0
		}
		frame = frame[n:]
		if num <= peek.MaxArmField && peek.RequestKind(num).Known() && typ == protowire.BytesType {
			body, m := protowire.ConsumeBytes(frame)
			if m < 0 {
				return 0
			}
			frame = frame[m:]
			if num == protowire.Number(peek.RequestResumeCall) {
				if prev != num {
					id = 0
				}
				id = callIDField(body, id)
			}
			prev = num
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, frame)
		if m < 0 {
			return 0
		}
		frame = frame[m:]
	}
	return id
}

// callIDField returns the last call_id (field 1, a varint read as uint32
// the way the decoders read it) of a ResumeCall body, or id if it has none.
func callIDField(b []byte, id uint32) uint32 {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return id
		}
		b = b[n:]
		if num == 1 && typ == protowire.VarintType {
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return id
			}
			id = uint32(v)
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return id
		}
		b = b[m:]
	}
	return id
}

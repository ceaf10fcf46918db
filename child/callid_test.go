package child

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestResumeCallIDMerges reads the call id of ResumeCall frames the way
// protobuf merges them.
func TestResumeCallIDMerges(t *testing.T) {
	arm := func(num protowire.Number, body []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), body)
	}
	id := func(v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), v)
	}
	result := arm(2, []byte{0x12, 0x00}) // ResumeCall.result, not read
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	for _, c := range []struct {
		name  string
		frame []byte
		want  uint32
	}{
		{"one", arm(4, cat(id(7), result)), 7},
		{"none", arm(4, result), 0},
		{"last field wins", arm(4, cat(id(7), id(9))), 9},
		{"arms merge", cat(arm(4, id(7)), arm(4, result)), 7},
		{"merged later id", cat(arm(4, id(7)), arm(4, id(3))), 3},
		{"another arm between", cat(arm(4, id(7)), arm(3, nil), arm(4, result)), 0},
		{"uint32 of a wider varint", arm(4, id(1<<32+5)), 5},
		{"unknown top-level field", cat(protowire.AppendVarint(protowire.AppendTag(nil, 30, protowire.VarintType), 1), arm(4, id(4))), 4},
		{"truncated", arm(4, id(7))[:3], 0},
	} {
		if got := resumeCallID(c.frame); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

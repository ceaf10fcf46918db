//go:build unix

package conform

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// bombByAppend is budgetBomb's request with n entries built the plain
// way, message by message.
func bombByAppend(v uint32, n int) []byte {
	if v != 2 {
		items := make([]byte, 0, 2*n)
		for range n {
			items = append(items, 0x0a, 0x00)
		}
		return arm(6, items)
	}
	items := make([]byte, 0, 4*n)
	for range n {
		items = append(items, 0x0a, 0x02, 0x28, 0x00)
	}
	obj := protowire.AppendBytes(protowire.AppendTag(nil, 11, protowire.BytesType), items)
	nv := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "v")
	nv = protowire.AppendBytes(protowire.AppendTag(nv, 2, protowire.BytesType), obj)
	feed := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "1")
	feed = protowire.AppendBytes(protowire.AppendTag(feed, 2, protowire.BytesType), nv)
	return arm(3, feed)
}

// The decode bomb, its headers sized up front and its entries filled by
// doubling copies, is byte for byte the request built message by message,
// at every count (varint lengths of each width, counts that are no power
// of two).
func TestBombFrameIsTheAppendedRequest(t *testing.T) {
	for _, v := range []uint32{2, 4, 5} {
		for _, n := range []int{0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 1000, 1 << 14, 1<<14 + 7, 1<<16 + 3} {
			if got, want := bombFrame(v, n), bombByAppend(v, n); !bytes.Equal(got, want) {
				t.Fatalf("v%d n=%d: %d bytes, want %d (or they differ)", v, n, len(got), len(want))
			}
		}
	}
}

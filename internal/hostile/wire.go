package hostile

import (
	"bytes"
	"encoding/binary"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	p2 "github.com/gomonty/monty/internal/pb/montyp2v1"
)

// ChildEvent oneof arms (the same numbers in protocols 2 and 4).
const (
	armPrint          protowire.Number = 1
	armFunctionCall   protowire.Number = 2
	armOsCall         protowire.Number = 3
	armResolveFutures protowire.Number = 5
	armComplete       protowire.Number = 6
	armError          protowire.Number = 7
	armDumpResult     protowire.Number = 9
	armOk             protowire.Number = 10
	armFatalError     protowire.Number = 11
	armShutdownDump   protowire.Number = 12
)

// ParentRequest oneof arms.
const (
	reqConfigure           protowire.Number = 1
	reqInstallDependencies protowire.Number = 2
	reqFeed                protowire.Number = 3
	reqResumeCall          protowire.Number = 4
	reqResumeNameLookup    protowire.Number = 5
	reqResumeFutures       protowire.Number = 6
	reqDump                protowire.Number = 7
	reqLoad                protowire.Number = 8
	reqReset               protowire.Number = 9
	reqShutdown            protowire.Number = 10
	reqAbortFeed           protowire.Number = 11
)

// maxFrameLen is the protocol's frame cap (256 MiB).
const maxFrameLen = 268435456

// marshal encodes m deterministically. The messages built here are all
// valid for the generated types, so a failure is a bug in this package.
func marshal(m proto.Message) []byte {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		panic("hostile: marshal: " + err.Error())
	}
	return b
}

// msgField appends field num as a length-delimited payload.
func msgField(b []byte, num protowire.Number, payload []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, payload)
}

// varintField appends field num as a varint.
func varintField(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// event builds a ChildEvent body holding only the arm, in the field order
// the released worker uses (arm first, message-level fields after it).
func event(arm protowire.Number, payload []byte) []byte {
	return msgField(nil, arm, payload)
}

// Leaf values. A leaf MontyObject (protocol 2) and a leaf MontyNode
// (protocol 4) have the same arm numbers and the same payload messages, so
// one encoding serves both: as a MontyObject in protocol 2 and as an arena
// node in protocol 4.

func leaf(o *p2.MontyObject) []byte { return marshal(o) }

// The simple leaves are built by hand: they are on every path of the fake
// interpreter, and the child should start without touching the protobuf
// runtime.

func leafInt(n int64) []byte { return varintField(nil, 5, protowire.EncodeZigZag(n)) }

func leafNone() []byte { return []byte{0x12, 0x00} }

func leafBool(v bool) []byte { return varintField(nil, 4, protowire.EncodeBool(v)) }

func leafStr(s string) []byte { return msgField(nil, 8, []byte(s)) }

// nodeNone is a None node as an arena element (Arena.nodes = 2).
var nodeNone = []byte{0x12, 0x02, 0x12, 0x00}

// level is one length-delimited field of a nested wrapper: the field
// number and the bytes that precede the nested part inside it.
type level struct {
	num protowire.Number
	pre []byte
}

// nest returns the header bytes of levels (outermost first) wrapped around
// an innermost content of inner bytes, and the size of the whole wrapper.
func nest(inner int64, levels ...level) (head []byte, total int64) {
	content := make([]int64, len(levels))
	size := inner
	for i := len(levels) - 1; i >= 0; i-- {
		content[i] = int64(len(levels[i].pre)) + size
		size = int64(protowire.SizeTag(levels[i].num)) +
			int64(protowire.SizeVarint(uint64(content[i]))) + content[i]
	}
	for i, l := range levels {
		head = protowire.AppendTag(head, l.num, protowire.BytesType)
		head = protowire.AppendVarint(head, uint64(content[i]))
		head = append(head, l.pre...)
	}
	return head, size
}

// bigFrame is a frame body too large to build in memory: head, then
// pattern repeated count times, then tail.
type bigFrame struct {
	head    []byte
	pattern []byte
	count   int64
	tail    []byte
}

func (f bigFrame) size() int64 {
	return int64(len(f.head)) + int64(len(f.pattern))*f.count + int64(len(f.tail))
}

// repeated builds the body head + pattern×count + tail where levels wrap
// the repeated run (and tail follows the outermost level).
func repeated(pattern []byte, count int64, tail []byte, levels ...level) bigFrame {
	head, _ := nest(int64(len(pattern))*count, levels...)
	return bigFrame{head: head, pattern: pattern, count: count, tail: tail}
}

// writeBig streams f as one frame whose prefix announces prefix bytes (the
// real size when prefix is negative), without holding the body in memory.
func writeBig(w io.Writer, f bigFrame, prefix int64) error {
	if prefix < 0 {
		prefix = f.size()
	}
	var p [4]byte
	binary.LittleEndian.PutUint32(p[:], uint32(prefix))
	if _, err := w.Write(append(p[:], f.head...)); err != nil {
		return err
	}
	const chunk = 1 << 20
	per := max(1, chunk/max(1, len(f.pattern)))
	block := bytes.Repeat(f.pattern, per)
	for left := f.count; left > 0; {
		n := min(left, int64(per))
		if _, err := w.Write(block[:n*int64(len(f.pattern))]); err != nil {
			return err
		}
		left -= n
	}
	if len(f.tail) > 0 {
		if _, err := w.Write(f.tail); err != nil {
			return err
		}
	}
	return nil
}

// sized returns a length-delimited text run of the given total body size:
// the levels wrap text of t bytes, with t chosen so that the body (with
// tail) is exactly want bytes. It reports false when no t fits exactly.
func sized(want int64, fill byte, tail []byte, levels ...level) (bigFrame, bool) {
	for t := want - 32; t <= want; t++ {
		if t < 0 {
			continue
		}
		head, total := nest(t, levels...)
		if total+int64(len(tail)) == want {
			return bigFrame{head: head, pattern: []byte{fill}, count: t, tail: tail}, true
		}
	}
	return bigFrame{}, false
}

package codecv4

import (
	"fmt"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gomonty/monty/codec"
	pbv "github.com/gomonty/monty/internal/pb/montyv1"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// Each case is measured four ways: our decoder, protobuf-go's generated
// Unmarshal followed by conversion into the domain types, our encoder, and
// conversion from the domain types followed by protobuf-go's Marshal.

type benchCase struct {
	name  string
	build func() *message.ChildEvent
}

var benchCache sync.Map // name → *message.ChildEvent

// event builds the case's event once per test binary, so that a benchmark
// run does not keep the other cases' data alive.
func (c benchCase) event() *message.ChildEvent {
	if e, ok := benchCache.Load(c.name); ok {
		return e.(*message.ChildEvent)
	}
	e := c.build()
	benchCache.Store(c.name, e)
	return e
}

var benchCases = []benchCase{
	{"IntList1M", func() *message.ChildEvent {
		ints := value.Graph{Nodes: make([]value.Node, 0, 1_000_001)}
		ids := make([]value.NodeID, 1_000_000)
		for i := range ids {
			ids[i] = ints.Add(value.Int(int64(i) * 7919))
		}
		root := ints.Add(value.List(ids...))
		return &message.ChildEvent{Body: &message.Complete{Value: root, Values: ints}}
	}},
	{"Bytes10MB", func() *message.ChildEvent {
		var blob value.Graph
		blob.Add(value.Bytes(pageData(10 << 20)))
		return &message.ChildEvent{Body: &message.Complete{Value: 0, Values: blob}}
	}},
	{"StrDict100k", func() *message.ChildEvent {
		var dict value.Graph
		pairs := make([]value.Pair, 100_000)
		for i := range pairs {
			k := dict.Add(value.Str(fmt.Sprintf("key%06d", i)))
			v := dict.Add(value.Str(fmt.Sprintf("value %d", i)))
			pairs[i] = value.Pair{Key: k, Value: v}
		}
		root := dict.Add(value.Dict(pairs...))
		return &message.ChildEvent{Body: &message.Complete{Value: root, Values: dict}}
	}},
	{"ListChain10k", func() *message.ChildEvent {
		var chain value.Graph
		x := chain.Add(value.List())
		for range 9_999 {
			x = chain.Add(value.List(x))
		}
		return &message.ChildEvent{Body: &message.Complete{Value: x, Values: chain}}
	}},
	{"FunctionCall5", func() *message.ChildEvent {
		var args value.Graph
		a := args.Add(value.Int(42))
		b := args.Add(value.Str("hello"))
		c := args.Add(value.Float(2.5))
		d := args.Add(value.Bool(true))
		e := args.Add(value.List(a, c))
		call := &message.FunctionCall{FunctionName: "fetch", Args: []value.NodeID{a, b, c, d, e}, CallID: 7, Values: args}
		return &message.ChildEvent{Body: call, TotalExecutionMicros: 1234, MaxSuspensions: value.Ptr[uint64](1000)}
	}},
}

// pageData returns n bytes of non-zero data (so every page is real).
func pageData(n int) []byte {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*31 + 1)
	}
	return data
}

func BenchmarkDecode(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.name+"/ours", func(b *testing.B) {
			frame := benchFrame(b, c)
			DecodeEvent(frame, codec.Limits{}) // warm the heap up, untimed
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				if _, err := DecodeEvent(frame, codec.Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/protobuf", func(b *testing.B) {
			frame := benchFrame(b, c)
			decodePB(b, frame) // warm the heap up, untimed
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				decodePB(b, frame)
			}
		})
	}
}

// decodePB is the baseline: protobuf-go's generated Unmarshal, then
// conversion into the domain types.
func decodePB(b *testing.B, frame []byte) *message.ChildEvent {
	var m pbv.ChildEvent
	if err := proto.Unmarshal(frame, &m); err != nil {
		b.Fatal(err)
	}
	return fromPBEvent(&m)
}

func BenchmarkEncode(b *testing.B) {
	for _, c := range benchCases {
		b.Run(c.name+"/ours", func(b *testing.B) {
			frame, ev := benchFrame(b, c), c.event()
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			buf := make([]byte, 0, len(frame))
			buf, err := AppendEvent(buf, ev) // warm up, untimed
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if buf, err = AppendEvent(buf[:0], ev); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/protobuf", func(b *testing.B) {
			frame, ev := benchFrame(b, c), c.event()
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			buf := make([]byte, 0, len(frame))
			buf, err := (proto.MarshalOptions{}).MarshalAppend(buf, toPBEvent(ev)) // warm up, untimed
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if buf, err = (proto.MarshalOptions{}).MarshalAppend(buf[:0], toPBEvent(ev)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func benchFrame(b *testing.B, c benchCase) []byte {
	frame, err := AppendEvent(nil, c.event())
	if err != nil {
		b.Fatal(err)
	}
	return frame
}

// BenchmarkCopy10MB is the floor for decoding a 10 MB bytes value: one
// fresh allocation and a copy.
func BenchmarkCopy10MB(b *testing.B) {
	src := pageData(10 << 20)
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	var sink []byte
	for b.Loop() {
		sink = append([]byte(nil), src...)
	}
	_ = sink
}

package codecv2

import (
	"fmt"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

func intListEvent(n int) *message.ChildEvent {
	g := &value.Graph{Nodes: make([]value.Node, 0, n+1)}
	refs := make([]value.NodeID, n)
	for i := range refs {
		refs[i] = g.Add(value.Int(int64(i) * 7919))
	}
	root := g.Add(value.List(refs...))
	return &message.ChildEvent{Body: &message.Complete{Value: root, Values: *g}, TotalExecutionMicros: 1234,
		MaxSuspensions: value.Ptr[uint64](1000)}
}

func strDictEvent(n int) *message.ChildEvent {
	g := &value.Graph{Nodes: make([]value.Node, 0, 2*n+1)}
	pairs := make([]value.Pair, n)
	for i := range pairs {
		pairs[i] = value.Pair{Key: g.Add(value.Str(fmt.Sprintf("key-%06d", i))), Value: g.Add(value.Str(fmt.Sprintf("value number %d", i)))}
	}
	root := g.Add(value.Dict(pairs...))
	return &message.ChildEvent{Body: &message.Complete{Value: root, Values: *g}}
}

func benchDecode(b *testing.B, ev *message.ChildEvent) {
	frame, err := AppendEvent(nil, ev)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := DecodeEvent(frame, codec.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchEncode(b *testing.B, ev *message.ChildEvent) {
	buf, err := AppendEvent(nil, ev)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if buf, err = AppendEvent(buf[:0], ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeIntList1M decodes a Complete frame holding a list of one
// million ints.
func BenchmarkDecodeIntList1M(b *testing.B) { benchDecode(b, intListEvent(1_000_000)) }

// BenchmarkDecodeStrDict100k decodes a Complete frame holding a dict of
// 100,000 str keys and str values.
func BenchmarkDecodeStrDict100k(b *testing.B) { benchDecode(b, strDictEvent(100_000)) }

func BenchmarkEncodeIntList1M(b *testing.B)   { benchEncode(b, intListEvent(1_000_000)) }
func BenchmarkEncodeStrDict100k(b *testing.B) { benchEncode(b, strDictEvent(100_000)) }

//go:build unix

package codecv2

import (
	"fmt"
	"syscall"
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
	defer processCPU(b)()
	for b.Loop() {
		if _, err := DecodeEvent(frame, codec.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// processCPU reports the process's CPU time per op (user + system, all
// threads, so the garbage collector's work is included) as cpu-ns/op. On a
// shared machine it is steadier than wall time.
func processCPU(b *testing.B) func() {
	cpu := func() int64 {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	start := cpu()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op")
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

// BenchmarkDecodeFunctionCall decodes the small FunctionCall frame of a
// host-call ping-pong: f(i).
func BenchmarkDecodeFunctionCall(b *testing.B) {
	g := value.Graph{}
	arg := g.Add(value.Int(4242))
	benchDecode(b, &message.ChildEvent{Body: &message.FunctionCall{FunctionName: "f", Args: []value.NodeID{arg}, CallID: 17, Values: g}})
}

// BenchmarkDecodeBytes10M decodes a Complete frame holding a 10 MB bytes
// value.
func BenchmarkDecodeBytes10M(b *testing.B) {
	g := value.Graph{}
	root := g.Add(value.Bytes(make([]byte, 10_000_000)))
	benchDecode(b, &message.ChildEvent{Body: &message.Complete{Value: root, Values: g}})
}

// BenchmarkDecodeIntList10k is BenchmarkDecodeIntList1M at a size that
// stays in cache, which isolates the per-element decoding work.
func BenchmarkDecodeIntList10k(b *testing.B) { benchDecode(b, intListEvent(10_000)) }

// BenchmarkEncodeResumeCall encodes the reply of a host-call ping-pong:
// ResumeCall{call_id, return None}.
func BenchmarkEncodeResumeCall(b *testing.B) {
	g := value.Graph{}
	none := g.Add(value.None())
	r := &message.ParentRequest{Body: &message.ResumeCall{CallID: 17, Result: &message.ExtResult{Kind: message.ResultReturn, Value: none}, Values: g}}
	buf, err := AppendRequest(nil, r)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = AppendRequest(buf[:0], r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeFeed encodes a Feed without inputs.
func BenchmarkEncodeFeed(b *testing.B) {
	r := &message.ParentRequest{Body: &message.Feed{Code: "1 + 2"}}
	buf, err := AppendRequest(nil, r)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = AppendRequest(buf[:0], r); err != nil {
			b.Fatal(err)
		}
	}
}

package relay

import (
	"testing"

	"github.com/gomonty/monty/codec/codecv2"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// BenchmarkLearn prices the relay's pass over every graph its parent sends
// (learn, which notes host classes and instances) beside what the relay
// does to the same graph anyway: write it for the protocol-2 worker. The
// Feed carries a list of 100,000 ints and 1,000 host instances of one
// class, so the pass meets both kinds of node it looks at.
func BenchmarkLearn(b *testing.B) {
	f := &message.Feed{Code: "len(v)"}
	g := &f.Values
	cls := g.Add(value.TypeNode(value.Type{Name: "Widget", ID: value.NewUUID(), Origin: value.OriginHost}))
	items := make([]value.NodeID, 0, 101_000)
	for i := range 100_000 {
		items = append(items, g.Add(value.Int(int64(i))))
	}
	k := g.Add(value.Str("size"))
	for range 1_000 {
		items = append(items, g.Add(value.ClassInstanceNode(value.ClassInstance{Class: cls, InstanceID: value.NewUUID(),
			Attrs: []value.Pair{{Key: k, Value: items[0]}}})))
	}
	f.Inputs = []message.NamedRef{{Name: "v", Value: g.Add(value.List(items...))}}
	b.Run("learn-new-engine", func(b *testing.B) {
		// A fresh relay each time: every host object is new to it.
		b.ReportAllocs()
		for b.Loop() {
			var e Engine
			e.learn(f)
			if len(e.hosts) != 1_001 {
				b.Fatalf("learned %d host objects, want 1001", len(e.hosts))
			}
		}
	})
	b.Run("learn-again", func(b *testing.B) {
		// One relay: the objects are known (a session sending the same
		// values feed after feed).
		b.ReportAllocs()
		var e Engine
		e.learn(f)
		for b.Loop() {
			e.learn(f)
		}
	})
	b.Run("encode-v2", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = codecv2.AppendRequest(buf[:0], &message.ParentRequest{Body: f}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

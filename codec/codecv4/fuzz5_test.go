package codecv4

import (
	"os"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/codectest"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The protocol-5 fuzz targets: the shared message layer with dialect5.
// Seeds: the corpora and the recorded protocol-2 sessions re-encoded.
// Every input either fails with a *codec.DecodeError or decodes to a
// message that encodes, decodes back to the same message, and re-encodes
// to the same bytes.

func FuzzDecodeRequest5(f *testing.F) {
	for _, r := range request5Corpus() {
		f.Add(mustEncode5Request(f, r))
	}
	addVectorSeeds(f, V5(), true)
	requests, _ := coderOf(V5())
	f.Fuzz(func(t *testing.T, b []byte) { codectest.RoundTrip(t, requests, b) })
}

func FuzzDecodeEvent5(f *testing.F) {
	for _, e := range event5Corpus() {
		f.Add(mustEncode5Event(f, e))
	}
	addVectorSeeds(f, V5(), false)
	_, events := coderOf(V5())
	f.Fuzz(func(t *testing.T, b []byte) { codectest.RoundTrip(t, events, b) })
}

// TestWriteFuzzSeeds5 regenerates the committed protocol-5 seed corpus
// when MONTY_WRITE_FUZZ_SEEDS=1: the encoded protocol-5 corpora plus
// hand-made frames for the renumbered OsCall, merged policy arms and the
// removed tags.
func TestWriteFuzzSeeds5(t *testing.T) {
	if os.Getenv("MONTY_WRITE_FUZZ_SEEDS") != "1" {
		t.Skip("set MONTY_WRITE_FUZZ_SEEDS=1 to rewrite testdata/fuzz")
	}
	var reqs, evs [][]byte
	for _, r := range request5Corpus() {
		reqs = append(reqs, mustEncode5Request(t, r))
	}
	for _, r := range requestCorpus() {
		reqs = append(reqs, mustEncode5Request(t, to5Request(r)))
	}
	policy := pb(nil).msg(3, pb(nil).varint(1, 1).varint(2, 5)).msg(1, nil).msg(3, pb(nil).varint(2, 1e6)).
		msg(4, pb(nil).str(2, "UTC")).msg(4, pb(nil).msg(3, pb(nil).varint(1, 60))).
		msg(5, pb(nil).msg(1, pb(nil).varint(1, 7))).msg(5, pb(nil).msg(1, nil)).
		msg(8, pb(nil).bytes(1, []byte{1, 2}).fixed64(2, 0x7ff0000000000000)).msg(9, nil).msg(10, nil)
	reqs = append(reqs,
		// Configure with protocol 4's limit tag 1 (skipped at 5) and the
		// new ones, and a merged policy.
		pb(nil).msg(1, pb(nil).msg(2, pb(nil).varint(1, 5).varint(6, 1).varint(7, 2).varint(8, 3)).varint(9, 5).msg(11, policy).varint(12, 2).str(13, "p")),
		pb(nil).msg(1, pb(nil).msg(11, pb(nil).msg(8, pb(nil).str(3, "seed")).msg(7, nil))),
	)
	for _, e := range event5Corpus() {
		evs = append(evs, mustEncode5Event(t, e))
	}
	for _, e := range eventCorpus() {
		evs = append(evs, mustEncode5Event(t, to5Event(e)))
	}
	pos := pb(nil).str(1, "<string>").varint(2, 1).varint(3, 4)
	evs = append(evs,
		// A protocol-4 OsCall getenv with its arena at 26: at 5, 26 is the
		// time arm and replaces getenv.
		pb(nil).msg(3, pb(nil).varint(1, 1).msg(21, pb(nil).str(1, "HOME")).msg(26, arenaOf(noneNode))),
		// The arena at 50, eager await, a position, and arm merging.
		pb(nil).msg(3, pb(nil).varint(1, 1).msg(21, pb(nil).str(1, "HOME")).msg(50, arenaOf(noneNode)).varint(51, 1).msg(52, pos).msg(52, pb(nil).varint(3, 9))),
		pb(nil).msg(3, pb(nil).msg(28, pb(nil).fixed64(1, 0x3ff0000000000000)).msg(29, pb(nil).fixed64(1, 0xbff0000000000000))),
		pb(nil).msg(3, pb(nil).msg(27, pb(nil).fixed64(1, 0x7ff8000000000000))),
		pb(nil).msg(4, pb(nil).str(1, "x").msg(3, pos)).varint(21, 9).varint(24, 3).varint(25, 0).bytes(28, nil),
		pb(nil).msg(5, pb(nil).packed(1, 1, 2).msg(2, pos)).varint(26, 1).varint(27, 2),
		pb(nil).msg(2, pb(nil).str(1, "f").msg(8, pos).msg(8, pb(nil).str(1, "<python-input-2>"))),
	)
	codectest.WriteSeeds(t, "FuzzDecodeRequest5", reqs)
	codectest.WriteSeeds(t, "FuzzDecodeEvent5", evs)
}

// BenchmarkSuspension decodes and encodes small suspension events, the
// frames a host-call-heavy feed exchanges most, at protocol 4 and at
// protocol 5 in the same run (the same event, so the dialect table is the
// only difference), and at protocol 5 with a source position (one more
// allocation).
func BenchmarkSuspension(b *testing.B) {
	var g value.Graph
	a := g.Add(value.Int(1))
	s := g.Add(value.Str("two"))
	l := g.Add(value.List(a, s))
	pos := &message.SourceRange{Filename: "<python-input-0>", Start: 4, End: 21}
	cases := []struct {
		name string
		ev   func(withPos bool) *message.ChildEvent
	}{
		{"FunctionCall", func(withPos bool) *message.ChildEvent {
			fc := &message.FunctionCall{FunctionName: "fetch", Args: []value.NodeID{a, s, l}, CallID: 3, Values: g}
			if withPos {
				fc.Position = pos
			}
			return &message.ChildEvent{Body: fc, TotalExecutionMicros: 1234, MaxSuspensions: value.Ptr[uint64](1000)}
		}},
		{"OsCallGetenv", func(withPos bool) *message.ChildEvent {
			o := &message.OsCall{CallID: 4, Op: message.OpGetenv, Key: "HOME", Default: l, Values: g}
			if withPos {
				o.Position = pos
			}
			return &message.ChildEvent{Body: o, TotalExecutionMicros: 1234}
		}},
	}
	for _, c := range cases {
		for _, run := range []struct {
			v       *dialect
			withPos bool
		}{{dialect4, false}, {dialect5, false}, {dialect5, true}} {
			co := Coder{run.v}
			ev := c.ev(run.withPos)
			frame, err := co.AppendEvent(nil, ev)
			if err != nil {
				b.Fatal(err)
			}
			name := run.v.Name
			if run.withPos {
				name += "+position"
			}
			b.Run(c.name+"/decode/"+name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(frame)))
				for b.Loop() {
					if _, err := co.DecodeEvent(frame, codec.Limits{}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(c.name+"/encode/"+name, func(b *testing.B) {
				b.ReportAllocs()
				buf := make([]byte, 0, 256)
				for b.Loop() {
					if _, err := co.AppendEvent(buf[:0], ev); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

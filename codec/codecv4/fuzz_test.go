package codecv4

import (
	"os"
	"testing"

	"github.com/gomonty/monty/internal/codectest"
	"github.com/gomonty/monty/message"
)

var (
	fuzzLimits       = codectest.FuzzLimits
	checkDecodeError = codectest.CheckDecodeError
)

// coderOf is the round-trip view of a coder's requests and events.
func coderOf(c Coder) (codectest.Codec[*message.ParentRequest], codectest.Codec[*message.ChildEvent]) {
	return codectest.Codec[*message.ParentRequest]{Decode: c.DecodeRequest, Append: c.AppendRequest,
			Diff: func(a, b *message.ParentRequest) string { return diff(a, b) }},
		codectest.Codec[*message.ChildEvent]{Decode: c.DecodeEvent, Append: c.AppendEvent,
			Diff: func(a, b *message.ChildEvent) string { return diff(a, b) }}
}

func FuzzDecodeRequest(f *testing.F) {
	for _, r := range requestCorpus() {
		f.Add(mustEncodeRequest(f, r))
	}
	addVectorSeeds(f, V4{}, true)
	requests, _ := coderOf(V4{})
	f.Fuzz(func(t *testing.T, b []byte) { codectest.RoundTrip(t, requests, b) })
}

func FuzzDecodeEvent(f *testing.F) {
	for _, e := range eventCorpus() {
		f.Add(mustEncodeEvent(f, e))
	}
	addVectorSeeds(f, V4{}, false)
	_, events := coderOf(V4{})
	f.Fuzz(func(t *testing.T, b []byte) { codectest.RoundTrip(t, events, b) })
}

// FuzzDecodeArena reads its input both as a bare Arena message and as the
// arena of a Complete event.
func FuzzDecodeArena(f *testing.F) {
	for _, c := range nodeCorpus() {
		b, err := AppendArena(nil, &c.g)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	_, events := coderOf(V4{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if g, err := DecodeArena(b, fuzzLimits); err != nil {
			checkDecodeError(t, err)
		} else {
			enc, err := AppendArena(nil, g)
			if err != nil {
				t.Fatalf("decoded arena does not encode: %v", err)
			}
			g2, err := DecodeArena(enc, fuzzLimits)
			if err != nil {
				t.Fatalf("re-encoded arena does not decode: %v", err)
			}
			if d := diff(g, g2); d != "" {
				t.Fatalf("round trip differs: %s", d)
			}
		}
		codectest.RoundTrip(t, events, completeFrame(0, b))
	})
}

// TestWriteFuzzSeeds regenerates the committed seed corpus when
// MONTY_WRITE_FUZZ_SEEDS=1. The corpus holds the encoded message corpora
// plus hand-made frames for merging, unknown fields and budget edges.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("MONTY_WRITE_FUZZ_SEEDS") != "1" {
		t.Skip("set MONTY_WRITE_FUZZ_SEEDS=1 to rewrite testdata/fuzz")
	}
	var reqs, evs, arenas [][]byte
	for _, r := range requestCorpus() {
		reqs = append(reqs, mustEncodeRequest(t, r))
	}
	reqs = append(reqs,
		pb(nil).msg(3, pb(nil).str(1, "x")).msg(9, nil),
		pb(nil).msg(4, pb(nil).varint(1, 5).msg(2, pb(nil).msg(2, pb(nil).str(1, "ValueError").msg(3, nil)).varint(3, 5))),
		[]byte{0xab, 0x01, 0x08, 0x01, 0xb3, 0x01, 0xb4, 0x01, 0xac, 0x01, 0x3a, 0x00},
		pb(nil).msg(6, repeatBytes(50, 0x0a, 0x00)),
	)
	for _, e := range eventCorpus() {
		evs = append(evs, mustEncodeEvent(t, e))
	}
	evs = append(evs,
		pb(nil).msg(7, pb(nil).msg(1, pb(nil).str(1, "Bogus"))).msg(6, pb(nil).msg(2, noneNode)),
		pb(nil).msg(2, append(pb(nil).msg(7, fillArena(5, 0, nil)), pb(nil).packed(2, 0, 1, 2)...)),
		completeFrame(0, append(pb(nil).varint(1, 1<<32-1), arenaOf(noneNode, noneNode)...)),
	)
	for _, c := range nodeCorpus() {
		b, err := AppendArena(nil, &c.g)
		if err != nil {
			t.Fatal(err)
		}
		arenas = append(arenas, b)
	}
	cls := pb(nil).msg(2, uuidMsgOf(uuid16)).varint(3, 2).msg(5, pb(nil).msg(1, pb(nil).varint(2, 1)))
	arenas = append(arenas,
		arenaOf(noneNode, noneNode, node(append(nList(0), nList(1)...))),
		arenaOf(node(pb(nil).msg(17, pb(nil).varint(1, 2024).varint(2, 2)).msg(17, pb(nil).varint(3, 29)))),
		arenaOf(node(append(nList(1<<32-1), nInt(7)...))),
		arenaOf(noneNode, noneNode, node(nType(cls).msg(23, pb(nil).msg(5, pb(nil).msg(1, pb(nil).varint(1, 1)))))),
		append(arenaOf(noneNode, node(nList(0))), 0x98, 0x06, 0x07),
		arenaOf(node(pb(nil).msg(6, pb(nil).varint(1, 1).bytes(2, []byte{0, 0, 1})))),
		arenaOf(node(pb(nil).msg(10, uuidMsgOf(uuid16)))),
	)
	codectest.WriteSeeds(t, "FuzzDecodeRequest", reqs)
	codectest.WriteSeeds(t, "FuzzDecodeEvent", evs)
	codectest.WriteSeeds(t, "FuzzDecodeArena", arenas)
}

package codecv4

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gomonty/monty/codec"
)

// fuzzLimits keeps each fuzz decode small and fast.
var fuzzLimits = codec.Limits{MaxDecodeBytes: 64 << 20}

func checkDecodeError(t *testing.T, err error) {
	t.Helper()
	var de *codec.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error is %T (%v), not *codec.DecodeError", err, err)
	}
	if len(err.Error()) == 0 {
		t.Fatal("empty error text")
	}
}

func FuzzDecodeRequest(f *testing.F) {
	for _, r := range requestCorpus() {
		f.Add(mustEncodeRequest(f, r))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRequest(b, fuzzLimits)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		enc, err := AppendRequest(nil, r)
		if err != nil {
			t.Fatalf("decoded request does not encode: %v", err)
		}
		r2, err := DecodeRequest(enc, fuzzLimits)
		if err != nil {
			t.Fatalf("re-encoded request does not decode: %v\n% x", err, enc)
		}
		if d := diff(r, r2); d != "" {
			t.Fatalf("round trip differs: %s", d)
		}
		if enc2, err := AppendRequest(nil, r2); err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not a fixed point: %v", err)
		}
	})
}

func FuzzDecodeEvent(f *testing.F) {
	for _, e := range eventCorpus() {
		f.Add(mustEncodeEvent(f, e))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEvent(b, fuzzLimits)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		enc, err := AppendEvent(nil, e)
		if err != nil {
			t.Fatalf("decoded event does not encode: %v", err)
		}
		e2, err := DecodeEvent(enc, fuzzLimits)
		if err != nil {
			t.Fatalf("re-encoded event does not decode: %v\n% x", err, enc)
		}
		if d := diff(e, e2); d != "" {
			t.Fatalf("round trip differs: %s", d)
		}
		if enc2, err := AppendEvent(nil, e2); err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not a fixed point: %v", err)
		}
	})
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
		e, err := DecodeEvent(completeFrame(0, b), fuzzLimits)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		enc, err := AppendEvent(nil, e)
		if err != nil {
			t.Fatalf("decoded event does not encode: %v", err)
		}
		e2, err := DecodeEvent(enc, fuzzLimits)
		if err != nil {
			t.Fatal(err)
		}
		if d := diff(e, e2); d != "" {
			t.Fatalf("round trip differs: %s", d)
		}
	})
}

// TestWriteFuzzSeeds regenerates the committed seed corpus when
// MONTY_WRITE_FUZZ_SEEDS=1. The corpus holds the encoded message corpora
// plus hand-made frames for merging, unknown fields and budget edges.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("MONTY_WRITE_FUZZ_SEEDS") != "1" {
		t.Skip("set MONTY_WRITE_FUZZ_SEEDS=1 to rewrite testdata/fuzz")
	}
	write := func(target string, seeds [][]byte) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, s := range seeds {
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed%03d", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
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
	write("FuzzDecodeRequest", reqs)
	write("FuzzDecodeEvent", evs)
	write("FuzzDecodeArena", arenas)
}

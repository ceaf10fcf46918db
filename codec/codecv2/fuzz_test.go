package codecv2

import (
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/codectest"
	"github.com/gomonty/monty/message"
)

// The fuzz targets check that decoding never panics, that every failure is
// a *codec.DecodeError, and that whatever decodes re-encodes, decodes
// again to an equal message, and re-encodes to the same bytes.
//
// Seeds: the committed corpus in testdata/fuzz plus every frame of the
// recorded sessions in testdata/v2.

var (
	fuzzLimits = codectest.FuzzLimits
	reqCodec   = codectest.Codec[*message.ParentRequest]{Decode: DecodeRequest, Append: AppendRequest, Diff: codectest.ErrDiff(sameRequest)}
	evCodec    = codectest.Codec[*message.ChildEvent]{Decode: DecodeEvent, Append: AppendEvent, Diff: codectest.ErrDiff(sameEvent)}
)

// maxSeed keeps the recorded megabyte-sized frames out of the fuzzing
// seeds; mutating them mostly costs time.
const maxSeed = 16 << 10

func FuzzDecodeRequest(f *testing.F) {
	for _, v := range loadVectors(f) {
		for _, sf := range v.sentFrames(f) {
			if len(sf.frame) <= maxSeed {
				f.Add(sf.frame)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) { codectest.RoundTrip(t, reqCodec, b) })
}

func FuzzDecodeEvent(f *testing.F) {
	for _, v := range loadVectors(f) {
		for _, h := range v.Responses {
			if b := unhex(f, h); len(b) <= maxSeed {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) { codectest.RoundTrip(t, evCodec, b) })
}

func FuzzDecodeValue(f *testing.F) {
	for _, v := range loadVectors(f) {
		for _, h := range v.Responses {
			// Complete.value bodies: ChildEvent{complete{value}}.
			ev, err := DecodeEvent(unhex(f, h), codec.Limits{})
			if err != nil {
				continue
			}
			g, roots := valueRoots(ev.Body)
			for _, r := range roots {
				if b, err := AppendValue(nil, g, *r, codec.Limits{}); err == nil && len(b) <= maxSeed {
					f.Add(b)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, root, err := DecodeValue(b, fuzzLimits)
		if err != nil {
			codectest.CheckDecodeError(t, err)
			return
		}
		if err := g.CheckStructure(root); err != nil {
			t.Fatalf("decoded graph breaks the structure rules: %v", err)
		}
		out, err := AppendValue(nil, g, root, codec.Limits{})
		if err != nil {
			t.Fatalf("decoded value does not encode: %v", err)
		}
		g2, root2, err := DecodeValue(out, fuzzLimits)
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v\n%x", err, out)
		}
		if err := sameValue(g, root, g2, root2); err != nil {
			t.Fatal(err)
		}
		out2, err := AppendValue(nil, g2, root2, codec.Limits{})
		if err != nil || string(out2) != string(out) {
			t.Fatalf("encoding is not stable: %v", err)
		}
	})
}

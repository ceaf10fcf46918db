package codecv4

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/codecv2"
	"github.com/gomonty/monty/message"
)

// maxVectorSeed keeps the recorded megabyte-sized frames out of the
// fuzzing seeds; mutating them mostly costs time.
const maxVectorSeed = 16 << 10

// vectorMessages decodes the frames of the recorded protocol-2 sessions
// (testdata/v2) into domain messages, for structure-aware fuzzing seeds:
// real requests and events, re-encoded at protocols 4 and 5. Frames that
// do not decode (the recordings hold broken ones on purpose) are left out.
func vectorMessages(tb testing.TB) (reqs []*message.ParentRequest, evs []*message.ChildEvent) {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "v2", "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no recorded sessions: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var v struct {
			Requests  []string `json:"request_frames_hex"`
			Responses []string `json:"response_frames_hex"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		for _, h := range v.Requests {
			if b, err := hex.DecodeString(h); err == nil && len(b) <= maxVectorSeed {
				if r, err := codecv2.DecodeRequest(b, codec.Limits{}); err == nil {
					reqs = append(reqs, r)
				}
			}
		}
		for _, h := range v.Responses {
			if b, err := hex.DecodeString(h); err == nil && len(b) <= maxVectorSeed {
				if e, err := codecv2.DecodeEvent(b, codec.Limits{}); err == nil {
					evs = append(evs, e)
				}
			}
		}
	}
	return reqs, evs
}

// addVectorSeeds adds the distinct encodings of the recorded messages that
// c can encode as seeds of a request (or event) fuzz target.
func addVectorSeeds(f *testing.F, c Coder, requests bool) {
	reqs, evs := vectorMessages(f)
	seen := map[string]bool{}
	n := 0
	add := func(b []byte, err error) {
		if err == nil && !seen[string(b)] {
			seen[string(b)] = true
			f.Add(b)
			n++
		}
	}
	if requests {
		for _, r := range reqs {
			add(c.AppendRequest(nil, r))
		}
	} else {
		for _, e := range evs {
			add(c.AppendEvent(nil, e))
		}
	}
	if n == 0 {
		f.Fatal("no recorded message encodes")
	}
}

package codecv2

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
)

// TestRustParentVerdicts replays upstream's parent's verdicts on hostile
// event frames (recorded with scripts/rustparent: the Rust parent inside
// npm @pydantic/monty-linux-x64-gnu@0.0.23, fed each frame by a scripted
// worker as its answer to a Feed). Upstream's parent is the only decoder
// of protocol-2 events upstream has, so ours must agree with it: the same
// text where it fails to decode a frame, a refusal where it decodes one
// and refuses what it holds, and a decode where it takes the event. The
// frames are real worker events with a byte or a field changed
// (codectest.Mutate, MutateFields) and hand-made probes. This is how
// FunctionCall's path (none) and object_id check (as each ends) and the
// Print stream rule (any stream but stderr is stdout) were found.
func TestRustParentVerdicts(t *testing.T) {
	f, err := os.Open("testdata/rustparent/verdicts.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	counts := map[string]int{}
	for sc.Scan() {
		var r struct{ Name, Frame, Verdict, Text string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		frame, err := hex.DecodeString(r.Frame)
		if err != nil {
			t.Fatal(err)
		}
		counts[r.Verdict]++
		ev, derr := DecodeEvent(frame, codec.Limits{})
		switch r.Verdict {
		case "decode":
			if derr == nil || derr.Error() != r.Text {
				t.Errorf("%s: ours %v\n\tupstream's parent: %s", r.Name, derr, r.Text)
			}
		case "refused":
			if derr == nil {
				t.Errorf("%s: ours decodes it; upstream's parent refuses it: %s", r.Name, r.Text)
			}
		case "accepted":
			if derr != nil {
				t.Errorf("%s: ours %v; upstream's parent takes it", r.Name, derr)
				continue
			}
			// A Print's text is the stream the parent printed it to; the
			// session prints all but stderr to stdout, as it does.
			if p, ok := ev.Body.(*message.Print); ok && r.Text != "" {
				counts["print"]++
				got := "stdout"
				if p.Segments[0].Stream == message.StreamStderr {
					got = "stderr"
				}
				if got != r.Text {
					t.Errorf("%s: ours prints to %s (stream %d), upstream's parent to %s", r.Name, got, p.Segments[0].Stream, r.Text)
				}
			}
		default:
			t.Fatalf("%s: unknown verdict %q", r.Name, r.Verdict)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if counts["decode"] < 100 || counts["refused"] < 50 || counts["accepted"] < 100 || counts["print"] < 5 {
		t.Errorf("too few verdicts to show anything: %v", counts)
	}
}

// TestRustParentRequestsReencode decodes every request upstream's Rust
// parent sent a real worker (recorded with scripts/rustparent's
// record-requests.sh: a Configure with limits, feeds with inputs, resumes
// returning values of every kind or raising, OS calls answered and not,
// name lookups, futures, a dump and a load) and requires our encoder to
// write each back byte for byte: the message layer all versions share,
// with protocol 2's tags, writes what upstream's encoder writes.
func TestRustParentRequestsReencode(t *testing.T) {
	stream, err := os.ReadFile("testdata/rustparent/requests.frames")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for len(stream) > 0 {
		if len(stream) < 4 || int(binary.LittleEndian.Uint32(stream)) > len(stream)-4 {
			t.Fatalf("a truncated frame at the end: %x", stream)
		}
		n := int(binary.LittleEndian.Uint32(stream))
		body := stream[4 : 4+n]
		stream = stream[4+n:]
		req, err := DecodeRequest(body, codec.Limits{})
		if err != nil {
			t.Fatalf("%x: %v", body, err)
		}
		kind := fmt.Sprintf("%T", req.Body)
		kinds[kind]++
		out, err := AppendRequest(nil, req)
		if err != nil {
			t.Errorf("%s: %v", kind, err)
			continue
		}
		if !bytes.Equal(out, body) {
			t.Errorf("%s:\n\tupstream's parent %x\n\tours              %x", kind, body, out)
		}
	}
	t.Logf("%v", kinds)
	for _, k := range []string{"*message.Configure", "*message.Feed", "*message.ResumeCall", "*message.ResumeNameLookup",
		"*message.ResumeFutures", "*message.Dump", "*message.Load"} {
		if kinds[k] == 0 {
			t.Errorf("no %s recorded: %v", k, kinds)
		}
	}
}

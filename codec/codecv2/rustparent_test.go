package codecv2

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
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

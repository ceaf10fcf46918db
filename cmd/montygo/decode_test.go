//go:build unix

package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	codecv4 "github.com/gomonty/monty/codec/codecv4"
	codecv5 "github.com/gomonty/monty/codec/codecv5"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

type vector struct {
	Requests  []string `json:"request_frames_hex"`
	Responses []string `json:"response_frames_hex"`
}

func loadVector(t testing.TB, name string) vector {
	t.Helper()
	b, err := os.ReadFile("../../testdata/v2/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var v vector
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func framed(t testing.TB, hexes []string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := frame.NewWriter(&buf, 0)
	for _, h := range hexes {
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFrame(b); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func decodeCLI(t *testing.T, stdin []byte, args ...string) ([]map[string]any, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(montygo(t), append([]string{"decode"}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	rc := 0
	if ee, ok := err.(*exec.ExitError); ok {
		rc = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line is not JSON: %q", line)
		}
		docs = append(docs, m)
	}
	return docs, errb.String(), rc
}

// field follows keys down nested JSON objects; nil when one is missing.
func field(doc any, keys ...string) any {
	for _, k := range keys {
		m, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		doc = m[k]
	}
	return doc
}

func TestDecodeProtocol2Recording(t *testing.T) {
	v := loadVector(t, "value_nested")
	docs, errs, rc := decodeCLI(t, framed(t, v.Responses), "--protocol", "2")
	if rc != 0 || len(docs) != len(v.Responses) {
		t.Fatalf("rc %d, %d docs (stderr %q)", rc, len(docs), errs)
	}
	if docs[1]["kind"] != "complete" || field(docs[1], "complete", "value", "repr") != "[{'k': (1, [2, {3}])}]" {
		t.Fatalf("complete: %v", docs[1])
	}
	docs, _, rc = decodeCLI(t, framed(t, v.Requests), "--protocol", "2", "--from", "parent")
	if rc != 0 || docs[0]["kind"] != "configure" || docs[1]["kind"] != "feed" || docs[2]["kind"] != "shutdown" {
		t.Fatalf("requests: rc %d %v", rc, docs)
	}
}

func TestDecodeProtocol4HexAndBudget(t *testing.T) {
	var g value.Graph
	items := make([]value.NodeID, 1000)
	for i := range items {
		items[i] = g.Add(value.Int(int64(i)))
	}
	root := g.Add(value.List(items...))
	ev := &message.ChildEvent{Body: &message.Complete{Value: root, Values: g}}
	b, err := codecv4.Codec.AppendEvent(nil, ev)
	if err != nil {
		t.Fatal(err)
	}
	in := []byte("# one event\n" + hex.EncodeToString(b) + "\n")
	docs, errs, rc := decodeCLI(t, in, "--hex")
	if repr, _ := field(docs[0], "complete", "value", "repr").(string); rc != 0 || len(docs) != 1 || !strings.HasPrefix(repr, "[0, 1, 2, ") {
		t.Fatalf("rc %d docs %v stderr %q", rc, docs, errs)
	}
	// The same frame under a budget too small for a thousand nodes.
	_, errs, rc = decodeCLI(t, in, "--hex", "--max-decode-bytes", "4096")
	if rc != 1 || !strings.Contains(errs, "frame exceeds decode memory budget") {
		t.Fatalf("budget: rc %d stderr %q", rc, errs)
	}
}

// TestDecodeProtocol5 decodes a protocol-5 stream: the renumbered OsCall,
// the new envelope fields and a Configure with an OS policy.
func TestDecodeProtocol5(t *testing.T) {
	var evs, reqs [][]byte
	for _, e := range []*message.ChildEvent{
		{Body: &message.OsCall{CallID: 3, Op: message.OpSystemSleep, Seconds: 0.5,
			Position: &message.SourceRange{Filename: "<python-input-0>", Start: 0, End: 14}},
			FeedExecutionMicros: 42, MaxTotalSleepMicros: value.Ptr[uint64](150000)},
		{Body: &message.Ok{}, SessionID: []byte{0xab, 0xcd}},
	} {
		b, err := codecv5.AppendEvent(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, b)
	}
	b, err := codecv5.AppendRequest(nil, &message.ParentRequest{Body: &message.Configure{ProtocolVersion: 5,
		OsPolicy: &message.OsPolicy{Clock: message.ClockFixed, Fixed: message.FixedDateTime{UnixSeconds: 1700000000}}}})
	if err != nil {
		t.Fatal(err)
	}
	reqs = append(reqs, b)
	var stream []string
	for _, b := range evs {
		stream = append(stream, hex.EncodeToString(b))
	}
	docs, errs, rc := decodeCLI(t, framed(t, stream), "--protocol", "5")
	if rc != 0 || len(docs) != 2 {
		t.Fatalf("rc %d docs %v stderr %q", rc, docs, errs)
	}
	if docs[0]["kind"] != "os_call" || field(docs[0], "os_call", "call") != "system_sleep" ||
		field(docs[0], "os_call", "system_sleep", "seconds") != 0.5 ||
		field(docs[0], "os_call", "position", "end") != float64(14) || docs[0]["feed_execution_micros"] != float64(42) ||
		docs[0]["max_total_sleep_micros"] != float64(150000) || docs[1]["session_id"] != "abcd" {
		t.Fatalf("docs %v", docs)
	}
	// The same bytes read as protocol 4 are a different (or no) message.
	if docs4, _, _ := decodeCLI(t, framed(t, stream[:1])); len(docs4) == 1 && field(docs4[0], "os_call", "call") == "system_sleep" {
		t.Fatal("protocol 4 read a protocol-5 sleep")
	}
	docs, errs, rc = decodeCLI(t, framed(t, []string{hex.EncodeToString(reqs[0])}), "--protocol", "5", "--from", "parent")
	if rc != 0 || len(docs) != 1 {
		t.Fatalf("rc %d docs %v stderr %q", rc, docs, errs)
	}
	pol, _ := field(docs[0], "configure", "os_policy").(map[string]any)
	if pol["datetime"] != "fixed" || field(pol, "fixed", "unix_seconds") != float64(1700000000) {
		t.Fatalf("policy %v", pol)
	}
}

func TestDecodeInvalidFrames(t *testing.T) {
	for name, in := range map[string][]byte{
		"truncated": {8, 0, 0, 0, 1, 2},
		"oversize":  {0xff, 0xff, 0xff, 0xff},
		"garbage":   {3, 0, 0, 0, 0xff, 0xff, 0xff},
		"bad arena": framed(t, []string{"3209120712055a030a0105"}),
	} {
		_, errs, rc := decodeCLI(t, in)
		if rc != 1 || errs == "" {
			t.Errorf("%s: rc %d stderr %q", name, rc, errs)
		}
	}
	_, errs, rc := decodeCLI(t, []byte("zz\n"), "--hex")
	if rc != 1 || !strings.Contains(errs, "invalid hex") {
		t.Errorf("bad hex: rc %d %q", rc, errs)
	}
	_, _, rc = decodeCLI(t, nil, "--protocol", "3")
	if rc != 2 { // a usage mistake
		t.Errorf("unknown protocol: rc %d", rc)
	}
}

// TestDecodeEveryRecordedSession runs the events of every recorded session
// (testdata/v2 and testdata/v2-more) through `montygo decode --protocol 2`,
// one stream per directory: every frame must come out as one line, each
// complete with a repr and each error with its exception type.
func TestDecodeEveryRecordedSession(t *testing.T) {
	for _, dir := range []string{"../../testdata/v2", "../../testdata/v2-more"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(files) < 300 {
			t.Fatalf("%s: %d sessions (%v)", dir, len(files), err)
		}
		var frames []string
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var v vector
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			frames = append(frames, v.Responses...)
		}
		docs, errs, rc := decodeCLI(t, framed(t, frames), "--protocol", "2")
		if rc != 0 || len(docs) != len(frames) {
			t.Fatalf("%s: rc %d, %d lines for %d frames (stderr %q)", dir, rc, len(docs), len(frames), errs)
		}
		for i, d := range docs {
			switch d["kind"] {
			case "complete":
				if _, ok := field(d, "complete", "value", "repr").(string); !ok {
					t.Errorf("%s: frame %d: complete without a repr: %v", dir, i, d)
				}
			case "error":
				if s, _ := field(d, "error", "exception", "exc_type").(string); s == "" {
					t.Errorf("%s: frame %d: error without its exception type: %v", dir, i, d)
				}
			}
		}
	}
}

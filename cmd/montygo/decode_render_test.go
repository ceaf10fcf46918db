//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gomonty/monty/child/tap"
	"github.com/gomonty/monty/codec"
	codecv2 "github.com/gomonty/monty/codec/codecv2"
	codecv4 "github.com/gomonty/monty/codec/codecv4"
	"github.com/gomonty/monty/internal/codectest"
	"github.com/gomonty/monty/internal/pb/montyp2v1"
	"github.com/gomonty/monty/internal/pb/montyp5v1"
	"github.com/gomonty/monty/internal/pb/montyv1"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

var updateDecodeGolden = flag.Bool("update-decode-golden", false, "rewrite testdata/decode/*.golden from the current rendering")

// runDecode runs montygo decode in process on frames and returns its
// output lines, failing the test on any status but 0.
func runDecode(t *testing.T, frames [][]byte, args ...string) []string {
	t.Helper()
	var in bytes.Buffer
	for _, f := range frames {
		in.Write([]byte{byte(len(f)), byte(len(f) >> 8), byte(len(f) >> 16), byte(len(f) >> 24)})
		in.Write(f)
	}
	var out, errb bytes.Buffer
	if err := decodeCmd(context.Background(), args, &in, &out, &errb); err != nil {
		t.Fatalf("decode %v: %v (%s)", args, err, errb.String())
	}
	s := out.String()
	if !strings.HasSuffix(s, "\n") && s != "" {
		t.Fatalf("output does not end a line: %q", s)
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if s == "" {
		lines = nil
	}
	if len(lines) != len(frames) {
		t.Fatalf("decode %v: %d lines for %d messages", args, len(lines), len(frames))
	}
	return lines
}

// goldenFrame is one recorded frame chosen for the golden files.
type goldenFrame struct {
	vector string
	dir    string // "parent" (a request) or "child" (an event)
	index  int
	kind   string
	v2     []byte // as recorded
	v4     []byte // the decoded message written by the protocol-4 codec, nil when it cannot be
}

// goldenSessions are recorded sessions whose frames all go into the golden
// files, for the values, exceptions, prints and OS calls they carry.
var goldenSessions = map[string]bool{
	"value_nested": true, "value_cycle_list": true, "value_dataclass_instance": true, "value_bigint_big": true,
	"value_float_inf": true, "value_datetime_aware_neg": true, "value_time_fold": true,
	"value_namedtuple_collections": true, "value_shared_subobject": true, "value_bytes": true,
	"value_exception_value": true, "value_type_sandbox_class": true, "value_frozenset_in_set": true,
	"value_timedelta_neg": true, "value_timezone_named": true, "value_path": true, "value_builtin_len": true,
	"value_ellipsis": true, "value_unicode_surrogate_escape": true, "error_unicode_decode": true,
	"error_json_decode": true, "print_stderr": true, "oscall_write_bytes_answered": true,
	"oscall_datetime_now_tz_not_handled": true, "oscall_getenv_default_answered": true,
	"oscall_mkdir_parents_answered": true, "oscall_rename_answered": true, "function_input_call": true,
	"futures_gather_mixed_sync_async": true, "input_class_instance_host_dataclass": true,
	"input_datetime_aware": true, "input_bigint": true, "host_instance_method_call": true,
}

// goldenFrames picks, from the recorded sessions of testdata/v2 in name
// order, the first two frames of each request and event kind, and every
// frame of the goldenSessions.
func goldenFrames(t *testing.T) []goldenFrame {
	files, err := filepath.Glob("../../testdata/v2/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings: %v", err)
	}
	sort.Strings(files)
	seen := map[string]int{}
	var picked []goldenFrame
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		v := loadVector(t, name)
		for _, side := range []struct {
			dir   string
			hexes []string
		}{{"parent", v.Requests}, {"child", v.Responses}} {
			for i, h := range side.hexes {
				b, err := hex.DecodeString(h)
				if err != nil {
					t.Fatal(err)
				}
				gf := goldenFrame{vector: name, dir: side.dir, index: i, v2: b}
				if side.dir == "parent" {
					req, err := codecv2.DecodeRequest(b, codec.Limits{})
					if err != nil || req.Body == nil {
						continue // a recording of a malformed request
					}
					gf.kind = requestArms[req.Body.RequestKind()]
					if b4, err := codecv4.AppendRequest(nil, req); err == nil {
						gf.v4 = b4
					}
				} else {
					ev, err := codecv2.DecodeEvent(b, codec.Limits{})
					if err != nil || ev.Body == nil {
						continue
					}
					gf.kind = eventArms[ev.Body.EventKind()]
					if b4, err := codecv4.AppendEvent(nil, ev); err == nil {
						gf.v4 = b4
					}
				}
				key := side.dir + " " + gf.kind
				if seen[key] >= 2 && !goldenSessions[name] {
					continue
				}
				seen[key]++
				picked = append(picked, gf)
			}
		}
	}
	return picked
}

// TestDecodeGolden renders two recorded frames of every request and event
// kind the recordings hold, and the frames of goldenSessions, both directions, as recorded at protocol 2 and
// written again by the protocol-4 codec, and compares the lines with
// testdata/decode/v2.golden and v4.golden (-update-decode-golden rewrites
// them). The request kinds the recordings never sent are listed in the
// files' headers; TestDecodeKeysAreSchemaNames renders every kind.
func TestDecodeGolden(t *testing.T) {
	frames := goldenFrames(t)
	for _, proto := range []string{"2", "4"} {
		var got bytes.Buffer
		fmt.Fprintf(&got, "# montygo decode --protocol %s: two frames of each kind from testdata/v2, in name order\n", proto)
		kinds := map[string]bool{}
		for _, gf := range frames {
			b := gf.v2
			if proto == "4" {
				if b = gf.v4; b == nil {
					continue
				}
			}
			line := runDecode(t, [][]byte{b}, "--protocol", proto, "--from", gf.dir)[0]
			fmt.Fprintf(&got, "# %s %s frame %d\n%s\n", gf.vector, gf.dir, gf.index, line)
			kinds[gf.dir+" "+gf.kind] = true
		}
		var missing []string
		for _, a := range requestArms {
			if a != "" && !kinds["parent "+a] {
				missing = append(missing, "request "+a)
			}
		}
		for _, a := range eventArms {
			if a != "" && !kinds["child "+a] {
				missing = append(missing, "event "+a)
			}
		}
		fmt.Fprintf(&got, "# kinds no recording holds: %s\n", strings.Join(missing, ", "))
		path := filepath.Join("testdata", "decode", "v"+proto+".golden")
		if *updateDecodeGolden {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
			for i := range max(len(gl), len(wl)) {
				var g, w string
				if i < len(gl) {
					g = gl[i]
				}
				if i < len(wl) {
					w = wl[i]
				}
				if g != w {
					t.Fatalf("%s: line %d differs:\ngot  %.400s\nwant %.400s", path, i+1, g, w)
				}
			}
		}
	}
}

// schemaNames are the field and oneof names of every message of a
// schema, nested messages included (proto3 optional's synthetic oneofs
// left out).
func schemaNames(fd protoreflect.FileDescriptor) map[string]bool {
	names := map[string]bool{}
	var add func(ms protoreflect.MessageDescriptors)
	add = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			m := ms.Get(i)
			for j := range m.Fields().Len() {
				names[string(m.Fields().Get(j).Name())] = true
			}
			for j := range m.Oneofs().Len() {
				if o := m.Oneofs().Get(j); !o.IsSynthetic() {
					names[string(o.Name())] = true
				}
			}
			add(m.Messages())
		}
	}
	add(fd.Messages())
	return names
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// jsonKeys calls f with every object key in doc, at any depth.
func jsonKeys(doc any, f func(string)) {
	switch d := doc.(type) {
	case map[string]any:
		for k, v := range d {
			f(k)
			jsonKeys(v, f)
		}
	case []any:
		for _, v := range d {
			jsonKeys(v, f)
		}
	}
}

// everyRequest and everyEvent hold every request and event kind with
// every field the domain types carry set, and every value shape, every
// OS call arm, every result and lookup kind and both exception data kinds.
func everyRequest(proto uint32) []*message.ParentRequest {
	g, root := codectest.EveryShape()
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	exc := richException()
	u32 := func(v uint32) *uint32 { return &v }
	u64 := func(v uint64) *uint64 { return &v }
	var reqs []*message.ParentRequest
	add := func(b message.Request) { reqs = append(reqs, &message.ParentRequest{Body: b, TraceParent: &tp}) }
	for _, pol := range []*message.OsPolicy{
		{Clock: message.ClockFixed, Fixed: message.FixedDateTime{UnixSeconds: -5, Microsecond: 7},
			TimeZone: &message.SandboxTimeZone{Kind: message.ZoneNamed, Name: "Europe/Paris"},
			Sleep:    &message.SleepMode{Kind: message.SleepSystem, MaxMicros: u64(9)},
			Random:   message.RandomSeeded, Seed: message.RandomSeed{Kind: message.SeedInt, Int: []byte{1, 2}},
			ProcessTime: message.ProcessTimeZero},
		{Clock: message.ClockCallHost, TimeZone: &message.SandboxTimeZone{Kind: message.ZoneFixed, Fixed: value.TimeZone{Offset: 3600, Name: value.Ptr("X")}},
			Sleep: &message.SleepMode{Kind: message.SleepCallHost}, Random: message.RandomCallHost,
			ProcessTime: message.ProcessTimeElapsed},
		{Clock: message.ClockSystem, TimeZone: &message.SandboxTimeZone{Kind: message.ZoneUTC},
			Sleep: &message.SleepMode{Kind: message.SleepZero}, Random: message.RandomSeeded,
			Seed: message.RandomSeed{Kind: message.SeedFloat, Float: math.Inf(1)}},
		{Random: message.RandomSeeded, Seed: message.RandomSeed{Kind: message.SeedStr, Str: "s"}},
		{Random: message.RandomSeeded, Seed: message.RandomSeed{Kind: message.SeedBytes, Bytes: []byte{9}}},
		{Random: message.RandomSystem},
	} {
		cf := &message.Configure{ScriptName: "main.py", Limits: &message.ResourceLimits{
			MaxDurationMicros: u64(1), MaxMemoryBytes: u64(2), GCInterval: u64(3), MaxRecursionDepth: u64(4),
			MaxSuspensions: u64(5), MaxFeedDurationMicros: u64(6), MaxTurnDurationMicros: u64(7), MaxTotalSleepMicros: u64(8)},
			TypeCheck: true, TypeCheckStubs: value.Ptr("stubs"), MontyVersion: "0.0.1", AssertMessageAnnotations: u32(3),
			TypeCheckFormat: message.FormatJSONLines, TypeCheckColor: true, ProtocolVersion: 5, PrintFlushIntervalMs: u32(0),
			OsPolicy: pol, Persistence: message.PersistenceStored, Profile: value.Ptr("p")}
		switch proto {
		case 2, 4:
			cf.OsPolicy, cf.Persistence, cf.Profile = nil, 0, nil
			cf.Limits.MaxFeedDurationMicros, cf.Limits.MaxTurnDurationMicros, cf.Limits.MaxTotalSleepMicros = nil, nil, nil
		case 5:
			cf.Limits.MaxDurationMicros = nil
		}
		add(cf)
		if proto != 5 {
			break
		}
	}
	add(&message.InstallDependencies{Requirements: []string{"a", "b"}})
	feed := &message.Feed{Code: "x", Inputs: []message.NamedRef{{Name: "v", Value: root}}, Values: g, SkipTypeCheck: true, Cwd: "/w"}
	if proto == 2 {
		feed.Cwd = ""
	}
	add(feed)
	for _, res := range everyResult(root, exc) {
		add(&message.ResumeCall{CallID: 4, Result: res, Values: g})
	}
	add(&message.ResumeNameLookup{Kind: message.LookupValue, Value: root, Values: g})
	add(&message.ResumeNameLookup{Kind: message.LookupUndefined})
	add(&message.ResumeNameLookup{Kind: message.LookupError, Error: exc})
	var frs []message.FutureResult
	for i, res := range everyResult(root, exc) {
		frs = append(frs, message.FutureResult{CallID: uint32(i), Result: res})
	}
	add(&message.ResumeFutures{Results: frs, Values: g})
	add(&message.Dump{})
	add(&message.Load{State: []byte{0xde, 0xad}})
	add(&message.Reset{})
	add(&message.Shutdown{})
	add(&message.AbortFeed{Exception: exc})
	return reqs
}

func everyResult(root value.NodeID, exc *message.RaisedException) []*message.ExtResult {
	return []*message.ExtResult{
		{Kind: message.ResultReturn, Value: root},
		{Kind: message.ResultError, Error: exc},
		{Kind: message.ResultFuture, Future: 3},
		{Kind: message.ResultNotFound, Name: "f"},
	}
}

func richException() *message.RaisedException {
	frame := message.StackFrame{Filename: "<x>", Start: message.CodeLoc{Line: 1, Column: 2}, End: message.CodeLoc{Line: 3, Column: 4},
		FrameName: value.Ptr("f"), PreviewLine: value.Ptr("f()"), HideCaret: true, HideFrameName: true}
	return &message.RaisedException{Type: "UnicodeDecodeError", Message: value.Ptr("m"), Traceback: []message.StackFrame{frame},
		Data: &message.UnicodeErrorData{Encoding: "utf-8", ObjectBytes: []byte{0xff}, Start: 0, End: 1, Reason: "r"}}
}

func everyEvent(proto uint32) []*message.ChildEvent {
	g, root := codectest.EveryShape()
	u64 := func(v uint64) *uint64 { return &v }
	pos := &message.SourceRange{Filename: "<python-input-0>", Start: 1, End: 2}
	id := value.UUID{1, 2, 3}
	var evs []*message.ChildEvent
	if proto < 5 {
		pos = nil
	}
	add := func(b message.Event) {
		ev := &message.ChildEvent{Body: b, TotalExecutionMicros: 1, MaxSuspensions: u64(3), RestoredScriptName: value.Ptr("r")}
		if proto < 5 {
			ev.MaxDurationMicros = u64(2)
		} else {
			ev.FeedExecutionMicros, ev.MaxFeedDurationMicros, ev.MaxTurnDurationMicros = 4, u64(5), u64(6)
			ev.MaxTotalSleepMicros, ev.SessionID = u64(7), []byte{8}
		}
		evs = append(evs, ev)
	}
	add(&message.Print{Segments: []message.PrintSegment{{Stream: message.StreamStdout, Text: "a\n"}}})
	if proto > 2 {
		add(&message.Print{Segments: []message.PrintSegment{{Stream: message.StreamStdout, Text: "a"}, {Stream: message.StreamStderr, Text: "b"}}})
	}
	kw := g.Add(value.Str("k"))
	add(&message.FunctionCall{FunctionName: "f", Args: []value.NodeID{root, kw}, Kwargs: []value.Pair{{Key: kw, Value: root}},
		CallID: 1, ObjectID: &id, AllowEagerAwait: proto > 2, Values: g, Position: pos})
	lastOp := map[uint32]message.OsOp{2: message.OpDateTimeNow, 4: message.OpUrandom, 5: message.OpAsyncSystemSleep}[proto]
	for op := message.OpExists; op <= lastOp; op++ {
		add(&message.OsCall{CallID: 2, Op: op, Path: "/p", Dst: "/q", Text: "t", Data: []byte{1}, Mode: "rb",
			Parents: true, ExistOK: true, Key: "K", Default: root, TZ: &value.TimeZone{Offset: 60, Name: value.Ptr("Z")},
			Size: 16, Values: g, Caller: "time.time", Seconds: 0.25, AllowEagerAwait: op == message.OpAsyncSleep, Position: pos})
	}
	add(&message.NameLookup{Name: "n", ObjectID: &id, Position: pos})
	add(&message.ResolveFutures{PendingCallIDs: []uint32{1, 2}, Position: pos})
	add(&message.Complete{Value: root, Values: g})
	add(&message.Error{Exception: richException()})
	add(&message.Error{Exception: &message.RaisedException{Type: "json.JSONDecodeError",
		Data: &message.JSONErrorData{Msg: "m", Doc: value.Ptr("d"), Pos: 1, Lineno: 2, Colno: 3}}})
	add(&message.Error{Exception: &message.RaisedException{Type: "UnicodeEncodeError",
		Data: &message.UnicodeErrorData{Encoding: "ascii", ObjectStr: value.Ptr("é")}}})
	add(&message.TypingError{Diagnostics: "d"})
	add(&message.DumpResult{State: []byte{1}})
	add(&message.Ok{})
	add(&message.FatalError{Message: "m"})
	add(&message.ShutdownDump{Dump: &[]byte{2}})
	return evs
}

// TestDecodeKeysAreSchemaNames renders every request and event kind, with
// every field set and every value shape, at each protocol: every key of
// every line is snake_case and a field or oneof name of that protocol's
// schema (the generated descriptors are the oracle), the envelope's kind
// names its arm, and no key is written twice in an object.
func TestDecodeKeysAreSchemaNames(t *testing.T) {
	for _, c := range []struct {
		proto uint32
		fd    protoreflect.FileDescriptor
	}{{2, montyp2v1.File_montyp2_v1_montyp2_proto}, {4, montyv1.File_monty_v1_monty_proto}, {5, montyp5v1.File_montyp5_v1_montyp5_proto}} {
		names := schemaNames(c.fd)
		kinds := map[string]bool{}
		check := func(what string, line []byte) {
			t.Helper()
			if bytes.ContainsAny(line, "\n\r") {
				t.Fatalf("protocol %d: %s: line break in %q", c.proto, what, line)
			}
			if err := checkNoDuplicateKeys(line); err != nil {
				t.Fatalf("protocol %d: %s: %v: %s", c.proto, what, err, line)
			}
			var doc map[string]any
			if err := json.Unmarshal(line, &doc); err != nil {
				t.Fatalf("protocol %d: %s: %v: %s", c.proto, what, err, line)
			}
			jsonKeys(doc, func(k string) {
				if !snakeCase.MatchString(k) || !names[k] {
					t.Errorf("protocol %d: %s: key %q is not a field name of the schema", c.proto, what, k)
				}
			})
			kind, _ := doc["kind"].(string)
			if doc[kind] == nil {
				t.Errorf("protocol %d: %s: kind %q without its arm: %s", c.proto, what, kind, line)
			}
			kinds[what[:1]+kind] = true
		}
		// Each message goes through the version's codec, as decode reads
		// it: what the version cannot carry is refused by the encoder and
		// left out (every kind still has to come through).
		cd, _ := codec.ForVersion(c.proto)
		for _, req := range everyRequest(c.proto) {
			what := "request " + requestArms[req.Body.RequestKind()]
			b, err := cd.AppendRequest(nil, req)
			if err != nil {
				t.Logf("protocol %d: %s: not encodable: %v", c.proto, what, err)
				continue
			}
			lines := runDecode(t, [][]byte{b}, "--protocol", fmt.Sprint(c.proto), "--from", "parent")
			check(what, []byte(lines[0]))
		}
		for _, ev := range everyEvent(c.proto) {
			what := "event " + eventArms[ev.Body.EventKind()]
			b, err := cd.AppendEvent(nil, ev)
			if err != nil {
				t.Logf("protocol %d: %s: not encodable: %v", c.proto, what, err)
				continue
			}
			lines := runDecode(t, [][]byte{b}, "--protocol", fmt.Sprint(c.proto))
			check(what, []byte(lines[0]))
		}
		for k, a := range requestArms {
			if a != "" && !kinds["r"+a] {
				t.Errorf("protocol %d: request kind %d (%s) not rendered", c.proto, k, a)
			}
		}
		for k, a := range eventArms {
			if a != "" && !kinds["e"+a] {
				t.Errorf("protocol %d: event kind %d (%s) not rendered", c.proto, k, a)
			}
		}
	}
}

// checkNoDuplicateKeys reports an object of line that has a key twice
// (encoding/json would silently keep the last).
func checkNoDuplicateKeys(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	type obj struct {
		keys  map[string]bool
		isObj bool
		key   bool // the next string token in this object is a key
	}
	var stack []*obj
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				return nil
			}
			return err
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				if top != nil && top.isObj {
					top.key = true
				}
				stack = append(stack, &obj{keys: map[string]bool{}, isObj: true, key: true})
			case '[':
				if top != nil && top.isObj {
					top.key = true
				}
				stack = append(stack, &obj{})
			default:
				stack = stack[:len(stack)-1]
			}
		default:
			if top != nil && top.isObj {
				if top.key {
					s, _ := v.(string)
					if top.keys[s] {
						return fmt.Errorf("key %q twice", s)
					}
					top.keys[s] = true
					top.key = false
				} else {
					top.key = true
				}
			}
		}
	}
}

// TestDecodeOneLinePerMessage: text with line breaks, the JavaScript line
// separators, control characters and bytes that are not UTF-8, in prints
// and values, stays inside its message's one line, and reads back as the
// text (a bad byte as U+FFFD).
func TestDecodeOneLinePerMessage(t *testing.T) {
	text := "a\nb\r\nc\u2028d\u2029e\x00\x1f\"\\\t\xffz"
	var g value.Graph
	root := g.Add(value.List(g.Add(value.Str(text)), g.Add(value.Bytes([]byte("\n")))))
	r := renderer{proto: 4}
	r.begin(100)
	r.event(&message.ChildEvent{Body: &message.Complete{Value: root, Values: g}})
	r.buf = append(r.buf, '\n')
	r.event(&message.ChildEvent{Body: &message.Print{Segments: []message.PrintSegment{{Stream: message.StreamStdout, Text: text}}}})
	lines := strings.Split(string(r.buf), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %q", len(lines), r.buf)
	}
	want := strings.ToValidUTF8(text, "\uFFFD")
	var c, p map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &c); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &p); err != nil {
		t.Fatal(err)
	}
	items, _ := field(c, "complete", "value", "list").([]any)
	if len(items) != 2 || field(items[0], "str") != want || field(items[1], "bytes") != "0a" {
		t.Errorf("complete: %s", lines[0])
	}
	segs, _ := field(p, "print", "segments").([]any)
	if len(segs) != 1 || field(segs[0], "text") != want || field(segs[0], "stream") != "PRINT_STREAM_STDOUT" {
		t.Errorf("print: %s", lines[1])
	}
	// Through the command: a frame stream of such messages, one line each.
	var frames [][]byte
	for range 3 {
		b, err := codecv4.AppendEvent(nil, &message.ChildEvent{Body: &message.Print{
			Segments: []message.PrintSegment{{Stream: message.StreamStdout, Text: "x\ny\u2028"}}}})
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, b)
	}
	for _, l := range runDecode(t, frames) {
		if !json.Valid([]byte(l)) {
			t.Errorf("not JSON: %q", l)
		}
	}
}

// TestDecodeValueTreeBounds: a graph whose nodes are each shared twice
// (2^60 leaves as a tree) renders within its bound, as its repr; a chain
// of lists deeper than maxTreeDepth renders the rest of the branch as a
// repr; neither recurses, and both are single JSON lines.
func TestDecodeValueTreeBounds(t *testing.T) {
	var g value.Graph
	id := g.Add(value.Str(strings.Repeat("s", 100)))
	for range 60 {
		id = g.Add(value.List(id, id))
	}
	b, err := codecv4.AppendEvent(nil, &message.ChildEvent{Body: &message.Complete{Value: id, Values: g}})
	if err != nil {
		t.Fatal(err)
	}
	line := runDecode(t, [][]byte{b})[0]
	if int64(len(line)) > renderLimitFloor+renderLimitPerByte*int64(len(b))+64 {
		t.Fatalf("%d bytes for a %d-byte frame", len(line), len(b))
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(line), &doc); err != nil {
		t.Fatal(err)
	}
	if v := field(doc, "complete", "value"); field(v, "kind") != "repr" || !strings.HasPrefix(field(v, "repr").(string), "[[[[") {
		t.Fatalf("shared graph: %.300s", line)
	}

	g = value.Graph{}
	id = g.Add(value.Int(7))
	const depth = 100_000
	for range depth {
		id = g.Add(value.List(id))
	}
	b, err = codecv4.AppendEvent(nil, &message.ChildEvent{Body: &message.Complete{Value: id, Values: g}})
	if err != nil {
		t.Fatal(err)
	}
	line = runDecode(t, [][]byte{b})[0]
	if err := json.Unmarshal([]byte(line), &doc); err != nil {
		t.Fatal(err)
	}
	v := field(doc, "complete", "value")
	levels := 0
	for field(v, "kind") == "list" {
		items := field(v, "list").([]any)
		v = items[0]
		levels++
	}
	cut, _ := field(v, "repr").(string)
	if levels != maxTreeDepth || field(v, "kind") != "repr" || cut != strings.Repeat("[", depth-levels)+"7"+strings.Repeat("]", depth-levels) {
		t.Fatalf("deep chain: %d levels, then %.100v", levels, v)
	}
}

// TestDecodeBigIntAndFloats: big ints are decimal strings up to
// MaxIntStrDigits digits and signed hex past them; NaN and the
// infinities, which JSON has no number for, are strings.
func TestDecodeBigIntAndFloats(t *testing.T) {
	small, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	huge := new(big.Int).Lsh(big.NewInt(-1), 20000)
	var g value.Graph
	root := g.Add(value.Tuple(g.Add(value.BigIntNode(small)), g.Add(value.BigIntNode(huge)),
		g.Add(value.Float(math.NaN())), g.Add(value.Float(math.Inf(-1))), g.Add(value.Float(1e16)), g.Add(value.Float(math.Copysign(0, -1)))))
	r := renderer{proto: 4}
	r.begin(0)
	r.event(&message.ChildEvent{Body: &message.Complete{Value: root, Values: g}})
	var doc map[string]any
	if err := json.Unmarshal(r.buf, &doc); err != nil {
		t.Fatalf("%v: %.300s", err, r.buf)
	}
	items := field(doc, "complete", "value", "tuple").([]any)
	want := []any{small.String(), "-0x1" + strings.Repeat("0", 5000), "nan", "-inf", 1e16, math.Copysign(0, -1)}
	for i, w := range want {
		k := field(items[i], "kind").(string)
		if got := field(items[i], k); got != w {
			t.Errorf("item %d (%s): %.60v, want %.60v", i, k, got, w)
		}
	}
}

// TestDecodeRecordMatchesTheStream: decode --record writes each frame's
// message as the stream form writes it, read at the session's version:
// a protocol-4 Configure asking for 2, the child's Ok, then a protocol-2
// Complete, which the record renders at 2 ("protocol":2) exactly as
// `decode --protocol 2` renders the frame.
func TestDecodeRecordMatchesTheStream(t *testing.T) {
	cf, err := codecv4.AppendRequest(nil, &message.ParentRequest{Body: &message.Configure{ProtocolVersion: 2}})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := codecv4.AppendEvent(nil, &message.ChildEvent{Body: &message.Ok{}})
	if err != nil {
		t.Fatal(err)
	}
	v := loadVector(t, "value_dataclass_instance")
	done, err := hex.DecodeString(v.Responses[1])
	if err != nil {
		t.Fatal(err)
	}
	var rec bytes.Buffer
	rec.WriteString(tap.Header)
	for _, r := range []struct {
		dir  tap.Direction
		body []byte
	}{{tap.In, cf}, {tap.Out, ok}, {tap.Out, done}} {
		rec.WriteByte(byte(r.dir))
		rec.Write(make([]byte, 8))
		rec.Write([]byte{byte(len(r.body)), byte(len(r.body) >> 8), byte(len(r.body) >> 16), byte(len(r.body) >> 24)})
		rec.Write(r.body)
	}
	path := filepath.Join(t.TempDir(), "rec")
	if err := os.WriteFile(path, rec.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := decodeRecord(path, 4, codec.Limits{}, &out, &errb); err != nil {
		t.Fatalf("%v (%s)", err, errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines: %s", len(lines), out.String())
	}
	want := runDecode(t, [][]byte{done}, "--protocol", "2")[0]
	wantLine := `{"n":2,"time":"1970-01-01T00:00:00Z","bytes":` + fmt.Sprint(len(done)) + `,"protocol":2,"dir":"child->parent","event":` + want + `}`
	if lines[2] != wantLine {
		t.Fatalf("record line\n%s\nwant\n%s", lines[2], wantLine)
	}
	if !strings.Contains(lines[0], `"protocol":4,"dir":"parent->child","request":{"kind":"configure"`) {
		t.Fatalf("first record: %s", lines[0])
	}
}

// TestDecodeHelpTellsTheShape: decode's usage says how its lines are
// shaped (bytes as hex, the oneof form), before the exit statuses.
func TestDecodeHelpTellsTheShape(t *testing.T) {
	var out, errb bytes.Buffer
	_ = decodeCmd(context.Background(), []string{"-h"}, strings.NewReader(""), &out, &errb)
	help := out.String() + errb.String()
	if i := strings.Index(help, decodeShapeHelp); i < 0 || i > strings.Index(help, "Exit status:") ||
		!strings.Contains(decodeShapeHelp, "bytes are lowercase hex") {
		t.Fatalf("usage: %s", help)
	}
}

// TestDecodeGivesUpOnRootsPastTheBound: a FunctionCall whose 2000 args all
// name one value that is too large as a tree (nodes shared twice, 2^30
// leaves) builds that tree and that repr once, not once per arg: every arg
// after the first is {"kind":"repr","repr":"..."} at once. The renderer
// used to build each arg's tree and repr up to the bound and throw it
// away, thousands of times over for one frame.
func TestDecodeGivesUpOnRootsPastTheBound(t *testing.T) {
	var g value.Graph
	id := g.Add(value.Str(strings.Repeat("s", 100)))
	for range 30 {
		id = g.Add(value.List(id, id))
	}
	args := make([]value.NodeID, 2000)
	for i := range args {
		args[i] = id
	}
	b, err := codecv4.AppendEvent(nil, &message.ChildEvent{Body: &message.FunctionCall{FunctionName: "f", Args: args, Values: g}})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := codecv4.DecodeEvent(b, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	r := renderer{proto: 4}
	r.begin(len(b))
	r.event(ev)
	if r.tries > 3 {
		t.Errorf("%d trees and reprs computed for 2000 args of one value", r.tries)
	}
	var doc map[string]any
	if err := json.Unmarshal(r.buf, &doc); err != nil {
		t.Fatal(err)
	}
	got := field(doc, "function_call", "args").([]any)
	if len(got) != len(args) || field(got[0], "kind") != "repr" {
		t.Fatalf("%d args, the first %.200v", len(got), got[0])
	}
	for i, a := range got[1:] {
		if field(a, "kind") != "repr" || field(a, "repr") != "..." {
			t.Fatalf("arg %d: %.200v", i+1, a)
		}
	}
}

//go:build unix

package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	codecv2 "github.com/gomonty/monty/codec/codecv2"
	codecv4 "github.com/gomonty/monty/codec/codecv4"
	codecv5 "github.com/gomonty/monty/codec/codecv5"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
)

// recorded is one session of testdata/v2, recorded against the released
// worker (see testdata/v2/README.md for the fields and the replay rules).
type recorded struct {
	Name      string `json:"name"`
	ExitCode  any    `json:"exit_code"`
	Notes     any    `json:"notes"`
	Exchanges []struct {
		Request   *string  `json:"request_hex"`
		Raw       *string  `json:"raw_bytes_written_hex"`
		Responses []string `json:"response_frames_hex"`
		Timeout   bool     `json:"timeout"`
		EOFAfter  bool     `json:"eof_after"`
	} `json:"exchanges"`
}

// stdinClosed is the recorder's marker for closing the child's stdin.
const stdinClosed = "STDIN CLOSED"

// TestSubprocessReplaysVectors replays every recorded session of
// testdata/v2 and testdata/v2-more against `montygo subprocess --protocol 2` (the Go child,
// relaying to the released worker) and checks that it answers each
// request with the events the released worker answered when the session
// was recorded, and exits with its status: a protocol-2 parent cannot
// tell the two apart. The released worker itself is replayed too, as the
// control that the comparison's masking of what varies between runs
// (execution clocks, the uuids the worker makes, dump state, the order of
// pending call ids) is right.
func TestSubprocessReplaysVectors(t *testing.T) {
	if os.Getenv("MONTY_REPLAY") == "" {
		// Four targets' worth of processes for a few minutes: make test
		// runs it on its own (make replay), not beside the other suites.
		t.Skip("set MONTY_REPLAY=1 (make replay) to replay the recorded sessions")
	}
	real := testenv.Worker(t)
	mg := relayBinary(t)
	files, err := filepath.Glob("../../testdata/v2/*.json")
	if err != nil || len(files) < 400 {
		t.Fatalf("%d recorded sessions (%v)", len(files), err)
	}
	// More sessions of the same kind, recorded by internal/vecrec.
	more, err := filepath.Glob("../../testdata/v2-more/*.json")
	if err != nil || len(more) < 300 {
		t.Fatalf("%d more recorded sessions (%v)", len(more), err)
	}
	files = append(files, more...)
	targets := []struct {
		name  string
		argv  []string
		proto uint32
	}{
		{"released-worker", []string{real, "subprocess"}, 2},
		{"montygo-subprocess-2", []string{mg, "subprocess", "--protocol", "2"}, 2},
		{"montygo-subprocess-4", []string{mg, "subprocess", "--protocol", "4"}, 4},
		{"montygo-subprocess-5", []string{mg, "subprocess", "--protocol", "5"}, 5},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				var v recorded
				if err := json.Unmarshal(b, &v); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
					replayVector(t, tg.argv, tg.proto, &v)
				})
			}
		})
	}
}

// loadSensitive are the recorded sessions whose answers depend on how
// fast the machine runs the code: a feed that finished within a 300 ms
// cumulative budget when recorded may not on a loaded machine.
var loadSensitive = map[string]bool{"limit_duration_cumulative": true}

// replayVector runs one recorded session against the child argv starts.
// At protocol 4 each recorded request is decoded and sent re-encoded at
// 4, and the answers are compared as decoded messages: the sessions
// whose bytes are malformed on purpose have no protocol-4 equivalent.
func replayVector(t *testing.T, argv []string, proto uint32, v *recorded) {
	if loadSensitive[v.Name] {
		t.Skip("the answer depends on the machine's speed")
	}
	if proto != 2 {
		for _, ex := range v.Exchanges {
			if ex.Raw != nil {
				t.Skip("raw bytes: malformed on purpose at protocol 2")
			}
		}
		if d := v4Deviations[v.Name]; d != "" {
			t.Skip(d)
		}
		if d := v5Deviations[v.Name]; d != "" && proto == 5 {
			t.Skip(d)
		}
	}
	notes := fmt.Sprint(v.Notes)
	if strings.Contains(notes, "RLIMIT_AS") {
		// prlimit(1) applies the recorder's address-space limit.
		argv = append([]string{"prlimit", "--as=1073741824", "--"}, argv...)
		if _, err := exec.LookPath("prlimit"); err != nil {
			t.Skip("needs prlimit(1)")
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitOnce sync.Once
	var waitErr error
	wait := func() error { waitOnce.Do(func() { waitErr = cmd.Wait() }); return waitErr }
	defer func() {
		cmd.Process.Kill()
		wait()
	}()

	// One reader goroutine; turns take frames from it with a deadline.
	type got struct {
		b   []byte
		err error
	}
	frames := make(chan got, 64)
	go func() {
		r := frame.NewReader(stdout, 0)
		for {
			b, err := r.ReadFrame()
			frames <- got{slices.Clone(b), err}
			if err != nil {
				return
			}
		}
	}()
	norm := newMasker(proto)
	want := newMasker(proto)
	eof := false
	for i, ex := range v.Exchanges {
		switch {
		case ex.Raw != nil && *ex.Raw == stdinClosed:
			stdin.Close()
		case ex.Raw != nil:
			raw, err := hex.DecodeString(*ex.Raw)
			if err != nil {
				t.Fatal(err)
			}
			stdin.Write(raw) // a child that exited is seen below
			if n := v.Exchanges[min(i+1, len(v.Exchanges)-1)].Raw; n != nil && *n == stdinClosed {
				// Part of a frame, then EOF: the answer the recorder
				// filed here can only come after the EOF.
				stdin.Close()
			}
		case ex.Request != nil:
			req, err := hex.DecodeString(*ex.Request)
			if err != nil {
				t.Fatal(err)
			}
			if proto != 2 {
				req = reencode(t, req, proto)
			}
			var buf bytes.Buffer
			if err := frame.NewWriter(&buf, 0).WriteFrame(req); err != nil {
				t.Fatal(err)
			}
			stdin.Write(buf.Bytes())
		}
		if len(ex.Responses) == 0 && !ex.EOFAfter && !ex.Timeout {
			continue // the recorder read nothing here (part of a frame, stdin closed)
		}
		// The turn: events up to as many that are not prints as the
		// recorder read (pipelined requests are answered in one turn).
		ends := 0
		for _, h := range ex.Responses {
			if b, err := hex.DecodeString(h); err == nil && !isPrint(b, 2) {
				ends++
			}
		}
		var answers []string
		wait := 2 * time.Minute // a hang detector: the machine may be loaded
		if ex.Timeout {
			wait = 2 * time.Second
		}
		timer := time.NewTimer(wait)
	turn:
		for !eof {
			select {
			case g := <-frames:
				if g.err != nil {
					eof = true
					break turn
				}
				answers = append(answers, norm.event(t, g.b, proto))
				if !isPrint(g.b, proto) {
					if ends--; ends <= 0 {
						break turn
					}
				}
			case <-timer.C:
				if !ex.Timeout {
					t.Fatalf("exchange %d: no turn-ending event within %v (got %q)", i, wait, answers)
				}
				break turn
			}
		}
		timer.Stop()
		var wantAnswers []string
		for _, h := range ex.Responses {
			b, err := hex.DecodeString(h)
			if err != nil {
				t.Fatal(err)
			}
			wantAnswers = append(wantAnswers, want.event(t, b, 2))
		}
		if !slices.Equal(answers, wantAnswers) {
			t.Fatalf("exchange %d: answered\n  %s\nwhere the released worker answered\n  %s", i,
				strings.Join(answers, "\n  "), strings.Join(wantAnswers, "\n  "))
		}
		if ex.EOFAfter && !eof {
			// The recorder saw stdout close during the turn.
			select {
			case g := <-frames:
				if g.err == nil {
					t.Fatalf("exchange %d: another event where stdout closed", i)
				}
				eof = true
			case <-time.After(30 * time.Second):
				t.Fatalf("exchange %d: stdout not closed", i)
			}
		}
	}
	// The session's end: the exit status.
	wantCode := fmt.Sprint(v.ExitCode)
	if strings.HasPrefix(wantCode, "killed") {
		return // the recorder killed the child
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case err := <-done:
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = -int(ws.Signal())
			}
		}
		if fmt.Sprint(code) != wantCode {
			t.Fatalf("exit status %d, want %s", code, wantCode)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit within 30 s of stdin closing (want status %s)", wantCode)
	}
}

// v4Deviations are the recorded sessions a protocol-4 parent cannot
// replay through the Go child as recorded, and why.
var v4Deviations = map[string]string{
	// A version refusal advises by how the asked version compares with
	// the one spoken: 3 is above the released worker's 2 ("make sure you
	// are using the correct client version") and below the child's 4
	// ("try updating to a newer client version").
	"state_configure_protocol_3": "3 is below 4 and above 2: the refusal's advice differs",
}

// v5Deviations are the recorded sessions whose protocol-5 form is
// answered otherwise by design (delta-v5.md), or by a known limit of the
// relay, and why.
var v5Deviations = map[string]string{
	"limit_bigint_pow":                    relayMemoryShift,
	"limit_memory_big_list":               relayMemoryShift,
	"limit_memory_big_str":                relayMemoryShift,
	"oscall_date_today_not_handled":       childClock,
	"oscall_datetime_now_answered":        childClock,
	"oscall_datetime_now_not_handled":     childClock,
	"oscall_datetime_now_tz_not_handled":  childClock,
	"oscall_datetime_now_utc_answered":    childClock,
	"oscall_datetime_now_utc_not_handled": childClock,
	"oscallx_datetime_now_aware_odd":      childClock,
	"osans_date_today_error":              childClock,
	"osans_date_today_not_found":          childClock,
	"osans_date_today_wrong_type":         childClock,
	"osans_date_today_not_handled":        childClock,
	"osans_datetime_now_error":            childClock,
	"osans_datetime_now_not_found":        childClock,
	"osans_datetime_now_wrong_type":       childClock,
	"osans_datetime_now_not_handled":      childClock,
}

const (
	// At 5 the child reads the clock itself, under the session's
	// os_policy, where protocol 2 asks the parent with an OS call.
	childClock = "protocol 5 answers date.today() and datetime.now() in the child"
	// A protocol-5 Configure is not one the inner session can start
	// with, so the relay configures its protocol-2 worker, resets it and
	// configures it again; that worker's Reset leaves ~192 bytes counted,
	// and a MemoryError reports that much more (see docs/CONFORMANCE.md).
	relayMemoryShift = "the relay's reconfigured inner worker counts ~192 bytes more memory"
)

// reencode turns a recorded protocol-2 request into the same request at
// proto.
func reencode(t *testing.T, b []byte, proto uint32) []byte {
	t.Helper()
	r, err := codecv2.DecodeRequest(b, codec.Limits{})
	if err != nil {
		// The session checks the worker's validation of a request our
		// codec refuses to decode, so it cannot be re-encoded.
		t.Skipf("recorded request refused by the protocol-2 decoder: %v", err)
	}
	if c, ok := r.Body.(*message.Configure); ok && c.ProtocolVersion == 2 {
		c.ProtocolVersion = proto
	}
	out, err := codecOf(proto).AppendRequest(nil, r)
	if err != nil && proto == 5 && strings.Contains(err.Error(), "cannot be expressed in protocol 5") {
		t.Skipf("protocol 5 has no equivalent: %v", err) // max_duration_micros
	}
	if err != nil {
		t.Fatalf("re-encoding %v at %d: %v", r.Body.RequestKind(), proto, err)
	}
	return out
}

// codecOf is the codec of a protocol version.
func codecOf(proto uint32) codec.Codec {
	switch proto {
	case 2:
		return codecv2.Codec
	case 5:
		return codecv5.Codec
	}
	return codecv4.Codec
}

// isPrint reports whether a ChildEvent frame is a print, which does not
// end a turn.
func isPrint(b []byte, proto uint32) bool {
	ev, err := codecOf(proto).DecodeEvent(b, codec.Limits{})
	if err != nil {
		return false
	}
	_, ok := ev.Body.(*message.Print)
	return ok
}

// masker renders ChildEvents for comparison, masking what the recorder
// lists as varying between runs: the execution clock, the uuids the
// worker makes for sandbox classes and instances (numbered in order of
// appearance, per session), dump state, and pending call ids' order.
type masker struct {
	target uint32 // the protocol of the replay
	uuids  map[string]int
}

func newMasker(target uint32) *masker { return &masker{target: target, uuids: map[string]int{}} }

// elapsedRE matches the time a TimeoutError's message says ran.
var elapsedRE = regexp.MustCompile(`time limit exceeded: [0-9.]+(µs|ms|ns|s) `)

var (
	identityRE = regexp.MustCompile(`"identity":[0-9]+,`)
	supportsRE = regexp.MustCompile(`supports protocol version [0-9]+`)
)

var uuidRE = regexp.MustCompile(`"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"`)

func (m *masker) event(t *testing.T, b []byte, proto uint32) string {
	t.Helper()
	ev, err := codecOf(proto).DecodeEvent(b, codec.Limits{})
	if err != nil {
		return "undecodable: " + err.Error()
	}
	ev.TotalExecutionMicros, ev.FeedExecutionMicros = 0, 0 // clocks
	if m.target == 5 {
		ev.MaxDurationMicros = nil // protocol 5 stamps no max_duration
	}
	switch x := ev.Body.(type) {
	case *message.FunctionCall:
		// Protocol 2 has no allow_eager_await; at 4 the child works it out.
		x.AllowEagerAwait = false
	case *message.DumpResult:
		x.State = nil
	case *message.ResolveFutures:
		slices.Sort(x.PendingCallIDs)
	}
	j, err := json.Marshal(domainEventJSON(ev))
	if err != nil {
		t.Fatal(err)
	}
	j = elapsedRE.ReplaceAll(j, []byte("time limit exceeded: (elapsed) "))
	// A cycle's identity (the node it closes on) is protocol 2's; and a
	// version refusal names the version the child speaks.
	j = identityRE.ReplaceAll(j, nil)
	j = supportsRE.ReplaceAll(j, []byte("supports protocol version (ours)"))
	return uuidRE.ReplaceAllStringFunc(string(j), func(u string) string {
		n, ok := m.uuids[u]
		if !ok {
			n = len(m.uuids)
			m.uuids[u] = n
		}
		return fmt.Sprintf(`"uuid#%d"`, n)
	})
}

// domainEventJSON renders a decoded event's domain struct for comparison
// across protocol versions (montygo decode renders each version's own
// schema names, which differ between versions).
func domainEventJSON(e *message.ChildEvent) map[string]any {
	m := map[string]any{}
	if e.Body == nil {
		m["kind"] = nil
	} else {
		m["kind"] = e.Body.EventKind().String()
		m["body"] = e.Body
		switch b := e.Body.(type) {
		case *message.Complete:
			m["repr"] = b.Values.Repr(b.Value)
		case *message.FunctionCall:
			args := make([]string, len(b.Args))
			for i, a := range b.Args {
				args[i] = b.Values.Repr(a)
			}
			m["args_repr"] = args
		case *message.Error:
			if b.Exception != nil {
				m["exception"] = b.Exception.Error()
			}
		}
	}
	if e.TotalExecutionMicros != 0 {
		m["total_execution_micros"] = e.TotalExecutionMicros
	}
	if e.MaxDurationMicros != nil {
		m["max_duration_micros"] = *e.MaxDurationMicros
	}
	if e.MaxSuspensions != nil {
		m["max_suspensions"] = *e.MaxSuspensions
	}
	if e.RestoredScriptName != nil {
		m["restored_script_name"] = *e.RestoredScriptName
	}
	if e.FeedExecutionMicros != 0 {
		m["feed_execution_micros"] = e.FeedExecutionMicros
	}
	for name, p := range map[string]*uint64{"max_feed_duration_micros": e.MaxFeedDurationMicros,
		"max_turn_duration_micros": e.MaxTurnDurationMicros, "max_total_sleep_micros": e.MaxTotalSleepMicros} {
		if p != nil {
			m[name] = *p
		}
	}
	if e.SessionID != nil {
		m["session_id_hex"] = hex.EncodeToString(e.SessionID)
	}
	return m
}

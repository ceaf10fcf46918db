package hostile_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/hostile"
	p2 "github.com/gomonty/monty/internal/pb/montyp2v1"
)

func TestCatalog(t *testing.T) {
	all := hostile.Scenarios()
	if len(all) < 40 {
		t.Fatalf("%d scenarios, want at least 40", len(all))
	}
	seen := map[string]bool{}
	outcomes := map[hostile.Outcome]bool{}
	for _, o := range hostile.Outcomes() {
		outcomes[o] = true
	}
	for _, sc := range all {
		if sc.Name == "" || seen[sc.Name] {
			t.Errorf("empty or duplicate name %q", sc.Name)
		}
		seen[sc.Name] = true
		if sc.Description == "" || sc.Expect.Note == "" {
			t.Errorf("%s: missing description or note", sc.Name)
		}
		if !outcomes[sc.Expect.Outcome] {
			t.Errorf("%s: unknown outcome %q", sc.Name, sc.Expect.Outcome)
		}
		for _, o := range sc.Expect.Accept {
			if !outcomes[o] || o == sc.Expect.Outcome {
				t.Errorf("%s: bad accepted outcome %q", sc.Name, o)
			}
		}
		if sc.Expect.NeedsDeadline != (sc.Expect.Outcome == hostile.Timeout) {
			t.Errorf("%s: NeedsDeadline must go with a Timeout outcome", sc.Name)
		}
		if sc.Expect.WorkerSurvives && !slices.Contains([]hostile.Outcome{hostile.OK, hostile.SandboxError}, sc.Expect.Outcome) {
			t.Errorf("%s: a worker cannot survive %s", sc.Name, sc.Expect.Outcome)
		}
		for _, v := range sc.Protocols {
			if v != 2 && v != 4 {
				t.Errorf("%s: protocol %d", sc.Name, v)
			}
		}
		if !sc.Supports(sc.DefaultProtocol()) {
			t.Errorf("%s: default protocol %d unsupported", sc.Name, sc.DefaultProtocol())
		}
		if _, ok := checks[sc.Name]; !ok {
			t.Errorf("%s: no check in this test", sc.Name)
		}
		if got, ok := hostile.Lookup(sc.Name); !ok || got.Name != sc.Name {
			t.Errorf("%s: Lookup failed", sc.Name)
		}
	}
	for name := range checks {
		if !seen[name] {
			t.Errorf("check for unknown scenario %q", name)
		}
	}
	if _, ok := hostile.Lookup("no_such_scenario"); ok {
		t.Error("Lookup found a scenario that does not exist")
	}
	// Every outcome the brief names appears at least once.
	used := map[hostile.Outcome]bool{}
	for _, sc := range all {
		used[sc.Expect.Outcome] = true
	}
	for _, o := range hostile.Outcomes() {
		if !used[o] {
			t.Errorf("no scenario expects %s", o)
		}
	}
}

// TestScenarios runs every scenario, for every protocol it is defined for,
// as a real subprocess and checks that it misbehaves as described.
func TestScenarios(t *testing.T) {
	t.Parallel()
	for _, sc := range hostile.Scenarios() {
		for _, v := range sc.Protocols {
			t.Run(sc.Name+"/v"+itoa(v), func(t *testing.T) {
				t.Parallel()
				chk := checks[sc.Name]
				if chk == nil {
					t.Skip("no check")
				}
				p := start(t, sc.Name, v, itoa(v))
				chk(t, p, sc)
			})
		}
	}
}

// TestNegotiation checks the released worker's handshake: by default only
// protocol 2, with the exact refusal text and exit status 4.
func TestNegotiation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		claim string
		ver   uint32
		want  string // refusal text; empty when accepted
	}{
		{"", 4, "unsupported protocol version 4 (server supports protocol version 2, make sure you are using the correct client version)"},
		{"", 0, "unsupported protocol version 0 (server supports protocol version 2, try updating to a newer client version)"},
		{"", 3, "unsupported protocol version 3 (server supports protocol version 2, make sure you are using the correct client version)"},
		{"", 2, ""},
		{"4", 2, "unsupported protocol version 2 (server supports protocol version 4, try updating to a newer client version)"},
		{"4", 4, ""},
		{"2,4", 3, "unsupported protocol version 3 (server supports protocol versions 2 to 4, make sure you are using the correct client version)"},
		{"2,4", 4, ""},
		{"2,4", 2, ""},
	}
	for _, c := range cases {
		t.Run("claim"+c.claim+"/ask"+itoa(c.ver), func(t *testing.T) {
			t.Parallel()
			p := start(t, "normal", c.ver, c.claim)
			p.send(configureMsg(c.ver, 0))
			if c.want != "" {
				if msg := p.wantFatal(); msg != c.want {
					t.Fatalf("refusal %q, want %q", msg, c.want)
				}
				p.wantExit(4)
				return
			}
			if body := p.read(); !bytes.Equal(body, []byte{0x52, 0x00}) {
				t.Fatalf("Configure answered %x, want Ok (5200)", body)
			}
			p.feed("1 + 2")
			p.wantInt(3)
			p.stdin.Close() // EOF at a frame boundary: clean exit
			p.wantExit(0)
		})
	}
}

// TestFramingErrors checks the child's own reaction to a broken request
// stream, which mirrors the released worker's: FatalError and exit 76.
func TestFramingErrors(t *testing.T) {
	t.Parallel()
	for name, raw := range map[string][]byte{
		"oversize":  {0x01, 0x00, 0x00, 0x10},
		"truncated": {0x10, 0x00, 0x00, 0x00, 0x0a},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := start(t, "normal", 2, "")
			if err := p.writeRaw(raw); err != nil {
				t.Fatal(err)
			}
			p.stdin.Close()
			if msg := p.wantFatal(); !strings.HasPrefix(msg, "malformed request frame: ") {
				t.Fatalf("fatal %q", msg)
			}
			p.wantExit(76)
		})
	}
}

// TestRunInProcess plays scenarios through Run directly, without a
// subprocess.
func TestRunInProcess(t *testing.T) {
	t.Parallel()
	if err := hostile.Run("no_such_scenario", strings.NewReader(""), io.Discard, hostile.Options{}); err == nil {
		t.Error("unknown scenario accepted")
	}
	if err := hostile.Run("arena_self_ref", strings.NewReader(""), io.Discard, hostile.Options{Protocols: []uint32{2}}); err == nil {
		t.Error("a protocol 4 scenario accepted protocol 2")
	}
	if err := hostile.Run("normal", strings.NewReader(""), io.Discard, hostile.Options{Protocols: []uint32{3}}); err == nil {
		t.Error("protocol 3 accepted")
	}

	// exit_4 asks its caller to exit 4 at the first Feed.
	var in bytes.Buffer
	w := frame.NewWriter(&in, 0)
	write := func(b []byte) {
		if err := w.WriteFrame(b); err != nil {
			t.Fatal(err)
		}
	}
	write(mustMarshal(t, configureMsg(2, 0)))
	write(mustMarshal(t, &p2.ParentRequest{Kind: &p2.ParentRequest_Feed{Feed: &p2.Feed{Code: "1 + 2"}}}))
	var out bytes.Buffer
	err := hostile.Run("exit_4", &in, &out, hostile.Options{})
	var exit *hostile.ExitError
	if !errors.As(err, &exit) || exit.Code != 4 {
		t.Fatalf("Run: %v, want exit status 4", err)
	}
	if body, err := frame.NewReader(&out, 0).ReadFrame(); err != nil || !bytes.Equal(body, []byte{0x52, 0x00}) {
		t.Fatalf("output %x (%v), want only Ok", body, err)
	}

	// A hang ends with the context.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := hostile.Run("never_reads", strings.NewReader(""), io.Discard, hostile.Options{Context: ctx}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("never_reads: %v, want the context's deadline", err)
	}
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

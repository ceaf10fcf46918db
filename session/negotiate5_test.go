//go:build unix

package session

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// The negotiation tests of protocol 5 run real child processes: this test
// binary, re-executed as a scripted child (TestScriptedChildProcess) that
// refuses Configure with upstream's exact FatalError text and exit status
// 4, or serves "1 + 2" at the version it accepts.
//
// The script is two environment variables:
//
//	SCRIPTED_ACCEPT  the versions served, "A" or "A-B"
//	SCRIPTED_REFUSE  per-version refusals overriding that range, "5=2-4;4=2"
const scriptedEnv = "GOMONTY_SCRIPTED_CHILD"

func parseRange(s string) protocol.VersionRange {
	lo, hi, ok := strings.Cut(s, "-")
	a, _ := strconv.ParseUint(lo, 10, 32)
	b := a
	if ok {
		b, _ = strconv.ParseUint(hi, 10, 32)
	}
	return protocol.VersionRange{Min: uint32(a), Max: uint32(b)}
}

// TestScriptedChildProcess is not a test: it is the scripted child's entry
// point, and returns at once unless the test binary was started as one.
func TestScriptedChildProcess(t *testing.T) {
	if os.Getenv(scriptedEnv) != "1" {
		t.Skip("entry point of the scripted child process")
	}
	os.Exit(scriptedChild(os.Stdin, os.Stdout))
}

func scriptedChild(in io.Reader, out io.Writer) int {
	accept := parseRange(os.Getenv("SCRIPTED_ACCEPT"))
	refuse := map[uint32]protocol.VersionRange{}
	for _, r := range strings.Split(os.Getenv("SCRIPTED_REFUSE"), ";") {
		if v, rng, ok := strings.Cut(r, "="); ok {
			n, _ := strconv.ParseUint(v, 10, 32)
			refuse[uint32(n)] = parseRange(rng)
		}
	}
	read := func() ([]byte, bool) {
		var hdr [4]byte
		if _, err := io.ReadFull(in, hdr[:]); err != nil {
			return nil, false
		}
		b := make([]byte, binary.LittleEndian.Uint32(hdr[:]))
		_, err := io.ReadFull(in, b)
		return b, err == nil
	}
	var c codec.Codec
	write := func(e message.Event) bool {
		cc := c
		if cc == nil {
			cc, _ = codec.ForVersion(protocol.Version)
		}
		b, err := cc.AppendEvent(make([]byte, 4), &message.ChildEvent{Body: e})
		if err != nil {
			return false
		}
		binary.LittleEndian.PutUint32(b, uint32(len(b)-4))
		_, err = out.Write(b)
		return err == nil
	}
	// Configure's protocol_version is field 9 in every version, so any
	// codec reads it.
	body, ok := read()
	if !ok {
		return 1
	}
	v4, _ := codec.ForVersion(protocol.Version)
	req, err := v4.DecodeRequest(body, codec.Limits{})
	if err != nil {
		return 76
	}
	cfg, ok := req.Body.(*message.Configure)
	if !ok {
		return 76
	}
	supported, refused := refuse[cfg.ProtocolVersion]
	if !refused {
		supported = accept
	}
	if err := protocol.CheckVersion(cfg.ProtocolVersion, supported); refused || err != nil {
		if err == nil {
			err = &protocol.UnsupportedVersionError{Requested: cfg.ProtocolVersion, Supported: supported}
		}
		write(&message.FatalError{Message: err.Error()})
		return int(protocol.ExitFatal)
	}
	if c, ok = codec.ForVersion(cfg.ProtocolVersion); !ok {
		return 76
	}
	if !write(&message.Ok{}) {
		return 3
	}
	for {
		body, ok := read()
		if !ok {
			return 0
		}
		req, err := c.DecodeRequest(body, codec.Limits{})
		if err != nil {
			return 76
		}
		switch req.Body.(type) {
		case *message.Feed:
			var g value.Graph
			root := g.Add(value.Int(3))
			write(&message.Complete{Value: root, Values: g})
		case *message.Shutdown:
			write(&message.Ok{})
			return 0
		default:
			write(&message.Ok{})
		}
	}
}

// scriptedBinary links this test binary under a fresh name, so each test
// has its own version-cache key.
func scriptedBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "monty")
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// scriptedStart is the launch settings and the session options of a
// scripted child.
type scriptedStart struct {
	Launch
	Config
}

func scriptedConfig(bin, accept, refuse string) scriptedStart {
	return scriptedStart{Launch{Launcher: ProcessLauncher{Worker: worker.Config{Binary: bin,
		Args: []string{"-test.run=^TestScriptedChildProcess$"},
		Env:  []string{scriptedEnv + "=1", "SCRIPTED_ACCEPT=" + accept, "SCRIPTED_REFUSE=" + refuse}}}},
		Config{Logger: quietLogger}}
}

func requireV5(t *testing.T) {
	t.Helper()
	if _, ok := codec.ForVersion(protocol.Version5); !ok {
		t.Fatal("protocol 5 is not linked into package session")
	}
}

func startScripted(t *testing.T, cfg scriptedStart) *Session {
	t.Helper()
	s, err := Start(context.Background(), cfg.Launch, cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if got := run(t, s, "1 + 2").Repr(); got != "3" {
		t.Fatalf("at %d: %s", s.Version(), got)
	}
	return s
}

// TestNegotiation5To4To2 walks the whole ladder: Configure(5) is refused
// with "server supports protocol versions 2 to 4", the fresh worker's
// Configure(4) with "server supports protocol version 2", and the third
// worker is driven at 2; the result is cached for the binary.
func TestNegotiation5To4To2(t *testing.T) {
	requireV5(t)
	bin := scriptedBinary(t)
	cfg := scriptedConfig(bin, "2", "5=2-4;4=2")
	s := startScripted(t, cfg)
	if n := s.Negotiation(); n.Version != 2 || n.Attempts != 3 || n.FromCache || n.Worker != (protocol.VersionRange{Min: 2, Max: 2}) {
		t.Fatalf("negotiation %+v", n)
	}
	s2 := startScripted(t, cfg)
	if n := s2.Negotiation(); n.Version != 2 || n.Attempts != 1 || !n.FromCache {
		t.Fatalf("second negotiation %+v", n)
	}
}

// TestNegotiation5To4 is a protocol-4 worker: it refuses 5 with
// "unsupported protocol version 5 (server supports protocol version 4,
// make sure you are using the correct client version)".
func TestNegotiation5To4(t *testing.T) {
	requireV5(t)
	s := startScripted(t, scriptedConfig(scriptedBinary(t), "4", ""))
	if n := s.Negotiation(); n.Version != 4 || n.Attempts != 2 || n.Worker != (protocol.VersionRange{Min: 4, Max: 4}) {
		t.Fatalf("negotiation %+v", n)
	}
}

// TestNegotiation5First is a 1.x worker: 5 is accepted at once, and a
// parent pinned to 4 is refused with "unsupported protocol version 4
// (server supports protocol version 5, try updating to a newer client
// version)".
func TestNegotiation5First(t *testing.T) {
	requireV5(t)
	bin := scriptedBinary(t)
	cfg := scriptedConfig(bin, "5", "")
	s := startScripted(t, cfg)
	if n := s.Negotiation(); n.Version != 5 || n.Attempts != 1 || s.Version() != 5 {
		t.Fatalf("negotiation %+v", n)
	}
	cfg.ProtocolVersion = 4
	_, err := Start(context.Background(), cfg.Launch, cfg.Config)
	var vm *VersionMismatchError
	if !errors.As(err, &vm) || vm.Worker != (protocol.VersionRange{Min: 5, Max: 5}) ||
		vm.Refusal != "unsupported protocol version 4 (server supports protocol version 5, try updating to a newer client version)" {
		t.Fatalf("pinned 4: %v", err)
	}
}

// TestNegotiationMaxDurationAt5 checks that a session limit does not stop
// the negotiation at 5: protocol 5 has no per-session duration, so the
// limit travels as the per-feed one there (and as itself at 4).
func TestNegotiationMaxDurationAt5(t *testing.T) {
	requireV5(t)
	cfg := scriptedConfig(scriptedBinary(t), "5", "")
	cfg.Limits.MaxDuration = 3 * 1e9
	s := startScripted(t, cfg)
	if s.Version() != 5 {
		t.Fatalf("version %d", s.Version())
	}
	l := cfg.Limits.wire(5)
	if l.MaxDurationMicros != nil || l.MaxFeedDurationMicros == nil || *l.MaxFeedDurationMicros != 3e6 {
		t.Fatalf("at 5: %+v", l)
	}
	if l := cfg.Limits.wire(4); l.MaxDurationMicros == nil || *l.MaxDurationMicros != 3e6 || l.MaxFeedDurationMicros != nil {
		t.Fatalf("at 4: %+v", l)
	}
}

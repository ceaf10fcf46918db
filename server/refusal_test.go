package server

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/value"
)

func TestRefusedRequestsLeaveTheSessionLive(t *testing.T) {
	ts := startServer(t, nil)
	for _, v := range []uint32{4, 2} {
		c := dial(t, ts.URL, v, ws.DialOptions{})
		// Before Configure: the worker's own answers, and Reset, Shutdown
		// and Load refused by the server.
		for _, c2 := range []struct {
			req  message.Request
			want string
		}{
			{&message.Feed{Code: "1"}, "session has not been configured"},
			{&message.Dump{}, "session has not been configured"},
			{&message.Reset{}, "Reset is refused"},
			{&message.Shutdown{}, "Shutdown is refused"},
		} {
			wantPrefix(t, describe(do(t, c, c2.req).Event), "Error RuntimeError: protocol violation: "+c2.want)
		}
		// The Load of a signed dump before Configure, too.
		raw := bytes.Clone(do(t, dialConfigured(t, ts.URL, v), &message.Dump{}).Event.Body.(*message.DumpResult).State)
		wantPrefix(t, describe(do(t, c, &message.Load{State: raw}).Event), "Error RuntimeError: protocol violation: Load before Configure")
		configure(t, c, v, nil)
		if got := repr(t, c, "x = 7\nx"); got != "7" {
			t.Fatal(got)
		}
		for _, c2 := range []struct {
			req  message.Request
			want string
		}{
			{&message.Configure{ProtocolVersion: v}, "Configure while a session already exists"},
			{&message.Configure{ProtocolVersion: 99}, "Configure while a session already exists"},
			{&message.Reset{}, "Reset is refused"},
			{&message.Shutdown{}, "Shutdown is refused"},
		} {
			wantPrefix(t, describe(do(t, c, c2.req).Event), "Error RuntimeError: protocol violation: "+c2.want)
		}
		// An empty kind (a frame with no arm), and garbage.
		for _, frame := range [][]byte{{}, {0xff, 0xff, 0xff}} {
			if err := c.Conn.WriteFrame(frame); err != nil {
				t.Fatal(err)
			}
			b, err := c.Conn.ReadFrame()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, []byte("protocol violation")) {
				t.Fatalf("frame %x answered %q", frame, b)
			}
		}
		if got := repr(t, c, "x + 1"); got != "8" {
			t.Fatalf("v%d: after the refusals: %s", v, got)
		}
	}
}

func dialConfigured(t testing.TB, url string, v uint32) *rawClient {
	c := dial(t, url, v, ws.DialOptions{})
	configure(t, c, v, nil)
	return c
}

func TestLoadOnlySignedDumps(t *testing.T) {
	old := []byte("the-previous-dump-key-000")
	a := startServer(t, func(c *Config) { c.DumpKey = old })
	b := startServer(t, func(c *Config) { c.DumpKeyPrevious = old })
	other := startServer(t, func(c *Config) { c.DumpKey = []byte("a-different-key-entirely") })

	src := dialConfigured(t, a.URL, 4)
	repr(t, src, "x = 41")
	state := do(t, src, &message.Dump{}).Event.Body.(*message.DumpResult).State
	if !bytes.HasPrefix(state, []byte("MONTYSIG\x02")) {
		t.Fatalf("the dump handed out is not signed: %q", state[:min(len(state), 16)])
	}
	raw := state[headerLen:]
	if !bytes.HasPrefix(raw, []byte("MONTY\x00")) {
		t.Fatalf("the envelope does not hold a raw dump: %q", raw[:min(len(raw), 8)])
	}
	// Signed by the previous key: accepted by b.
	dst := dialConfigured(t, b.URL, 4)
	if got := describe(do(t, dst, &message.Load{State: state}).Event); got != "Ok" {
		t.Fatal(got)
	}
	if got := repr(t, dst, "x + 1"); got != "42" {
		t.Fatal(got)
	}
	// Refused: a raw dump, a tampered one, one from another key, garbage.
	tampered := bytes.Clone(state)
	tampered[len(tampered)-1] ^= 1
	for _, c := range []struct {
		srv   *testServer
		state []byte
		want  string
	}{
		{b, raw, ErrUnsigned.Error()},
		{b, tampered, ErrBadSignature.Error()},
		{other, state, ErrBadSignature.Error()},
		{a, []byte("MONTYSIG\x02short"), ErrUnsigned.Error()},
		// A version-1 envelope (no limits) from an older server.
		{b, append([]byte("MONTYSIG\x01"), state[9+limitsLen:]...), ErrUnsigned.Error()},
		{a, nil, ErrUnsigned.Error()},
	} {
		cl := dialConfigured(t, c.srv.URL, 2)
		got := describe(do(t, cl, &message.Load{State: c.state}).Event)
		if !strings.Contains(got, "protocol violation: Load refused: "+c.want) {
			t.Fatalf("got %q, want the refusal %q", got, c.want)
		}
		if got := repr(t, cl, "1 + 1"); got != "2" {
			t.Fatalf("after a refused Load: %s", got)
		}
	}
}

func TestMaxSuspensionsEnforced(t *testing.T) {
	ts := startServer(t, nil)
	c := dial(t, ts.URL, 4, ws.DialOptions{})
	configure(t, c, 4, &message.ResourceLimits{MaxSuspensions: value.Ptr[uint64](2)})
	code := "from pathlib import Path\n[Path('/a').exists(), Path('/b').exists(), Path('/c').exists()]"
	ev := do(t, c, &message.Feed{Code: code}).Event
	for i := 0; ; i++ {
		oc, ok := ev.Body.(*message.OsCall)
		if !ok {
			break
		}
		if i >= 2 {
			t.Fatalf("suspension %d passed the limit of 2", i+1)
		}
		ev = do(t, c, resumeBool(oc.CallID, true)).Event
	}
	if got := describe(ev); got != "Error RuntimeError: suspension limit 2 exceeded" {
		t.Fatal(got)
	}
	// Within the limit the feed completes.
	ev = do(t, c, &message.Feed{Code: "from pathlib import Path\n[Path('/a').exists(), Path('/b').exists()]"}).Event
	for {
		oc, ok := ev.Body.(*message.OsCall)
		if !ok {
			break
		}
		ev = do(t, c, resumeBool(oc.CallID, oc.Path == "/a")).Event
	}
	if got := describe(ev); got != "[True, False]" {
		t.Fatal(got)
	}
}

// suspendThrice feeds a snippet that suspends three times (answering each
// OsCall) and returns how many suspensions reached the client and the
// feed's last event.
func suspendThrice(t *testing.T, c *rawClient) (int, *message.ChildEvent) {
	t.Helper()
	ev := do(t, c, &message.Feed{Code: "from pathlib import Path\n[Path('/a').exists(), Path('/b').exists(), Path('/c').exists()]"}).Event
	n := 0
	for {
		oc, ok := ev.Body.(*message.OsCall)
		if !ok {
			return n, ev
		}
		n++
		ev = do(t, c, resumeBool(oc.CallID, true)).Event
	}
}

// max_suspensions has a ceiling like the other limits: a client asking
// for more than Config.MaxSuspensions, or for nothing, is held to it (and
// the events stamp the limit held to, as a parent reads it), and one
// asking for less, 0 included,
// keeps its own. It was passed through, so a client could lift the
// server's enforcement by asking for 2^64-1.
func TestMaxSuspensionsCeiling(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxSuspensions = 2 })
	for _, c := range []struct {
		ask  *uint64
		want uint64
	}{
		{nil, 2},
		{value.Ptr[uint64](5), 2},
		{value.Ptr[uint64](^uint64(0)), 2},
		{value.Ptr[uint64](1), 1},
		{value.Ptr[uint64](0), 0},
	} {
		asked := "nothing"
		if c.ask != nil {
			asked = strconv.FormatUint(*c.ask, 10)
		}
		cl := dial(t, ts.URL, 4, ws.DialOptions{})
		configure(t, cl, 4, &message.ResourceLimits{MaxSuspensions: c.ask})
		n, ev := suspendThrice(t, cl)
		if n != int(c.want) {
			t.Errorf("asking %s: %d suspensions reached the client, want %d", asked, n, c.want)
		}
		want := "Error RuntimeError: suspension limit " + strconv.FormatUint(c.want, 10) + " exceeded"
		if got := describe(ev); got != want {
			t.Errorf("asking %s: %s, want %s", asked, got, want)
		}
		if ev.MaxSuspensions == nil {
			t.Errorf("asking %s: no max_suspensions stamped", asked)
		} else if *ev.MaxSuspensions != c.want {
			t.Errorf("asking %s: max_suspensions stamped %d, want %d", asked, *ev.MaxSuspensions, c.want)
		}
	}
}

// A Load restores the max_suspensions its dump was made with only up to
// this server's ceiling: a dump signed by a replica with a higher ceiling
// (or before a lower one) was restored with its own limit.
func TestLoadHeldToMaxSuspensionsCeiling(t *testing.T) {
	src := startServer(t, func(c *Config) { c.MaxSuspensions = 10 })
	dst := startServer(t, func(c *Config) { c.MaxSuspensions = 2 })
	c := dial(t, src.URL, 4, ws.DialOptions{})
	configure(t, c, 4, &message.ResourceLimits{MaxSuspensions: value.Ptr[uint64](10)})
	repr(t, c, "x = 1")
	state := do(t, c, &message.Dump{}).Event.Body.(*message.DumpResult).State
	moved := dialConfigured(t, dst.URL, 4)
	if got := describe(do(t, moved, &message.Load{State: state}).Event); got != "Ok" {
		t.Fatalf("Load: %s", got)
	}
	if n, ev := suspendThrice(t, moved); n != 2 || describe(ev) != "Error RuntimeError: suspension limit 2 exceeded" {
		t.Fatalf("after the Load: %d suspensions, then %s; want 2 and the abort", n, describe(ev))
	}
}

// A refused request cannot be smuggled past the gate: a field at a number
// reserved for arms that the decoders skip (an unknown arm, or any arm
// number with another wire type) after the arm does not hide it.
func TestRefusalsCannotBeSmuggled(t *testing.T) {
	ts := startServer(t, nil)
	for _, v := range []uint32{4, 2} {
		c := dialConfigured(t, ts.URL, v)
		repr(t, c, "x = 7")
		for _, req := range []message.Request{&message.Reset{}, &message.Shutdown{}, &message.Configure{ProtocolVersion: v}} {
			for _, suffix := range [][]byte{
				{0x7a, 0x00},       // field 15, an empty message
				{0x78, 0x01},       // field 15, a varint
				{0x98, 0x01, 0x00}, // field 19, a varint
			} {
				b := append(encodeRequest(t, v, req), suffix...)
				if err := c.Conn.WriteFrame(b); err != nil {
					t.Fatal(err)
				}
				fb, err := c.Conn.ReadFrame()
				if err != nil {
					t.Fatalf("v%d %s+%x: %v", v, req.RequestKind(), suffix, err)
				}
				got := describe(decodeEvent(t, v, fb))
				if !strings.Contains(got, "is refused by this server") && !strings.Contains(got, "Configure while a session already exists") {
					t.Fatalf("v%d %s+%x reached the worker: %s", v, req.RequestKind(), suffix, got)
				}
			}
		}
		if got := repr(t, c, "x"); got != "7" {
			t.Fatalf("v%d: after the smuggling attempts: %s", v, got)
		}
	}
	waitMetric(t, ts, `monty_server_refusals_total{reason="request_refused"} 18`)
}

// TestRefusalsDoNotFloodTheLog: a client repeating a refused request is
// answered every time and counted every time, but logged at Info once.
func TestRefusalsDoNotFloodTheLog(t *testing.T) {
	var logged testenv.Buffer
	ts := startServer(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	c := dialConfigured(t, ts.URL, 4)
	for range 50 {
		wantPrefix(t, describe(do(t, c, &message.Reset{}).Event), "Error RuntimeError: protocol violation: Reset is refused")
	}
	if got := repr(t, c, "6 * 7"); got != "42" {
		t.Fatal(got)
	}
	if n := strings.Count(logged.String(), "request refused"); n != 1 {
		t.Fatalf("%d Info lines for 50 refusals:\n%s", n, logged.String())
	}
}

// A dump restores the limits its session ran with (the contract: "the
// limits ... come from the dump"), so a dump signed where the ceilings
// were higher (another replica with the same key, or this one before its
// ceilings were lowered) must not lift a session above this server's
// ceilings: its Load is refused. A dump within them loads.
func TestLoadCannotLiftTheCeilings(t *testing.T) {
	generous := startServer(t, func(c *Config) { c.MaxRecursionDepth = 1000 })
	strict := startServer(t, func(c *Config) { c.MaxRecursionDepth = 30 })
	dumpFrom := func(url string, limits *message.ResourceLimits) []byte {
		c := dial(t, url, 4, ws.DialOptions{})
		configure(t, c, 4, limits)
		repr(t, c, "x = 1")
		dr, ok := do(t, c, &message.Dump{}).Event.Body.(*message.DumpResult)
		if !ok {
			t.Fatal("no dump")
		}
		return dr.State
	}
	deep := "def f(n):\n    return 0 if n == 0 else 1 + f(n-1)\nf(200)"

	c := dialConfigured(t, strict.URL, 4)
	got := describe(do(t, c, &message.Load{State: dumpFrom(generous.URL, nil)}).Event)
	wantPrefix(t, got, "Error RuntimeError: protocol violation: Load refused")
	if got := repr(t, c, deep); got != "Error RecursionError: maximum recursion depth exceeded" {
		t.Fatalf("after the refused Load: %s", got)
	}

	// Signed on the generous replica but with limits within the strict
	// one's ceilings: it loads, and keeps them.
	c = dialConfigured(t, strict.URL, 4)
	within := dumpFrom(generous.URL, &message.ResourceLimits{MaxRecursionDepth: value.Ptr[uint64](20)})
	if got := describe(do(t, c, &message.Load{State: within}).Event); got != "Ok" {
		t.Fatalf("Load of a dump within the ceilings: %s", got)
	}
	if got := repr(t, c, "x"); got != "1" {
		t.Fatal(got)
	}
	if got := repr(t, c, deep); got != "Error RecursionError: maximum recursion depth exceeded" {
		t.Fatalf("after the Load: %s", got)
	}
}

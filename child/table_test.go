package child

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
)

// The states of contract §8, reached from a fresh child by these feeds.
var states = []struct {
	name  string
	setup func(p *parent)
}{
	{"S0 NoSession", func(p *parent) {}},
	{"S1 Configured", func(p *parent) { p.configure() }},
	{"S2 Ready", func(p *parent) { p.configure(); mustKind(p.t, p.feed("print:hi"), message.KindComplete) }},
	{"S3 FunctionCall", func(p *parent) { p.configure(); mustKind(p.t, p.feed("call"), message.KindFunctionCall) }},
	{"S3 OsCall", func(p *parent) {
		p.configure()
		mustKind(p.t, p.feed("call call os"), message.KindFunctionCall)
		resumeNone(p, 0)
		resumeNone(p, 1)
	}},
	{"S3 NameLookup", func(p *parent) { p.configure(); mustKind(p.t, p.feed("lookup"), message.KindNameLookup) }},
	{"S3 ResolveFutures", func(p *parent) {
		p.configure()
		mustKind(p.t, p.feed("call futures"), message.KindFunctionCall)
		mustKind(p.t, p.do(&message.ResumeCall{CallID: 0, Result: &message.ExtResult{Kind: message.ResultFuture}}), message.KindResolveFutures)
	}},
}

func resumeNone(p *parent, id uint32) *message.ChildEvent {
	r := &message.ResumeCall{CallID: id, Result: &message.ExtResult{Kind: message.ResultReturn}}
	r.Result.Value = r.Values.Add(value.None())
	return p.do(r)
}

func mustKind(t testing.TB, ev *message.ChildEvent, k message.EventKind) {
	t.Helper()
	if ev.Body == nil || ev.Body.EventKind() != k {
		t.Fatalf("got %s, want %s", describe(ev), k)
	}
}

const pv = "protocol violation: "

func exc(typ string, text string) *message.RaisedException { return message.NewException(typ, text) }

// cell is one (state, request) entry of the table: the reply wanted in
// each state, by index into states. An empty text means "not an error":
// the event kind alone is checked.
type reply struct {
	kind message.EventKind
	text string // exact RuntimeError message for Error replies
	// typ overrides the exception type of an Error reply.
	typ string
	// prefix, when set, is checked instead of the exact text (the rest
	// is the codec's own diagnostic).
	prefix string
}

func TestStateTable(t *testing.T) {
	for _, v := range []uint32{protocol.Version, protocol.Version2, protocol.Version5} {
		t.Run(map[uint32]string{4: "v4", 2: "v2", 5: "v5"}[v], func(t *testing.T) { testStateTable(t, v) })
	}
}

func testStateTable(t *testing.T, version uint32) {
	errR := func(text string) reply { return reply{kind: message.KindError, text: text} }
	ok := reply{kind: message.KindOk}
	none := func() *message.ResumeCall {
		r := &message.ResumeCall{CallID: 0, Result: &message.ExtResult{Kind: message.ResultReturn}}
		r.Result.Value = r.Values.Add(value.None())
		return r
	}
	cells := []struct {
		name string
		req  func(p *parent) message.Request
		want []reply // per state
	}{
		{"Configure", func(p *parent) message.Request { return &message.Configure{ProtocolVersion: version} },
			[]reply{ok, errR(pv + "Configure while a session already exists"), errR(pv + "Configure while a session already exists"),
				errR(pv + "Configure while a session already exists"), errR(pv + "Configure while a session already exists"),
				errR(pv + "Configure while a session already exists"), errR(pv + "Configure while a session already exists")}},
		{"Feed", func(p *parent) message.Request { return &message.Feed{Code: "print:x"} },
			[]reply{errR(pv + "session has not been configured"), {kind: message.KindComplete}, {kind: message.KindComplete},
				errR(pv + "Feed without a session ready for input"), errR(pv + "Feed without a session ready for input"),
				errR(pv + "Feed without a session ready for input"), errR(pv + "Feed without a session ready for input")}},
		{"InstallDependencies", func(p *parent) message.Request { return &message.InstallDependencies{Requirements: []string{"x"}} },
			fill(7, errR("dependency installation is only supported by the CPython worker"))},
		{"ResumeCall", func(p *parent) message.Request { r := none(); r.CallID = p.eng.lastID; return r },
			[]reply{errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall without a suspended function/OS call"),
				errR(pv + "ResumeCall without a suspended function/OS call"), {kind: message.KindComplete}, {kind: message.KindComplete},
				errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall without a suspended function/OS call")}},
		{"ResumeCall wrong id", func(p *parent) message.Request { r := none(); r.CallID = 7; return r },
			[]reply{errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall without a suspended function/OS call"),
				errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall call_id 7 does not match 0"),
				errR(pv + "ResumeCall call_id 7 does not match 2"),
				errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall without a suspended function/OS call")}},
		{"ResumeCall no result", func(p *parent) message.Request { return &message.ResumeCall{CallID: p.eng.lastID} },
			[]reply{errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall without a suspended function/OS call"),
				errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall has no result"), errR(pv + "ResumeCall has no result"),
				errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall without a suspended function/OS call")}},
		{"ResumeCall not_handled", func(p *parent) message.Request {
			return &message.ResumeCall{CallID: p.eng.lastID, Result: &message.ExtResult{Kind: message.ResultNotHandled}}
		},
			[]reply{errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall without a suspended function/OS call"),
				errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "NotHandled is only valid answering a suspended OS call"),
				{kind: message.KindError, typ: "PermissionError", text: "no handler for /data/x"},
				errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall without a suspended function/OS call")}},
		{"ResumeCall unknown exception type", func(p *parent) message.Request {
			return &message.ResumeCall{CallID: p.eng.lastID, Result: &message.ExtResult{Kind: message.ResultError, Error: exc("MyHostError", "x")}}
		},
			[]reply{errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall without a suspended function/OS call"),
				errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + `invalid result: unknown exception type "MyHostError"`),
				errR(pv + `invalid result: unknown exception type "MyHostError"`),
				errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall without a suspended function/OS call")}},
		// The call id is checked before the result is converted (contract
		// §8; the released worker's session order_resume_call_wrong_id_and_bad_type).
		{"ResumeCall wrong id and unknown exception type", func(p *parent) message.Request {
			return &message.ResumeCall{CallID: 7, Result: &message.ExtResult{Kind: message.ResultError, Error: exc("MyHostError", "x")}}
		},
			[]reply{errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall without a suspended function/OS call"),
				errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall call_id 7 does not match 0"),
				errR(pv + "ResumeCall call_id 7 does not match 2"),
				errR(pv + "ResumeCall without a suspended function/OS call"), errR(pv + "ResumeCall without a suspended function/OS call")}},
		{"ResumeNameLookup", func(p *parent) message.Request { return &message.ResumeNameLookup{Kind: message.LookupUndefined} },
			[]reply{errR(pv + "ResumeNameLookup without a suspended name lookup"), errR(pv + "ResumeNameLookup without a suspended name lookup"),
				errR(pv + "ResumeNameLookup without a suspended name lookup"), errR(pv + "ResumeNameLookup without a suspended name lookup"),
				errR(pv + "ResumeNameLookup without a suspended name lookup"), {kind: message.KindComplete},
				errR(pv + "ResumeNameLookup without a suspended name lookup")}},
		{"ResumeNameLookup empty", func(p *parent) message.Request { return &message.ResumeNameLookup{} },
			[]reply{errR(pv + "ResumeNameLookup without a suspended name lookup"), errR(pv + "ResumeNameLookup without a suspended name lookup"),
				errR(pv + "ResumeNameLookup without a suspended name lookup"), errR(pv + "ResumeNameLookup without a suspended name lookup"),
				errR(pv + "ResumeNameLookup without a suspended name lookup"), errR(pv + "invalid result: missing required field ResumeNameLookup.kind"),
				errR(pv + "ResumeNameLookup without a suspended name lookup")}},
		{"ResumeFutures", func(p *parent) message.Request {
			r := &message.ResumeFutures{Results: []message.FutureResult{{CallID: 0, Result: &message.ExtResult{Kind: message.ResultReturn}}}}
			r.Results[0].Result.Value = r.Values.Add(value.None())
			return r
		},
			[]reply{errR(pv + "ResumeFutures without suspended futures"), errR(pv + "ResumeFutures without suspended futures"),
				errR(pv + "ResumeFutures without suspended futures"), errR(pv + "ResumeFutures without suspended futures"),
				errR(pv + "ResumeFutures without suspended futures"), errR(pv + "ResumeFutures without suspended futures"),
				{kind: message.KindComplete}}},
		// Protocol 4 converts the results before the state check
		// (contract §8); the released protocol-2 worker checks the state
		// first, and the child at 2 answers as it does.
		{"ResumeFutures no result", func(p *parent) message.Request {
			return &message.ResumeFutures{Results: []message.FutureResult{{CallID: 0}}}
		}, map[bool][]reply{
			false: fill(7, errR(pv+"invalid results: missing required field FutureResult.result")),
			true: append(fill(6, errR(pv+"ResumeFutures without suspended futures")),
				errR(pv+"invalid results: missing required field FutureResult.result")),
		}[version == protocol.Version2]},
		{"AbortFeed", func(p *parent) message.Request { return &message.AbortFeed{Exception: exc("RuntimeError", "stop")} },
			[]reply{errR(pv + "AbortFeed without a suspended feed"), errR(pv + "AbortFeed without a suspended feed"), errR(pv + "AbortFeed without a suspended feed"),
				errR("stop"), errR("stop"), errR("stop"), errR("stop")}},
		{"AbortFeed unknown exception type", func(p *parent) message.Request { return &message.AbortFeed{Exception: exc("HostTimeout", "x")} },
			[]reply{errR(pv + "AbortFeed without a suspended feed"), errR(pv + "AbortFeed without a suspended feed"), errR(pv + "AbortFeed without a suspended feed"),
				errR(pv + `invalid exception: unknown exception type "HostTimeout"`), errR(pv + `invalid exception: unknown exception type "HostTimeout"`),
				errR(pv + `invalid exception: unknown exception type "HostTimeout"`), errR(pv + `invalid exception: unknown exception type "HostTimeout"`)}},
		// Feed{code: "x", inputs: [{name: "x", value: 5}]} with an empty
		// arena: the input names a node that does not exist (hand-encoded,
		// since our encoder refuses it; protocols 4 and 5, whose Feed is
		// the same).
		{"Feed invalid inputs", func(p *parent) message.Request {
			return rawRequest{0x1a, 0x0a, 0x0a, 0x01, 'x', 0x12, 0x05, 0x0a, 0x01, 'x', 0x10, 0x05}
		},
			[]reply{errR(pv + "session has not been configured"), {kind: message.KindError, prefix: pv + "invalid inputs: "}, {kind: message.KindError, prefix: pv + "invalid inputs: "},
				errR(pv + "Feed without a session ready for input"), errR(pv + "Feed without a session ready for input"),
				errR(pv + "Feed without a session ready for input"), errR(pv + "Feed without a session ready for input")}},
		{"AbortFeed no exception", func(p *parent) message.Request { return &message.AbortFeed{} },
			[]reply{errR(pv + "AbortFeed without a suspended feed"), errR(pv + "AbortFeed without a suspended feed"), errR(pv + "AbortFeed without a suspended feed"),
				errR(pv + "AbortFeed has no exception"), errR(pv + "AbortFeed has no exception"), errR(pv + "AbortFeed has no exception"), errR(pv + "AbortFeed has no exception")}},
		{"Dump", func(p *parent) message.Request { return &message.Dump{} },
			[]reply{errR(pv + "session has not been configured"), {kind: message.KindDumpResult}, {kind: message.KindDumpResult},
				{kind: message.KindDumpResult}, {kind: message.KindDumpResult}, {kind: message.KindDumpResult}, {kind: message.KindDumpResult}}},
		{"Load", func(p *parent) message.Request { return &message.Load{State: []byte("dump:")} },
			[]reply{ok, ok, errR(pv + "Load requires a session that has not started (a feed has already run)"),
				errR(pv + "Load requires a session that has not started (a feed has already run)"), errR(pv + "Load requires a session that has not started (a feed has already run)"),
				errR(pv + "Load requires a session that has not started (a feed has already run)"), errR(pv + "Load requires a session that has not started (a feed has already run)")}},
		{"Load bad dump", func(p *parent) message.Request { return &message.Load{State: []byte("garbage")} },
			[]reply{errR(pv + "failed to load session: not a scripted dump"), errR(pv + "failed to load session: not a scripted dump"),
				errR(pv + "Load requires a session that has not started (a feed has already run)"),
				errR(pv + "Load requires a session that has not started (a feed has already run)"), errR(pv + "Load requires a session that has not started (a feed has already run)"),
				errR(pv + "Load requires a session that has not started (a feed has already run)"), errR(pv + "Load requires a session that has not started (a feed has already run)")}},
		{"Reset", func(p *parent) message.Request { return &message.Reset{} }, fill(7, ok)},
		{"Shutdown", func(p *parent) message.Request { return &message.Shutdown{} }, fill(7, ok)},
	}
	for _, c := range cells {
		for i, st := range states {
			t.Run(c.name+"/"+st.name, func(t *testing.T) {
				// Before its first Configure a child speaks the highest
				// version it accepts; a protocol-2 parent that sends Load
				// first must have a child restricted to protocol 2.
				opts := Options{}
				switch version {
				case protocol.Version2:
					opts.Versions = []uint32{protocol.Version2}
				case protocol.Version5:
					opts.Versions = SupportedVersions
				}
				p := startChild(t, version, opts)
				st.setup(p)
				before := p.eng.lastID
				var ev *message.ChildEvent
				switch r := c.req(p).(type) {
				case rawRequest:
					if version == protocol.Version2 {
						t.Skip("hand-encoded for protocols 4 and 5")
					}
					ev = p.raw(r)
				default:
					ev = p.do(r)
				}
				w := c.want[i]
				mustKind(t, ev, w.kind)
				if w.kind == message.KindError {
					e := ev.Body.(*message.Error).Exception
					typ := w.typ
					if typ == "" {
						typ = "RuntimeError"
					}
					if w.prefix != "" {
						if !strings.HasPrefix(e.Msg(), w.prefix) {
							t.Fatalf("got %q, want prefix %q", e.Msg(), w.prefix)
						}
					} else if e.Type != typ || e.Msg() != w.text || len(e.Traceback) != 0 {
						t.Fatalf("got %s %q, want %s %q", e.Type, e.Msg(), typ, w.text)
					}
				}
				// Stamps exactly when an interpreter exists afterwards, and
				// never on Ok to Configure, Reset or Shutdown.
				interp := i >= 2 || (i == 1 && (w.kind == message.KindDumpResult || w.kind == message.KindComplete || w.prefix != "")) ||
					(i <= 1 && c.name == "Load")
				if w.kind == message.KindOk && c.name != "Load" {
					interp = false
				}
				if c.name == "Reset" || c.name == "Shutdown" || c.name == "Configure" && i == 0 {
					interp = false
				}
				if got := ev.MaxSuspensions != nil; got != interp {
					t.Fatalf("stamped=%v, want %v (%s)", got, interp, describe(ev))
				}
				if c.name == "Load" && w.kind == message.KindOk && (ev.RestoredScriptName == nil || *ev.RestoredScriptName != "restored.py" || *ev.MaxSuspensions != 7) {
					t.Fatalf("Load reply stamps: %+v", ev)
				}
				if c.name != "Load" && ev.RestoredScriptName != nil {
					t.Fatal("restored_script_name outside a Load reply")
				}
				if c.name == "Shutdown" {
					if err := p.exit(); err != nil {
						t.Fatalf("Shutdown: child ended with %v", err)
					}
					return
				}
				// A protocol violation leaves a suspension intact: the
				// right answer still works.
				if i >= 3 && w.kind == message.KindError && w.typ == "" && w.text != "stop" && w.prefix == "" {
					p.eng.lastID = before
					var next *message.ChildEvent
					switch i {
					case 3, 4:
						r := none()
						r.CallID = before
						next = p.do(r)
					case 5:
						next = p.do(&message.ResumeNameLookup{Kind: message.LookupUndefined})
					case 6:
						r := &message.ResumeFutures{Results: []message.FutureResult{{CallID: 0, Result: &message.ExtResult{Kind: message.ResultReturn}}}}
						r.Results[0].Result.Value = r.Values.Add(value.None())
						next = p.do(r)
					}
					mustKind(t, next, message.KindComplete)
				}
			})
		}
	}
}

func fill(n int, r reply) []reply {
	out := make([]reply, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// Configure with a bad version is fatal in every state: the exact text,
// then exit 4.
func TestVersionRefusal(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		v    uint32
		text string
	}{
		{Options{}, 0, "unsupported protocol version 0 (server supports protocol versions 2 to 4, try updating to a newer client version)"},
		{Options{}, 1, "unsupported protocol version 1 (server supports protocol versions 2 to 4, try updating to a newer client version)"},
		{Options{}, 5, "unsupported protocol version 5 (server supports protocol versions 2 to 4, make sure you are using the correct client version)"},
		{Options{Versions: []uint32{4}}, 2, "unsupported protocol version 2 (server supports protocol version 4, try updating to a newer client version)"},
		{Options{Versions: []uint32{2}}, 4, "unsupported protocol version 4 (server supports protocol version 2, make sure you are using the correct client version)"},
	} {
		for i, st := range states[:3] {
			p := startChild(t, protocol.Version, tc.opts)
			if i > 0 {
				p.codec, _ = codecFor(tc.opts)
			}
			st.setup(p)
			ev := p.do(&message.Configure{ProtocolVersion: tc.v})
			f, ok := ev.Body.(*message.FatalError)
			if !ok || f.Message != tc.text {
				t.Fatalf("v%d in %s: got %s, want FatalError %q", tc.v, st.name, describe(ev), tc.text)
			}
			err := p.exit()
			var ee *ExitError
			var ue *protocol.UnsupportedVersionError
			if !errors.As(err, &ee) || ee.Code != protocol.ExitFatal || !errors.As(err, &ue) || ue.Requested != tc.v {
				t.Fatalf("exit: %v", err)
			}
		}
	}
}

// rawRequest is a request frame body given as bytes.
type rawRequest []byte

func (rawRequest) RequestKind() message.RequestKind { return 0 }

// installer is a scripted engine that can install dependencies.
type installer struct {
	*scripted
	got []string
}

func (e *installer) InstallDependencies(_ context.Context, r *message.InstallDependencies) (message.Event, error) {
	e.got = append(e.got, r.Requirements...)
	if len(r.Requirements) > 1 {
		return &message.Error{Exception: exc("RuntimeError", "pip failed")}, nil
	}
	return &message.Ok{}, nil
}

func TestDependencyInstaller(t *testing.T) {
	conn := newChanConn()
	eng := &installer{scripted: &scripted{gate: make(chan struct{})}}
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), conn, eng, Options{}) }()
	p := &parent{t: t, conn: conn, eng: eng.scripted, codec: mustCodec(t, 4), result: done}
	defer func() { conn.Close(); <-done }()
	mustKind(t, p.do(&message.InstallDependencies{Requirements: []string{"attrs"}}), message.KindOk)
	p.configure()
	ev := p.do(&message.InstallDependencies{Requirements: []string{"a", "b"}})
	if describe(ev) != "Error RuntimeError: pip failed" {
		t.Fatal(describe(ev))
	}
	if strings.Join(eng.got, ",") != "attrs,a,b" {
		t.Fatal(eng.got)
	}
}

func mustCodec(t *testing.T, v uint32) codec.Codec {
	c, ok := codec.ForVersion(v)
	if !ok {
		t.Fatal("no codec")
	}
	return c
}

// Options.Versions naming a version no codec speaks is the server's
// misconfiguration: Serve refuses it before reading a request, with an
// error that says so (ErrNoCodec, exit 4) and sends the parent nothing,
// and closes the engine as it always does. Before, a list with one such
// version among others was served, and a Configure at it was refused with
// a text naming it as supported ("unsupported protocol version 7 (server
// supports protocol versions 4 to 7 …)").
func TestServeRefusesVersionsWithoutCodec(t *testing.T) {
	for _, vs := range [][]uint32{{4, 7}, {3}, {0, 2}} {
		conn := newChanConn()
		close(conn.in)
		eng := &scripted{}
		err := Serve(context.Background(), conn, eng, Options{Versions: vs})
		var ee *ExitError
		if !errors.Is(err, ErrNoCodec) || !errors.As(err, &ee) || ee.Code != protocol.ExitFatal || ee.Message != "" {
			t.Fatalf("Versions %v: Serve returned %v, want an exit-4 ExitError wrapping ErrNoCodec", vs, err)
		}
		if len(conn.out) != 0 {
			t.Errorf("Versions %v: %d frames sent", vs, len(conn.out))
		}
		if !eng.closed {
			t.Errorf("Versions %v: the engine was not closed", vs)
		}
	}
}

// A Configure is decoded at the version it declares, not at the one the
// child last spoke: a child serving 2, 4 and 5 starts at 5, whose schema
// has no max_duration_micros (limit tag 1 is reserved), so a protocol-4
// parent's time limit was dropped without a word and its feeds ran
// unbounded; after a Reset, a Configure at another version lost the
// fields the previous version's schema lacks (protocol 5's limits and
// OsPolicy read at 4).
func TestConfigureDecodedAtItsVersion(t *testing.T) {
	us := uint64(200_000)
	p := startChild(t, 4, Options{Versions: SupportedVersions})
	for _, tc := range []struct {
		v    uint32
		cfg  *message.Configure
		seen func(*message.Configure) bool
	}{
		{4, &message.Configure{ProtocolVersion: 4, Limits: &message.ResourceLimits{MaxDurationMicros: &us}},
			func(c *message.Configure) bool {
				return c.Limits != nil && c.Limits.MaxDurationMicros != nil && *c.Limits.MaxDurationMicros == us
			}},
		{5, &message.Configure{ProtocolVersion: 5, Limits: &message.ResourceLimits{MaxFeedDurationMicros: &us}, OsPolicy: &message.OsPolicy{Clock: message.ClockFixed}},
			func(c *message.Configure) bool {
				return c.Limits != nil && c.Limits.MaxFeedDurationMicros != nil && *c.Limits.MaxFeedDurationMicros == us &&
					c.OsPolicy != nil && c.OsPolicy.Clock == message.ClockFixed
			}},
		{2, &message.Configure{ProtocolVersion: 2, Limits: &message.ResourceLimits{MaxDurationMicros: &us}},
			func(c *message.Configure) bool {
				return c.Limits != nil && c.Limits.MaxDurationMicros != nil && *c.Limits.MaxDurationMicros == us
			}},
		{4, &message.Configure{ProtocolVersion: 4, Limits: &message.ResourceLimits{MaxDurationMicros: &us}},
			func(c *message.Configure) bool {
				return c.Limits != nil && c.Limits.MaxDurationMicros != nil && *c.Limits.MaxDurationMicros == us
			}},
	} {
		p.codec = mustCodec(t, tc.v)
		mustKind(t, p.do(tc.cfg), message.KindOk)
		if !tc.seen(p.eng.cfg) {
			t.Fatalf("v%d: the engine was configured with %+v (limits %+v), want the Configure's fields", tc.v, p.eng.cfg, p.eng.cfg.Limits)
		}
		mustKind(t, p.do(&message.Reset{}), message.KindOk)
	}
}

package hostile

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/frame"
	p2 "github.com/gomonty/monty/internal/pb/montyp2v1"
	"github.com/gomonty/monty/protocol"
)

// hook replaces the normal answer to one kind of request. It may call
// c.handle to answer normally.
type hook func(c *child, req *request) error

// entry is a scenario plus the behaviour that implements it.
type entry struct {
	Scenario
	onSpawn        func(c *child) error
	afterConfigure func(c *child) error
	on             map[protowire.Number]hook
	// bigCode, when set, makes Code a snippet of that many bytes. It is
	// built only when the catalog is read, not when the child starts.
	bigCode int
}

// public returns the scenario as the catalog shows it.
func (e *entry) public() Scenario {
	s := e.Scenario
	s.Protocols = slices.Clone(e.Protocols)
	s.Expect.Accept = slices.Clone(e.Expect.Accept)
	if e.bigCode > 0 {
		s.Code = bigCodeOf(e.bigCode)
	}
	return s
}

// Timing of the slow scenarios.
const (
	// DripInterval is the pause between bytes in slow_drip.
	DripInterval = 200 * time.Millisecond
	// SlowStartDelay is how long slow_start waits before reading anything.
	SlowStartDelay = 10 * time.Second
	// StderrFloodBytes is how much stderr_flood writes to stderr.
	StderrFloodBytes = 100_000_000
	// OverCapPrintBytes is the announced (and streamed) size of
	// print_over_cap's frame.
	OverCapPrintBytes = 300 << 20
	// BigRequestBytes is the size of the Feed stop_reading wants.
	BigRequestBytes = 256 << 10
	// BigPipeRequestBytes is the size of the Feed stop_reading_big wants.
	BigPipeRequestBytes = 4 << 20
	// HugeIntBytes is the magnitude size of huge_int's int (before
	// Options.Scale).
	HugeIntBytes = 150 << 20
)

// Values the turn-structure scenarios smuggle in, so a parent test can tell
// a stray answer from the real one.
const (
	// UnsolicitedValue is the str value of complete_before_feed's Complete.
	UnsolicitedValue = "unsolicited"
	// StrayValue is the str value of double_turn_end's second Complete.
	StrayValue = "stray"
)

var (
	both   = []uint32{2, 4}
	only2  = []uint32{2}
	only4  = []uint32{4}
	catalg []*entry
	byName map[string]*entry
)

// Scenarios returns the catalog, in a fixed order. The slice is a copy.
func Scenarios() []Scenario {
	out := make([]Scenario, len(catalg))
	for i, e := range catalg {
		out[i] = e.public()
	}
	return out
}

// Lookup returns the scenario called name.
func Lookup(name string) (Scenario, bool) {
	e := lookup(name)
	if e == nil {
		return Scenario{}, false
	}
	return e.public(), true
}

func lookup(name string) *entry { return byName[name] }

func add(e *entry) {
	if e.Code == "" && e.bigCode == 0 {
		e.Code = "1 + 2"
	}
	if e.Protocols == nil {
		e.Protocols = both
	}
	catalg = append(catalg, e)
}

// Expectation shorthands.

func fails(o Outcome, note string, accept ...Outcome) Expectation {
	return Expectation{Outcome: o, Accept: accept, Note: note}
}

func hangs(note string, accept ...Outcome) Expectation {
	return Expectation{Outcome: Timeout, Accept: accept, NeedsDeadline: true, Note: note}
}

func survives(o Outcome, note string, accept ...Outcome) Expectation {
	return Expectation{Outcome: o, Accept: accept, WorkerSurvives: true, SessionSurvives: true, Note: note}
}

// atFirstFeed replaces the answer to the first Feed (the session is made
// ready first, so events are stamped as a real worker's would be).
func atFirstFeed(f func(c *child) error) map[protowire.Number]hook {
	return map[protowire.Number]hook{reqFeed: func(c *child, req *request) error {
		if !c.first(req) {
			return c.handle(req)
		}
		if okay, err := c.startFeed(); !okay {
			return err
		}
		return f(c)
	}}
}

// sendThen sends body and then keeps serving normally.
func sendThen(body func(c *child) []byte) map[protowire.Number]hook {
	return atFirstFeed(func(c *child) error { return c.send(body(c)) })
}

// completeWith answers the first Feed with a Complete holding one leaf,
// built when the trigger fires.
func completeWith(leafBytes func() []byte) map[protowire.Number]hook {
	return sendThen(func(c *child) []byte { return c.turn(armComplete, c.completeLeaf(leafBytes())) })
}

// completeV4 answers the first Feed with a protocol 4 Complete built from
// an explicit root and arena nodes.
func completeV4(root uint32, nodes func() [][]byte) map[protowire.Number]hook {
	return sendThen(func(c *child) []byte { return c.turn(armComplete, completeArena(root, nodes()...)) })
}

// refuse answers every Configure of version v with a FatalError in the
// released worker's words for an unsupported version, claim(v) being what
// its parentheses say the worker supports, then exits 4.
func refuse(claim func(v uint32) string) map[protowire.Number]hook {
	return map[protowire.Number]hook{reqConfigure: func(c *child, req *request) error {
		v, _, _ := configureArgs(req)
		if err := c.fatal("unsupported protocol version " + u32(v) + " (" + claim(v) + ")"); err != nil {
			return err
		}
		return &ExitError{Code: int(protocol.ExitFatal)}
	}}
}

// rawThen answers the first Feed by writing b as it is (no frame of its
// own), then ends as then does.
func rawThen(b []byte, then func(c *child) error) map[protowire.Number]hook {
	return atFirstFeed(func(c *child) error {
		if err := c.sendRaw(b); err != nil {
			return err
		}
		return then(c)
	})
}

// stop ends the child with status 0.
func stop(*child) error { return errStop }

// amplify is an AtFeed scenario that answers the first Feed with the
// ~64 MiB frame body builds, streamed.
func amplify(s Scenario, body func(c *child) bigFrame) *entry {
	s.Trigger, s.MaxFrame, s.Scales = AtFeed, ampFrame, true
	return &entry{Scenario: s, on: atFirstFeed(func(c *child) error { return c.sendBig(body(c), -1) })}
}

// feedCallsF1 answers the first Feed (`f()`) with FunctionCall f under
// call id 1, leaving the child suspended on it.
func feedCallsF1(c *child, req *request) error {
	if !c.first(req) {
		return c.handle(req)
	}
	if okay, err := c.startFeed(); !okay {
		return err
	}
	c.st, c.pending = suspended, 1
	return c.send(c.functionCall("f", 1))
}

func exitAtFeed(code int) map[protowire.Number]hook {
	return atFirstFeed(func(c *child) error { return &ExitError{Code: code} })
}

func dieAtFeed(sig syscall.Signal) map[protowire.Number]hook {
	return atFirstFeed(func(c *child) error { return &SignalError{Signal: sig} })
}

func u32(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

// obj builds a leaf from a MontyObject.
func obj(o *p2.MontyObject) []byte { return leaf(o) }

// listNode returns a protocol 4 list node holding ids.
func listNode(ids ...uint32) []byte {
	var packed []byte
	for _, id := range ids {
		packed = protowire.AppendVarint(packed, uint64(id))
	}
	var items []byte
	if len(packed) > 0 {
		items = msgField(nil, 1, packed)
	}
	return msgField(nil, 11, items)
}

var uuid16 = []byte("0123456789abcdef")

func init() {
	// --- baseline -------------------------------------------------------
	add(&entry{Scenario: Scenario{
		Name:        "normal",
		Description: "A well-behaved minimal worker, for control runs: Configure gets Ok, `1 + 2` completes with 3, `print('x')` prints, `f()` calls out.",
		Expect:      survives(OK, "The baseline every other scenario departs from."),
		Result:      "3",
	}})

	// --- start-up -------------------------------------------------------
	add(&entry{Scenario: Scenario{
		Name:        "slow_start",
		Description: "Sleeps 10 s before reading anything, then behaves normally.",
		Trigger:     AtSpawn,
		Expect: hangs("The parent's start (handshake) timeout must fire and the worker be killed; a parent with no start timeout waits 10 s and then succeeds.",
			OK),
		Result: "3",
	}, onSpawn: func(c *child) error { return c.sleep(SlowStartDelay) }})

	add(&entry{Scenario: Scenario{
		Name:        "never_reads",
		Description: "Never reads stdin and never writes: Configure is never answered.",
		Trigger:     AtSpawn,
		Expect:      hangs("Only the start timeout (or the caller's deadline) ends the handshake; the worker must then be killed."),
	}, onSpawn: func(c *child) error { return c.hang() }})

	add(&entry{Scenario: Scenario{
		Name:        "exit_immediately",
		Description: "Exits with status 1 at once, without reading or writing.",
		Trigger:     AtSpawn,
		Expect:      fails(CrashVanished, "Every spawn fails the same way: a pool must cap its restarts rather than spin."),
	}, onSpawn: func(c *child) error { return &ExitError{Code: 1} }})

	// --- protocol version -------------------------------------------------
	add(&entry{Scenario: Scenario{
		Name:        "version_range_reversed",
		Description: "Refuses every Configure with `unsupported protocol version V (server supports protocol versions 9 to 3, make sure you are using the correct client version)` and exits 4.",
		Trigger:     AtConfigure,
		Expect:      fails(VersionMismatch, "The advertised range is empty: no retry can succeed, so the parent must not respawn for it, and reports a version mismatch that says the range is unusable."),
	}, on: refuse(func(uint32) string {
		return "server supports protocol versions 9 to 3, make sure you are using the correct client version"
	})})

	add(&entry{Scenario: Scenario{
		Name:        "version_range_zero",
		Description: "Refuses every Configure with `... (server supports protocol versions 0 to 0, make sure you are using the correct client version)` and exits 4.",
		Trigger:     AtConfigure,
		Expect:      fails(VersionMismatch, "Version 0 means \"undeclared\" and is never valid: the range is unusable, reported as a version mismatch without a respawn."),
	}, on: refuse(func(uint32) string {
		return "server supports protocol versions 0 to 0, make sure you are using the correct client version"
	})})

	add(&entry{Scenario: Scenario{
		Name:        "version_only_7",
		Description: "Refuses every Configure claiming `server supports protocol version 7` and exits 4.",
		Trigger:     AtConfigure,
		Expect:      fails(VersionMismatch, "The parent speaks no version 7; it must report the mismatch (naming both ranges) without respawning."),
	}, on: refuse(func(uint32) string {
		return "server supports protocol version 7, try updating to a newer client version"
	})})

	add(&entry{Scenario: Scenario{
		Name:        "version_flipflop",
		Description: "Refuses Configure(4) claiming only 2, and Configure(2) claiming only 4, exiting 4 each time.",
		Trigger:     AtConfigure,
		Expect:      fails(VersionMismatch, "A parent that trusts each refusal respawns forever; it must give up once the downgrade it was offered was refused too."),
	}, on: refuse(func(v uint32) string {
		other := uint32(2)
		if v == 2 {
			other = 4
		}
		tip := "make sure you are using the correct client version"
		if v < other {
			tip = "try updating to a newer client version"
		}
		return "server supports protocol version " + u32(other) + ", " + tip
	})})

	add(&entry{Scenario: Scenario{
		Name:        "version_refusal_no_exit",
		Description: "Refuses an unclaimed version with the released worker's exact FatalError but does not exit (it keeps reading and never answers); a claimed version is served normally.",
		Trigger:     AtConfigure,
		Expect: survives(OK,
			"The parent must kill the refusing child after the 100 ms FATAL_EXIT_GRACE instead of waiting for its exit, then respawn and configure the downgraded version."),
		Result: "3",
	}, on: map[protowire.Number]hook{reqConfigure: func(c *child, req *request) error {
		v, _, _ := configureArgs(req)
		if c.claims(v) {
			return c.handle(req)
		}
		if err := c.fatal(c.refusal(v)); err != nil {
			return err
		}
		return c.drain()
	}}})

	// --- Configure ------------------------------------------------------------
	add(&entry{Scenario: Scenario{
		Name:        "configure_unexpected_reply",
		Description: "Answers Configure with Complete(1) instead of Ok.",
		Trigger:     AtConfigure,
		Expect:      fails(ProtocolError, "`unexpected reply to Configure`."),
	}, on: map[protowire.Number]hook{reqConfigure: func(c *child, req *request) error {
		v, _, _ := configureArgs(req)
		if !c.claims(v) {
			return c.handle(req)
		}
		c.ver = v
		return c.send(event(armComplete, c.completeLeaf(leafInt(1))))
	}}})

	add(&entry{Scenario: Scenario{
		Name:        "configure_garbage_reply",
		Description: "Answers Configure with a frame of 0xff bytes (undecodable).",
		Trigger:     AtConfigure,
		Expect:      fails(ProtocolError, "`invalid payload from worker`."),
	}, on: map[protowire.Number]hook{reqConfigure: func(c *child, req *request) error {
		v, _, _ := configureArgs(req)
		if !c.claims(v) {
			return c.handle(req)
		}
		return c.send(bytes.Repeat([]byte{0xff}, 16))
	}}})

	add(&entry{Scenario: Scenario{
		Name:        "complete_before_feed",
		Description: "Immediately after the Ok to Configure, without any further request, sends an unsolicited Complete(\"unsolicited\"): two events for one request.",
		Trigger:     AfterConfigure,
		Expect: fails(ProtocolError,
			"The extra event sits in the pipe. A parent that does not notice it reads it as the answer to the next Feed and returns \"unsolicited\" for `1 + 2`: a silent wrong answer. Must fail, at the latest on the next request."),
	}, afterConfigure: func(c *child) error {
		// Ok was already written; this follows without a request.
		return c.send(event(armComplete, c.completeLeaf(leafStr(UnsolicitedValue))))
	}})

	// --- framing ------------------------------------------------------------
	add(&entry{Scenario: Scenario{
		Name:        "oversize_prefix",
		Description: "Answers the first Feed with a length prefix of 256 MiB + 1 (and 16 bytes), then hangs without exiting.",
		Trigger:     AtFeed,
		Expect:      fails(FrameTooLarge, "Refused on the prefix alone, before any body buffer is allocated; the live worker must be killed."),
	}, on: rawThen(append(le32(maxFrameLen+1), make([]byte, 16)...), (*child).hang)})

	add(&entry{Scenario: Scenario{
		Name:        "prefix_then_silence",
		Description: "Answers the first Feed with a length prefix of 64 and nothing else, then hangs.",
		Trigger:     AtFeed,
		Expect:      hangs("Mid-frame silence: only the deadline ends it."),
	}, on: rawThen(le32(64), (*child).hang)})

	add(&entry{Scenario: Scenario{
		Name:        "cap_prefix_partial_body",
		Description: "Answers the first Feed with a prefix of exactly 256 MiB, then 10 body bytes, then hangs.",
		Trigger:     AtFeed,
		Expect:      hangs("Only the deadline ends it. The parent's memory must track the bytes received (10), not the 256 MiB announced."),
	}, on: rawThen(append(le32(maxFrameLen), make([]byte, 10)...), (*child).hang)})

	add(&entry{Scenario: Scenario{
		Name:        "truncated_body_exit",
		Description: "Answers the first Feed with a prefix of 100 and 10 body bytes, then exits 0.",
		Trigger:     AtFeed,
		Expect:      fails(CrashVanished, "Stream ended mid-frame with no FatalError.", ProtocolError),
	}, on: rawThen(append(le32(100), make([]byte, 10)...), stop)})

	add(&entry{Scenario: Scenario{
		Name:        "truncated_prefix_exit",
		Description: "Answers the first Feed with 2 of the 4 prefix bytes, then exits 0.",
		Trigger:     AtFeed,
		Expect:      fails(CrashVanished, "EOF inside the prefix.", ProtocolError),
	}, on: rawThen([]byte{0x05, 0x00}, stop)})

	add(&entry{Scenario: Scenario{
		Name:        "slow_drip",
		Description: "Answers the first Feed with a valid Complete(3), written one byte every 200 ms (about 3 s in all), then behaves normally.",
		Trigger:     AtFeed,
		Expect: hangs("With a deadline shorter than the drip the call times out and the worker is killed; with a longer one the result, 3, arrives and the worker is fine.",
			OK),
		Result: "3",
	}, on: atFirstFeed(func(c *child) error {
		f := frame.AppendFrame(nil, c.turn(armComplete, c.completeLeaf(leafInt(3))))
		for i := range f {
			if err := c.sendRaw(f[i : i+1]); err != nil {
				return err
			}
			if i < len(f)-1 {
				if err := c.sleep(DripInterval); err != nil {
					return err
				}
			}
		}
		return nil
	})})

	add(&entry{Scenario: Scenario{
		Name:        "garbage_body",
		Description: "Answers the first Feed with a well-framed body of 32 0xff bytes, then keeps serving normally.",
		Trigger:     AtFeed,
		Expect:      fails(ProtocolError, "`invalid payload from worker`. The worker still answers later requests: the parent must discard it anyway."),
	}, on: sendThen(func(c *child) []byte { return bytes.Repeat([]byte{0xff}, 32) })})

	add(&entry{Scenario: Scenario{
		Name:        "garbage_prefix",
		Description: "Answers the first Feed by writing the text \"hostile worker says hello\\n\" to stdout (its prefix reads as 1953722216), then keeps serving.",
		Trigger:     AtFeed,
		Expect:      fails(FrameTooLarge, "Stray text on stdout: the prefix is over the cap.", ProtocolError),
	}, on: atFirstFeed(func(c *child) error { return c.sendRaw([]byte("hostile worker says hello\n")) })})

	add(&entry{Scenario: Scenario{
		Name:        "event_no_kind",
		Description: "Answers the first Feed with a zero-length frame (a ChildEvent with no kind).",
		Trigger:     AtFeed,
		Expect:      fails(ProtocolError, "`unexpected event`."),
	}, on: sendThen(func(c *child) []byte { return []byte{} })})

	add(&entry{Scenario: Scenario{
		Name:        "event_unknown_kind_19",
		Description: "Answers the first Feed with a ChildEvent whose only arm is the unknown tag 19 (plus stamps).",
		Trigger:     AtFeed,
		Expect:      fails(ProtocolError, "Unknown arms decode as no kind: `unexpected event`."),
	}, on: sendThen(func(c *child) []byte { return append(event(19, nil), c.stamps()...) })})

	add(&entry{Scenario: Scenario{
		Name:        "event_stamps_only",
		Description: "Answers the first Feed with a ChildEvent holding only the message-level stamps (fields 20, 23/22).",
		Trigger:     AtFeed,
		Expect:      fails(ProtocolError, "No kind: `unexpected event`."),
	}, on: sendThen(func(c *child) []byte { return c.stamps() })})

	add(&entry{Scenario: Scenario{
		Name:        "event_wrong_wire_type",
		Description: "Answers the first Feed with the complete arm (6) encoded as a varint instead of a message.",
		Trigger:     AtFeed,
		Expect:      fails(ProtocolError, "prost rejects the wire type; protobuf-go skips it as unknown, leaving no kind. Either way a protocol error."),
	}, on: sendThen(func(c *child) []byte { return append(varintField(nil, armComplete, 3), c.stamps()...) })})

	// --- amplification and depth ------------------------------------------------
	add(amplify(Scenario{
		Name:        "amplify_empty_items",
		Description: "Answers the first Feed with a ~64 MiB Complete of 33.6M kind-less 2-byte elements (protocol 2: a list of empty MontyObjects; protocol 4: empty arena nodes with an honest node_count).",
		Expect:      fails(DecodeBudget, "Decoded naively each 2-byte element is a whole message (~30x); a decoder that validates each element as it goes may fail on the first with a protocol error instead.", ProtocolError),
	}, (*child).ampEmptyItems))

	add(amplify(Scenario{
		Name:        "amplify_none_items",
		Description: "Answers the first Feed with a ~64 MiB Complete whose value is a list of millions of Nones (protocol 2: 16.8M None objects; protocol 4: a list node of 67M packed one-byte references to one None node).",
		Expect:      fails(DecodeBudget, "Every element is valid, so only the decode budget stops it. Protocol 4 charges 16 bytes per reference (1 GiB+ here); a protocol 2 decoder whose element is small may fit 1 GiB and succeed.", OK),
	}, (*child).ampNoneItems))

	add(amplify(Scenario{
		Name:        "amplify_dict_pairs",
		Description: "Answers the first Feed with a ~64 MiB Complete whose value is a dict of 33.6M 2-byte pairs (protocol 2: empty Pairs; protocol 4: (0, 0) pairs over a None node, valid).",
		Expect:      fails(DecodeBudget, "Each pair costs 32+ bytes decoded. Protocol 2's empty pairs may instead fail validation (`missing required field Pair.key`).", ProtocolError),
	}, (*child).ampDictPairs))

	add(amplify(Scenario{
		Name:        "amplify_traceback",
		Description: "Answers the first Feed with a ~64 MiB Error whose exception holds 33.6M empty stack frames.",
		Expect:      fails(DecodeBudget, "A StackFrame is large once decoded; empty frames may also fail conversion (`missing required field StackFrame.start`).", ProtocolError),
	}, (*child).ampTraceback))

	add(amplify(Scenario{
		Name:        "amplify_print_segments",
		Description: "Protocol 4: answers the first Feed with a ~64 MiB Print of 33.6M empty segments.",
		Protocols:   only4,
		Expect:      fails(DecodeBudget, "`Print.segments: frame exceeds decode memory budget`; segments of stream 0 may instead be rejected as invalid.", ProtocolError),
	}, (*child).ampPrintSegments))

	add(amplify(Scenario{
		Name:        "amplify_none_nodes",
		Description: "Protocol 4: answers the first Feed with a ~64 MiB Complete whose arena holds 16.8M None nodes (honest node_count), root 0.",
		Protocols:   only4,
		Expect:      fails(DecodeBudget, "Valid; it fits a 1 GiB budget when the decoded node is small, and must fail a small configured budget before the nodes are built.", OK),
	}, (*child).ampNoneNodes))

	add(&entry{Scenario: Scenario{
		Name:        "huge_int",
		Description: "Protocol 2: answers the first Feed with a ~150 MiB Complete whose value is one int of 150 MiB magnitude (about 1.26 billion bits, 380 million decimal digits), inside the default decode budget.",
		Trigger:     AtFeed,
		Protocols:   only2,
		Expect: survives(OK, "A legal value. The trap is afterwards: printing it in decimal takes minutes of CPU, so repr and str must refuse it as CPython does (`Exceeds the limit (4300 digits) for integer string conversion`), deciding from the bit length before converting. A small configured budget may refuse the frame.",
			DecodeBudget),
		MaxFrame: HugeIntBytes + 64, Scales: true,
	}, on: atFirstFeed(func(c *child) error { return c.sendBig(c.hugeInt(), -1) })})

	add(&entry{Scenario: Scenario{
		Name:        "deep_nesting",
		Description: "Protocol 2: answers the first Feed with a Complete of None nested in 1,048,576 one-element lists (about 10 MiB).",
		Trigger:     AtFeed,
		Protocols:   only2,
		Expect:      fails(ProtocolError, "The released worker never nests deeper than 48; protobuf-go stops at 10,000 levels, and a recursive hand-written decoder may exhaust its stack.", DecodeBudget),
		MaxFrame:    deepFrame, Scales: true,
	}, on: sendThen(func(c *child) []byte { return c.deepList(int(c.n(deepLevels))) })})

	add(&entry{Scenario: Scenario{
		Name:        "deep_chain",
		Description: "Protocol 4: answers the first Feed with a valid arena chain 1,048,576 lists deep (node i = [node i-1]), about 9 MiB.",
		Trigger:     AtFeed,
		Protocols:   only4,
		Expect:      survives(OK, "Protocol 4 has no depth limit: the parent must build the value without unbounded recursion and within budget (a small configured budget may refuse it).", DecodeBudget),
		MaxFrame:    deepFrame, Scales: true,
	}, on: sendThen(func(c *child) []byte { return c.deepChain(int(c.n(deepLevels))) })})

	// --- invalid values -------------------------------------------------------------
	values := []struct {
		name, desc, note string
		o                *p2.MontyObject
	}{
		{"invalid_date_month", "a date with month 13", "`invalid value for Date.month: 13 is outside the range 1..=12`.",
			&p2.MontyObject{Kind: &p2.MontyObject_Date{Date: &p2.Date{Year: 2024, Month: 13, Day: 1}}}},
		{"invalid_tz_offset", "a timezone with offset 86400 s", "`invalid value for TimeZone.offset_seconds: 86400 is outside the range -86399..=86399`.",
			&p2.MontyObject{Kind: &p2.MontyObject_Timezone{Timezone: &p2.TimeZone{OffsetSeconds: 86400}}}},
		{"invalid_uuid_length", "a HOST type whose uuid has 3 bytes", "`invalid value for Type.id: uuid must be 16 bytes, got 3`.",
			&p2.MontyObject{Kind: &p2.MontyObject_Type{Type: &p2.Type{Name: "Widget", Id: &p2.Uuid{Data: []byte{1, 2, 3}}, Origin: p2.TypeOrigin_TYPE_ORIGIN_HOST}}}},
		{"type_origin_0", "a type with origin 0 (unspecified)", "`invalid value for Type: origin must be specified`.",
			&p2.MontyObject{Kind: &p2.MontyObject_Type{Type: &p2.Type{Name: "int"}}}},
		{"type_origin_99", "a type with origin 99", "`invalid value for Type.origin: unknown origin 99`.",
			&p2.MontyObject{Kind: &p2.MontyObject_Type{Type: &p2.Type{Name: "int", Origin: 99}}}},
		{"unknown_exception_value", "an exception value of type \"HostileError\"", "`unknown exception type \"HostileError\"`.",
			&p2.MontyObject{Kind: &p2.MontyObject_Exception{Exception: &p2.Exception{ExcType: "HostileError", Arg: ptr("boom")}}}},
		{"unknown_builtin_function", "builtin_function \"no_such_builtin\"", "`unknown builtin function \"no_such_builtin\"`.",
			&p2.MontyObject{Kind: &p2.MontyObject_BuiltinFunction{BuiltinFunction: "no_such_builtin"}}},
		{"invalid_file_mode", "a file handle with mode \"q\"", "`invalid file mode \"q\"`.",
			&p2.MontyObject{Kind: &p2.MontyObject_FileHandle{FileHandle: &p2.FileHandle{Path: "/data.txt", Mode: "q"}}}},
	}
	for _, v := range values {
		add(&entry{Scenario: Scenario{
			Name:        v.name,
			Description: "Answers the first Feed with a Complete whose value is " + v.desc + ".",
			Trigger:     AtFeed,
			Expect:      fails(ProtocolError, v.note),
		}, on: completeWith(func() []byte { return obj(v.o) })})
	}
	add(&entry{Scenario: Scenario{
		Name:        "invalid_utf8_str",
		Description: "Answers the first Feed with a Complete whose str value is the bytes ff fe (not UTF-8).",
		Trigger:     AtFeed,
		Expect:      fails(ProtocolError, "`invalid string value: data is not UTF-8 encoded`."),
	}, on: completeWith(func() []byte { return []byte{0x42, 0x02, 0xff, 0xfe} })})

	// --- protocol 4 arenas ------------------------------------------------------------
	add(&entry{Scenario: Scenario{
		Name:        "arena_root_out_of_range",
		Description: "Protocol 4: Complete with root 5 in an arena of one node.",
		Trigger:     AtFeed, Protocols: only4,
		Expect: fails(ProtocolError, "`value root 5 is out of range for an arena of 1 nodes`."),
	}, on: completeV4(5, func() [][]byte { return [][]byte{leafNone()} })})

	add(&entry{Scenario: Scenario{
		Name:        "arena_forward_ref",
		Description: "Protocol 4: Complete whose node 0 is a list referencing node 1 (a forward reference).",
		Trigger:     AtFeed, Protocols: only4,
		Expect: fails(ProtocolError, "`value node 0 references node 1, which is not below it`."),
	}, on: completeV4(0, func() [][]byte { return [][]byte{listNode(1), leafNone()} })})

	add(&entry{Scenario: Scenario{
		Name:        "arena_self_ref",
		Description: "Protocol 4: Complete whose only node is a list containing itself.",
		Trigger:     AtFeed, Protocols: only4,
		Expect: fails(ProtocolError, "Must be refused by the post-order check, not followed (a decoder that follows it loops forever)."),
	}, on: completeV4(0, func() [][]byte { return [][]byte{listNode(0)} })})

	add(&entry{Scenario: Scenario{
		Name:        "arena_instance_not_type",
		Description: "Protocol 4: a class instance whose class_type points at an int node.",
		Trigger:     AtFeed, Protocols: only4,
		Expect: fails(ProtocolError, "`class instance node 1 does not point at a class type`."),
	}, on: completeV4(1, func() [][]byte {
		inst := msgField(nil, 2, msgField(nil, 1, uuid16))
		inst = msgField(inst, 3, nil)
		return [][]byte{leafInt(1), msgField(nil, 24, inst)}
	})})

	add(&entry{Scenario: Scenario{
		Name:        "complete_missing_arena",
		Description: "Protocol 4: Complete with root 0 and no arena at all.",
		Trigger:     AtFeed, Protocols: only4,
		Expect: fails(ProtocolError, "`missing required field Complete.values` (or root 0 out of range for 0 nodes)."),
	}, on: sendThen(func(c *child) []byte { return c.turn(armComplete, nil) })})

	add(&entry{Scenario: Scenario{
		Name:        "arena_huge_hint",
		Description: "Protocol 4: Complete(None) whose arena claims node_count 4294967295 but holds one node.",
		Trigger:     AtFeed, Protocols: only4,
		Expect: survives(OK, "The hint must be capped by the bytes left (min(hint, R/4)); reserving 4G nodes would be fatal."),
		Result: "None",
	}, on: sendThen(func(c *child) []byte {
		arena := varintField(nil, 1, 1<<32-1)
		arena = msgField(arena, 2, leafNone())
		return c.turn(armComplete, msgField(nil, 2, arena))
	})})

	add(&entry{Scenario: Scenario{
		Name:        "call_arg_out_of_range",
		Description: "Protocol 4: answers the first Feed (`f()`) with FunctionCall f whose only argument is root 9 of an absent arena.",
		Trigger:     AtFeed, Protocols: only4, Code: "f()",
		Expect: fails(ProtocolError, "The call's arguments cannot be built; the host function must not be called."),
	}, on: sendThen(func(c *child) []byte {
		b := msgField(nil, 1, []byte("f"))
		b = msgField(b, 2, protowire.AppendVarint(nil, 9))
		return c.turn(armFunctionCall, b)
	})})

	// --- turn structure -------------------------------------------------------------
	add(&entry{Scenario: Scenario{
		Name:        "double_turn_end",
		Description: "Answers the first Feed with Complete(3) followed at once by Complete(\"stray\"): two turn-ending events for one request.",
		Trigger:     AtFeed,
		Expect: Expectation{Outcome: ProtocolError, Accept: []Outcome{OK}, AfterOK: ProtocolError,
			Note: "The Feed may return 3 before the stray event is seen; then the next request must fail with a protocol error, and must never return \"stray\"."},
		Result: "3",
	}, on: atFirstFeed(func(c *child) error {
		b := frame.AppendFrame(nil, c.turn(armComplete, c.completeLeaf(leafInt(3))))
		b = frame.AppendFrame(b, c.turn(armComplete, c.completeLeaf(leafStr(StrayValue))))
		return c.sendRaw(b)
	})})

	add(&entry{Scenario: Scenario{
		Name:        "stray_ok_after_complete",
		Description: "Answers the first Feed with Complete(3) and then, after 50 ms, an unsolicited Ok.",
		Trigger:     AtFeed,
		Expect: Expectation{Outcome: ProtocolError, Accept: []Outcome{OK}, AfterOK: ProtocolError,
			Note: "Writes after the turn ended. The Feed may return 3; the next request must then fail with a protocol error rather than take the Ok as its answer."},
		Result: "3",
	}, on: atFirstFeed(func(c *child) error {
		if err := c.send(c.turn(armComplete, c.completeLeaf(leafInt(3)))); err != nil {
			return err
		}
		if err := c.sleep(50 * time.Millisecond); err != nil {
			return err
		}
		return c.send(c.ok())
	})})

	add(&entry{Scenario: Scenario{
		Name:        "ok_to_feed",
		Description: "Answers the first Feed with Ok (not a valid end of a Feed turn).",
		Trigger:     AtFeed,
		Expect:      fails(ProtocolError, "`unexpected event`."),
	}, on: sendThen(func(c *child) []byte { return c.turn(armOk, nil) })})

	add(&entry{Scenario: Scenario{
		Name:        "error_no_exception",
		Description: "Answers the first Feed with an Error event that has no exception.",
		Trigger:     AtFeed,
		Expect:      fails(ProtocolError, "`error event with no exception`."),
	}, on: sendThen(func(c *child) []byte { return c.turn(armError, nil) })})

	add(&entry{Scenario: Scenario{
		Name:        "error_unknown_exc_type",
		Description: "Answers the first Feed with an Error whose exception type is \"HostileError\".",
		Trigger:     AtFeed,
		Expect:      fails(ProtocolError, "`invalid exception payload: unknown exception type \"HostileError\"`."),
	}, on: sendThen(func(c *child) []byte {
		return c.errorEvent(&p2.RaisedException{ExcType: "HostileError", Message: ptr("boom")}, true)
	})})

	add(&entry{Scenario: Scenario{
		Name:        "error_traceback_100k",
		Description: "Answers the first Feed with a valid Error (RecursionError) whose traceback has 100,000 frames (about 5 MiB).",
		Trigger:     AtFeed,
		Expect:      survives(SandboxError, "Valid and within every limit: a Python error, session intact. The parent may truncate the traceback but must stay within budget."),
		MaxFrame:    6 << 20,
	}, on: sendThen(func(c *child) []byte { return c.longTraceback(tracebackFrames) })})

	add(&entry{Scenario: Scenario{
		Name:        "shutdown_dump",
		Description: "Answers the first Feed with a ShutdownDump event (only a relay may send one).",
		Trigger:     AtFeed,
		Expect:      fails(ProtocolError, "`subprocess worker sent a ShutdownDump`."),
	}, on: sendThen(func(c *child) []byte { return event(armShutdownDump, msgField(nil, 1, []byte("dump"))) })})

	add(&entry{Scenario: Scenario{
		Name:        "oscall_no_call",
		Description: "Answers the first Feed with an OsCall (call_id 1) that has no call arm.",
		Trigger:     AtFeed,
		Expect:      fails(ProtocolError, "`OsCall event with no call`."),
	}, on: sendThen(func(c *child) []byte { return c.turn(armOsCall, varintField(nil, 1, 1)) })})

	add(&entry{Scenario: Scenario{
		Name:        "oscall_bad_mode",
		Description: "Answers the first Feed with OsCall open(\"/data.txt\", mode \"q\").",
		Trigger:     AtFeed,
		Expect:      fails(ProtocolError, "`invalid OS call payload: invalid file mode \"q\"`; the host must not be asked to open anything."),
	}, on: sendThen(func(c *child) []byte {
		return c.turn(armOsCall, marshal(&p2.OsCall{CallId: 1, Call: &p2.OsCall_Open_{Open: &p2.OsCall_Open{Path: "/data.txt", Mode: "q"}}}))
	})})

	add(&entry{Scenario: Scenario{
		Name:        "call_id_reused",
		Description: "`f()` suspends as FunctionCall f with call_id 1; every ResumeCall(1) is answered by another FunctionCall claiming to be call 1 again.",
		Trigger:     AtResume, Code: "f()",
		Expect: Expectation{Outcome: ProtocolError, Accept: []Outcome{SandboxError},
			Note: "A finished call id came back. A parent that does not track ids loops until max_suspensions, aborts, and gets an Error (session intact); it must not loop forever."},
	}, on: map[protowire.Number]hook{
		reqFeed: feedCallsF1,
		reqResumeCall: func(c *child, req *request) error {
			if c.st != suspended || resumeID(req) != 1 {
				return c.handle(req)
			}
			return c.send(c.functionCall("f", 1))
		},
	}})

	add(&entry{Scenario: Scenario{
		Name:        "call_id_backwards",
		Description: "`f()` suspends as FunctionCall f with call_id 1; ResumeCall(1) is answered by FunctionCall g with call_id 0 (ids went backwards); ResumeCall(0) then completes normally.",
		Trigger:     AtResume, Code: "f()",
		Expect: Expectation{Outcome: ProtocolError, Accept: []Outcome{OK},
			Note: "Call ids only grow within a feed. A parent that does not check ids treats g as a new call and completes with g's result."},
		Result: "2",
	}, on: map[protowire.Number]hook{
		reqFeed: feedCallsF1,
		reqResumeCall: func(c *child, req *request) error {
			if !c.first(req) || c.st != suspended || resumeID(req) != 1 {
				return c.handle(req)
			}
			c.pending = 0
			return c.send(c.functionCall("g", 0))
		},
	}})

	add(&entry{Scenario: Scenario{
		Name:        "resolve_unknown_future",
		Description: "`f()` suspends normally (call 0); the ResumeCall is answered by ResolveFutures listing call id 7, which was never issued.",
		Trigger:     AtResume, Code: "f()",
		Expect: fails(ProtocolError, "No future 7 exists; the parent must not wait for or invent one. Answering it with an error result (which the worker may reject, ending the feed with an error while the session survives) is also bounded.",
			SandboxError),
	}, on: map[protowire.Number]hook{reqResumeCall: func(c *child, req *request) error {
		if !c.first(req) || c.st != suspended {
			return c.handle(req)
		}
		return c.send(c.turn(armResolveFutures, msgField(nil, 1, protowire.AppendVarint(nil, 7))))
	}}})

	add(&entry{Scenario: Scenario{
		Name:        "abort_answered_with_call",
		Description: "`f()` suspends, and every ResumeCall is answered by a new FunctionCall (next id); the AbortFeed the parent sends once max_suspensions (2) is exceeded is answered by yet another FunctionCall.",
		Trigger:     AtAbort, Code: "f()", MaxSuspensions: 2,
		Expect: fails(ProtocolError, "`worker answered AbortFeed with something other than an Error`; the parent must not abort twice."),
	}, on: map[protowire.Number]hook{
		reqResumeCall: func(c *child, req *request) error {
			if c.st != suspended || resumeID(req) != c.pending {
				return c.handle(req)
			}
			c.pending = c.nextCall
			c.nextCall++
			return c.send(c.functionCall("f", c.pending))
		},
		reqAbortFeed: func(c *child, req *request) error {
			if c.st != suspended {
				return c.handle(req)
			}
			c.pending = c.nextCall
			c.nextCall++
			return c.send(c.functionCall("f", c.pending))
		},
	}})

	// --- output volume --------------------------------------------------------------
	add(&entry{Scenario: Scenario{
		Name:        "print_flood",
		Description: "Answers the first Feed with an endless stream of 8 KiB Print events; the turn never ends.",
		Trigger:     AtFeed,
		Expect:      hangs("Only the deadline ends it; the parent must stream (or cap) print output, never buffer it without bound."),
	}, on: atFirstFeed(func(c *child) error {
		msg := frame.AppendFrame(nil, c.printEvent(strings.Repeat("flood ", 8192/6)+"\n"))
		for {
			if err := c.sendRaw(msg); err != nil {
				return err
			}
			if c.ctx.Err() != nil {
				return c.hang()
			}
		}
	})})

	add(&entry{Scenario: Scenario{
		Name:        "print_unknown_stream",
		Description: "Answers the first Feed with Prints on streams 7 and -1 (neither stdout nor stderr), then Complete(None).",
		Trigger:     AtFeed,
		Expect:      survives(OK, "Legal as upstream's parent reads it: every stream but stderr prints to stdout. Refusing the turn over a stream number loses its result."),
		Result:      "None",
	}, on: atFirstFeed(func(c *child) error {
		for _, stream := range []uint64{7, 1<<64 - 1} {
			if err := c.send(c.printOn(stream, "odd stream\n")); err != nil {
				return err
			}
		}
		return c.send(c.turn(armComplete, c.completeLeaf(leafNone())))
	})})

	add(&entry{Scenario: Scenario{
		Name:        "print_at_cap",
		Description: "Answers the first Feed with one Print whose frame body is exactly 256 MiB (the cap), then Complete(None).",
		Trigger:     AtFeed,
		Expect:      survives(OK, "Legal. Peak memory is about the frame plus its text; a configured decode budget below 256 MiB refuses it instead.", DecodeBudget),
		Result:      "None", MaxFrame: maxFrameLen,
	}, on: atFirstFeed(func(c *child) error {
		if err := c.sendBig(c.printOfSize(maxFrameLen), -1); err != nil {
			return err
		}
		return c.send(c.turn(armComplete, c.completeLeaf(leafNone())))
	})})

	add(&entry{Scenario: Scenario{
		Name:        "print_over_cap",
		Description: "Answers the first Feed with a 300 MiB Print frame (prefix and body both streamed).",
		Trigger:     AtFeed,
		Expect:      fails(FrameTooLarge, "Refused on the prefix; the worker, blocked writing the body, must be killed."),
	}, on: atFirstFeed(func(c *child) error {
		if err := c.sendBig(c.printOfSize(OverCapPrintBytes), -1); err != nil {
			return err
		}
		return c.hang()
	})})

	add(&entry{Scenario: Scenario{
		Name:        "stderr_flood",
		Description: "On the first Feed writes 100 MB to stderr, then answers normally (Complete(3) for `1 + 2`).",
		Trigger:     AtFeed,
		Expect:      survives(OK, "The parent must drain stderr concurrently (or the child blocks) and keep only a bounded tail of it."),
		Result:      "3", StderrBytes: StderrFloodBytes,
	}, on: map[protowire.Number]hook{reqFeed: func(c *child, req *request) error {
		if c.first(req) {
			line := []byte(strings.Repeat("hostile stderr flood ", 48) + "\n")
			block := bytes.Repeat(line, (64<<10)/len(line))
			for n := 0; n < StderrFloodBytes; n += len(block) {
				if _, err := c.stderr.Write(block[:min(len(block), StderrFloodBytes-n)]); err != nil {
					break
				}
			}
		}
		return c.handle(req)
	}}})

	// --- death ------------------------------------------------------------------
	add(&entry{Scenario: Scenario{
		Name:        "oom_exit",
		Description: "Answers Configure normally, then exits with status 65 (OOM_EXIT_CODE) at the first Feed, writing no frame.",
		Trigger:     AtFeed,
		Expect:      fails(MemoryLimit, "`the worker exceeded its memory limit and was terminated`; the checkout ends."),
	}, on: exitAtFeed(int(protocol.ExitOOM))})

	add(&entry{Scenario: Scenario{
		Name:        "exit_4",
		Description: "Exits with status 4 at the first Feed without a FatalError.",
		Trigger:     AtFeed,
		Expect:      fails(CrashVanished, "Status 4 without a frame is a plain crash."),
	}, on: exitAtFeed(int(protocol.ExitFatal))})

	add(&entry{Scenario: Scenario{
		Name:        "exit_76",
		Description: "Exits with status 76 at the first Feed without a FatalError.",
		Trigger:     AtFeed,
		Expect:      fails(CrashVanished, "Status 76 without a frame is a plain crash."),
	}, on: exitAtFeed(int(protocol.ExitProtocol))})

	add(&entry{Scenario: Scenario{
		Name:        "sigsegv",
		Description: "Dies by SIGSEGV at the first Feed.",
		Trigger:     AtFeed,
		Expect:      fails(CrashVanished, "A hard crash leaves no frame; the signal should appear in the error."),
	}, on: dieAtFeed(syscall.SIGSEGV)})

	add(&entry{Scenario: Scenario{
		Name:        "sigabrt",
		Description: "Dies by SIGABRT at the first Feed.",
		Trigger:     AtFeed,
		Expect:      fails(CrashVanished, "Like a Rust abort."),
	}, on: dieAtFeed(syscall.SIGABRT)})

	add(&entry{Scenario: Scenario{
		Name:        "sigkill",
		Description: "Dies by SIGKILL at the first Feed.",
		Trigger:     AtFeed,
		Expect:      fails(CrashVanished, "Like the kernel's OOM killer."),
	}, on: dieAtFeed(syscall.SIGKILL)})

	add(&entry{Scenario: Scenario{
		Name:        "fatal_stay_alive",
		Description: "Answers the first Feed with FatalError(\"hostile: fatal error, but this worker stays alive\") and does not exit: it keeps reading (answering nothing), and hangs once stdin ends.",
		Trigger:     AtFeed,
		Expect:      fails(CrashAnnounced, "The parent waits at most the 100 ms FATAL_EXIT_GRACE, then kills and reaps the worker."),
	}, on: atFirstFeed(func(c *child) error {
		if err := c.fatal(FatalAliveText); err != nil {
			return err
		}
		return c.drain()
	})})

	add(&entry{Scenario: Scenario{
		Name:        "fatal_then_exit",
		Description: "Answers the first Feed with FatalError(\"hostile: fatal error\") and exits 4.",
		Trigger:     AtFeed,
		Expect:      fails(CrashAnnounced, "Crashed(Announced) with the FatalError text as the reason."),
	}, on: atFirstFeed(func(c *child) error {
		if err := c.fatal(FatalText); err != nil {
			return err
		}
		return &ExitError{Code: int(protocol.ExitFatal)}
	})})

	add(&entry{Scenario: Scenario{
		Name:        "close_stdout",
		Description: "At the first Feed closes its stdout but stays alive, never exiting.",
		Trigger:     AtFeed,
		Expect:      fails(CrashVanished, "The parent reads EOF; it must not wait for an exit that never comes: kill, reap, report."),
	}, on: atFirstFeed(func(c *child) error {
		_ = c.closeOut()
		return c.hang()
	})})

	add(&entry{Scenario: Scenario{
		Name:        "stop_reading",
		Description: "Answers Configure, then never reads stdin again (nor writes); the 256 KiB Feed the parent sends cannot be written in full.",
		Trigger:     AfterConfigure,
		Expect:      hangs("The parent's write blocks once the pipe is full: the deadline must interrupt the write as well as the read."),
	}, bigCode: BigRequestBytes, afterConfigure: func(c *child) error { return c.hang() }})

	add(&entry{Scenario: Scenario{
		Name:        "stop_reading_big",
		Description: "Like stop_reading, with a 4 MiB Feed: more than even an enlarged (1 MiB) pipe holds, so the parent's write really blocks.",
		Trigger:     AfterConfigure,
		Expect:      hangs("The deadline must interrupt a write blocked on a full pipe."),
	}, bigCode: BigPipeRequestBytes, afterConfigure: func(c *child) error { return c.hang() }})

	byName = make(map[string]*entry, len(catalg))
	for _, e := range catalg {
		if byName[e.Name] != nil {
			panic("hostile: duplicate scenario " + e.Name)
		}
		byName[e.Name] = e
	}
}

// Upper bounds of the big frames, for Scenario.MaxFrame.
const (
	ampFrame  = 64<<20 + 64<<10
	deepFrame = 12 << 20
)

// FatalError texts of the fatal scenarios.
const (
	FatalText      = "hostile: fatal error"
	FatalAliveText = "hostile: fatal error, but this worker stays alive"
)

// bigCodeOf is a snippet of n bytes computing 1 + 2 after a long comment.
func bigCodeOf(n int) string {
	pad := n - len("\n1 + 2") - 2
	return "# " + strings.Repeat("x", pad) + "\n1 + 2"
}

func le32(n uint32) []byte {
	return []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}
}

func resumeID(req *request) uint32 {
	if req.v4 != nil {
		return req.v4.GetResumeCall().GetCallId()
	}
	return req.v2.GetResumeCall().GetCallId()
}

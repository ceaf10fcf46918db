package codecv4

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/codecv2"
	"github.com/gomonty/monty/message"
)

// short is msg with a declared length by bytes shorter than m: m's last
// field runs past the nested message's end, into its parent's bytes.
func (p pb) short(num protowire.Number, m pb, by int) pb {
	p = protowire.AppendTag(p, num, protowire.BytesType)
	p = protowire.AppendVarint(p, uint64(len(m)-by))
	return append(p, m...)
}

// Like prost, the decoder reads a nested message's fields from the rest of
// the frame: a last field that runs past its message's end but not past
// the frame's is read, and the message then overshoots ("delimited length
// exceeded", on the path of the field holding the message); one that runs
// past the frame's end is an underflow or a bad varint.
func TestNestedOvershootReadsAsProst(t *testing.T) {
	const overshoot = prefix + "MontyNode.kind: Complete.values: ChildEvent.kind: delimited length exceeded"
	cases := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"request arm", pb(nil).short(3, pb(nil).str(1, "abc"), 3), prefix + "ParentRequest.kind: delimited length exceeded"},
		{"request arm past the frame", []byte{0x1a, 0x02, 0x0a, 0x05, 'a', 'b', 'c'}, prefix + "Feed.code: ParentRequest.kind: buffer underflow"},
		{"node", completeFrame(0, pb(nil).short(2, pb(nil).str(8, "abc"), 2)),
			prefix + "Complete.values: ChildEvent.kind: delimited length exceeded"},
		{"arena", pb(nil).msg(6, pb(nil).varint(1, 0).short(2, arenaOf(noneNode, node(pb(nil).str(8, "abcd"))), 2)),
			prefix + "Complete.values: ChildEvent.kind: delimited length exceeded"},
		{"packed id", completeFrame(0, node(pb(nil).msg(11, pb(nil).bytes(1, []byte{0x80}).varint(9, 1)))), overshoot},
		{"packed id past the frame", completeFrame(0, node(pb(nil).msg(11, pb(nil).bytes(1, []byte{0x80})))),
			prefix + "MontyNode.kind: Complete.values: ChildEvent.kind: invalid varint"},
		{"node pair", completeFrame(0, node(pb(nil).msg(14, pb(nil).short(1, pb(nil).varint(1, 0).varint(2, 300), 1)))), overshoot},
		{"node pairs", completeFrame(0, node(pb(nil).short(14, pb(nil).msg(1, pb(nil).varint(1, 0).varint(2, 0)), 1))), overshoot},
		{"leaf message", completeFrame(0, node(pb(nil).short(17, pb(nil).varint(1, 2020).varint(2, 1).varint(3, 1), 1))), overshoot},
		{"unknown field", completeFrame(0, node(pb(nil).short(17, pb(nil).varint(1, 2020).str(9, "xyz"), 2))), overshoot},
		{"uuid", completeFrame(0, node(nType(pb(nil).str(1, "C").short(2, uuidMsgOf(uuid16), 1)))), overshoot},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			if c.frame[0] == 0x32 {
				_, err = DecodeEvent(c.frame, lim(0))
			} else {
				_, err = DecodeRequest(c.frame, lim(0))
			}
			wantErr(t, err, c.want)
		})
	}
}

// Where protocols 2 and 4 shape a message alike, the two decoders must
// fail alike on it; protocol 2's decoder is checked against the released
// worker's (prost's) texts. Every nested length of such frames is moved
// by ±1 and ±2, the overshoots and undershoots a hostile peer sends.
func TestNestedLengthsFailAsProtocol2(t *testing.T) {
	msg, tb := "boom", "tb"
	requests := []*message.ParentRequest{
		{Body: &message.Feed{Code: "x = 1\nx + 1"}, TraceParent: &tb},
		{Body: &message.InstallDependencies{Requirements: []string{"a", "bc"}}},
		{Body: &message.Load{State: []byte("state")}},
		{Body: &message.AbortFeed{Exception: &message.RaisedException{Type: "ValueError", Message: &msg,
			Traceback: []message.StackFrame{{Filename: "f.py", Start: message.CodeLoc{Line: 1, Column: 2}, End: message.CodeLoc{Line: 3, Column: 4}, FrameName: &msg}},
			Data:      &message.JSONErrorData{Msg: "m", Doc: &msg, Pos: 1, Lineno: 2, Colno: 3}}}},
	}
	limits := uint64(5)
	requests = append(requests, &message.ParentRequest{Body: &message.Configure{ScriptName: "main.py", MontyVersion: "0.0.23",
		Limits: &message.ResourceLimits{MaxDurationMicros: &limits, MaxRecursionDepth: &limits}, TypeCheckStubs: &msg, ProtocolVersion: 2}})
	checked := 0
	for _, r := range requests {
		b4 := mustEncodeRequest(t, r)
		b2, err := codecv2.AppendRequest(nil, r)
		if err != nil || string(b2) != string(b4) {
			t.Fatalf("%T: protocols 2 and 4 encode it differently (%v):\n% x\n% x", r.Body, err, b2, b4)
		}
		for _, at := range nestedLengths(b4) {
			l, n := protowire.ConsumeVarint(b4[at:])
			for _, d := range []int{-2, -1, 1, 2} {
				if int(l)+d < 0 {
					continue
				}
				f := append(protowire.AppendVarint(append([]byte(nil), b4[:at]...), uint64(int(l)+d)), b4[at+n:]...)
				_, e2 := codecv2.DecodeRequest(f, codec.Limits{})
				_, e4 := DecodeRequest(f, codec.Limits{})
				if fmt.Sprint(e2) != fmt.Sprint(e4) {
					t.Errorf("%T, length at %d moved by %d: % x\n  protocol 2: %v\n  protocol 4: %v", r.Body, at, d, f, e2, e4)
				}
				checked++
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d frames checked", checked)
	}
}

// nestedLengths returns the offsets of the length prefixes of the
// length-delimited fields of message b that parse as messages, at every
// depth.
func nestedLengths(b []byte) []int {
	var out []int
	var walk func(off int, b []byte) bool
	walk = func(off int, b []byte) bool {
		var found []int
		for p := 0; p < len(b); {
			_, wt, k := protowire.ConsumeTag(b[p:])
			if k < 0 {
				return false
			}
			p += k
			if wt == protowire.BytesType {
				v, m := protowire.ConsumeBytes(b[p:])
				if m < 0 {
					return false
				}
				found = append(found, off+p)
				walk(off+p+m-len(v), v)
				p += m
				continue
			}
			m := protowire.ConsumeFieldValue(0, wt, b[p:])
			if m < 0 {
				return false
			}
			p += m
		}
		out = append(out, found...)
		return true
	}
	walk(0, b)
	return out
}

// groups returns k unknown groups nested in one another (field 15: one
// byte a tag).
func groups(k int) []byte { return groupsOf(15, k) }

func groupsOf(num protowire.Number, k int) []byte {
	var b []byte
	for range k {
		b = protowire.AppendTag(b, num, protowire.StartGroupType)
	}
	for range k {
		b = protowire.AppendTag(b, num, protowire.EndGroupType)
	}
	return b
}

// Unknown groups count against prost's recursion limit of 100 message
// levels from where they sit: a message at depth d may hold groups nested
// 100-d deep, not one more, and the fields of the innermost group too.
// Protocol 2's decoder, whose depth limit is checked against the released
// worker, is the reference.
func TestUnknownGroupsCountAgainstTheRecursionLimit(t *testing.T) {
	cases := map[string]struct {
		frame func(k int) []byte
		limit int // the deepest nesting accepted
	}{
		"frame":          {func(k int) []byte { return groups(k) }, 100},
		"feed":           {func(k int) []byte { return pb(nil).msg(3, append(pb(nil).str(1, "x"), groups(k)...)) }, 99},
		"group's fields": {func(k int) []byte { return append(groups(k)[:k], append(pb(nil).varint(16, 1), groups(k)[k:]...)...) }, 99},
		"stack frame": {func(k int) []byte {
			frame := append(pb(nil).str(1, "f").msg(2, nil).msg(3, nil), groups(k)...)
			return pb(nil).msg(11, pb(nil).msg(1, pb(nil).str(1, "ValueError").msg(3, frame)))
		}, 97},
	}
	// The arena's messages, which protocol 2 does not have: ChildEvent 0,
	// Complete 1, Arena 2, MontyNode 3, and inside a node 4 and 5.
	arena := map[string]struct {
		frame func(k int) []byte
		limit int
	}{
		"arena": {func(k int) []byte { return completeFrame(0, append(arenaOf(noneNode), groups(k)...)) }, 98},
		"node":  {func(k int) []byte { return completeFrame(0, node(append(pb(nil).msg(2, nil), groupsOf(40, k)...))) }, 97},
		"node pair": {func(k int) []byte {
			return completeFrame(1, arenaOf(noneNode, node(pb(nil).msg(14, pb(nil).msg(1, append(pb(nil).varint(1, 0).varint(2, 0), groups(k)...))))))
		}, 95},
		"type id": {func(k int) []byte {
			return completeFrame(0, node(nType(pb(nil).str(1, "C").msg(2, append(uuidMsgOf(uuid16), groups(k)...)).varint(3, 2))))
		}, 95},
	}
	for name, c := range arena {
		for k := c.limit - 1; k <= c.limit+1; k++ {
			_, err := DecodeEvent(c.frame(k), codec.Limits{})
			if rec := err != nil && strings.HasSuffix(err.Error(), "recursion limit reached"); rec != (k > c.limit) {
				t.Errorf("%s, %d groups deep: %v, want the recursion limit only beyond %d", name, k, err, c.limit)
			}
		}
	}
	for name, c := range cases {
		for k := c.limit - 1; k <= c.limit+1; k++ {
			f := c.frame(k)
			_, e2 := codecv2.DecodeRequest(f, codec.Limits{})
			_, e4 := DecodeRequest(f, codec.Limits{})
			if fmt.Sprint(e2) != fmt.Sprint(e4) {
				t.Errorf("%s, %d groups deep:\n  protocol 2: %v\n  protocol 4: %v", name, k, e2, e4)
			}
			if rec := e4 != nil && strings.HasSuffix(e4.Error(), "recursion limit reached"); rec != (k > c.limit) {
				t.Errorf("%s, %d groups deep: %v, want the recursion limit only beyond %d", name, k, e4, c.limit)
			}
		}
	}
}

// An exception's conversion checks run in the worker's order (checked
// live at protocol 2, codecv2's TestLiveExceptionCheckOrder): the type
// first, then the frames in order, each its missing location, else its
// columns.
func TestExceptionCheckOrder(t *testing.T) {
	loc := func(l, c uint64) pb { return pb(nil).varint(1, l).varint(2, c) }
	badCol := pb(nil).msg(3, pb(nil).str(1, "f.py").msg(2, loc(1, 5)).msg(3, loc(1, 2)).str(5, "abcdef"))
	noEnd := pb(nil).msg(3, pb(nil).str(1, "g.py").msg(2, loc(1, 1)))
	noStart := pb(nil).msg(3, pb(nil).str(1, "g.py").msg(3, loc(1, 1)))
	typ := func(name string) pb { return pb(nil).str(1, name) }
	col := "invalid value for StackFrame.end.column: 2 is before start column 5"
	for _, c := range []struct {
		name, want string
		exc        pb
	}{
		{"bad type, frame without end", `unknown exception type "Nope"`, append(typ("Nope"), noEnd...)},
		{"bad columns, then a frame without end", col, append(append(typ("ValueError"), badCol...), noEnd...)},
		{"a frame without end, then bad columns", "missing required field StackFrame.end", append(append(typ("ValueError"), noEnd...), badCol...)},
		{"a frame without start, then one without end", "missing required field StackFrame.start", append(append(typ("ValueError"), noStart...), noEnd...)},
		{"bad columns, bad type", `unknown exception type "Nope"`, append(append(pb(nil), badCol...), typ("Nope")...)},
	} {
		_, err := DecodeRequest(pb(nil).msg(11, pb(nil).msg(1, c.exc)), lim(0))
		if fmt.Sprint(err) != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}

// idField's fast path (one packed run filling the message) decodes what
// the general path decodes, errors included: every list node below, with
// its Indexes payload's bytes then mutated one at a time.
func TestFastIDsAgree(t *testing.T) {
	run := func(ids ...uint64) pb { return pb(nil).packed(1, ids...) }
	payloads := []pb{
		run(0), run(0, 1, 2), run(200, 3), run(1 << 20),
		append(run(0), run(1)...), append(run(0), pb(nil).varint(1, 1)...), append(run(0), pb(nil).varint(9, 1)...),
		{0x0a, 0x01, 0x80}, {0x0a, 0x02, 0x80, 0x80}, {0x0a, 0x00},
	}
	decode := func(f []byte, fast bool) (*message.ChildEvent, error) {
		fastIDs = fast
		defer func() { fastIDs = true }()
		return DecodeEvent(f, lim(0))
	}
	checked := 0
	for _, p := range payloads {
		base := completeFrame(0, arenaOf(noneNode, noneNode, noneNode, node(pb(nil).msg(11, p))))
		at := len(base) - len(p)
		for i := -1; i < len(p); i++ {
			for _, v := range []byte{0x00, 0x01, 0x0a, 0x7f, 0x80, 0xff} {
				f := append([]byte(nil), base...)
				if i >= 0 {
					f[at+i] = v
				}
				a, errA := decode(f, true)
				b, errB := decode(f, false)
				if fmt.Sprint(errA) != fmt.Sprint(errB) {
					t.Errorf("% x:\n  fast    %v\n  general %v", f, errA, errB)
				} else if errA == nil {
					if d := diff(a, b); d != "" {
						t.Errorf("% x: %s", f, d)
					}
				}
				checked++
			}
		}
	}
	if checked < 300 {
		t.Fatalf("%d frames checked", checked)
	}
}

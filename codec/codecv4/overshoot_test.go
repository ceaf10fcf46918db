package codecv4

import (
	"fmt"
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

package codecv4

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/codecv2"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// FuzzAgreeWithProtocol2 decodes requests whose arms protocols 2 and 4
// shape alike (every arm but Feed and the three resumes, which carry
// values) with both decoders: where either fails in decoding proper
// (prost's "failed to decode Protobuf message: …"), both must, with the
// same text. Protocol 2's decoder is checked against the released worker;
// this is how protocol 4's overshoot and recursion-limit departures from
// prost would have shown.
func FuzzAgreeWithProtocol2(f *testing.F) {
	msg, tb := "boom", "tb"
	limits := uint64(5)
	for _, r := range []*message.ParentRequest{
		{Body: &message.InstallDependencies{Requirements: []string{"a", "bc"}}, TraceParent: &tb},
		{Body: &message.Load{State: []byte("state")}},
		{Body: &message.Dump{}},
		{Body: &message.AbortFeed{Exception: &message.RaisedException{Type: "ValueError", Message: &msg,
			Traceback: []message.StackFrame{{Filename: "f.py", Start: message.CodeLoc{Line: 1, Column: 2}, End: message.CodeLoc{Line: 3, Column: 4}, FrameName: &msg}},
			Data:      &message.UnicodeErrorData{Encoding: "utf-8", Reason: "r", Start: 1, End: 2}}}},
		{Body: &message.Configure{ScriptName: "main.py", MontyVersion: "0.0.23",
			Limits: &message.ResourceLimits{MaxDurationMicros: &limits, MaxRecursionDepth: &limits}, TypeCheckStubs: &msg, ProtocolVersion: 2}},
	} {
		b, _ := AppendRequest(nil, r)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Not Feed, ResumeCall, ResumeNameLookup, ResumeFutures: they carry values.
		agree(t, b, func(n protowire.Number, _ []byte) bool { return n >= 3 && n <= 6 },
			func(b []byte) error { _, err := codecv2.DecodeRequest(b, codec.Limits{}); return err },
			func(b []byte) error { _, err := DecodeRequest(b, codec.Limits{}); return err })
	})
}

// FuzzEventsAgreeWithProtocol2 is FuzzAgreeWithProtocol2 for events: the
// arms shaped alike (not Print, FunctionCall, Complete) and the envelope
// without its two fields whose numbers the versions swap. OsCall is shaped
// alike but for getenv (its default is a MontyObject at 2, a node id at 4),
// urandom and the arena (4 only), so an OsCall counts when none of its
// fields is one of those.
func FuzzEventsAgreeWithProtocol2(f *testing.F) {
	msg := "boom"
	for _, e := range []*message.ChildEvent{
		{Body: &message.NameLookup{Name: "x"}, TotalExecutionMicros: 7},
		{Body: &message.ResolveFutures{PendingCallIDs: []uint32{1, 300}}},
		{Body: &message.Error{Exception: &message.RaisedException{Type: "ValueError", Message: &msg,
			Traceback: []message.StackFrame{{Filename: "f.py", Start: message.CodeLoc{Line: 1, Column: 2}, End: message.CodeLoc{Line: 3, Column: 4}, PreviewLine: &msg}},
			Data:      &message.JSONErrorData{Msg: "m", Doc: &msg, Pos: 1, Lineno: 2, Colno: 3}}}},
		{Body: &message.TypingError{Diagnostics: "bad"}},
		{Body: &message.DumpResult{State: []byte("st")}},
		{Body: &message.Ok{}},
		{Body: &message.FatalError{Message: "dead"}},
		{Body: &message.OsCall{CallID: 3, Op: message.OpReadText, Path: "/a/b"}},
		{Body: &message.OsCall{CallID: 4, Op: message.OpOpen, Path: "f", Mode: "rb"}},
		{Body: &message.OsCall{CallID: 5, Op: message.OpMkdir, Path: "d", Parents: true, ExistOK: true}},
		{Body: &message.OsCall{Op: message.OpWriteBytes, Path: "p", Data: []byte{0, 1}}},
		{Body: &message.OsCall{Op: message.OpRename, Path: "a", Dst: "b"}},
		{Body: &message.OsCall{CallID: 6, Op: message.OpDateTimeNow, TZ: &value.TimeZone{Offset: -3600, Name: &msg}}},
	} {
		b, err := AppendEvent(nil, e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Not Print, FunctionCall, Complete (values, segments), an OsCall
		// with an arm or field shaped apart, nor the envelope fields whose
		// numbers the versions swap.
		agree(t, b, func(n protowire.Number, body []byte) bool {
			if n == 3 {
				return hasField(body, 21, 25, 26)
			}
			return n <= 2 || n == 6 || n == 22 || n == 23
		},
			func(b []byte) error { _, err := codecv2.DecodeEvent(b, codec.Limits{}); return err },
			func(b []byte) error { _, err := DecodeEvent(b, codec.Limits{}); return err })
	})
}

// agree fails t when b, a frame none of whose top-level fields skip
// rejects, fails decoding (prost's "failed to decode Protobuf message: …")
// in one of the two decoders and not alike in the other. skip is given a
// field's number and, for a length-delimited field, its body, cut at the
// frame's end when its length runs past it (the decoders read a nested
// message's fields before they find it overshoots), its capacity running
// to the frame's end (a key that starts in the body is read on past it).
// The conversion checks that follow a decode are each version's own (their
// order differs, and protocol 2 requires some fields that protocol 4 leaves
// to the session), so they are not compared.
func agree(t *testing.T, b []byte, skip func(n protowire.Number, body []byte) bool, dec2, dec4 func([]byte) error) {
	for p := 0; p < len(b); {
		num, wt, k := protowire.ConsumeTag(b[p:])
		if k < 0 {
			break
		}
		var body []byte
		if wt == protowire.BytesType {
			if n, l := protowire.ConsumeVarint(b[p+k:]); l > 0 {
				rest := b[p+k+l : len(b) : len(b)]
				body = rest[:min(n, uint64(len(rest)))]
			}
		}
		if skip(num, body) {
			return
		}
		m := protowire.ConsumeFieldValue(num, wt, b[p+k:])
		if m < 0 {
			break
		}
		p += k + m
	}
	e2, e4 := dec2(b), dec4(b)
	s2, s4 := fmt.Sprint(e2), fmt.Sprint(e4)
	if !strings.HasPrefix(s2, prefix) && !strings.HasPrefix(s4, prefix) {
		return
	}
	if s2 != s4 {
		t.Fatalf("% x\n v2 %v\n v4 %v", b, e2, e4)
	}
}

// hasField reports whether one of the fields of message body, read up to
// the first malformed one, has one of the numbers nums. A field that starts
// in the body is read on into its capacity (the rest of the frame), as the
// decoders read it: a key can straddle the body's end.
func hasField(body []byte, nums ...protowire.Number) bool {
	all := body[:cap(body)]
	for p := 0; p < len(body); {
		num, wt, k := protowire.ConsumeTag(all[p:])
		if k < 0 {
			return false
		}
		for _, n := range nums {
			if num == n {
				return true
			}
		}
		m := protowire.ConsumeFieldValue(num, wt, all[p+k:])
		if m < 0 {
			return false
		}
		p += k + m
	}
	return false
}

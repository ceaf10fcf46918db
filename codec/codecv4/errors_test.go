package codecv4

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

const prefix = "failed to decode Protobuf message: "

// Node payload builders (MontyNode messages).
func nInt(v int64) pb  { return pb(nil).varint(5, uint64(v<<1^(v>>63))) }
func nStr(s string) pb { return pb(nil).str(8, s) }
func nList(ids ...uint64) pb {
	if len(ids) == 0 {
		return pb(nil).msg(11, nil)
	}
	return pb(nil).msg(11, pb(nil).packed(1, ids...))
}

var uuid16 = make([]byte, 16)

func uuidMsgOf(b []byte) pb { return pb(nil).bytes(1, b) }

// nType builds a Type node payload.
func nType(body pb) pb { return pb(nil).msg(23, body) }

func TestInvalidValuesAreRejectedDuringDecode(t *testing.T) {
	bogusExc := "NotARealError"
	if value.KnownExceptionType(bogusExc) {
		t.Fatalf("%q is a known exception type", bogusExc)
	}
	hostNoID := pb(nil).str(1, "C").varint(3, 3)
	cases := []struct {
		name  string
		nodes []pb
		want  string
	}{
		{"exc_type", []pb{pb(nil).msg(22, pb(nil).str(1, bogusExc))}, `unknown exception type "NotARealError"`},
		{"type_name", []pb{nType(pb(nil).str(1, "NotAType").varint(3, 1))}, `unknown type name "NotAType"`},
		{"origin0", []pb{nType(pb(nil).str(1, "int"))}, "invalid value for Type: origin must be specified"},
		{"builtin_id", []pb{nType(pb(nil).str(1, "int").msg(2, uuidMsgOf(uuid16)).varint(3, 1))}, "invalid value for Type: a builtin type must not carry an id"},
		{"builtin_attrs", []pb{nType(pb(nil).str(1, "int").varint(3, 1).msg(5, nil))}, "invalid value for Type: a builtin type must not carry attrs"},
		{"class_no_id", []pb{nType(hostNoID)}, "invalid value for Type: a class type must carry an id"},
		{"class_uuid_5", []pb{nType(pb(nil).str(1, "C").msg(2, uuidMsgOf([]byte{1, 2, 3, 4, 5})).varint(3, 2))}, "invalid value for Type.id: uuid must be 16 bytes, got 5"},
		{"instance_no_id", []pb{nType(pb(nil).msg(2, uuidMsgOf(uuid16)).varint(3, 2)), pb(nil).msg(24, pb(nil).msg(3, nil))}, "missing required field ClassInstanceNode.instance_id"},
		{"instance_no_attrs", []pb{nType(pb(nil).msg(2, uuidMsgOf(uuid16)).varint(3, 2)), pb(nil).msg(24, pb(nil).msg(2, uuidMsgOf(uuid16)))}, "missing required field ClassInstanceNode.attrs"},
		{"instance_uuid_17", []pb{nType(pb(nil).msg(2, uuidMsgOf(uuid16)).varint(3, 2)), pb(nil).msg(24, pb(nil).msg(2, uuidMsgOf(make([]byte, 17))).msg(3, nil))}, "invalid value for ClassInstanceNode.instance_id: uuid must be 16 bytes, got 17"},
		{"origin99", []pb{nType(pb(nil).str(1, "C").varint(3, 99))}, "invalid value for Type.origin: unknown origin 99"},
		{"origin-1", []pb{nType(pb(nil).str(1, "C").varint(3, math.MaxUint64))}, "invalid value for Type.origin: unknown origin -1"},
		{"builtin_function", []pb{pb(nil).str(26, "not_a_builtin")}, `unknown builtin function "not_a_builtin"`},
		{"file_mode", []pb{pb(nil).msg(28, pb(nil).str(1, "/f").str(2, "r+"))}, `invalid file mode "r+"`},
		{"tzname_without_offset", []pb{pb(nil).msg(19, pb(nil).varint(1, 2020).varint(2, 1).varint(3, 1).str(9, "UTC"))}, "invalid value for DateTime.timezone_name: timezone_name requires offset_seconds"},
		{"uuid_arm", []pb{pb(nil).msg(10, uuidMsgOf(uuid16))}, "missing required field MontyNode.kind"},
		{"no_kind", []pb{nil}, "missing required field MontyNode.kind"},
		{"unknown_arm_only", []pb{pb(nil).varint(31, 1)}, "missing required field MontyNode.kind"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var a pb
			for _, n := range c.nodes {
				a = append(a, node(n)...)
			}
			_, err := DecodeArena(a, codec.Limits{})
			wantErr(t, err, prefix+c.want)
			// Inside an envelope, the enclosing fields are named.
			_, err = DecodeEvent(completeFrame(0, a), codec.Limits{})
			wantErr(t, err, prefix+"Complete.values: ChildEvent.kind: "+c.want)
		})
	}

	// Found after decode: no frame prefix.
	a := arenaOf(node(pb(nil).msg(23, pb(nil).str(1, "int").varint(3, 1))), node(pb(nil).msg(24, pb(nil).msg(2, uuidMsgOf(uuid16)).msg(3, nil))))
	_, err := DecodeArena(a, codec.Limits{})
	wantErr(t, err, "invalid value for Arena: class instance node 1 does not point at a class type")
	_, err = DecodeEvent(completeFrame(1, a), codec.Limits{})
	wantErr(t, err, "invalid value for Arena: class instance node 1 does not point at a class type")
}

func TestOutOfRangeTemporalValuesAreRejected(t *testing.T) {
	date := func(y, m, d uint64) pb { return pb(nil).msg(17, pb(nil).varint(1, y).varint(2, m).varint(3, d)) }
	dt := func(h, mi, s, us uint64) pb {
		return pb(nil).msg(19, pb(nil).varint(1, 2020).varint(2, 1).varint(3, 1).varint(4, h).varint(5, mi).varint(6, s).varint(7, us))
	}
	tm := func(h, mi, s, us, fold uint64) pb {
		return pb(nil).msg(18, pb(nil).varint(1, h).varint(2, mi).varint(3, s).varint(4, us).varint(7, fold))
	}
	neg := func(v int64) uint64 { return uint64(v) }
	cases := []struct {
		n    pb
		want string
	}{
		{date(0, 1, 1), "invalid value for Date.year: 0 is outside the range 1..=9999"},
		{date(10000, 1, 1), "invalid value for Date.year: 10000 is outside the range 1..=9999"},
		{date(2024, 0, 1), "invalid value for Date.month: 0 is outside the range 1..=12"},
		{date(2024, 13, 1), "invalid value for Date.month: 13 is outside the range 1..=12"},
		{date(2024, 4096, 1), "invalid value for Date.month: 4096 is outside the range 1..=12"},
		{date(2024, 1, 0), "invalid value for Date.day: 0 is outside the range 1..=31"},
		{date(2026, 2, 29), "invalid value for Date.day: 29 is outside the range 1..=28"},
		{date(1900, 2, 29), "invalid value for Date.day: 29 is outside the range 1..=28"},
		{date(2024, 4, 31), "invalid value for Date.day: 31 is outside the range 1..=30"},
		{dt(24, 0, 0, 0), "invalid value for DateTime.hour: 24 is outside the range 0..=23"},
		{dt(0, 60, 0, 0), "invalid value for DateTime.minute: 60 is outside the range 0..=59"},
		{dt(0, 0, 60, 0), "invalid value for DateTime.second: 60 is outside the range 0..=59"},
		{dt(0, 0, 0, 1000000), "invalid value for DateTime.microsecond: 1000000 exceeds maximum 999999"},
		{tm(24, 0, 0, 0, 0), "invalid value for Time.hour: 24 is outside the range 0..=23"},
		{tm(0, 60, 0, 0, 0), "invalid value for Time.minute: 60 is outside the range 0..=59"},
		{tm(0, 0, 60, 0, 0), "invalid value for Time.second: 60 is outside the range 0..=59"},
		{tm(0, 0, 0, 1000000, 0), "invalid value for Time.microsecond: 1000000 exceeds maximum 999999"},
		{tm(0, 0, 0, 0, 2), "invalid value for Time.fold: 2 is outside the range 0..=1"},
		{pb(nil).msg(20, pb(nil).varint(2, neg(-1))), "invalid value for TimeDelta.seconds: -1 is outside the normalized range 0..86400"},
		{pb(nil).msg(20, pb(nil).varint(2, 86400)), "invalid value for TimeDelta.seconds: 86400 is outside the normalized range 0..86400"},
		{pb(nil).msg(20, pb(nil).varint(3, neg(-1))), "invalid value for TimeDelta.microseconds: -1 is outside the normalized range 0..1000000"},
		{pb(nil).msg(20, pb(nil).varint(3, 1000000)), "invalid value for TimeDelta.microseconds: 1000000 is outside the normalized range 0..1000000"},
		{pb(nil).msg(19, pb(nil).varint(1, 2020).varint(2, 1).varint(3, 1).varint(8, 86400)), "invalid value for DateTime.offset_seconds: 86400 is outside the range -86399..=86399"},
		{pb(nil).msg(19, pb(nil).varint(1, 2020).varint(2, 1).varint(3, 1).varint(8, neg(-86400))), "invalid value for DateTime.offset_seconds: -86400 is outside the range -86399..=86399"},
		{pb(nil).msg(18, pb(nil).varint(5, 86400)), "invalid value for Time.offset_seconds: 86400 is outside the range -86399..=86399"},
		{pb(nil).msg(18, pb(nil).varint(5, neg(-86400))), "invalid value for Time.offset_seconds: -86400 is outside the range -86399..=86399"},
		{pb(nil).msg(21, pb(nil).varint(1, 86400)), "invalid value for TimeZone.offset_seconds: 86400 is outside the range -86399..=86399"},
	}
	for _, c := range cases {
		_, err := DecodeArena(node(c.n), codec.Limits{})
		wantErr(t, err, prefix+c.want)
	}
	// The extremes are accepted.
	ok := []pb{date(1, 1, 1), date(9999, 12, 31), date(2000, 2, 29), dt(23, 59, 59, 999999), tm(23, 59, 59, 999999, 1),
		pb(nil).msg(20, pb(nil).varint(1, neg(math.MinInt32)).varint(2, 86399).varint(3, 999999)),
		pb(nil).msg(21, pb(nil).varint(1, neg(-86399)))}
	for _, n := range ok {
		if _, err := DecodeArena(node(n), codec.Limits{}); err != nil {
			t.Errorf("% x: %v", []byte(n), err)
		}
	}
}

func TestInvalidArenasAreRejected(t *testing.T) {
	_, err := DecodeEvent(completeFrame(0, node(nList(0))), codec.Limits{})
	wantErr(t, err, "invalid value for Arena: value node 0 references node 0, which is not below it")
	_, err = DecodeEvent(completeFrame(1, arenaOf(noneNode, node(nList(7)))), codec.Limits{})
	wantErr(t, err, "invalid value for Arena: value node 1 references node 7, which is not below it")
	_, err = DecodeEvent(completeFrame(0, nil), codec.Limits{})
	wantErr(t, err, "invalid value for Arena: value root 0 is out of range for an arena of 0 nodes")
	_, err = DecodeEvent(pb(nil).msg(6, pb(nil).varint(1, 0)), codec.Limits{})
	wantErr(t, err, "missing required field Complete.values")
	// A dict pair and class attrs are checked too.
	_, err = DecodeArena(arenaOf(noneNode, node(pb(nil).msg(14, pb(nil).msg(1, pb(nil).varint(2, 3))))), codec.Limits{})
	wantErr(t, err, "invalid value for Arena: value node 1 references node 3, which is not below it")
	var de *codec.DecodeError
	if !errors.As(err, &de) || !de.Structural || !errors.Is(err, codec.ErrMalformed) {
		t.Fatalf("%#v", err)
	}
}

func TestConversionChecks(t *testing.T) {
	excMsg := func(typ string, frames ...pb) pb {
		m := pb(nil).str(1, typ)
		for _, f := range frames {
			m = m.msg(3, f)
		}
		return m
	}
	goodFrame := pb(nil).msg(2, nil).msg(3, nil)
	errEvent := func(exc pb) []byte { return pb(nil).msg(7, pb(nil).msg(1, exc)) }
	ext := func(arm pb) pb { return arm }
	resumeCall := func(result pb, arena pb) []byte {
		rc := pb(nil).varint(1, 1).msg(2, result)
		if arena != nil {
			rc = rc.msg(3, arena)
		}
		return pb(nil).msg(4, rc)
	}
	futures := func(results ...pb) []byte {
		var m pb
		for _, r := range results {
			m = m.msg(1, r)
		}
		return pb(nil).msg(6, m)
	}
	osCall := func(arm pb, arena pb) []byte {
		m := pb(nil).varint(1, 9)
		m = append(m, arm...)
		if arena != nil {
			m = m.msg(26, arena)
		}
		return pb(nil).msg(3, m)
	}
	events := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"exc_type", errEvent(excMsg("Bogus")), `unknown exception type "Bogus"`},
		{"frame_start", errEvent(excMsg("ValueError", goodFrame, pb(nil).msg(3, nil))), "missing required field StackFrame.start"},
		{"frame_end", errEvent(excMsg("ValueError", pb(nil).msg(2, nil))), "missing required field StackFrame.end"},
		{"frame_columns", errEvent(excMsg("ValueError", pb(nil).msg(2, pb(nil).varint(1, 1).varint(2, 5)).msg(3, pb(nil).varint(1, 1).varint(2, 1)).str(5, "foo()"))),
			"invalid value for StackFrame.end.column: 1 is before start column 5"},
		{"frame_beyond_preview", errEvent(excMsg("ValueError", pb(nil).msg(2, pb(nil).varint(1, 1).varint(2, 1)).msg(3, pb(nil).varint(1, 1).varint(2, math.MaxUint32)).str(5, "foo()"))),
			"invalid value for StackFrame.end.column: 4294967295 is beyond the 5-character preview line"},
		{"os_call_missing", osCall(nil, nil), "missing required field OsCall.call"},
		{"open_mode", osCall(pb(nil).msg(18, pb(nil).str(1, "/f").str(2, "q")), nil), `invalid file mode "q"`},
		{"getenv_no_arena", osCall(pb(nil).msg(21, pb(nil).str(1, "HOME")), nil), "missing required field OsCall.values"},
		{"getenv_root", osCall(pb(nil).msg(21, pb(nil).str(1, "HOME").varint(2, 1)), noneNode), "invalid value for Arena: value root 1 is out of range for an arena of 1 nodes"},
		{"object_id", pb(nil).msg(2, pb(nil).str(1, "f").msg(5, uuidMsgOf([]byte{1, 2, 3, 4, 5}))), "invalid value for FunctionCall.object_id: uuid must be 16 bytes, got 5"},
		{"lookup_object_id", pb(nil).msg(4, pb(nil).str(1, "x").msg(2, nil)), "invalid value for NameLookup.object_id: uuid must be 16 bytes, got 0"},
		{"args_no_arena", pb(nil).msg(2, pb(nil).packed(2, 0)), "missing required field FunctionCall.values"},
		{"kwargs_root", pb(nil).msg(2, pb(nil).msg(3, pb(nil).varint(2, 1)).msg(7, noneNode)), "invalid value for Arena: value root 1 is out of range for an arena of 1 nodes"},
	}
	for _, c := range events {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeEvent(c.frame, codec.Limits{})
			wantErr(t, err, c.want)
			var de *codec.DecodeError
			if errors.As(err, &de); !de.Structural {
				t.Fatal("not structural")
			}
		})
	}
	requests := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"ext_kind", resumeCall(nil, nil), "missing required field ExtFunctionResult.kind"},
		{"return_no_arena", resumeCall(ext(pb(nil).varint(1, 0)), nil), "missing required field values"},
		{"return_root", resumeCall(ext(pb(nil).varint(1, 1)), noneNode), "invalid value for Arena: value root 1 is out of range for an arena of 1 nodes"},
		{"error_exc", resumeCall(ext(pb(nil).msg(2, excMsg("Nope"))), nil), `unknown exception type "Nope"`},
		{"lookup_kind", pb(nil).msg(5, pb(nil).msg(1, noneNode)), "missing required field ResumeNameLookup.kind"},
		{"lookup_no_arena", pb(nil).msg(5, pb(nil).varint(2, 0)), "missing required field ResumeNameLookup.values"},
		{"lookup_root", pb(nil).msg(5, pb(nil).msg(1, noneNode).varint(2, 1)), "invalid value for Arena: value root 1 is out of range for an arena of 1 nodes"},
		{"lookup_error", pb(nil).msg(5, pb(nil).msg(4, excMsg("Nope"))), `unknown exception type "Nope"`},
		{"future_result", futures(pb(nil).varint(1, 3)), "missing required field FutureResult.result"},
		{"future_not_handled", futures(pb(nil).varint(1, 3).msg(2, pb(nil).msg(5, nil))), "invalid value for ExtFunctionResult.kind: NotHandled is only valid answering a suspended OS call"},
		{"future_no_arena", futures(pb(nil).msg(2, pb(nil).varint(1, 0))), "missing required field values"},
		{"future_root", pb(nil).msg(6, pb(nil).msg(1, pb(nil).msg(2, pb(nil).varint(1, 2))).msg(2, noneNode)), "invalid value for Arena: value root 2 is out of range for an arena of 1 nodes"},
		{"feed_no_arena", pb(nil).msg(3, pb(nil).msg(2, pb(nil).str(1, "x"))), "missing required field Feed.values"},
		{"abort_exc", pb(nil).msg(11, pb(nil).msg(1, excMsg(""))), `unknown exception type ""`},
	}
	for _, c := range requests {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRequest(c.frame, codec.Limits{})
			wantErr(t, err, c.want)
		})
	}

	// Accepted shapes: not_handled answering a call (the session decides),
	// a Feed without inputs and without arena, AbortFeed without exception.
	for _, f := range [][]byte{
		resumeCall(ext(pb(nil).msg(5, nil)), nil),
		pb(nil).msg(3, pb(nil).str(1, "1 + 1")),
		pb(nil).msg(11, nil),
		pb(nil).msg(6, nil),
		resumeCall(ext(pb(nil).varint(3, 1)), nil),
	} {
		if _, err := DecodeRequest(f, codec.Limits{}); err != nil {
			t.Errorf("% x: %v", f, err)
		}
	}

	// Bogus exception data is dropped, not trusted.
	e, err := DecodeEvent(errEvent(excMsg("UnicodeDecodeError").msg(4, pb(nil).msg(1, pb(nil).str(1, "utf-8").bytes(2, []byte{1}).varint(4, 1).varint(5, 1)))), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if ex := e.Body.(*message.Error).Exception; ex.Data != nil || ex.Type != "UnicodeDecodeError" {
		t.Fatalf("%+v", ex)
	}
}

func TestDisplacedPayloadsAreNotValidated(t *testing.T) {
	// An Error event whose exception is bogus, displaced by a Complete.
	f := pb(nil).msg(7, pb(nil).msg(1, pb(nil).str(1, "Bogus"))).msg(6, pb(nil).msg(2, noneNode))
	e, err := DecodeEvent(f, codec.Limits{})
	if err != nil || e.Body.EventKind() != message.KindComplete {
		t.Fatal(e, err)
	}
	// An ExtFunctionResult error arm with a missing frame start, displaced
	// by a future arm.
	res := pb(nil).msg(2, pb(nil).str(1, "ValueError").msg(3, nil)).varint(3, 5)
	r, err := DecodeRequest(pb(nil).msg(4, pb(nil).varint(1, 5).msg(2, res)), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Body.(*message.ResumeCall).Result; got.Kind != message.ResultFuture || got.Future != 5 || got.Error != nil {
		t.Fatalf("%+v", got)
	}
	// A bad object_id on a FunctionCall displaced by a NameLookup.
	f = pb(nil).msg(2, pb(nil).msg(5, uuidMsgOf([]byte{1}))).msg(4, pb(nil).str(1, "x"))
	if _, err := DecodeEvent(f, codec.Limits{}); err != nil {
		t.Fatal(err)
	}
	// An exception merged from two messages is checked once merged: the
	// first names an unknown type, the second fixes it.
	f = pb(nil).msg(7, pb(nil).msg(1, pb(nil).str(1, "Bogus")).msg(1, pb(nil).str(1, "KeyError")))
	e, err = DecodeEvent(f, codec.Limits{})
	if err != nil || e.Body.(*message.Error).Exception.Type != "KeyError" {
		t.Fatal(e, err)
	}
}

func TestWireErrors(t *testing.T) {
	cases := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"tag0", []byte{0x00}, prefix + "invalid tag value: 0"},
		{"tag0_nested", pb(nil).msg(3, []byte{0x00}), prefix + "ParentRequest.kind: invalid tag value: 0"},
		{"utf8", pb(nil).msg(3, []byte{0x0a, 0x01, 0xff}), prefix + "Feed.code: ParentRequest.kind: invalid string value: data is not UTF-8 encoded"},
		{"underflow", []byte{0x1a, 0xff, 0xff, 0xff, 0x7f}, prefix + "ParentRequest.kind: buffer underflow"},
		{"underflow_short", []byte{0x1a, 0x05, 0x0a}, prefix + "ParentRequest.kind: buffer underflow"},
		{"varint_truncated", []byte{0x80}, prefix + "invalid varint"},
		{"varint_overlong", pb(nil).msg(3, []byte{0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}), prefix + "Feed.skip_type_check: ParentRequest.kind: invalid varint"},
		{"varint_field_truncated", pb(nil).msg(3, []byte{0x20, 0xff}), prefix + "Feed.skip_type_check: ParentRequest.kind: invalid varint"},
		{"wire_type_known_field", pb(nil).msg(3, pb(nil).varint(1, 1)), prefix + "Feed.code: ParentRequest.kind: invalid wire type: Varint (expected LengthDelimited)"},
		{"arm_end_group", []byte{0x0c}, prefix + "ParentRequest.kind: invalid wire type: EndGroup (expected LengthDelimited)"},
		{"wire_type", pb(nil).varint(3, 1), prefix + "ParentRequest.kind: invalid wire type: Varint (expected LengthDelimited)"},
		{"wire_type_value", []byte{0x0e}, prefix + "invalid wire type value: 6"},
		{"key_too_big", []byte{0x80, 0x80, 0x80, 0x80, 0x10}, prefix + "invalid key value: 4294967296"},
		{"end_group", []byte{0xac, 0x01}, prefix + "unexpected end group tag"},
		{"group_mismatch", []byte{0xab, 0x01, 0xb4, 0x01}, prefix + "unexpected end group tag"},
		{"group_open", []byte{0xab, 0x01}, prefix + "invalid varint"},
		{"fixed64_short", pb(nil).msg(3, pb(nil).msg(3, node(append([]byte{0x39}, 1, 2, 3)))), prefix + "MontyNode.kind: Feed.values: ParentRequest.kind: buffer underflow"},
		{"node_wire_type", pb(nil).msg(3, pb(nil).msg(3, node(pb(nil).varint(8, 1)))), prefix + "MontyNode.kind: Feed.values: ParentRequest.kind: invalid wire type: Varint (expected LengthDelimited)"},
		{"node_bad_key", pb(nil).msg(3, pb(nil).msg(3, node([]byte{0x80}))), prefix + "Feed.values: ParentRequest.kind: invalid varint"},
		{"trace_parent_utf8", []byte{0xa2, 0x01, 0x01, 0xc0}, prefix + "ParentRequest.trace_parent: invalid string value: data is not UTF-8 encoded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRequest(c.frame, codec.Limits{})
			wantErr(t, err, c.want)
			if errors.Is(err, codec.ErrBudget) || !errors.Is(err, codec.ErrMalformed) {
				t.Fatalf("error class: %v", err)
			}
		})
	}
	// Deeply nested unknown groups are bounded, not recursed into.
	deep := make([]byte, 0, 2000)
	for range 1000 {
		deep = append(deep, 0xab, 0x01) // start group 21
	}
	_, err := DecodeRequest(deep, codec.Limits{})
	wantErr(t, err, prefix+"recursion limit reached")
	// Well-formed unknown groups are skipped.
	grp := []byte{0xab, 0x01, 0x08, 0x01, 0xb3, 0x01, 0xb4, 0x01, 0xac, 0x01, 0x3a, 0x00}
	if r, err := DecodeRequest(grp, codec.Limits{}); err != nil || r.Body.RequestKind() != message.KindDump {
		t.Fatal(r, err)
	}
	// Frames above the cap are refused before decoding.
	_, err = DecodeRequest(make([]byte, 100), codec.Limits{MaxFrameLen: 99})
	wantErr(t, err, "frame of 100 bytes exceeds maximum of 99 bytes")
}

func TestUnknownFieldsAreSkipped(t *testing.T) {
	a := arenaOf(noneNode, node(nList(0)))
	withUnknown := append(append(pb(nil), a...), 0x98, 0x06, 0x07)
	g, err := DecodeArena(withUnknown, codec.Limits{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 2 || g.Nodes[1].Kind != value.KindList {
		t.Fatalf("%+v", g.Nodes)
	}
	// Unknown fields everywhere: inside the node, the envelope and the arm.
	n := append(nStr("s"), 0x98, 0x06, 0x07)
	f := pb(nil).fixed64(25, 1).msg(6, append(pb(nil).varint(1, 0).msg(2, node(n)), 0x98, 0x06, 0x07)).bytes(99, []byte("x"))
	e, err := DecodeEvent(f, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if s := completeGraph(t, e).Nodes[0].Text(); s != "s" {
		t.Fatal(s)
	}
}

func TestRepeatedNodeKindsMergeLikeTheOracle(t *testing.T) {
	// List[0] + List[1] → List[0, 1]
	n := append(nList(0), nList(1)...)
	g, err := DecodeArena(arenaOf(noneNode, noneNode, node(n)), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(g.Nodes[2].Refs(), []uint32{0, 1}); d != "" {
		t.Fatal(d)
	}
	// Date(2024, 2, 0) + Date(0, 0, 29) → 2024-02-29
	n = pb(nil).msg(17, pb(nil).varint(1, 2024).varint(2, 2)).msg(17, pb(nil).varint(3, 29))
	g, err = DecodeArena(node(n), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(g.Nodes[0].Ext(), &value.Date{Year: 2024, Month: 2, Day: 29}); d != "" {
		t.Fatal(d)
	}
	// List[u32::MAX] + Int 7 → Int 7; the discarded list is never checked.
	n = append(nList(math.MaxUint32), nInt(7)...)
	g, err = DecodeArena(node(n), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if nd := g.Nodes[0]; nd.Kind != value.KindInt || nd.Int() != 7 || nd.Refs() != nil {
		t.Fatalf("%+v", nd)
	}
	// Repeated str arms: last wins; alternating arms: the last arm wins.
	n = nil
	for range 10 {
		n = append(n, nStr("abc")...)
	}
	g, _ = DecodeArena(node(n), codec.Limits{})
	if g.Nodes[0].Text() != "abc" {
		t.Fatal(g.Nodes[0])
	}
	n = nil
	for range 10 {
		n = append(append(n, nStr("abc")...), pb(nil).str(29, "def")...)
	}
	g, _ = DecodeArena(node(n), codec.Limits{})
	if nd := g.Nodes[0]; nd.Kind != value.KindRepr || nd.Text() != "def" {
		t.Fatal(nd)
	}
	// Repeated Type.attrs concatenate, and so do whole Type bodies.
	cls := pb(nil).msg(2, uuidMsgOf(uuid16)).varint(3, 2).msg(5, pb(nil).msg(1, pb(nil).varint(2, 1)))
	n = nType(cls).msg(23, pb(nil).msg(5, pb(nil).msg(1, pb(nil).varint(1, 1))))
	g, err = DecodeArena(arenaOf(noneNode, noneNode, node(n)), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(g.Nodes[2].Ext().(*value.Type).Attrs, []value.Pair{{Key: 0, Value: 1}, {Key: 1, Value: 0}}); d != "" {
		t.Fatal(d)
	}
	// Present but empty class attrs decode as absent.
	g, err = DecodeArena(node(nType(pb(nil).msg(2, uuidMsgOf(uuid16)).varint(3, 2).msg(5, nil))), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(g.Nodes[0].Ext(), &value.Type{Origin: value.OriginSandbox}); d != "" || g.Nodes[0].Ext().(*value.Type).Attrs != nil {
		t.Fatal(d)
	}
	// A BigInt merged from two messages keeps the sign of the first.
	n = pb(nil).msg(6, pb(nil).varint(1, 1).bytes(2, []byte{9})).msg(6, pb(nil).bytes(2, []byte{0, 0, 1, 0}))
	g, _ = DecodeArena(node(n), codec.Limits{})
	if g.Nodes[0].BigInt().Int64() != -256 {
		t.Fatal(g.Nodes[0].BigInt())
	}
	// Envelope arms: a repeated Print arm concatenates its segments; a
	// different arm replaces the earlier one.
	seg := pb(nil).msg(1, pb(nil).str(2, "a"))
	e, err := DecodeEvent(pb(nil).msg(1, seg).msg(1, seg), codec.Limits{})
	if err != nil || len(e.Body.(*message.Print).Segments) != 2 {
		t.Fatal(e, err)
	}
	e, err = DecodeEvent(pb(nil).msg(6, pb(nil).msg(2, noneNode)).msg(1, seg), codec.Limits{})
	if err != nil || e.Body.EventKind() != message.KindPrint {
		t.Fatal(e, err)
	}
	r, err := DecodeRequest(pb(nil).msg(3, pb(nil).str(1, "x")).msg(9, nil), codec.Limits{})
	if err != nil || r.Body.RequestKind() != message.KindReset {
		t.Fatal(r, err)
	}
	// Repeated Arena fields concatenate nodes (the second hint is ignored).
	r, err = DecodeRequest(pb(nil).msg(3, pb(nil).msg(3, arenaOf(pb(nil).varint(1, 1), noneNode)).msg(3, arenaOf(pb(nil).varint(1, 1), noneNode)).msg(2, pb(nil).varint(2, 1))), codec.Limits{})
	if err != nil || len(r.Body.(*message.Feed).Values.Nodes) != 2 {
		t.Fatal(r, err)
	}
	// Unpacked and packed ids mix.
	n = pb(nil).msg(11, pb(nil).varint(1, 1).packed(1, 0, 1).varint(1, 0))
	g, err = DecodeArena(arenaOf(noneNode, noneNode, node(n)), codec.Limits{})
	if err != nil || diff(g.Nodes[2].Refs(), []uint32{1, 0, 1, 0}) != "" {
		t.Fatal(g, err)
	}
}

func TestNodeCountHintIsCappedByMessageSize(t *testing.T) {
	a := append(pb(nil).varint(1, math.MaxUint32), arenaOf(noneNode, noneNode)...)
	g, b, err := decodeArena(a, codec.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 2 {
		t.Fatalf("%d nodes", len(g.Nodes))
	}
	// 8 bytes follow the hint: at most 2 nodes are reserved.
	if cap(g.Nodes) != 2 || b.Charged() > 2*nodeBytes+64 {
		t.Fatalf("cap %d, charged %d", cap(g.Nodes), b.Charged())
	}
	// Without a hint, 9 nodes still decode.
	var nodes []pb
	for range 9 {
		nodes = append(nodes, noneNode)
	}
	g, err = DecodeArena(append(pb(nil).varint(1, 0), arenaOf(nodes...)...), codec.Limits{})
	if err != nil || len(g.Nodes) != 9 {
		t.Fatal(g, err)
	}
}

func TestOversizedArenaIsRejectedBeforeItIsBuilt(t *testing.T) {
	n := 4096/int(nodeBytes) + 1
	var nodes []pb
	for range n {
		nodes = append(nodes, noneNode)
	}
	a := append(pb(nil).varint(1, uint64(n)), arenaOf(nodes...)...)
	_, err := DecodeArena(a, lim(4096))
	wantErr(t, err, prefix+"frame exceeds decode memory budget")
	if !errors.Is(err, codec.ErrBudget) {
		t.Fatal("not a budget error")
	}
	_, err = DecodeEvent(completeFrame(0, a), lim(4096))
	wantErr(t, err, prefix+"Complete.values: ChildEvent.kind: frame exceeds decode memory budget")
}

// fillArena returns an arena payload of n None nodes with a hint of n+extra.
func fillArena(n, extra int, last pb) pb {
	nodes := []pb{}
	for range n {
		nodes = append(nodes, noneNode)
	}
	if last != nil {
		nodes = append(nodes, node(last))
	}
	return append(pb(nil).varint(1, uint64(n+extra)), arenaOf(nodes...)...)
}

// nearlyFull returns the charge of an event frame, so that a test can give
// it a budget two node slots above that.
func chargeOfEvent(t *testing.T, f []byte) int64 {
	t.Helper()
	_, b, err := decodeEvent(f, codec.Limits{})
	if b == 0 {
		t.Fatal(err)
	}
	return b.Charged()
}

// idSlack is the budget headroom of the id-charging tests: room for 8 ids
// at the contract's 16 bytes a slot, not for 16.
const idSlack = 144

func TestArgumentIDsAreCharged(t *testing.T) {
	arena := fillArena(40, 0, nil)
	call := func(extra pb) []byte { return pb(nil).msg(2, append(pb(nil).msg(7, arena), extra...)) }
	budget := chargeOfEvent(t, call(nil)) + idSlack
	packed := func(n int) pb { return pb(nil).packed(2, make([]uint64, n)...) }
	unpacked := func(n int) pb {
		var m pb
		for range n {
			m = append(m, 0x10, 0x00)
		}
		return m
	}
	kwargs := func(n int) pb {
		var m pb
		for range n {
			m = append(m, 0x1a, 0x00)
		}
		return m
	}
	for _, c := range []struct {
		name string
		m    pb
		ok   bool
	}{
		{"packed8", packed(8), true}, {"packed64", packed(64), false},
		{"unpacked3", unpacked(3), true}, {"unpacked64", unpacked(64), false},
		{"kwargs4", kwargs(4), true}, {"kwargs64", kwargs(64), false},
	} {
		_, err := DecodeEvent(call(c.m), lim(budget))
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !c.ok {
			if !errors.Is(err, codec.ErrBudget) || !strings.HasPrefix(err.Error(), prefix+"FunctionCall.") {
				t.Errorf("%s: %v", c.name, err)
			}
		}
	}
}

func TestContainerIDsAreCharged(t *testing.T) {
	frame := func(last pb) []byte { return completeFrame(0, fillArena(40, 1, last)) }
	budget := chargeOfEvent(t, frame(nList())) + idSlack
	for _, c := range []struct {
		n  int
		ok bool
	}{{8, true}, {16, false}, {64, false}} {
		_, err := DecodeEvent(frame(nList(make([]uint64, c.n)...)), lim(budget))
		if c.ok {
			if err != nil {
				t.Errorf("%d ids: %v", c.n, err)
			}
			continue
		}
		wantErr(t, err, prefix+"MontyNode.kind: Complete.values: ChildEvent.kind: frame exceeds decode memory budget")
	}
	// Named tuple field names are charged as string slots.
	nt := func(names int) pb {
		m := pb(nil).str(1, "T")
		for range names {
			m = m.str(2, "")
		}
		return pb(nil).msg(13, m)
	}
	budget = chargeOfEvent(t, frame(nt(0))) + idSlack
	if _, err := DecodeEvent(frame(nt(4)), lim(budget)); err != nil {
		t.Fatal(err)
	}
	_, err := DecodeEvent(frame(nt(8)), lim(budget))
	wantErr(t, err, prefix+"MontyNode.kind: Complete.values: ChildEvent.kind: frame exceeds decode memory budget")
}

func TestCorruptFramesFailCleanly(t *testing.T) {
	var g value.Graph
	g.Add(value.Str("item"))
	g.Add(value.List(0))
	full, err := AppendArena(nil, &g, 1)
	if err != nil {
		t.Fatal(err)
	}
	for cut := range len(full) {
		got, err := DecodeArena(full[:cut], codec.Limits{})
		if err != nil {
			continue
		}
		if len(got.Nodes) >= len(g.Nodes) {
			t.Fatalf("cut %d decoded %d nodes", cut, len(got.Nodes))
		}
		if d := diff(got.Nodes, g.Nodes[:len(got.Nodes)]); d != "" {
			t.Fatalf("cut %d: not a prefix: %s", cut, d)
		}
	}
	// Every cut and every single-byte corruption of every corpus frame fails
	// or decodes, but never panics.
	for _, e := range eventCorpus() {
		b := mustEncodeEvent(t, e)
		for i := range len(b) {
			DecodeEvent(b[:i], codec.Limits{})
			c := append([]byte(nil), b...)
			c[i] ^= 0xff
			DecodeEvent(c, codec.Limits{})
		}
	}
	for _, r := range requestCorpus() {
		b := mustEncodeRequest(t, r)
		for i := range len(b) {
			DecodeRequest(b[:i], codec.Limits{})
			c := append([]byte(nil), b...)
			c[i] ^= 0x80
			DecodeRequest(c, codec.Limits{})
		}
	}
}

package peek

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// msg appends a length-delimited field.
func msg(b []byte, num protowire.Number, payload []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, payload)
}

// varint appends a varint field.
func varint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// tracedRequest builds a ParentRequest with the given arm and a
// trace_parent (field 20) before or after it.
func tracedRequest(arm protowire.Number, payload []byte, traceFirst bool) []byte {
	var b []byte
	if traceFirst {
		b = msg(b, 20, []byte("00-trace-parent-01"))
	}
	b = msg(b, arm, payload)
	if !traceFirst {
		b = msg(b, 20, []byte("00-trace-parent-01"))
	}
	return b
}

// eventFields appends the ChildEvent message-level fields 20..23.
func eventFields(b []byte) []byte {
	b = varint(b, 20, 123456)
	b = varint(b, 21, 5000000)
	b = varint(b, 22, 1000)
	return msg(b, 23, []byte("main.py"))
}

func TestRequestEveryKind(t *testing.T) {
	kinds := []struct {
		k    RequestKind
		num  int
		name string
	}{
		{RequestConfigure, 1, "Configure"},
		{RequestInstallDependencies, 2, "InstallDependencies"},
		{RequestFeed, 3, "Feed"},
		{RequestResumeCall, 4, "ResumeCall"},
		{RequestResumeNameLookup, 5, "ResumeNameLookup"},
		{RequestResumeFutures, 6, "ResumeFutures"},
		{RequestDump, 7, "Dump"},
		{RequestLoad, 8, "Load"},
		{RequestReset, 9, "Reset"},
		{RequestShutdown, 10, "Shutdown"},
		{RequestAbortFeed, 11, "AbortFeed"},
	}
	seen := map[RequestKind]bool{}
	for _, c := range kinds {
		if int(c.k) != c.num || c.k.String() != c.name || !c.k.Known() {
			t.Errorf("kind %d: %v %q", c.num, c.k, c.k.String())
		}
		if seen[c.k] || c.num < 1 || c.num > MaxArmField {
			t.Errorf("kind %d duplicated or out of range", c.num)
		}
		seen[c.k] = true
		for _, payload := range [][]byte{nil, {0x0a, 0x01, 'x'}} {
			for _, first := range []bool{true, false} {
				f := tracedRequest(protowire.Number(c.num), payload, first)
				if got, ok := Request(f); !ok || got != c.k {
					t.Errorf("%s (trace first=%v): got %v, %v", c.name, first, got, ok)
				}
			}
		}
	}
	for _, k := range []RequestKind{0, 12, 19, 255} {
		if k.Known() {
			t.Errorf("%d known", k)
		}
	}
	if s := RequestKind(12).String(); s != "RequestKind(12)" {
		t.Errorf("String = %q", s)
	}
}

func TestEventEveryKind(t *testing.T) {
	kinds := []struct {
		k    EventKind
		num  int
		name string
	}{
		{EventPrint, 1, "Print"},
		{EventFunctionCall, 2, "FunctionCall"},
		{EventOsCall, 3, "OsCall"},
		{EventNameLookup, 4, "NameLookup"},
		{EventResolveFutures, 5, "ResolveFutures"},
		{EventComplete, 6, "Complete"},
		{EventError, 7, "Error"},
		{EventTypingError, 8, "TypingError"},
		{EventDumpResult, 9, "DumpResult"},
		{EventOk, 10, "Ok"},
		{EventFatalError, 11, "FatalError"},
		{EventShutdownDump, 12, "ShutdownDump"},
	}
	seen := map[EventKind]bool{}
	for _, c := range kinds {
		if int(c.k) != c.num || c.k.String() != c.name || !c.k.Known() {
			t.Errorf("kind %d: %v %q", c.num, c.k, c.k.String())
		}
		if seen[c.k] || c.num < 1 || c.num > MaxArmField {
			t.Errorf("kind %d duplicated or out of range", c.num)
		}
		seen[c.k] = true
		if got, want := c.k.EndsTurn(), c.k != EventPrint; got != want {
			t.Errorf("%s EndsTurn = %v", c.name, got)
		}
		arm := msg(nil, protowire.Number(c.num), []byte{0x0a, 0x00})
		frames := map[string][]byte{
			"fields after":  eventFields(append([]byte(nil), arm...)),
			"fields before": append(eventFields(nil), arm...),
			"around":        append(append(varint(nil, 20, 1), arm...), msg(nil, 23, []byte("s"))...),
		}
		for name, f := range frames {
			if got, ok := Event(f); !ok || got != c.k {
				t.Errorf("%s (%s): got %v, %v", c.name, name, got, ok)
			}
		}
	}
	if s := EventKind(13).String(); s != "EventKind(13)" {
		t.Errorf("String = %q", s)
	}
}

func TestLastArmWins(t *testing.T) {
	ev := msg(msg(nil, 6, []byte{0x0a, 0}), 1, []byte{0x0a, 0x02, 0x10, 0x01})
	if k, ok := Event(ev); !ok || k != EventPrint {
		t.Errorf("Complete then Print: %v %v", k, ok)
	}
	req := msg(msg(nil, 3, []byte{0x0a, 0x01, 'x'}), 9, nil)
	if k, ok := Request(req); !ok || k != RequestReset {
		t.Errorf("Feed then Reset: %v %v", k, ok)
	}
	// A later unknown in-range arm makes the frame opaque.
	req = msg(msg(nil, 3, nil), 15, nil)
	if k, ok := Request(req); ok {
		t.Errorf("Feed then arm 15: %v", k)
	}
	ev = msg(msg(nil, 6, nil), 13, nil)
	if k, ok := Event(ev); ok {
		t.Errorf("Complete then arm 13: %v", k)
	}
}

func TestNonMessageArm(t *testing.T) {
	for _, f := range [][]byte{
		varint(nil, 7, 1),
		msg(varint(nil, 7, 1), 7, nil), // varint arm before a good arm
		msg(protowire.AppendFixed32(protowire.AppendTag(nil, 2, protowire.Fixed32Type), 9), 10, nil),
		protowire.AppendFixed64(protowire.AppendTag(nil, 19, protowire.Fixed64Type), 9),
		protowire.AppendTag(protowire.AppendTag(nil, 5, protowire.StartGroupType), 5, protowire.EndGroupType),
	} {
		if k, ok := Request(f); ok {
			t.Errorf("Request(%x) = %v", f, k)
		}
		if k, ok := Event(f); ok {
			t.Errorf("Event(%x) = %v", f, k)
		}
	}
}

func TestUnknownLeadingFields(t *testing.T) {
	f := msg(varint(nil, 21, 42), 7, nil)
	if k, ok := Request(f); !ok || k != RequestDump {
		t.Errorf("varint 21 then Dump: %v %v", k, ok)
	}
	// Other wire types of unknown fields are skipped too, including a
	// group.
	var g []byte
	g = protowire.AppendTag(g, 30, protowire.StartGroupType)
	g = varint(g, 1, 5) // inside a group a low field number is not an arm
	g = protowire.AppendTag(g, 30, protowire.EndGroupType)
	g = protowire.AppendFixed32(protowire.AppendTag(g, 40, protowire.Fixed32Type), 1)
	g = protowire.AppendFixed64(protowire.AppendTag(g, 1000, protowire.Fixed64Type), 1)
	g = msg(g, 50, []byte{0xff, 0xff})
	g = msg(g, 10, nil)
	if k, ok := Request(g); !ok || k != RequestShutdown {
		t.Errorf("mixed unknown then Shutdown: %v %v", k, ok)
	}
}

func TestArmBehindTraceParent(t *testing.T) {
	for _, c := range []struct {
		num  protowire.Number
		want RequestKind
	}{{7, RequestDump}, {10, RequestShutdown}} {
		f := msg(msg(nil, 20, []byte("tp")), c.num, nil)
		if k, ok := Request(f); !ok || k != c.want {
			t.Errorf("trace_parent then %v: %v %v", c.want, k, ok)
		}
	}
}

func TestOpaque(t *testing.T) {
	cases := map[string][]byte{
		"empty":              {},
		"nil":                nil,
		"ff":                 {0xff},
		"field 21 bytes":     msg(nil, 21, []byte{0x0a, 0x00}),
		"trace only":         msg(nil, 20, []byte("tp")),
		"event fields only":  eventFields(nil),
		"arm 64 declared":    append(protowire.AppendTag(nil, 6, protowire.BytesType), 64),
		"arm short":          append(protowire.AppendTag(nil, 6, protowire.BytesType), 64, 1, 2, 3),
		"field zero":         {0x02, 0x00},
		"truncated key":      {0x80},
		"wire type 6":        {0x0e},
		"wire type 7":        {0x0f},
		"lone end group":     protowire.AppendTag(nil, 21, protowire.EndGroupType),
		"unterminated group": protowire.AppendTag(msg(nil, 7, nil), 21, protowire.StartGroupType),
		"good then garbage":  append(msg(nil, 7, nil), 0xff),
		"truncated varint":   append(protowire.AppendTag(msg(nil, 7, nil), 21, protowire.VarintType), 0x80),
		"truncated fixed32":  append(protowire.AppendTag(msg(nil, 7, nil), 21, protowire.Fixed32Type), 1, 2),
	}
	// A key whose value exceeds 32 bits (field number >= 2^29) is invalid.
	big := protowire.AppendVarint(nil, uint64(1<<29)<<3|uint64(protowire.BytesType))
	cases["field 2^29"] = append(msg(nil, 7, nil), protowire.AppendBytes(big, nil)...)
	// An overlong (11-byte) key.
	cases["overlong key"] = append(msg(nil, 7, nil), 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01)
	// Varint overflowing 64 bits in an unknown field.
	cases["varint overflow"] = append(protowire.AppendTag(msg(nil, 7, nil), 21, protowire.VarintType), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)
	for name, f := range cases {
		if k, ok := Request(f); ok || k != 0 {
			t.Errorf("Request(%s) = %v, %v", name, k, ok)
		}
		if k, ok := Event(f); ok || k != 0 {
			t.Errorf("Event(%s) = %v, %v", name, k, ok)
		}
	}
}

func TestUnknownInRangeArm(t *testing.T) {
	// Arms 12..19 of a request and 13..19 of an event are reserved but
	// unnamed: the frame is opaque rather than misclassified.
	for n := protowire.Number(12); n <= MaxArmField; n++ {
		if k, ok := Request(msg(nil, n, nil)); ok {
			t.Errorf("request arm %d: %v", n, k)
		}
	}
	for n := protowire.Number(13); n <= MaxArmField; n++ {
		if k, ok := Event(msg(nil, n, nil)); ok {
			t.Errorf("event arm %d: %v", n, k)
		}
	}
	if k, ok := Event(msg(nil, 12, nil)); !ok || k != EventShutdownDump {
		t.Errorf("event 12: %v %v", k, ok)
	}
}

func TestDoesNotModifyInput(t *testing.T) {
	f := eventFields(msg(nil, 6, []byte{1, 2, 3}))
	orig := append([]byte(nil), f...)
	Event(f)
	Request(f)
	if string(f) != string(orig) {
		t.Fatal("input modified")
	}
}

func FuzzPeek(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0xff})
	f.Add(tracedRequest(3, []byte{0x0a, 0x01, 'x'}, true))
	f.Add(eventFields(msg(nil, 1, nil)))
	f.Add(msg(msg(nil, 6, nil), 1, nil))
	f.Add(varint(nil, 7, 1))
	f.Add(append(protowire.AppendTag(nil, 6, protowire.BytesType), 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		rk, rok := Request(b)
		ek, eok := Event(b)
		if rok != rk.Known() || (!rok && rk != 0) {
			t.Fatalf("Request = %v, %v", rk, rok)
		}
		if eok != ek.Known() || (!eok && ek != 0) {
			t.Fatalf("Event = %v, %v", ek, eok)
		}
		// Both classifiers walk the same keys: a request arm 1..11 is an
		// event arm too, with the same number.
		if rok && (!eok || uint8(rk) != uint8(ek)) {
			t.Fatalf("Request %v but Event %v, %v", rk, ek, eok)
		}
		// A classified frame is well-formed, so appending another arm makes
		// that arm the winner, and appending message-level fields changes
		// nothing.
		if eok {
			if k, ok := Event(msg(append([]byte(nil), b...), 10, nil)); !ok || k != EventOk {
				t.Fatalf("appended Ok arm lost to %v, %v", k, ok)
			}
			if k, ok := Event(eventFields(append([]byte(nil), b...))); !ok || k != ek {
				t.Fatalf("appending message-level fields changed %v to %v, %v", ek, k, ok)
			}
		}
	})
}

func TestDecodedRequest(t *testing.T) {
	// An unknown field at a reserved arm number, of any wire type, is
	// skipped as the decoders skip it; Request calls the frame opaque.
	f := varint(msg(nil, 11, nil), 12, 1)
	if k, ok := Request(f); ok {
		t.Errorf("Request: %v", k)
	}
	for _, c := range []struct {
		frame []byte
		want  RequestKind
	}{
		{f, RequestAbortFeed},
		{msg(msg(nil, 3, nil), 15, nil), RequestFeed},
		{msg(varint(nil, 7, 1), 10, nil), RequestShutdown},
		{msg(msg(nil, 20, []byte("tp")), 4, nil), RequestResumeCall},
		{varint(nil, 12, 1), 0},
		{nil, 0},
	} {
		if k := DecodedRequest(c.frame); k != c.want {
			t.Errorf("DecodedRequest(%x) = %v, want %v", c.frame, k, c.want)
		}
	}
}

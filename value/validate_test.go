package value

import (
	"strings"
	"testing"
)

func TestQuoteMatchesRustDebug(t *testing.T) {
	// Texts observed from the released worker's diagnostics.
	for in, want := range map[string]string{
		"HostError": `"HostError"`,
		"\x00":      `"\0"`,
		"\x01":      `"\u{1}"`,
		"\x7f":      `"\u{7f}"`,
		"\u200b":    `"\u{200b}"`,
		"é":         `"é"`,
		`a"b\c`:     `"a\"b\\c"`,
		"x\ny\tz":   `"x\ny\tz"`,
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestLongNamesAreNotFormatted(t *testing.T) {
	name := strings.Repeat("x", 1<<20)
	err := UnknownExceptionType(name)
	if err.Error() != "invalid wire value (error message exceeds 512 bytes)" {
		t.Fatalf("got %.80q", err.Error())
	}
	bf := BuiltinFunction(name)
	err = checkLeaf(&bf)
	if err == nil || len(err.Error()) > MaxDiagnosticLen {
		t.Fatalf("builtin: %v", err)
	}
}

func TestLeafChecks(t *testing.T) {
	cases := []struct {
		n    Node
		want string
	}{
		{DateNode(Date{2026, 2, 29}), "invalid value for Date.day: 29 is outside the range 1..=28"},
		{DateNode(Date{2024, 2, 29}), ""},
		{DateNode(Date{2024, 13, 1}), "invalid value for Date.month: 13 is outside the range 1..=12"},
		{DateNode(Date{0, 1, 1}), "invalid value for Date.year: 0 is outside the range 1..=9999"},
		{TimeNode(Time{Hour: 24}), "invalid value for Time.hour: 24 is outside the range 0..=23"},
		{TimeNode(Time{Microsecond: 1000000}), "invalid value for Time.microsecond: 1000000 exceeds maximum 999999"},
		{TimeNode(Time{Fold: 2}), "invalid value for Time.fold: 2 is outside the range 0..=1"},
		{TimeNode(Time{TZName: Ptr("X")}), "invalid value for Time.timezone_name: timezone_name requires offset_seconds"},
		{DateTimeNode(DateTime{Year: 2024, Month: 1, Day: 1, Offset: Ptr[int32](86400)}), "invalid value for DateTime.offset_seconds: 86400 is outside the range -86399..=86399"},
		{TimeDeltaNode(TimeDelta{Seconds: 86400}), "invalid value for TimeDelta.seconds: 86400 is outside the normalized range 0..86400"},
		{TimeZoneNode(TimeZone{Offset: -86400}), "invalid value for TimeZone.offset_seconds: -86400 is outside the range -86399..=86399"},
		{ExceptionNode(Exception{Type: "HostError"}), `unknown exception type "HostError"`},
		{ExceptionNode(Exception{Type: "ValueError"}), ""},
		{BuiltinType("nosuchtype"), `unknown type name "nosuchtype"`},
		{BuiltinFunction("nosuch"), `unknown builtin function "nosuch"`},
		{FileHandleNode(FileHandle{Path: "/f", Mode: "r+"}), `invalid file mode "r+"`},
		{TypeNode(Type{Name: "T"}), "invalid value for Type: origin must be specified"},
		{TypeNode(Type{Name: "T", Origin: OriginHost}), "invalid value for Type: a class type must carry an id"},
		{TypeNode(Type{Name: "T", Origin: 99, ID: NewUUID()}), "invalid value for Type.origin: unknown origin 99"},
	}
	for _, c := range cases {
		err := checkLeaf(&c.n)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.n.Kind, got, c.want)
		}
	}
}

func TestCheckStructure(t *testing.T) {
	var g Graph
	a := g.Add(Int(1))
	g.Add(List(a, 5))
	if err := g.CheckStructure(); err == nil || err.Error() != "invalid value for Arena: value node 1 references node 5, which is not below it" {
		t.Fatalf("forward ref: %v", err)
	}
	g.Reset()
	c := g.Add(BuiltinType("int"))
	g.Add(ClassInstanceNode(ClassInstance{Class: c, InstanceID: NewUUID()}))
	if err := g.CheckStructure(); err == nil || err.Error() != "invalid value for Arena: class instance node 1 does not point at a class type" {
		t.Fatalf("class instance: %v", err)
	}
	g.Reset()
	if err := g.CheckStructure(0); err == nil || err.Error() != "invalid value for Arena: value root 0 is out of range for an arena of 0 nodes" {
		t.Fatalf("root: %v", err)
	}
}

package value

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// ParseUUID takes the forms it documents, and on any error returns the
// zero UUID and its own error: before, 32 characters that were not all
// hex came back half decoded beside encoding/hex's error.
func TestParseUUID(t *testing.T) {
	want := UUID{0x2a, 0x4a, 0xd3, 0xf3, 0x6f, 0xa3, 0x4c, 0xc6, 0x8b, 0x0d, 0xa8, 0xc3, 0xfc, 0xe8, 0xc9, 0xbd}
	for _, s := range []string{
		"2a4ad3f3-6fa3-4cc6-8b0d-a8c3fce8c9bd",
		"2A4AD3F3-6FA3-4CC6-8B0D-A8C3FCE8C9BD",
		"2a4ad3f36fa34cc68b0da8c3fce8c9bd",
	} {
		if u, err := ParseUUID(s); err != nil || u != want {
			t.Errorf("ParseUUID(%q) = %v, %v; want %v", s, u, err, want)
		}
	}
	for _, s := range []string{
		"ab" + strings.Repeat("zz", 15),
		"2a4ad3f36fa34cc68b0da8c3fce8c9b+",
		"2a4ad3f3-6fa3-4cc6-8b0d-a8c3fce8c9b",
		"",
	} {
		u, err := ParseUUID(s)
		if err == nil || !u.IsZero() || !strings.HasPrefix(err.Error(), "value: invalid uuid") {
			t.Errorf("ParseUUID(%q) = %v, %v; want the zero UUID and a value: invalid uuid error", s, u, err)
		}
	}
}

// TestClassValueJSONRoundTrip checks that what ToAny returns for a class
// instance reads back from the JSON encoding/json writes for it: UUID and
// TypeOrigin marshal as text, and could not be unmarshaled from it
// ("cannot unmarshal string into Go struct field ... of type value.UUID").
func TestClassValueJSONRoundTrip(t *testing.T) {
	in := ObjectValue{
		Class:      ClassValue{Name: "P", ID: NewUUID(), Origin: OriginSandbox, IsDataclass: true},
		InstanceID: NewUUID(),
		Attrs:      []Attr{{Name: "x", Value: "a"}},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out ObjectValue
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("got %+v, want %+v", out, in)
	}
	for _, o := range []TypeOrigin{OriginUnspecified, OriginBuiltin, OriginSandbox, OriginHost, 7} {
		text, _ := o.MarshalText()
		var back TypeOrigin
		if err := back.UnmarshalText(text); err != nil || back != o {
			t.Errorf("origin %s: back %v, %v", text, back, err)
		}
	}
	var o TypeOrigin
	if err := o.UnmarshalText([]byte("origin(300)")); err == nil {
		t.Error("origin(300) read without an error")
	}
	var u UUID
	if err := json.Unmarshal([]byte(`"not a uuid"`), &u); err == nil || !u.IsZero() {
		t.Errorf("a bad uuid: %v, %v", u, err)
	}
}

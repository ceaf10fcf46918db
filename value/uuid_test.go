package value

import (
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

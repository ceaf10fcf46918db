package safetext

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Line breaks and tabs become spaces; every other control character, C0
// and C1, and every invalid byte sequence becomes U+FFFD; clean text is
// returned as is.
func TestClean(t *testing.T) {
	cases := [][2]string{
		{"", ""},
		{"plain é text", "plain é text"},
		{"a\nb\r\nc", "a b  c"},
		{"\x1b[31mred\x1b[0m", "\uFFFD[31mred\uFFFD[0m"},
		{"tab\there", "tab here"},
		{"bad \xff\xfe utf8", "bad \uFFFD utf8"},
		{"c1 \u0085 next line", "c1   next line"},
		{"c1 \u0090 dcs", "c1 \uFFFD dcs"},
		{"del \x7f", "del \uFFFD"},
	}
	for _, c := range cases {
		if got := Clean(c[0]); got != c[1] {
			t.Errorf("Clean(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

func TestBound(t *testing.T) {
	if got := Bound("short\n", 10); got != "short " {
		t.Errorf("Bound of a short text = %q", got)
	}
	exact := strings.Repeat("x", 10)
	if got := Bound(exact, 10); got != exact {
		t.Errorf("Bound of a text of max bytes = %q, want it whole", got)
	}
	// A cut inside a character drops the whole character.
	if got := Bound(strings.Repeat("x", 9)+"é tail", 10); got != strings.Repeat("x", 9)+"…" {
		t.Errorf("cut inside a character: %q", got)
	}
	long := "boom\n\x1b]0;title\x07" + strings.Repeat("é", 1<<20)
	got := Bound(long, MaxFatal)
	if len(got) > MaxFatal+len("…") || !utf8.ValidString(got) || strings.ContainsFunc(got, unicode.IsControl) {
		t.Fatalf("Bound of %d bytes gave %d bytes: %.40q", len(long), len(got), got)
	}
	if !strings.HasPrefix(got, "boom \uFFFD]0;title\uFFFDéé") || !strings.HasSuffix(got, "é…") {
		t.Fatalf("Bound = %.40q…%q", got, got[len(got)-8:])
	}
}

// Replacement characters are longer than the control bytes they replace:
// the cleaned text is cut again to stay within the bound.
func TestBoundAfterGrowth(t *testing.T) {
	if got, want := Bound(strings.Repeat("\x1b", 100), 10), "\uFFFD\uFFFD\uFFFD…"; got != want {
		t.Fatalf("Bound of 100 escapes = %q, want %q", got, want)
	}
}

// Prefix never splits a character.
func TestPrefix(t *testing.T) {
	s := "ab" + "é" + "cd"
	for max, want := range []string{"", "a", "ab", "ab", "abé", "abéc", "abécd", "abécd"} {
		if got := Prefix(s, max); got != want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", s, max, got, want)
		}
	}
	// The server's close reasons (120 bytes): two- and three-byte
	// characters across the cut, and a short text kept whole.
	for _, s := range []string{"worker failed: " + strings.Repeat("é", 80), strings.Repeat("€", 50), "short"} {
		got := Prefix(s, 120)
		if len(got) > 120 || !utf8.ValidString(got) || !strings.HasPrefix(s, got) || len(got) < min(len(s), 117) {
			t.Fatalf("Prefix(%q, 120) = %q", s, got)
		}
	}
}

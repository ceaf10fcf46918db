package lastline

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOf(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"one\ntwo\n\n":           "two",
		"only":                   "only",
		"a\r\nb\r\n \t":          "b",
		strings.Repeat("x", Max): strings.Repeat("x", Max),
	} {
		if got := Of(in); got != want {
			t.Errorf("Of(%q) = %q, want %q", in, got, want)
		}
	}
	// A cut inside a character drops the partial character.
	long := strings.Repeat("x", Max-1) + "é" + "tail"
	got := Of(long)
	if !utf8.ValidString(got) || got != strings.Repeat("x", Max-1)+"…" {
		t.Errorf("cut line %q", got[len(got)-8:])
	}
}

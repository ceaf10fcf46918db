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

// A worker's stderr may hold anything: the quoted line keeps no control
// character (a carriage return that redraws the line, a terminal escape)
// nor invalid UTF-8, which would reach terminals and logs through the
// error's text.
func TestOfIsClean(t *testing.T) {
	tail := "ok\nfake\rreal \x1b[2Jcleared \xff byte\tend\n"
	if got, want := Of(tail), "fake real \uFFFD[2Jcleared \uFFFD byte end"; got != want {
		t.Errorf("Of(%q) = %q, want %q", tail, got, want)
	}
}

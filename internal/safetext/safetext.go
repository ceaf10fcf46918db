// Package safetext makes free-form text from a peer (a worker's FatalError
// message, a line of its stderr, a WebSocket close reason) fit to quote in
// an error message or a log line: bounded in length, valid UTF-8, and
// without control characters, which could forge log lines (a line break)
// or drive the terminal that prints the error (an escape sequence).
package safetext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxFatal is the most bytes of a worker's FatalError text an error keeps
// (a local worker's *worker.CrashError, a remote one's
// *session.RemoteCrashError). A version refusal, the one FatalError text
// a parent reads back, is a short line.
const MaxFatal = 1 << 10

// Clean returns s with every line break (LF, CR, NEL) and tab replaced by
// a space, so that a worker's two-line panic text still reads as one line,
// and invalid UTF-8 and every other control character replaced by U+FFFD;
// s itself when it has none.
func Clean(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r == '\u0085':
			return ' '
		case unicode.IsControl(r):
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// Bound returns Clean of s, cut to at most max bytes at a character
// boundary, with "…" after a cut (so the result may be 3 bytes over max).
// A replacement character is longer than the byte it replaces, so the
// cleaned text is cut again when it grew past max.
func Bound(s string, max int) string {
	cut := len(s) > max
	s = Clean(Prefix(s, max))
	if len(s) > max {
		s, cut = Prefix(s, max), true
	}
	if cut {
		s += "…"
	}
	return s
}

// Prefix returns the longest start of s of at most max bytes that does not
// split a character.
func Prefix(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

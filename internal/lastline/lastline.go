// Package lastline picks the line of a worker's stderr tail that an error
// message quotes.
package lastline

import (
	"strings"

	"github.com/gomonty/monty/internal/safetext"
)

// Max is the most bytes of a line quoted.
const Max = 512

// Of returns the last non-empty line of s, cut to Max bytes at a
// character boundary (with "…" after a cut) and cleaned by
// safetext.Clean (a carriage return or tab becomes a space, a terminal
// escape or invalid UTF-8 U+FFFD): the worker writes what it likes to its
// stderr, and the line reaches terminals and logs through the error that
// quotes it.
func Of(s string) string {
	s = strings.TrimRight(s, "\r\n\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return safetext.Bound(s, Max)
}

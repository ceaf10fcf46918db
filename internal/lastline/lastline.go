// Package lastline picks the line of a worker's stderr tail that an error
// message quotes.
package lastline

import "strings"

// Max is the most bytes of a line quoted.
const Max = 512

// Of returns the last non-empty line of s, cut to Max bytes at a
// character boundary (with "…" after a cut).
func Of(s string) string {
	s = strings.TrimRight(s, "\r\n\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > Max {
		s = strings.ToValidUTF8(s[:Max], "") + "…"
	}
	return s
}

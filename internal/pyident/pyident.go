// Package pyident classifies the characters of Python identifiers (PEP
// 3131) as Go's Unicode tables have them, for the session's registry
// (names a host gives the sandbox) and the traceback renderer (names it
// finds in source lines).
package pyident

import "unicode"

// Start reports whether c may begin an identifier: ID_Start (letters,
// letter numbers, Other_ID_Start) and "_".
func Start(c rune) bool {
	return c == '_' || unicode.In(c, unicode.L, unicode.Nl, unicode.Other_ID_Start)
}

// Continue reports whether c may continue an identifier (ID_Continue):
// besides what may start one, the combining marks of scripts such as
// Devanagari, digits, connector punctuation like "‿" and the few
// Other_ID_Continue characters like "·".
func Continue(c rune) bool {
	return Start(c) || unicode.In(c, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue)
}

// Prefix returns the identifier at the start of s, or "". A byte that is
// not UTF-8 ends it.
func Prefix(s string) string {
	for i, c := range s {
		if i == 0 && !Start(c) || !Continue(c) {
			return s[:i]
		}
	}
	return s
}

// Valid reports whether s is one identifier (keywords included).
func Valid(s string) bool { return s != "" && Prefix(s) == s }

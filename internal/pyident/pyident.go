// Package pyident classifies the characters of Python identifiers (PEP
// 3131) as Go's Unicode tables have them, for the session's registry
// (names a host gives the sandbox) and the traceback renderer (names it
// finds in source lines), and holds the one rule for the names a host
// binds as the sandbox's globals ([Global]).
package pyident

import (
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Bound returns name as the sandbox reads and binds it: NFKC-normalized,
// as CPython's parser normalizes every identifier (PEP 3131), so that ｘ
// and x are one name and x² is x2. The worker asks the host for names in
// that form only, and binds a Feed's inputs under the names as sent.
func Bound(name string) string {
	if norm.NFKC.IsNormalString(name) {
		return name
	}
	return norm.NFKC.String(name)
}

// Global returns name as the sandbox binds it ([Bound]) and reports
// whether that form may be bound from the host: it is a [NameOrLater].
// The written form need not be an identifier (x² binds x2). Two names
// with the same bound form are one global. This is the rule for a Feed's
// input names (package session, montygo run's --input) and for the names
// of session's Register and RegisterClass.
func Global(name string) (bound string, ok bool) {
	bound = Bound(name)
	return bound, NameOrLater(bound)
}

// Start reports whether c may begin an identifier: ID_Start (letters,
// letter numbers, Other_ID_Start) and "_".
func Start(c rune) bool {
	return c == '_' || unicode.In(c, unicode.L, unicode.Nl, unicode.Other_ID_Start)
}

// Continue reports whether c may continue an identifier (ID_Continue):
// besides what may start one, the combining marks of scripts such as
// Devanagari, digits, connector punctuation like "‿" and the few
// Other_ID_Continue characters like "·". Go's tables may predate Unicode
// 15.1 (they are 15.0's in Go 1.26); the four characters 15.1 added to Other_ID_Continue (the zero
// width joiner and non-joiner, the katakana middle dots) are added here,
// as the worker's newer tables have them.
func Continue(c rune) bool {
	return Start(c) || unicode.In(c, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc, unicode.Other_ID_Continue) ||
		c == 0x200C || c == 0x200D || c == 0x30FB || c == 0xFF65
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

// Name reports whether s is an identifier that is not one of Python's
// hard keywords: what Python source can use as a name (a variable, a
// function, a parameter, an attribute). Soft keywords (match, case, type,
// _) are names.
func Name(s string) bool { return !keywords[s] && Valid(s) }

// NameOrLater reports whether s is a [Name], or could be one in a later
// Unicode version than Go's tables (unicode.Version): s is not a hard
// keyword, and each character that keeps it from being a Name is one
// those tables do not assign (see [Later]). The worker's tables are newer
// (it reads letters of scripts Unicode 16 added, such as Todhri, as
// identifier characters); a check by Go's tables alone would refuse names
// it accepts. Such a name may still be refused by the worker (an
// unassigned character that became a combining mark, placed first).
func NameOrLater(s string) bool {
	if s == "" || keywords[s] {
		return false
	}
	for i, c := range s {
		if Later(c) {
			continue
		}
		if i == 0 && !Start(c) || !Continue(c) {
			return false
		}
	}
	return true
}

// Later reports whether Go's Unicode tables do not assign c: a character
// a later Unicode version may have added. Noncharacters, which no version
// assigns, are not Later.
func Later(c rune) bool {
	return unicode.Is(unicode.Cn, c) && !unicode.Is(unicode.Noncharacter_Code_Point, c)
}

// keywords are Python's hard keywords.
var keywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}

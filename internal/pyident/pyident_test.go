package pyident

import "testing"

func TestName(t *testing.T) {
	for s, want := range map[string]bool{
		"x": true, "_": true, "match": true, "case": true, "type": true, "café": true,
		"": false, "1x": false, "if": false, "None": false, "await": false, "a b": false, "price€": false,
	} {
		if got := Name(s); got != want {
			t.Errorf("Name(%q) = %v, want %v", s, got, want)
		}
	}
}

// The characters Unicode 15.1 added to Other_ID_Continue continue a name,
// as they do for the worker (TestRealInputNamesAgreeWithWorker), though
// Go 1.26's tables are 15.0's.
func TestContinueUnicode151(t *testing.T) {
	for _, c := range []rune{0x200C, 0x200D, 0x30FB, 0xFF65} {
		if !Continue(c) || Start(c) {
			t.Errorf("%U: Continue %v, Start %v; want true, false", c, Continue(c), Start(c))
		}
	}
}

func TestNameOrLater(t *testing.T) {
	for s, want := range map[string]bool{
		"x": true, "match": true, "x\u200c": true,
		// Unassigned in Unicode 15.0 (a Todhri letter, 16.0): left to the worker.
		"\U000105c0": true, "x\U000105c0": true,
		"": false, "if": false, "1x": false, "x y": false, "price€": false, "x\xff": false,
		// A noncharacter is never assigned.
		"x\ufffe": false, "x\U0010ffff": false,
	} {
		if got := NameOrLater(s); got != want {
			t.Errorf("NameOrLater(%q) = %v, want %v", s, got, want)
		}
	}
}

// Global reads a name as the sandbox binds it: NFKC first, then the
// identifier rule of NameOrLater, so a written form that is no identifier
// may bind (x² is x2) and one that is may not (ｉｆ is the keyword if).
func TestGlobal(t *testing.T) {
	for _, c := range []struct {
		name, bound string
		ok          bool
	}{
		{"x", "x", true}, {"ｘ", "x", true}, {"x²", "x2", true}, {"㍿", "株式会社", true}, {"ﬁ", "fi", true},
		{"\U000105c0", "\U000105c0", true}, {"ｉｆ", "if", false}, {"1x", "1x", false}, {"½", "1⁄2", false}, {"", "", false},
	} {
		if bound, ok := Global(c.name); bound != c.bound || ok != c.ok {
			t.Errorf("Global(%q) = %q, %v; want %q, %v", c.name, bound, ok, c.bound, c.ok)
		}
	}
}

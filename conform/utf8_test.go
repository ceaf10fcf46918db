package conform_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gomonty/monty/conform"
)

// stderrOfCut is stderr whose last 300 (and 200) bytes begin inside a
// two-byte character.
var stderrOfCut = strings.Repeat("é", 400) + "x"

// A failing rule quotes the end of the worker's stderr: the quote was cut
// at a byte count, inside a character, and the report (JSON included)
// carried a broken character.
func TestWorkerStderrQuoteIsValidUTF8(t *testing.T) {
	target := conform.Target{Binary: "/bin/sh", Args: []string{"-c", "printf '%s' '" + stderrOfCut + "' >&2; exit 0"}}
	rep, err := conform.Run(context.Background(), target, conform.Options{Protocol: 2, Match: regexp.MustCompile(`^feed\.complete-value$`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rules) != 1 || !strings.Contains(rep.Rules[0].Detail, "worker stderr: …é") || !utf8.ValidString(rep.Rules[0].Detail) {
		t.Fatalf("report %+v, want the stderr quoted as valid UTF-8", rep.Rules)
	}
}

// The same for a parent's stderr in parent mode.
func TestParentStderrQuoteIsValidUTF8(t *testing.T) {
	rep, err := conform.RunParent(context.Background(), []string{"/bin/sh", "-c", "printf '%s' '" + stderrOfCut + "' >&2; exit 1"},
		conform.ParentOptions{Match: regexp.MustCompile(`^normal$`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rules) != 1 || !strings.Contains(rep.Rules[0].Detail, "stderr: …é") || !utf8.ValidString(rep.Rules[0].Detail) {
		t.Fatalf("report %+v, want the stderr quoted as valid UTF-8", rep.Rules)
	}
}

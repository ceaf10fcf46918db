//go:build unix

package conform_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"unicode"
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

// stderrOfLines is stderr of several lines holding tabs, a carriage return
// and terminal escapes (a colored traceback, a window title).
const stderrOfLines = `Traceback:\n\tFile "x", line 1\r\n\033[31mError: boom\033[0m\033]0;pwned\007\n`

// oneLine reports whether s is fit for one line of the text report: no
// control character (a newline would split the rule's line, a tab shift
// its columns, an escape drive the reader's terminal).
func oneLine(s string) bool {
	return !strings.ContainsFunc(s, unicode.IsControl)
}

// A rule's detail is one line of the text report ("pass|fail|skip  ID
// detail"). A parent's stderr was quoted as it came: a multi-line error
// split the report's line, and escape sequences reached the terminal of
// whoever read it; a worker's had its whitespace folded, but not its
// escapes.
func TestStderrQuoteIsOneLine(t *testing.T) {
	script := "printf '" + stderrOfLines + "' >&2; exit 1"
	t.Run("parent", func(t *testing.T) {
		rep, err := conform.RunParent(context.Background(), []string{"/bin/sh", "-c", script},
			conform.ParentOptions{Match: regexp.MustCompile(`^normal$`)})
		if err != nil {
			t.Fatal(err)
		}
		if d := rep.Rules[0].Detail; !oneLine(d) || !strings.Contains(d, `Traceback: File "x", line 1 \x1b[31mError: boom`) {
			t.Errorf("detail %q, want the stderr on one line, escapes shown", d)
		}
	})
	t.Run("worker", func(t *testing.T) {
		target := conform.Target{Binary: "/bin/sh", Args: []string{"-c", script}}
		rep, err := conform.Run(context.Background(), target, conform.Options{Protocol: 2, Match: regexp.MustCompile(`^feed\.complete-value$`)})
		if err != nil {
			t.Fatal(err)
		}
		if d := rep.Rules[0].Detail; !oneLine(d) || !strings.Contains(d, `Traceback: File "x", line 1 \x1b[31mError: boom`) {
			t.Errorf("detail %q, want the stderr on one line, escapes shown", d)
		}
	})
}

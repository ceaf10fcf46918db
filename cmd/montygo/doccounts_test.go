//go:build unix

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocumentedReplayCounts checks the session counts docs/CONFORMANCE.md
// gives for TestSubprocessReplaysVectors against the recorded sessions it
// replays: all of them, those of testdata/v2 and those of
// testdata/v2-more. A recorder run that adds sessions without the prose
// following fails here.
func TestDocumentedReplayCounts(t *testing.T) {
	count := func(dir string) int {
		files, err := filepath.Glob(filepath.Join("../../testdata", dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %d sessions (%v)", dir, len(files), err)
		}
		return len(files)
	}
	v2, more := count("v2"), count("v2-more")
	b, err := os.ReadFile("../../docs/CONFORMANCE.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range []struct {
		pattern string
		want    int
	}{
		{`each\s+of the ([\d,]+) sessions recorded from the released worker`, v2 + more},
		{"([\\d,]+) in\\s+`testdata/v2`", v2},
		{"([\\d,]+) more in `testdata/v2-more`", more},
	} {
		m := regexp.MustCompile(c.pattern).FindStringSubmatch(doc)
		if m == nil {
			t.Errorf("docs/CONFORMANCE.md: nothing matches %q (the count there should be %d)", c.pattern, c.want)
			continue
		}
		if n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", "")); n != c.want {
			t.Errorf("docs/CONFORMANCE.md says %q; the count is %d", m[0], c.want)
		}
	}
}

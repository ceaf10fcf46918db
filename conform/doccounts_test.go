//go:build unix

package conform_test

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/gomonty/monty/conform"
	"github.com/gomonty/monty/internal/hostile"
)

// TestDocumentedCounts checks the counts of rules and scenarios that the
// README and docs/CONFORMANCE.md state against the catalogs: the rules in
// all, the rules defined at each protocol version, the rules of each set
// of versions, and the hostile scenarios. A rule or scenario added
// without updating the prose fails here.
func TestDocumentedCounts(t *testing.T) {
	rules := conform.Rules()
	at := map[uint32]int{}
	bySet := map[string]int{}
	for _, r := range rules {
		for _, v := range []uint32{2, 4, 5} {
			if r.AppliesTo(v) {
				at[v]++
			}
		}
		bySet[fmt.Sprint(r.Versions)]++
	}
	scenarios := len(hostile.Scenarios())

	readme := readDoc(t, "../README.md")
	expectCount(t, "README.md", readme, `conformance kit: (\d+) named rules`, len(rules))
	expectCount(t, "README.md", readme, `(\d+) hostile-child scenarios`, scenarios)

	doc := readDoc(t, "../docs/CONFORMANCE.md")
	const file = "docs/CONFORMANCE.md"
	expectCount(t, file, doc, `(?m)^(\d+) rules: \d+ at protocol 2`, len(rules))
	expectCount(t, file, doc, `rules: (\d+) at protocol 2`, at[2])
	expectCount(t, file, doc, `(\d+) at protocol 4 and \d+ at protocol 5`, at[4])
	expectCount(t, file, doc, `at protocol 4 and (\d+) at protocol 5`, at[5])
	expectCount(t, file, doc, `(?m)^(\d+) hold at every version`, bySet["[2 4 5]"])
	expectCount(t, file, doc, `(\d+) hold at 2 and 4\s+only`, bySet["[2 4]"])
	expectCount(t, file, doc, `(\d+) hold from 4 on`, bySet["[4 5]"])
	expectCount(t, file, doc, `(\d+) are defined only at 2`, bySet["[2]"])
	expectCount(t, file, doc, `defined only at 2 and (\d+)\s+only at 5`, bySet["[5]"])
	expectCount(t, file, doc, "`internal/hostile`, (\\d+) scenarios", scenarios)
	expectCount(t, file, doc, `all (\d+) scenarios pass`, scenarios)
}

// TestDocumentedSummaries checks the pass, fail and skip figures
// docs/CONFORMANCE.md shows for the full runs whose failing sets the
// tests assert (the released worker at 2, the example JSON report of that
// run, montygo subprocess pinned at 2, 4 and 5): a run's passes are the
// rules defined at its version less the failures, its skips the rest.
func TestDocumentedSummaries(t *testing.T) {
	rules := conform.Rules()
	doc := readDoc(t, "../docs/CONFORMANCE.md")
	const file = "docs/CONFORMANCE.md"
	summary := func(v uint32, failing []string) (pass, fail, skip int) {
		defined := 0
		for _, r := range rules {
			if r.AppliesTo(v) {
				defined++
			}
		}
		return defined - len(failing), len(failing), len(rules) - defined
	}
	expect3 := func(pattern string, v uint32, failing []string) {
		t.Helper()
		pass, fail, skip := summary(v, failing)
		m := regexp.MustCompile(pattern).FindStringSubmatch(doc)
		if m == nil {
			t.Errorf("%s: nothing matches %q (it should say %d pass, %d fail, %d skip)", file, pattern, pass, fail, skip)
			return
		}
		got := [3]int{}
		for i := range got {
			got[i], _ = strconv.Atoi(m[i+1])
		}
		if got != [3]int{pass, fail, skip} {
			t.Errorf("%s says %q; the run gives %d pass, %d fail, %d skip", file, m[0], pass, fail, skip)
		}
	}
	expect3(`protocol 2: (\d+) pass, (\d+) fail, (\d+) skip`, 2, releasedV2Failures)
	expect3(`"summary": \{"pass": (\d+), "fail": (\d+), "skip": (\d+)\}`, 2, releasedV2Failures)
	expect3("`montygo subprocess --protocol 2 [^|]*`, kit at 2 \\| (\\d+) pass, (\\d+) fail, (\\d+) skip", 2, subprocessV2Failures)
	expect3("`montygo subprocess --protocol 4 [^|]*`, kit at 4 \\| (\\d+) pass, (\\d+) fail, (\\d+) skip", 4, subprocessV4Failures)
	expect3("`montygo subprocess --protocol 5 [^|]*`, kit at 5 \\| (\\d+) pass, (\\d+) fail, (\\d+) skip", 5, subprocessV5Failures)
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// expectCount requires every match of pattern in doc to capture want.
func expectCount(t *testing.T, file, doc, pattern string, want int) {
	t.Helper()
	ms := regexp.MustCompile(pattern).FindAllStringSubmatch(doc, -1)
	if len(ms) == 0 {
		t.Errorf("%s: no sentence matches %q (the count there should be %d)", file, pattern, want)
		return
	}
	for _, m := range ms {
		if n, _ := strconv.Atoi(m[1]); n != want {
			t.Errorf("%s says %q; the count is %d", file, m[0], want)
		}
	}
}

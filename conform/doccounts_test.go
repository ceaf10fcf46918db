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

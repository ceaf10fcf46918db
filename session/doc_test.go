package session

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// The package documentation said the zero Limits leave time "the
// context's to bound", while a zero MaxDuration applies DefaultMaxDuration
// (60 s): a reader trusting it would not expect a long job to be cut at a
// minute. The Limits section names each default the zero Limits apply.
func TestPackageDocStatesTheZeroLimitsDefaults(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	text := f.Doc.Text()
	_, limits, ok := strings.Cut(text, "# Limits")
	if !ok {
		t.Fatal("the package documentation has no Limits section")
	}
	limits, _, _ = strings.Cut(limits, "\n# ")
	limits = strings.Join(strings.Fields(limits), " ")
	for _, w := range []string{"zero Limits", "DefaultMaxMemory", "NoMemoryLimit", "DefaultMaxDuration", "NoDurationLimit"} {
		if !strings.Contains(limits, w) {
			t.Errorf("the Limits section does not mention %s:\n%s", w, limits)
		}
	}
	if strings.Contains(limits, "time is the context's to bound") {
		t.Errorf("the Limits section still leaves time to the context alone:\n%s", limits)
	}
}

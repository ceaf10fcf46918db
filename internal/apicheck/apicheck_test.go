package apicheck

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite api/gomonty.txt from the current tree")

const golden = "api/gomonty.txt"

// TestAPIGolden fails when the exported API differs from api/gomonty.txt.
// Regenerate after an intended change with
//
//	go test ./internal/apicheck -update   (or: make api-update)
func TestAPIGolden(t *testing.T) {
	root := filepath.Join("..", "..")
	lines, err := List(root, "github.com/gomonty/monty")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatal("no exported API found")
	}
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join(root, golden)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; regenerate with: go test ./internal/apicheck -update", err)
	}
	wantSet := lineSet(string(want))
	gotSet := lineSet(got)
	var diff []string
	for _, l := range lines {
		if !wantSet[l] {
			diff = append(diff, "+ "+l)
		}
	}
	for l := range wantSet {
		if !gotSet[l] {
			diff = append(diff, "- "+l)
		}
	}
	if len(diff) > 0 || got != string(want) {
		t.Errorf("exported API differs from %s (+ new, - gone):\n%s\nif intended, regenerate with: go test ./internal/apicheck -update (make api-update)",
			golden, strings.Join(diff, "\n"))
	}
}

func lineSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if l != "" {
			m[l] = true
		}
	}
	return m
}

func TestListSeesUnexportedAsAbsent(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\ntype T struct{ A int; b int }\nfunc (T) M(x int) error { return nil }\nfunc (t *T) m() {}\nfunc f() {}\nconst C = 1\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, err := List(dir, "example.com/p")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg example.com/p, const C = 1",
		"pkg example.com/p, method (T) M(x int) error",
		"pkg example.com/p, type T struct",
		"pkg example.com/p, type T struct, A int",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

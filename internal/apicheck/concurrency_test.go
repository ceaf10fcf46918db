package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// concurrencyWords are the phrases by which a type's doc says whether it
// is safe for concurrent use (or, for a func or interface type, what its
// callers and implementations may expect).
var concurrencyWords = regexp.MustCompile(`(?i)concurren|goroutine|plain data|plain value|safe to share|safe for|safe to read`)

// The packages a Go caller drives directly: every exported type there
// says, in its doc, whether it is safe for concurrent use.
var concurrencyPackages = []string{"session", "pool", "worker", "mount", "value", "transport", "child"}

// TestExportedTypesSayIfConcurrentUseIsSafe fails for an exported type of
// those packages (and their non-internal subpackages) whose doc does not
// say whether it is safe for concurrent use.
func TestExportedTypesSayIfConcurrentUseIsSafe(t *testing.T) {
	root := filepath.Join("..", "..")
	var missing []string
	for _, pkg := range concurrencyPackages {
		err := filepath.WalkDir(filepath.Join(root, pkg), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); n == "testdata" || n == "internal" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			if f.Name.Name == "main" {
				return nil
			}
			for _, decl := range f.Decls {
				g, ok := decl.(*ast.GenDecl)
				if !ok || g.Tok != token.TYPE {
					continue
				}
				for _, spec := range g.Specs {
					ts := spec.(*ast.TypeSpec)
					if !ts.Name.IsExported() {
						continue
					}
					doc := ts.Doc.Text()
					if doc == "" {
						doc = g.Doc.Text()
					}
					if !concurrencyWords.MatchString(doc) {
						rel, _ := filepath.Rel(root, p)
						missing = append(missing, filepath.ToSlash(rel)+": "+ts.Name.Name)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(missing) > 0 {
		t.Errorf("exported types whose doc does not say whether they are safe for concurrent use:\n%s", strings.Join(missing, "\n"))
	}
}

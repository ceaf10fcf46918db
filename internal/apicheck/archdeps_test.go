package apicheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/gomonty/monty/"

// TestArchitectureDependencies checks the "depends on" column of the
// package table in docs/ARCHITECTURE.md against the imports of each
// package's non-test files (every platform's): every package of the
// module a row's package imports is named there, and every package of
// the module named there is imported. A name that is a folder holding
// no package itself (internal/pb) stands for the packages under it. Rows of
// tooling and the CLI ("all of the above") are not checked.
func TestArchitectureDependencies(t *testing.T) {
	root := filepath.Join("..", "..")
	imports := moduleImports(t, root)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `([^`]+)` \\|.*\\| ([^|]*) \\|$")
	quoted := regexp.MustCompile("`([^`]+)`")
	// A package's name stands for itself alone; a folder's that holds no
	// package (internal/pb) for the packages under it.
	covers := func(name, pkg string) bool {
		if _, isPkg := imports[name]; isPkg {
			return pkg == name
		}
		return strings.HasPrefix(pkg, name+"/")
	}
	checked := 0
	for _, line := range strings.Split(string(doc), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		pkg, deps := m[1], m[2]
		got, ok := imports[pkg]
		if !ok || strings.Contains(deps, "all of the above") || strings.Contains(deps, "tooling") {
			continue
		}
		checked++
		var named []string
		for _, q := range quoted.FindAllStringSubmatch(deps, -1) {
			n := q[1]
			for p := range imports {
				if covers(n, p) {
					named = append(named, n)
					break
				}
			}
		}
		for _, imp := range got {
			if !slices.ContainsFunc(named, func(n string) bool { return covers(n, imp) }) {
				t.Errorf("docs/ARCHITECTURE.md: %s imports %s, which its row does not name", pkg, imp)
			}
		}
		for _, n := range named {
			if !slices.ContainsFunc(got, func(imp string) bool { return covers(n, imp) }) {
				t.Errorf("docs/ARCHITECTURE.md: %s's row names %s, which it does not import", pkg, n)
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d rows of the package table checked; is the table's form changed?", checked)
	}
}

// moduleImports maps each folder of the module holding non-test Go files
// (its path relative to the module) to the module's packages they import.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	imports := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		list := imports[rel]
		for _, is := range f.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return err
			}
			if imp, ok := strings.CutPrefix(p, module); ok && !slices.Contains(list, imp) {
				list = append(list, imp)
			}
		}
		imports[rel] = list
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return imports
}

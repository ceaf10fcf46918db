package monty

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The package list of the module's documentation named neither the child
// side nor the server, the conformance kit or the WebSocket transport: a
// reader of `go doc github.com/gomonty/monty` did not learn that they
// exist. Every public package is named now, and a new one must be too.
func TestDocNamesEveryPublicPackage(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	skip := map[string]bool{"internal": true, "cmd": true, "examples": true, "scripts": true,
		"tools": true, "testdata": true, "api": true, "docs": true, "proto": true}
	var missing []string
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || path == "." {
			return nil
		}
		if skip[d.Name()] || strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				if !strings.Contains(string(doc), filepath.ToSlash(path)) {
					missing = append(missing, filepath.ToSlash(path))
				}
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("doc.go does not name the packages %v", missing)
	}
}

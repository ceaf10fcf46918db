// Package apicheck lists the module's exported API, one line per exported
// name and signature, sorted, so that api/gomonty.txt pins it the way Go's
// own api/ files pin the standard library: an API change is a visible diff.
//
// The listing is syntactic (go/parser and go/printer over the files the
// default build context selects); it skips internal packages, package main,
// test files, testdata and nested modules. It is not safe for concurrent use
// only in the trivial sense that it keeps no state: List may be called from
// any number of goroutines.
package apicheck

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// List walks the module rooted at root (the directory holding go.mod, whose
// module path is modPath) and returns the sorted API lines of every
// non-internal, non-main package.
func List(root, modPath string) ([]string, error) {
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if rel != "." {
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "internal" || name == "vendor" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
		}
		importPath := modPath
		if rel != "." {
			importPath = path.Join(modPath, rel)
		}
		pkgLines, err := packageLines(p, importPath)
		if err != nil {
			return err
		}
		lines = append(lines, pkgLines...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(lines)
	return lines, nil
}

func packageLines(dir, importPath string) ([]string, error) {
	bp, err := build.ImportDir(dir, 0)
	if err != nil {
		if _, ok := err.(*build.NoGoError); ok {
			return nil, nil
		}
		return nil, fmt.Errorf("apicheck: %s: %w", dir, err)
	}
	if bp.Name == "main" {
		return nil, nil
	}
	fset := token.NewFileSet()
	prefix := "pkg " + importPath + ", "
	var out []string
	emit := func(s string) { out = append(out, prefix+s) }
	for _, f := range bp.GoFiles {
		file, err := parser.ParseFile(fset, filepath.Join(dir, f), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("apicheck: %w", err)
		}
		for _, decl := range file.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				funcLines(fset, decl, emit)
			case *ast.GenDecl:
				genLines(fset, decl, emit)
			}
		}
	}
	return out, nil
}

func funcLines(fset *token.FileSet, fn *ast.FuncDecl, emit func(string)) {
	if !fn.Name.IsExported() {
		return
	}
	sig := strings.TrimPrefix(render(fset, fn.Type), "func")
	if fn.Recv == nil {
		emit("func " + fn.Name.Name + sig)
		return
	}
	if len(fn.Recv.List) == 0 {
		return
	}
	recv := fn.Recv.List[0].Type
	if !exportedBase(recv) {
		return
	}
	emit("method (" + render(fset, recv) + ") " + fn.Name.Name + sig)
}

// exportedBase reports whether a receiver type names an exported type.
func exportedBase(e ast.Expr) bool {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.IsExported()
		default:
			return false
		}
	}
}

func genLines(fset *token.FileSet, gd *ast.GenDecl, emit func(string)) {
	for _, spec := range gd.Specs {
		switch s := spec.(type) {
		case *ast.TypeSpec:
			typeLines(fset, s, emit)
		case *ast.ValueSpec:
			kw := gd.Tok.String()
			for i, n := range s.Names {
				if !n.IsExported() {
					continue
				}
				line := kw + " " + n.Name
				if s.Type != nil {
					line += " " + render(fset, s.Type)
				}
				if gd.Tok == token.CONST && i < len(s.Values) {
					line += " = " + render(fset, s.Values[i])
				}
				emit(line)
			}
		}
	}
}

func typeLines(fset *token.FileSet, s *ast.TypeSpec, emit func(string)) {
	if !s.Name.IsExported() {
		return
	}
	head := "type " + s.Name.Name
	if s.TypeParams != nil {
		head += render(fset, s.TypeParams)
	}
	if s.Assign.IsValid() {
		head += " ="
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		emit(head + " struct")
		for _, f := range t.Fields.List {
			typ := render(fset, f.Type)
			if len(f.Names) == 0 {
				if exportedBase(f.Type) || isQualifiedExported(f.Type) {
					emit(head + " struct, embedded " + typ)
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					emit(head + " struct, " + n.Name + " " + typ)
				}
			}
		}
	case *ast.InterfaceType:
		emit(head + " interface")
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				emit(head + " interface, embedded " + render(fset, m.Type))
				continue
			}
			for _, n := range m.Names {
				if !n.IsExported() {
					emit(head + " interface, unexported methods")
					continue
				}
				emit(head + " interface, " + n.Name + strings.TrimPrefix(render(fset, m.Type), "func"))
			}
		}
	default:
		emit(head + " " + render(fset, s.Type))
	}
}

func isQualifiedExported(e ast.Expr) bool {
	if st, ok := e.(*ast.StarExpr); ok {
		e = st.X
	}
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.IsExported()
}

// render prints a node on one line, with runs of white space folded.
func render(fset *token.FileSet, n ast.Node) string {
	var buf bytes.Buffer
	if err := (&printer.Config{Mode: printer.RawFormat}).Fprint(&buf, fset, n); err != nil {
		return fmt.Sprintf("<%v>", err)
	}
	return strings.Join(strings.Fields(buf.String()), " ")
}

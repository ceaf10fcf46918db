//go:build unix

package session

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Register takes a name by the rule of an input's (pyident.Global): the
// name as the sandbox reads it (NFKC) must be an identifier, the written
// form need not be. The worker looks a function up by that form, so x²
// is the sandbox's x2, ㍿ its 株式会社, and a letter newer than Go's
// Unicode tables (Todhri, Unicode 16) is one it reads as a letter. Each
// name of inputNames is registered; Register must accept exactly the
// names the worker binds as inputs (checkInputName, which
// TestRealInputNamesAgreeWithWorker holds to the worker) but for the
// builtins the sandbox resolves itself, and each accepted one is called
// from the sandbox by its NFKC form. Before, Register also required the
// written form to be an identifier by Go's tables, refusing x², ㍿ and
// the Todhri letter, which the worker calls.
func TestRealRegisteredNamesAsTheWorkerReadsThem(t *testing.T) {
	s := realSession(t, Config{})
	names := append([]string{"x₁", "x\U000105c0y"}, inputNames...)
	for _, name := range names {
		bound := nfkc(name)
		reg := NewRegistry()
		err := reg.Register(name, func() int { return 7 })
		if want := checkInputName(name) == nil && !sandboxResolves(bound); (err == nil) != want {
			t.Errorf("Register(%q) (read as %q): %v, want accepted: %v", name, bound, err, want)
		}
		if err != nil {
			continue
		}
		r, err := s.Run(context.Background(), "r = "+bound+"()\nr", WithFunctions(reg))
		if err != nil || r.Repr() != "7" {
			t.Errorf("%q called as %s(): %v %v", name, bound, r, err)
		}
	}
}

// Stubs declare what Register accepted under the name the sandbox reads,
// which the type checker takes (def x2, def 株式会社), and leave out a name
// with characters Go's Unicode tables do not have yet: the worker's type
// checker ignores every declaration of stubs it cannot parse (checked
// here: a stub with a name its parser refuses lets a wrong assignment
// through), and Go cannot tell such a name from one it parses.
func TestRealStubsOfNFKCNames(t *testing.T) {
	reg := NewRegistry().
		MustRegister("x²", func() int { return 1 }).
		MustRegister("㍿", func() int { return 2 }).
		MustRegister("\U000105c0", func() int { return 3 }).
		MustRegister("\U00010D69x", func() int { return 4 }) // a mark in Unicode 16: no name to the worker
	stubs := reg.Stubs()
	if !strings.Contains(stubs, "def x2() -> int") || !strings.Contains(stubs, "def 株式会社() -> int") ||
		strings.Contains(stubs, "\U000105c0") || strings.Contains(stubs, "\U00010D69") {
		t.Fatalf("stubs:\n%s", stubs)
	}
	typed := func(stubs, code string) error {
		s := realSession(t, Config{TypeCheck: true, TypeCheckStubs: stubs})
		_, err := s.Run(context.Background(), code, WithFunctions(reg))
		return err
	}
	if err := typed(stubs, "x2() + 株式会社()"); err != nil {
		t.Errorf("a checked call of x2 and 株式会社: %v", err)
	}
	var tc *TypeCheckError
	if err := typed(stubs, "y: str = x2()"); !errors.As(err, &tc) || !strings.Contains(err.Error(), "invalid-assignment") {
		t.Errorf("a wrong assignment from x2(): %v, want the type checker's invalid-assignment", err)
	}
	// Why the name is left out: with it in the stubs, the checker lets
	// the wrong assignment through (and the code then runs).
	if err := typed(stubs+"def \U00010D69x() -> int: ...\n", "y: str = x2()"); errors.As(err, &tc) {
		t.Errorf("stubs with a name the worker cannot parse still checked: %v", err)
	}
	// Unchecked, the Todhri function is called as registered.
	s := realSession(t, Config{})
	if r, err := s.Run(context.Background(), "\U000105c0()", WithFunctions(reg)); err != nil || r.Repr() != "3" {
		t.Errorf("the Todhri function: %v %v", r, err)
	}
}

package session

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Names the sandbox resolves itself, and Python keywords, are refused by
// Register and RegisterClass: a host function by such a name could never
// be called (the worker looks up only names it cannot resolve) or named.
func TestRegisterRefusesNamesTheHostIsNeverAskedFor(t *testing.T) {
	cls := MustClassOf[struct{ N int }]("Box", Policy{})
	for _, c := range []struct{ name, want string }{
		{"len", "is a builtin the sandbox resolves itself"},
		{"print", "is a builtin the sandbox resolves itself"},
		{"ValueError", "is a builtin the sandbox resolves itself"},
		{"dict", "is a builtin the sandbox resolves itself"},
		{"None", "is not a valid Python identifier"},
		{"lambda", "is not a valid Python identifier"},
		{"class", "is not a valid Python identifier"},
	} {
		r := NewRegistry()
		if err := r.Register(c.name, func() int { return 1 }); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Register(%q) = %v, want an error saying %q", c.name, err, c.want)
		}
		if err := r.RegisterClass(c.name, cls); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RegisterClass(%q) = %v, want an error saying %q", c.name, err, c.want)
		}
	}
	// Names Python has but the sandbox does not (it asks the host) are
	// still the host's to give, and soft keywords are names.
	for _, name := range []string{"super", "input", "eval", "json", "match", "case", "_"} {
		if err := NewRegistry().Register(name, func() int { return 1 }); err != nil {
			t.Errorf("Register(%q): %v", name, err)
		}
	}
	if _, err := ClassOf[struct{ N int }]("Box", Policy{Methods: []string{"from"}}); err == nil {
		t.Error("a method named by a keyword was accepted")
	}
}

// TestSandboxResolvesItsBuiltins checks the list of refused names against
// the worker: each resolves in the sandbox without a name lookup (a lookup
// would find nothing here and raise NameError), and a name left off the
// list (super) is looked up.
func TestSandboxResolvesItsBuiltins(t *testing.T) {
	s := realSession(t, Config{})
	ctx := context.Background()
	for name := range sandboxBuiltins {
		if _, err := s.Run(ctx, name); err != nil {
			t.Errorf("%s: %v; want the sandbox's own", name, err)
		}
	}
	for _, name := range []string{"ValueError", "KeyError", "FileNotFoundError", "BaseException", "StopIteration", "TimeoutError"} {
		if !sandboxResolves(name) {
			t.Fatalf("%s is not refused", name)
		}
		if _, err := s.Run(ctx, name); err != nil {
			t.Errorf("%s: %v; want the sandbox's own", name, err)
		}
	}
	_, err := s.Run(ctx, "super")
	var pe *PythonError
	if !errors.As(err, &pe) || pe.Exception.Type != "NameError" {
		t.Fatalf("super: %v, want a NameError (the host was asked and has no such name)", err)
	}
}

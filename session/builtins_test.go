//go:build unix

package session

import (
	"context"
	"errors"
	"slices"
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

// pythonBuiltins is CPython's builtins namespace (3.11, without the
// keywords True, False and None), Monty's FrozenInstanceError and the
// module globals CPython defines: every name a sandbox could resolve
// without asking the host.
var pythonBuiltins = []string{
	"ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup",
	"BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
	"ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
	"DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception",
	"ExceptionGroup", "FileExistsError", "FileNotFoundError", "FloatingPointError", "FutureWarning",
	"GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError", "IndexError",
	"InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt", "LookupError", "MemoryError",
	"ModuleNotFoundError", "NameError", "NotADirectoryError", "NotImplemented", "NotImplementedError",
	"OSError", "OverflowError", "PendingDeprecationWarning", "PermissionError", "ProcessLookupError",
	"RecursionError", "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning",
	"StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit",
	"TabError", "TimeoutError", "TypeError", "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError",
	"UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning", "ValueError", "Warning",
	"ZeroDivisionError", "__build_class__", "__import__", "__name__", "abs", "aiter", "all", "anext", "any",
	"ascii", "bin", "bool", "breakpoint", "bytearray", "bytes", "callable", "chr", "classmethod", "compile",
	"complex", "copyright", "credits", "delattr", "dict", "dir", "divmod", "enumerate", "eval", "exec", "exit",
	"filter", "float", "format", "frozenset", "getattr", "globals", "hasattr", "hash", "help", "hex", "id",
	"input", "int", "isinstance", "issubclass", "iter", "len", "license", "list", "locals", "map", "max",
	"memoryview", "min", "next", "object", "oct", "open", "ord", "pow", "print", "property", "quit", "range",
	"repr", "reversed", "round", "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super",
	"tuple", "type", "vars", "zip", "FrozenInstanceError",
	// The builtins module's own dunders, and the module globals a
	// sandbox could have beside them.
	"__debug__", "__doc__", "__loader__", "__package__", "__spec__",
	"__annotations__", "__builtins__", "__cached__", "__file__", "__path__",
}

// TestSandboxResolvesItsBuiltins checks the refused names against the
// worker, both ways, over every name of pythonBuiltins: a name is refused
// exactly when the sandbox resolves it itself (here, with no registry, a
// name it asked the host for would be a NameError).
func TestSandboxResolvesItsBuiltins(t *testing.T) {
	s := realSession(t, Config{})
	ctx := context.Background()
	for _, name := range pythonBuiltins {
		_, err := s.Run(ctx, name)
		var pe *PythonError
		asked := errors.As(err, &pe) && pe.Exception.Type == "NameError"
		if err != nil && !asked {
			t.Fatalf("%s: %v", name, err)
		}
		switch refused := sandboxResolves(name); {
		case refused && asked:
			t.Errorf("%s is refused, but the sandbox asks the host for it", name)
		case !refused && !asked:
			t.Errorf("%s is not refused, but the sandbox resolves it itself", name)
		}
	}
	for name := range sandboxBuiltins {
		if !slices.Contains(pythonBuiltins, name) {
			t.Errorf("%s is refused but is no builtin", name)
		}
	}
}

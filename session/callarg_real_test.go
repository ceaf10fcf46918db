//go:build unix

package session

import (
	"context"
	"errors"
	"testing"
)

// A Func that reads an argument the sandbox did not pass panics (see
// Call.Arg); the sandbox gets a RuntimeError naming the function and the
// index, the session survives.
func TestRealCallArgPastTheArgumentsIsARuntimeError(t *testing.T) {
	s := realSession(t, Config{})
	reg := NewRegistry().MustRegister("f", Func(func(_ context.Context, c *Call) (any, error) {
		return c.Arg(1).Any()
	}))
	_, err := s.Run(bg, "f(1)", WithFunctions(reg))
	var pe *PythonError
	want := "host function f panicked: monty session: Call.Arg(1) of f(), which was passed 1 positional argument"
	if !errors.As(err, &pe) || pe.Type() != "RuntimeError" || pe.Exception.Msg() != want {
		t.Fatalf("Run: %v, want RuntimeError(%q)", err, want)
	}
	if r, err := s.Run(bg, "try:\n    f(1)\nexcept RuntimeError:\n    x = 2\nx", WithFunctions(reg)); err != nil || r.Repr() != "2" {
		t.Fatalf("caught: %v %v", r, err)
	}
}

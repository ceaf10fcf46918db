//go:build unix

package session

import (
	"context"
	"errors"
	"testing"

	"github.com/gomonty/monty/message"
)

// PythonError.HostErr matches by type and message, as its doc admits:
// the protocol gives an exception no identity, so the sandbox's own
// exception with the host error's type and message is attributed to the
// host error, while one with another message, or a host error of an
// earlier Run, is not.
func TestRealHostErrIsMatchedByTypeAndMessage(t *testing.T) {
	s := realSession(t, Config{})
	quota := errors.New("over quota")
	reg := NewRegistry().MustRegister("f", func() error {
		return &wrapped{msg: "quota", err: quota}
	})
	for _, c := range []struct {
		code string
		host bool
	}{
		{"f()", true},
		{"try:\n    f()\nexcept ValueError:\n    raise", true},
		// The limit: raised anew with the same type and message.
		{"try:\n    f()\nexcept ValueError as e:\n    raise ValueError(str(e))", true},
		{"try:\n    f()\nexcept ValueError:\n    pass\nraise ValueError('quota')", true},
		{"try:\n    f()\nexcept ValueError as e:\n    raise ValueError(str(e) + '!')", false},
	} {
		_, err := s.Run(context.Background(), c.code, WithFunctions(reg))
		var pe *PythonError
		if !errors.As(err, &pe) || pe.Type() != "ValueError" {
			t.Fatalf("%q: %v, want a ValueError", c.code, err)
		}
		if got := errors.Is(err, quota); got != c.host || (pe.HostErr != nil) != c.host {
			t.Errorf("%q: HostErr %v (errors.Is %v), want attributed %v", c.code, pe.HostErr, got, c.host)
		}
	}
	// A Run that called no host function attributes nothing.
	_, err := s.Run(context.Background(), "raise ValueError('quota')", WithFunctions(reg))
	var pe *PythonError
	if !errors.As(err, &pe) || pe.HostErr != nil {
		t.Errorf("no host call: %v, HostErr %v", err, pe.HostErr)
	}
}

// wrapped raises ValueError(msg) and unwraps to err.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return "ValueError: " + w.msg }

func (w *wrapped) Unwrap() []error {
	return []error{message.NewException("ValueError", w.msg), w.err}
}

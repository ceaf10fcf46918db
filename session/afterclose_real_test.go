//go:build unix

package session

import (
	"errors"
	"testing"
)

// After Close a Session's queries still answer (Pid and Version name the
// worker it ran on, State is closed, Cause is nil for a Close), a second
// Close and a Kill are harmless, and every turn fails with ErrClosed.
func TestRealQueriesAfterClose(t *testing.T) {
	s := realSession(t, Config{})
	if _, err := s.Run(bg, "1"); err != nil {
		t.Fatal(err)
	}
	pid, v, bin := s.Pid(), s.Version(), s.Binary()
	if pid == 0 {
		t.Fatal("no pid")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	s.Kill()
	if s.Pid() != pid || s.Version() != v || s.Binary() != bin || s.State() != StateClosed || s.Cause() != nil || s.Suspension() != nil {
		t.Errorf("after Close: pid %d version %d binary %q state %v cause %v; want %d %d %q closed nil",
			s.Pid(), s.Version(), s.Binary(), s.State(), s.Cause(), pid, v, bin)
	}
	if _, err := s.Run(bg, "1"); !errors.Is(err, ErrClosed) || Survives(err) {
		t.Errorf("Run after Close: %v, want ErrClosed", err)
	}
	if err := s.Reset(bg); !errors.Is(err, ErrClosed) {
		t.Errorf("Reset after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Detach(bg); !errors.Is(err, ErrClosed) {
		t.Errorf("Detach after Close: %v, want ErrClosed", err)
	}
}

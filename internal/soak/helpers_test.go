//go:build unix

package soak

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// fault is what a soak session is given.
type fault uint8

const (
	faultNone fault = iota
	// faultKill: SIGKILL the worker mid-feed (from outside, like the OOM
	// killer). Expected: *worker.CrashError, Vanished; session closed.
	faultKill
	// faultDuration: an infinite loop under max_duration. Expected: the
	// worker's own TimeoutError (*session.PythonError), session survives
	// (or, if the machine is so loaded that the parent's watchdog fires
	// first, *session.TimeoutError with Watchdog set, session closed).
	faultDuration
	// faultMemory: `[0] * 10**9` under max_memory. Expected: MemoryError
	// (*session.PythonError), session survives.
	faultMemory
	// faultCancel: the Run's context is cancelled mid-feed. Expected:
	// *session.CanceledError; session closed (the worker was computing).
	faultCancel
	// faultException: the snippet raises. Expected: ValueError
	// (*session.PythonError) naming the session, session survives.
	faultException
	numFaults
)

var faultNames = [numFaults]string{"none", "kill", "duration", "memory", "cancel", "exception"}

func (f fault) String() string { return faultNames[f] }

// Limits of the fault sessions.
const (
	faultMaxDuration = 100 * time.Millisecond
	faultMaxMemory   = 32 << 20
)

// config is the session.Config a checkout for fault f uses.
func config(f fault) session.Config {
	var cfg session.Config
	switch f {
	case faultDuration:
		cfg.Limits.MaxDuration = faultMaxDuration
	case faultMemory:
		cfg.Limits.MaxMemory = faultMaxMemory
	}
	return cfg
}

// faultCode is the snippet that trips fault f in session n.
func faultCode(f fault, n int) string {
	switch f {
	case faultKill, faultCancel, faultDuration:
		return "while True: pass"
	case faultMemory:
		return "big = [0] * 10**9"
	case faultException:
		return fmt.Sprintf("raise ValueError('boom %d')", n)
	}
	return ""
}

// matchFault checks err against what fault f must produce in session n. It
// returns whether the session is expected to survive it, or an error
// explaining the mismatch.
func matchFault(f fault, n int, err error) (survives bool, mismatch error) {
	var (
		pe *session.PythonError
		ce *worker.CrashError
		ca *session.CanceledError
		te *session.TimeoutError
	)
	bad := func() (bool, error) { return false, fmt.Errorf("%s fault gave %T: %v", f, err, err) }
	if err == nil {
		return bad()
	}
	switch f {
	case faultKill:
		if errors.As(err, &ce) && ce.Reason == worker.Vanished && !session.Survives(err) {
			return false, nil
		}
	case faultCancel:
		if errors.As(err, &ca) && errors.Is(err, context.Canceled) {
			return session.Survives(err), nil
		}
	case faultDuration:
		if errors.As(err, &pe) && pe.Type() == "TimeoutError" && session.Survives(err) {
			return true, nil
		}
		if errors.As(err, &te) && te.Watchdog && !session.Survives(err) {
			return false, nil
		}
	case faultMemory:
		if errors.As(err, &pe) && pe.Type() == "MemoryError" && session.Survives(err) {
			return true, nil
		}
	case faultException:
		if errors.As(err, &pe) && pe.Type() == "ValueError" && pe.Exception.Msg() == fmt.Sprintf("boom %d", n) &&
			session.Survives(err) {
			return true, nil
		}
	}
	return bad()
}

// waitComputing waits until the worker is running (state R: it has read
// the feed and is executing it), or until stop is closed or 5 s pass.
func waitComputing(pid int, stop <-chan struct{}) bool {
	return testenv.WaitChildState(pid, 5*time.Second, stop, "R")
}

func kill(pid int) bool {
	return testenv.IsChild(pid) && syscall.Kill(pid, syscall.SIGKILL) == nil
}

func waitNoChildren(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		c := testenv.Children()
		if len(c) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("worker processes left behind: %v", c)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

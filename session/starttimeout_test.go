package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
)

// A worker that never answers Configure is killed after StartTimeout and
// Start fails with a typed error (parent.never_reads of the conformance
// kit).
func TestStartTimeoutKillsSilentWorker(t *testing.T) {
	fs := &fakeSpawner{bin: fakeBinary(t), version: 2,
		handler: func(int) fakeHandler {
			return func(*message.ParentRequest) fakeReply { return fakeReply{hang: true, exit: -1} }
		}}
	cfg := Config{Logger: quietLogger, StartTimeout: 200 * time.Millisecond}
	begin := time.Now()
	s, err := Start(context.Background(), fs.launch(2), cfg)
	if err == nil {
		s.Close()
		t.Fatal("Start succeeded against a worker that never answers")
	}
	var ste *StartTimeoutError
	if !errors.As(err, &ste) || ste.Timeout != 200*time.Millisecond {
		t.Fatalf("Start: %v (%T), want a *StartTimeoutError of 200ms", err, err)
	}
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("%v does not match ErrTimeout", err)
	}
	// Only a lower bound: the timeout must not fire early.
	if d := time.Since(begin); d < 200*time.Millisecond {
		t.Fatalf("Start failed after %v, before its timeout", d)
	}
	select {
	case <-fs.last().killCh:
	default:
		t.Fatal("the silent worker was not killed")
	}
}

// The caller's own deadline keeps its own error: only the start bound is
// a StartTimeoutError.
func TestStartTimeoutCallerDeadlineWins(t *testing.T) {
	fs := &fakeSpawner{bin: fakeBinary(t), version: 2,
		handler: func(int) fakeHandler {
			return func(*message.ParentRequest) fakeReply { return fakeReply{hang: true, exit: -1} }
		}}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := Start(ctx, fs.launch(2), Config{Logger: quietLogger, StartTimeout: time.Hour})
	var ste *StartTimeoutError
	if err == nil || errors.As(err, &ste) {
		t.Fatalf("Start: %v, want the caller's deadline, not a StartTimeoutError", err)
	}
}

func TestStartTimeoutDefault(t *testing.T) {
	if got := (Config{}).withDefaults().StartTimeout; got != DefaultStartTimeout || got <= 0 {
		t.Fatalf("default StartTimeout %v", got)
	}
}

//go:build unix

package conform

import (
	"context"
	"syscall"
	"testing"
)

// When a rule's time runs out or the run is canceled, the runner kills
// the rule's workers and waits for the rule to end. A rule that was
// starting a worker just then registered it after the kill, and went on
// to wait for that worker's reply, which never came (a worker that does
// not read), with nothing left to end the wait: the run hung
// (TestCanceledRunSaysCanceled did so now and then under load). A session
// opened after the kill is now killed at once and ends the rule, its
// verdict still the runner's.
func TestSessionOpenedAfterTheKillEndsTheRule(t *testing.T) {
	r := &rt{ctx: context.Background(), Version: 2, status: Pass,
		target: Target{Binary: "/bin/sh", Args: []string{"-c", "exec sleep 1000"}}}
	// What runOne does when the time is up, here before the rule opened
	// its worker.
	const verdict = "not finished: context canceled (before the first request)"
	r.setResult(Fail, verdict)
	r.killAll()

	opened := make(chan *sess, 1)
	var conns []conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			r.mu.Lock()
			conns = append(conns, r.conns...)
			r.mu.Unlock()
			r.closeAll() // as the rule's goroutine does when it ends
		}()
		opened <- r.Open()
	}()
	<-done
	select {
	case <-opened:
		t.Fatal("Open returned a live session after the rule's workers were killed")
	default:
	}
	if len(conns) != 1 {
		t.Fatalf("%d sessions registered, want the one opened", len(conns))
	}
	p := conns[0].(*proc)
	if ex, err := p.wait(context.Background()); err != nil || ex.Signal != syscall.SIGKILL {
		t.Errorf("the late worker's exit %v (%v), want SIGKILL", ex, err)
	}
	if st, detail := r.result(); st != Fail || detail != verdict {
		t.Errorf("verdict %s %q, want the runner's %q", st, detail, verdict)
	}
}

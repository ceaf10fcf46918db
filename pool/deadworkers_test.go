//go:build unix

package pool

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// awaitStopped waits until the process pid is stopped (state T in
// /proc/PID/stat), where /proc has it.
func awaitStopped(t *testing.T, pid int) {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return // no /proc: the checkout's StartTimeout still bounds the test
		}
		s := string(b)
		if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 0 && f[0] == "T" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker %d not stopped 10 s after SIGSTOP", pid)
		}
	}
}

// killCheckedOut SIGKILLs every worker checked out of p and waits for
// each exit: the workers a checkout is about to configure die first.
func killCheckedOut(p *Pool) {
	p.mu.Lock()
	var ms []*member
	for m := range p.busy {
		ms = append(ms, m)
	}
	p.mu.Unlock()
	for _, m := range ms {
		syscall.Kill(m.pid, syscall.SIGKILL)
		<-m.proc.Exited()
	}
}

// A checkout whose every worker dies before its Configure (SIGKILLed
// between the checkout and the Configure, as an OOM killer or an
// operator's pkill does to all of them at once) fails with a typed error
// and no session: each death counts toward the restart cap, as an idle
// death does, and the one that trips it ends the checkout with the
// *UnhealthyError, whose last failure is the crash. Before, the error of
// the last Configure was lost to a shadowed variable and Checkout
// returned a nil *Session with a nil error, so the caller's first call on
// it panicked. (Later, such deaths were three failed attempts of the
// checkout, not failures toward the cap: see
// TestCheckoutOutlivesWorkersKilledWhileIdle.)
func TestCheckoutWhoseWorkersAllDieFails(t *testing.T) {
	const maxRestarts = 2
	var tries atomic.Int32
	var p *Pool
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, MaxRestarts: maxRestarts, RestartWindow: 5 * time.Second,
		attaching: func(done bool) {
			if !done {
				tries.Add(1)
				killCheckedOut(p)
			}
		}})
	s, err := p.Checkout(context.Background(), session.Config{})
	if s != nil {
		s.Close()
	}
	if err == nil {
		t.Fatalf("Checkout on workers that all died: session %v and no error", s)
	}
	if s != nil {
		t.Fatalf("Checkout returned both a session and %v", err)
	}
	var ue *UnhealthyError
	if !errors.As(err, &ue) || ue.Failures != maxRestarts+1 || !errors.Is(err, worker.ErrCrashed) {
		t.Errorf("Checkout: %v (%T), want an *UnhealthyError of %d failures matching worker.ErrCrashed", err, err, maxRestarts+1)
	}
	if n := tries.Load(); n != maxRestarts+1 {
		t.Errorf("%d workers tried, want %d", n, maxRestarts+1)
	}
	if n := rec.reach(EventCrash, ReasonVanished, maxRestarts+1); n != maxRestarts+1 {
		t.Errorf("%d vanished crashes, want %d", n, maxRestarts+1)
	}
	// The pool is not worse for it: once the restart window has passed,
	// the next checkout gets a live worker.
	p.cfg.attaching = nil
	eventually(t, p, 30*time.Second, "healthy with a worker idle", func(st Stats) bool { return st.Healthy && st.Idle == 1 })
	s = checkout(t, p)
	runRepr(t, s, "1 + 1")
	s.Close()
}

// A checkout whose context has ended takes an idle worker and gives it
// straight back, unconfigured: the event stream says nothing of that
// worker, neither a checkout nor a release, so a Metrics consumer that
// counts sessions out as checkouts minus releases stays right. Before,
// the worker's return was an EventRelease with no EventCheckout before
// it, and such a count went negative by one per canceled checkout.
func TestCanceledCheckoutReleasesNothing(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 3 {
		if _, err := p.Checkout(ctx, session.Config{}); !errors.Is(err, ErrExhausted) {
			t.Fatalf("Checkout with a canceled context: %v, want ErrExhausted", err)
		}
	}
	s := checkout(t, p)
	runRepr(t, s, "1 + 1")
	s.Close()
	eventually(t, p, 10*time.Second, "the worker idle", func(st Stats) bool { return st.Idle == 1 })
	out, rel := rec.countNow(EventCheckout, ""), rec.countNow(EventRelease, "")
	if out != 1 || rel != 1 {
		t.Errorf("%d checkout and %d release events, want 1 and 1", out, rel)
	}
	if st := p.Stat(); st.Checkouts != 1 || st.Exhausted != 3 || st.Busy != 0 || st.Live != 1 {
		t.Errorf("%+v", st)
	}
}

// A checkout whose worker does not answer the Configure (a wedged or
// SIGSTOPped process) tries the next worker, as it does after a worker
// found dead: the hung one is killed and counted a timeout crash, and the
// checkout gets the other idle worker. Before, the checkout failed with
// the *session.StartTimeoutError although a good worker sat idle, while a
// remote start that timed out was already tried on the next endpoint.
func TestCheckoutSkipsAWorkerThatHangsOnConfigure(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 2, MaxWorkers: 2})
	eventually(t, p, 10*time.Second, "two idle workers", func(st Stats) bool { return st.Idle == 2 })
	p.mu.Lock()
	hung := p.idle[len(p.idle)-1] // the next checkout's
	p.mu.Unlock()
	if err := syscall.Kill(hung.pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// kill returns once the signal is queued; the worker stops a moment
	// later. Checking out before it has stopped can find it answering the
	// Configure (seen once under load, with a relay worker).
	awaitStopped(t, hung.pid)
	// Bounded as the handshake is; short, since it is waited out.
	s, err := p.Checkout(context.Background(), session.Config{StartTimeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("Checkout with one worker hung and one idle: %v (%T)", err, err)
	}
	defer s.Close()
	if s.WorkerID() == hung.id {
		t.Fatalf("handed out the hung worker %d", hung.id)
	}
	runRepr(t, s, "1 + 1")
	<-hung.proc.Exited() // killed, not left stopped
	if n := rec.count(EventCrash, ReasonTimeout); n != 1 {
		t.Errorf("%d timeout crashes, want 1 (the hung worker)", n)
	}
}

// A checkout counts in Stats.CheckoutsWaited once, however many times it
// waits: here it waits for the only worker, which dies before its
// Configure, and waits again for the replacement. Before, each wait
// counted, so CheckoutsWaited could exceed the checkouts made.
func TestCheckoutThatWaitsTwiceCountsOnce(t *testing.T) {
	var attaches atomic.Int32
	var p *Pool
	p, _ = newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, attaching: func(done bool) {
		if !done && attaches.Add(1) == 2 { // the waiting checkout's first worker
			killCheckedOut(p)
		}
	}})
	a := checkout(t, p) // takes the only worker at once: no wait
	res := make(chan error, 1)
	go func() {
		s, err := p.Checkout(context.Background(), session.Config{})
		if err == nil {
			s.Close()
		}
		res <- err
	}()
	eventually(t, p, 10*time.Second, "a waiting checkout", func(st Stats) bool { return st.Waiting == 1 })
	a.Close() // hands the worker to the waiting checkout, whose Configure finds it dead
	if err := <-res; err != nil {
		t.Fatalf("Checkout: %v", err)
	}
	if n := attaches.Load(); n != 3 {
		t.Fatalf("%d Configures, want 3 (the first checkout's, then the waiting one's two)", n)
	}
	if st := p.Stat(); st.CheckoutsWaited != 1 || st.Checkouts != 2 {
		t.Errorf("%d checkouts waited and %d made, want 1 and 2", st.CheckoutsWaited, st.Checkouts)
	}
}

// What a checkout waits is the sum of its waits: the EventCheckout (and
// so monty.pool.checkout.wait) of a checkout that waited for the only
// worker, found it dead and waited for the replacement reports both
// waits. Before, it reported the last one only.
func TestCheckoutWaitIsTheSumOfItsWaits(t *testing.T) {
	var attaches atomic.Int32
	var p *Pool
	var rec *recorder
	p, rec = newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, attaching: func(done bool) {
		if !done && attaches.Add(1) == 2 { // the waiting checkout's first worker
			killCheckedOut(p)
		}
	}})
	a := checkout(t, p)
	res := make(chan *Session, 1)
	go func() {
		s, err := p.Checkout(context.Background(), session.Config{})
		if err != nil {
			t.Error(err)
		}
		res <- s
	}()
	eventually(t, p, 10*time.Second, "a waiting checkout", func(st Stats) bool { return st.Waiting == 1 })
	const hold = 300 * time.Millisecond
	time.Sleep(hold) // the first wait lasts at least this long
	a.Close()
	if s := <-res; s != nil {
		s.Close()
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var evs []Event
	for _, e := range rec.evs {
		if e.Kind == EventCheckout {
			evs = append(evs, e)
		}
	}
	if len(evs) != 2 {
		t.Fatalf("%d checkout events, want 2", len(evs))
	}
	if w := evs[1].Waited; w < hold {
		t.Errorf("the waiting checkout reports %v waited, want at least the %v of its first wait", w, hold)
	}
}

// CheckoutTimeout bounds a checkout's waits together: one that waited
// most of it for the only worker, found it dead, and waits for a
// replacement that never comes up gives up when the CheckoutTimeout is
// spent, not a whole CheckoutTimeout later.
func TestCheckoutTimeoutBoundsAllWaits(t *testing.T) {
	// A fresh CheckoutTimeout for the second wait could not end it before
	// hold + timeout after start (the second wait begins after hold), while
	// the right one ends about timeout after start, late by whatever a
	// loaded machine adds. The test shows the difference by hold, so hold
	// is long enough to swallow seconds of lateness, and 2 s short of
	// timeout so that the first wait ends well before the timeout would.
	const timeout, hold = 6 * time.Second, 4 * time.Second
	var attaches atomic.Int32
	var p *Pool
	proc, neg, err := session.Negotiate(context.Background(), session.Launch{}, session.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	proc.Close(context.Background())
	// The first worker is real; every later start hangs, so the worker
	// killed below has no replacement within the test.
	p, _ = newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, CheckoutTimeout: timeout, ProtocolVersion: neg.Version,
		Worker: worker.Config{Binary: silentAfter(t, 1)}, StartTimeout: time.Minute,
		attaching: func(done bool) {
			if !done && attaches.Add(1) == 2 {
				killCheckedOut(p)
			}
		}})
	a := checkout(t, p)
	res := make(chan error, 1)
	start := time.Now()
	go func() {
		s, err := p.Checkout(context.Background(), session.Config{})
		if err == nil {
			s.Close()
		}
		res <- err
	}()
	eventually(t, p, 10*time.Second, "a waiting checkout", func(st Stats) bool { return st.Waiting == 1 })
	time.Sleep(hold)
	a.Close()
	err = <-res
	took := time.Since(start)
	var ee *ExhaustedError
	if !errors.As(err, &ee) {
		t.Fatalf("Checkout: %v (%T), want an *ExhaustedError", err, err)
	}
	if n := attaches.Load(); n != 2 {
		t.Fatalf("%d Configures, want 2", n)
	}
	// A fresh CheckoutTimeout for the second wait would end it no sooner
	// than hold + timeout.
	if took >= hold+timeout {
		t.Errorf("Checkout gave up after %v: CheckoutTimeout %v ran afresh after a %v wait", took, timeout, hold)
	}
	if ee.Waited < hold {
		t.Errorf("ExhaustedError.Waited %v, want the sum of the waits (at least %v)", ee.Waited, hold)
	}
}

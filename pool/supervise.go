package pool

// This file is the supervision of the pool: the supervisor goroutine that
// keeps it at strength, worker starts, and the restart gate around them.

import (
	"context"
	"errors"
	"log/slog"
	"time"

	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// failLocked counts a failure toward the restart cap and, when it trips,
// fails the waiting checkouts.
func (p *Pool) failLocked(now time.Time, err error, a *after) {
	uerr := p.gate.fail(now, err)
	if uerr == nil {
		return
	}
	for _, w := range p.waiters {
		w.ch <- handoff{err: uerr}
	}
	clear(p.waiters)
	p.waiters = p.waiters[:0]
	a.evs = append(a.evs, Event{Kind: EventUnhealthy, Err: uerr})
	a.logs = append(a.logs, func() {
		p.log.Error("monty pool: restart cap tripped; checkouts refused until the restart window passes", slog.Any("error", uerr))
	})
	a.kick = true
}

// recoverLocked ends the unhealthy state once its window has passed.
func (p *Pool) recoverLocked(now time.Time, a *after) {
	if !p.gate.recover(now) {
		return
	}
	a.evs = append(a.evs, Event{Kind: EventHealthy})
	a.logs = append(a.logs, func() { p.log.Info("monty pool: healthy again; starting workers") })
	a.kick = true
}

// spawn starts one worker (p.spawning was raised for it) and adds it to
// the pool. ctx is New's for the prewarm, else the pool's life.
func (p *Pool) spawn(ctx context.Context) {
	start := time.Now()
	proc, err := p.startWorker(ctx)
	d := time.Since(start)
	var a after
	defer p.finish(&a)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spawning--
	if err != nil {
		if p.closing.Load() {
			return
		}
		p.st.spawnFailures++
		p.owed++
		a.evs = append(a.evs, Event{Kind: EventSpawnFailed, Duration: d, Err: err})
		a.kick = true
		if ctx.Err() != nil {
			// New's ctx ended the prewarm: the caller stopped waiting,
			// which says nothing about the binary. No backoff, no
			// failure toward the restart cap; the supervisor replaces it.
			return
		}
		now := time.Now()
		backoff := p.gate.startFailed(now)
		a.logs = append(a.logs, func() {
			p.log.Warn("monty pool: worker start failed", slog.Any("error", err), slog.Duration("retry_in", backoff))
		})
		p.failLocked(now, err, &a)
		return
	}
	p.gate.started()
	if p.closing.Load() {
		a.procs = append(a.procs, proc)
		return
	}
	m := p.adoptLocked(proc)
	a.evs = append(a.evs, Event{Kind: EventSpawn, WorkerID: m.id, Pid: m.pid, Duration: d})
	p.putLocked(m, true)
}

// startWorker starts a worker and handshakes it: Configure with the pool's
// version, then Reset, so it is known to speak the protocol.
// A start that StartTimeout cut short fails with a
// *session.StartTimeoutError.
func (p *Pool) startWorker(ctx context.Context) (*worker.Process, error) {
	return withinStartTimeout(p, ctx, p.handshake)
}

// handshake is startWorker within ctx.
func (p *Pool) handshake(ctx context.Context) (*worker.Process, error) {
	proc, err := worker.Start(ctx, p.cfg.Worker)
	if err != nil {
		return nil, err
	}
	s, err := session.Attach(ctx, proc, p.version, p.handshakeConfig())
	if err != nil {
		return nil, err
	}
	if _, err := s.Detach(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return proc, nil
}

// withinStartTimeout runs a start (a local worker's, or a remote
// session's) with ctx bounded by StartTimeout. An error the bound caused,
// not ctx, is a *session.StartTimeoutError, as session.Start reports its
// own bound.
func withinStartTimeout[T any](p *Pool, ctx context.Context, start func(context.Context) (T, error)) (T, error) {
	sctx, cancel := context.WithTimeout(ctx, p.cfg.StartTimeout)
	defer cancel()
	v, err := start(sctx)
	var ste *session.StartTimeoutError
	if err != nil && sctx.Err() != nil && ctx.Err() == nil && !errors.As(err, &ste) {
		err = &session.StartTimeoutError{Timeout: p.cfg.StartTimeout, Err: err}
	}
	return v, err
}

// handshakeConfig is the session.Config of the sessions that start
// workers (the first one's negotiation, each spawn's handshake): the
// pool's logger and MeterProvider (their frames are on the wire too), and
// no spans (a session span is a checkout's), so that a pool given its own
// providers records nothing through the global ones.
func (p *Pool) handshakeConfig() session.Config {
	return session.Config{Logger: p.cfg.Logger, TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: p.cfg.MeterProvider}
}

// kick wakes the supervisor.
func (p *Pool) kick() {
	select {
	case p.kickCh <- struct{}{}:
	default:
	}
}

// supervise keeps the pool at strength until Close.
func (p *Pool) supervise() {
	defer p.wg.Done()
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		select {
		case <-p.kickCh:
		case <-t.C:
		case <-p.life.Done():
			t.Stop()
			return
		}
		if next := p.reconcile(); !next.IsZero() {
			t.Reset(time.Until(next))
		} else {
			t.Stop()
		}
	}
}

// reconcile sweeps dead idle workers, scales down, and starts the workers
// the pool lacks. It returns when it wants to run again (zero: on the next
// kick only).
func (p *Pool) reconcile() time.Time {
	if f := p.cfg.reconciled; f != nil {
		defer f()
	}
	var a after
	defer p.finish(&a)
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing.Load() {
		return time.Time{}
	}
	var next time.Time
	soon := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	p.recoverLocked(now, &a)
	for i := 0; i < len(p.idle); {
		if m := p.idle[i]; exited(m.proc) {
			p.lostIdleLocked(m, &a)
			continue
		}
		i++
	}
	if !p.gate.healthy() {
		return p.gate.tripped.Until
	}
	if d := p.cfg.IdleTimeout; d > 0 {
		for len(p.idle) > 0 && p.liveLocked() > p.cfg.MinWorkers {
			m := p.idle[0] // the longest idle
			if exp := m.idleSince.Add(d); now.Before(exp) {
				soon(exp)
				break
			}
			p.dropLocked(m)
			a.procs = append(a.procs, m.proc)
			a.evs = append(a.evs, Event{Kind: EventScaleDown, WorkerID: m.id, Pid: m.pid})
		}
	}
	want := min(max(p.cfg.MinWorkers, p.busyAlive+len(p.waiters)), p.cfg.MaxWorkers)
	need := want - p.liveLocked() - p.spawning
	switch {
	case need <= 0:
		if p.spawning == 0 {
			p.owed = 0
		}
	case !p.gate.next(now).IsZero():
		soon(p.gate.next(now))
	default:
		for range need {
			p.spawning++
			if p.owed > 0 {
				p.owed--
				p.st.restarts++
				a.evs = append(a.evs, Event{Kind: EventReplace})
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.spawn(p.life)
			}()
		}
	}
	if d := p.cfg.IdleTimeout; d > 0 && p.liveLocked()+p.spawning > p.cfg.MinWorkers {
		// A worker beyond MinWorkers (busy or starting) may go idle and
		// expire: look again then. At MinWorkers none can, and the pool
		// only grows through this pass, so the timer is not armed (it
		// used to be, every IdleTimeout, for ever).
		soon(now.Add(d))
	}
	return next
}

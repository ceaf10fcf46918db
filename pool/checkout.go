package pool

// This file is the checkout side of the pool: handing a worker to a
// Checkout (at once or after a wait), and taking it back when the session
// ends, reset for reuse or destroyed.

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// checkoutAttempts bounds how many workers one Checkout tries when the
// Configure fails because the worker turned out to be dead.
const checkoutAttempts = 3

// handoff is what a waiting Checkout receives: a worker, or the error that
// ends its wait.
type handoff struct {
	m       *member
	spawned bool // m was just started
	err     error
}

type waiter struct{ ch chan handoff }

// Checkout hands out a session configured with cfg (a nil cfg.Logger
// means the pool's Logger), on a local worker or, with Config.Endpoints,
// on a remote endpoint.
//
// Where it goes: the local workers count as one endpoint whose load is
// their checked-out sessions, each remote endpoint's load is its
// outstanding sessions; the least loaded wins, the local workers on a tie
// and only while a worker is idle or may be started (not while a failed
// start's RestartBackoff runs). Endpoints backed off
// are skipped. A remote start that fails (a failed dial, a 503 or 429, no
// Configure answer within StartTimeout, a drop, a Configure refused with
// an Error) is tried on the next endpoint, the local workers included; a
// Config that cannot be encoded (a *session.InvalidRequestError, charged
// to no endpoint) or a header error is returned at once. When every endpoint is backed off or has
// failed, the checkout waits for a local worker, or, without local
// workers, fails with the first endpoint's refusal of the Configure (a
// *session.PythonError: the Config is at fault) if there was one, else
// with an error matching ErrNoEndpoint. An endpoint that refused the
// Configure, or closed with 1008 or 1009 on it, is backed off only when
// the checkout then got its session elsewhere: that Config was not at
// fault, and an endpoint that turns every Configure away (a broken or
// hostile server, which always has the fewest sessions) would otherwise
// be every checkout's first choice.
//
// On the local workers: it takes an idle worker if there is one, else
// waits until one is returned or started, for as long as ctx and
// CheckoutTimeout allow: giving up is an *ExhaustedError (matching
// ErrExhausted and the context's error), also when ctx ends while the
// worker is being configured: the worker then goes back to the pool once
// its Configure is answered (cfg.StartTimeout bounds it), rather than
// being killed. A closed pool gives ErrClosed, a
// tripped restart cap an *UnhealthyError at once (or a remote endpoint,
// when there is one). A Config whose Configure cannot be sent (see
// session.Config.Validate) is refused before a worker is taken. A worker
// that refuses the Configure is destroyed and the refusal returned. A
// worker that died while idle (killed from outside) before the pool
// noticed, so that the Configure could not be sent to it, is a worker
// lost while idle: it is replaced, counts toward the restart cap, and the
// checkout goes on as if it had never taken it (until the cap trips:
// then the *UnhealthyError). One that dies reading or answering the
// Configure, or that does not answer it within cfg.StartTimeout (a
// *session.StartTimeoutError: a hung or stopped process), is replaced and
// the next worker tried, up to three workers: then the last one's error
// is returned.
//
// Running out of time fails alike on every path: when ctx ends (a
// cancel or its deadline) or CheckoutTimeout passes before the checkout
// has a session, whether it was waiting for a local worker, configuring
// one, dialling an endpoint or waiting for a remote Configure's answer, the
// error is an *ExhaustedError, matching ErrExhausted, the context's error
// and its cause; so one errors.Is(err, ErrExhausted) covers them all. A
// remote start it cut short is kept as ExhaustedError.Start (a
// *ws.DialError, a *session.TimeoutError or *session.CanceledError), which
// errors.Is and errors.As also see. Errors that do not depend on the time
// are returned as they are even then: ErrClosed, a Config that cannot be
// encoded, a header that cannot be sent, a Configure refused with an
// Error.
//
// The Session must be closed (Close or Destroy) to give the worker back
// or, for a remote session, to close its connection.
func (p *Pool) Checkout(ctx context.Context, cfg session.Config) (*Session, error) {
	start := time.Now()
	s, ep, err := p.checkout(ctx, cfg)
	if err != nil {
		var ee *ExhaustedError
		if !errors.As(err, &ee) { // an exhausted checkout has its EventExhausted
			p.tel.checkoutFailed(ep, time.Since(start))
		}
	}
	return s, err
}

// checkout is Checkout; ep is the endpoint the session runs on, or on
// failure that of the last start it tried ("" when it tried none).
func (p *Pool) checkout(ctx context.Context, cfg session.Config) (*Session, string, error) {
	if cfg.Logger == nil {
		cfg.Logger = p.cfg.Logger
	}
	if cfg.TracerProvider == nil {
		cfg.TracerProvider = p.cfg.TracerProvider
	}
	if cfg.MeterProvider == nil {
		cfg.MeterProvider = p.cfg.MeterProvider
	}
	if len(p.eps) == 0 {
		s, err := p.checkoutLocal(ctx, cfg, false)
		return s, LocalEndpoint, err
	}
	// With endpoints, CheckoutTimeout bounds the whole checkout: the
	// remote starts tried and the wait for a local worker.
	begin, parent := time.Now(), ctx
	if d := p.cfg.CheckoutTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, checkoutTimeoutError(d))
		defer cancel()
	}
	tried := make([]bool, len(p.eps))
	var (
		last    error
		ep      string
		tripped bool // the local wait ended with the restart cap tripping
		// turnedAway are the endpoints that turned this Config away in a
		// way its own fault may explain (configFault); refusal is the
		// first such refusal with an Error, returned when nothing else
		// serves the Config.
		turnedAway []*endpoint
		refusal    error
	)
	for {
		e, local, err := p.choose(tried)
		switch {
		case err != nil:
			return nil, ep, err
		case local:
			s, err := p.checkoutLocal(ctx, cfg, true)
			var ue *UnhealthyError
			if !tripped && errors.As(err, &ue) && ctx.Err() == nil {
				// The cap tripped while it waited: the endpoints not yet
				// tried may serve, as for a checkout that finds it
				// tripped (choose no longer picks the local workers,
				// unless nothing else is left: then it fails at once).
				tripped = true
				continue
			}
			if err == nil {
				p.servedElsewhere(turnedAway)
			}
			return s, LocalEndpoint, err
		case e == nil:
			if refusal != nil {
				// Refused by an endpoint and served by none: the
				// Config is at fault, as far as anyone can tell.
				return nil, ep, refusal
			}
			if last != nil {
				// One line (errors.Join's would be two), matching both.
				return nil, ep, fmt.Errorf("%w; the last failure: %w", ErrNoEndpoint, last)
			}
			return nil, ep, ErrNoEndpoint
		}
		tried[e.idx] = true
		ep = e.Name
		s, err := p.checkoutRemote(ctx, parent, e, cfg)
		if err == nil {
			p.servedElsewhere(turnedAway)
			// Where the session runs: a start e drained resumed elsewhere.
			return s, s.Endpoint(), nil
		}
		if configFault(err) {
			turnedAway = append(turnedAway, e)
			var pe *session.PythonError
			if refusal == nil && errors.As(err, &pe) {
				refusal = err
			}
		}
		if !retryElsewhere(ctx, err) {
			if ctx.Err() != nil && cutShort(err) {
				// The caller's context or CheckoutTimeout ended during a
				// remote start: exhausted, as a local checkout is whose
				// time runs out, with the start's error kept.
				return nil, ep, p.exhausted(ep, time.Since(begin), context.Cause(ctx), ctx.Err(), err, false)
			}
			return nil, ep, err
		}
		last = err
	}
}

// checkoutTimeoutError is why a checkout stopped at CheckoutTimeout; it
// matches context.DeadlineExceeded.
func checkoutTimeoutError(d time.Duration) error {
	return fmt.Errorf("CheckoutTimeout %v: %w", d, context.DeadlineExceeded)
}

// cutShort reports whether a remote start that failed once the checkout's
// time had run out failed for the lack of time, as far as the checkout
// can tell: not when the pool is closing, nor with an answer that holds
// whatever the time (a Config that cannot be encoded, a header that cannot
// be sent, a Configure the server refused with an Error: a local checkout
// returns those too).
func cutShort(err error) bool {
	var py *session.PythonError
	return !errors.Is(err, ErrClosed) && !callersFault(err) && !headerFault(err) && !errors.As(err, &py)
}

// exhausted accounts for a checkout that gave up after waited, waiting
// for endpoint ep (LocalEndpoint for a local worker), and returns its
// error; start is the error of the remote start it cut short, if any;
// inHand says it had taken a local worker, which it gave back.
func (p *Pool) exhausted(ep string, waited time.Duration, why, ctxErr, start error, inHand bool) error {
	p.mu.Lock()
	p.st.exhausted++
	err := &ExhaustedError{Waited: waited, Live: p.liveLocked(), Max: p.cfg.MaxWorkers, Err: why, Start: start, ctxErr: ctxErr, inHand: inHand}
	if p.cfg.NoLocal {
		err.Max = 0 // MaxWorkers has no effect: no local worker can start
	}
	p.mu.Unlock()
	p.emit(Event{Kind: EventExhausted, Waited: waited, Err: err, Endpoint: ep})
	return err
}

// checkoutLocal is Checkout on the local workers; chosen says choose
// counted this checkout in Pool.chosen, which its first acquire releases.
func (p *Pool) checkoutLocal(ctx context.Context, cfg session.Config, chosen bool) (*Session, error) {
	// A Configure that cannot be sent is the caller's mistake: refuse it
	// before a worker is taken, which Attach would then have to stop.
	err := cfg.Validate(p.version)
	if err != nil {
		if chosen {
			p.mu.Lock()
			p.chosen--
			p.mu.Unlock()
		}
		return nil, err
	}
	var cw checkoutWait
	for tries := 0; tries < checkoutAttempts; {
		var (
			m       *member
			waited  time.Duration
			spawned bool
		)
		m, waited, spawned, err = p.acquire(ctx, chosen, &cw)
		chosen = false
		if err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			// Configuring now would kill a good worker; give it back.
			p.checkin(m, false)
			return nil, p.exhausted(LocalEndpoint, waited, context.Cause(ctx), ctx.Err(), nil, true)
		}
		if f := p.cfg.attaching; f != nil {
			f(false)
		}
		var (
			s      *session.Session
			gaveUp bool
		)
		// err, not a new one: the last Configure's failure is what the
		// checkout returns once its attempts run out.
		s, gaveUp, err = p.attach(ctx, m, cfg)
		switch {
		case gaveUp:
			return nil, p.exhausted(LocalEndpoint, waited, context.Cause(ctx), ctx.Err(), nil, true)
		case errors.Is(err, ErrClosed):
			return nil, err // attach stopped the worker
		}
		if f := p.cfg.attaching; f != nil && err == nil {
			f(true)
		}
		if err == nil {
			if !p.handOut(m, s) {
				s.Kill()
				s.Close()
				return nil, ErrClosed
			}
			m.uses.Add(1)
			p.checkouts.Add(1)
			p.emit(Event{Kind: EventCheckout, WorkerID: m.id, Pid: m.pid, Waited: waited, Spawned: spawned, Endpoint: LocalEndpoint})
			return &Session{s: s, pool: p, m: m, start: time.Now()}, nil
		}
		if deadBeforeConfigure(err) {
			// The worker died while idle (killed from outside) and the
			// pool had not noticed yet: not the checkout's attempt, as
			// it is not when acquire finds the death first.
			if p.lostBeforeConfigure(m, err) {
				return nil, ErrClosed
			}
			if ctx.Err() != nil {
				return nil, p.exhausted(LocalEndpoint, cw.total, context.Cause(ctx), ctx.Err(), nil, false)
			}
			continue
		}
		tries++
		retry, gone := p.attachFailed(m, err)
		if gone {
			// Close's deadline killed the worker, failing the Configure.
			return nil, ErrClosed
		}
		if !retry || ctx.Err() != nil {
			return nil, err
		}
	}
	return nil, err
}

// deadBeforeConfigure reports whether a checkout's Configure failed
// because its worker was dead before it was sent: the request could not
// be written (a broken pipe), so the worker never read it. A worker that
// dies reading or answering the Configure fails its read instead, which
// may be the Configure's doing and is one of the checkout's attempts.
func deadBeforeConfigure(err error) bool {
	var ce *worker.CrashError
	return errors.As(err, &ce) && ce.Reason == worker.Vanished && errors.Is(ce.Err, syscall.EPIPE)
}

// lostBeforeConfigure handles m, a checked-out worker found dead before
// its Configure (Attach has stopped it), as a worker found dead while
// idle: a crash, a failure toward the restart cap (which may trip it, and
// the checkout's next acquire then fails), and a replacement. It reports
// true when Close's deadline had dropped the worker.
func (p *Pool) lostBeforeConfigure(m *member, err error) (gone bool) {
	var a after
	defer p.finish(&a)
	p.mu.Lock()
	defer p.mu.Unlock()
	dead := m.dead
	if !p.dropLocked(m) {
		return true
	}
	reason, _ := crashReason(err)
	p.crashLocked(m, reason, err, &a)
	if p.closing.Load() {
		return false
	}
	if !dead {
		p.owed++
	}
	p.failLocked(time.Now(), err, &a)
	a.kick = true
	return false
}

// attach configures m, a worker acquire handed to a checkout, with cfg.
// The Configure is bounded by cfg's StartTimeout but not by ctx: when ctx
// ends first the checkout gives up at once (gaveUp) and the worker, which
// did nothing wrong, is given back once its Configure is answered (or
// stopped, as after any failed Configure). Killing it mid-Configure, as
// ctx would, made checkouts that time out under load eat the workers they
// had waited for. A closing pool stops m and fails with ErrClosed.
func (p *Pool) attach(ctx context.Context, m *member, cfg session.Config) (*session.Session, bool, error) {
	p.mu.Lock()
	if p.closing.Load() {
		p.mu.Unlock()
		p.checkin(m, false) // stops it
		return nil, false, ErrClosed
	}
	p.wg.Add(1) // Close waits for a Configure its checkout gave up on
	p.mu.Unlock()
	type result struct {
		s   *session.Session
		err error
	}
	done, abandon := make(chan result), make(chan struct{})
	go func() {
		defer p.wg.Done()
		s, err := session.Attach(context.WithoutCancel(ctx), m.proc, p.version, cfg)
		select {
		case done <- result{s, err}:
		case <-abandon:
			p.abandoned(m, s, err)
		}
	}()
	if ctx.Err() == nil {
		select {
		case r := <-done:
			return r.s, false, r.err
		case <-ctx.Done():
		}
	}
	close(abandon)
	return nil, true, nil
}

// abandoned ends a Configure on m whose checkout gave up: the worker is
// reset and goes back to the pool when the Configure succeeded, and is
// stopped otherwise, as after any failed Configure.
func (p *Pool) abandoned(m *member, s *session.Session, err error) {
	if deadBeforeConfigure(err) {
		p.lostBeforeConfigure(m, err)
		return
	}
	if err == nil {
		ctx, cancel := context.WithTimeout(p.life, p.cfg.StartTimeout)
		_, err = s.Detach(ctx)
		cancel()
		if err == nil {
			p.checkin(m, false)
			return
		}
		s.Kill()
		s.Close()
	}
	p.attachFailed(m, err)
}

// checkoutWait is what one checkout has waited for workers so far, over
// its attempts (a checkout whose worker was found dead waits again).
type checkoutWait struct {
	counted bool          // the checkout is counted in Stats.CheckoutsWaited
	total   time.Duration // the waits so far
}

// acquire takes an idle worker, or waits for one; spawned says the worker
// it waited for was just started. chosen releases the checkout's count in
// Pool.chosen (see choose). cw is the checkout's: a checkout is counted
// in Stats.CheckoutsWaited at its first wait only, CheckoutTimeout bounds
// its waits together, and the wait acquire returns (and reports in an
// ExhaustedError) is the checkout's total.
func (p *Pool) acquire(ctx context.Context, chosen bool, cw *checkoutWait) (*member, time.Duration, bool, error) {
	var a after
	defer p.finish(&a)
	p.mu.Lock()
	if chosen {
		p.chosen--
	}
	if err := p.refuseLocked(&a); err != nil {
		p.mu.Unlock()
		return nil, 0, false, err
	}
	for n := len(p.idle); n > 0; n = len(p.idle) {
		m := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		if exited(m.proc) {
			p.lostIdleLocked(m, &a)
			if !p.gate.healthy() {
				err := p.gate.tripped
				p.mu.Unlock()
				return nil, 0, false, err
			}
			continue
		}
		p.markBusyLocked(m)
		p.mu.Unlock()
		return m, cw.total, false, nil
	}
	w := &waiter{ch: make(chan handoff, 1)}
	p.waiters = append(p.waiters, w)
	if !cw.counted {
		cw.counted = true
		p.st.waited++
	}
	p.mu.Unlock()
	p.kick()

	start := time.Now()
	var timeout <-chan time.Time
	if d := p.cfg.CheckoutTimeout; d > 0 {
		// What the checkout's earlier waits left of it.
		t := time.NewTimer(max(d-cw.total, 0))
		defer t.Stop()
		timeout = t.C
	}
	var why, ctxErr error
	select {
	case h := <-w.ch:
		cw.total += time.Since(start)
		return h.m, cw.total, h.spawned, h.err
	case <-ctx.Done():
		why, ctxErr = context.Cause(ctx), ctx.Err()
	case <-timeout:
		why = checkoutTimeoutError(p.cfg.CheckoutTimeout)
	}
	cw.total += time.Since(start)
	waited := cw.total
	p.mu.Lock()
	if i := indexOf(p.waiters, w); i >= 0 {
		p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
		p.st.exhausted++
		err := &ExhaustedError{Waited: waited, Live: p.liveLocked(), Max: p.cfg.MaxWorkers, Err: why, ctxErr: ctxErr}
		p.mu.Unlock()
		a.evs = append(a.evs, Event{Kind: EventExhausted, Waited: waited, Err: err, Endpoint: LocalEndpoint})
		return nil, waited, false, err
	}
	p.mu.Unlock()
	// Handed a worker (or an error) just as the wait ended.
	h := <-w.ch
	if h.err != nil {
		return nil, waited, false, h.err
	}
	p.checkin(h.m, false)
	return nil, waited, false, p.exhausted(LocalEndpoint, waited, why, ctxErr, nil, true)
}

func indexOf(ws []*waiter, w *waiter) int {
	for i, x := range ws {
		if x == w {
			return i
		}
	}
	return -1
}

// refuseLocked returns the error a checkout gets at once, if any.
func (p *Pool) refuseLocked(a *after) error {
	if p.closing.Load() {
		return ErrClosed
	}
	p.recoverLocked(time.Now(), a)
	if !p.gate.healthy() {
		return p.gate.tripped
	}
	return nil
}

// handOut records s as the session on m, a checked-out worker whose
// Configure succeeded. It reports false when Close began meanwhile: the
// checkout then fails with ErrClosed, as every Checkout does from then
// on, and the caller stops the worker (Close's deadline may have killed
// it already). Recording s under the lock makes sure a later drop by
// Close's deadline sees it and kills the worker through it, so the
// session's turns fail with session.ErrClosed.
func (p *Pool) handOut(m *member, s *session.Session) bool {
	var a after
	defer p.finish(&a)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing.Load() {
		if p.dropLocked(m) {
			p.destroyedLocked(m, DestroyClosing, &a)
		}
		return false
	}
	m.sess.Store(s)
	return true
}

// attachFailed handles a worker whose checkout Configure failed (Attach
// has stopped it). It reports whether another worker should be tried,
// and gone when Close's deadline had dropped the worker (killing it,
// which failed the Configure): the checkout then fails with ErrClosed.
func (p *Pool) attachFailed(m *member, err error) (retry, gone bool) {
	var a after
	defer p.finish(&a)
	p.mu.Lock()
	defer p.mu.Unlock()
	dead := m.dead
	if !p.dropLocked(m) {
		return false, true
	}
	if !p.closing.Load() && !dead {
		p.owed++
	}
	a.kick = true
	var pe *session.PythonError
	if errors.As(err, &pe) {
		p.destroyedLocked(m, DestroyRefused, &a)
		return false, false
	}
	if reason, ok := crashReason(err); ok {
		p.crashLocked(m, reason, err, &a)
		// A worker that died, broke the protocol or hung (no answer to the
		// Configure within StartTimeout: a wedged or stopped process) is the
		// worker's fault, not the checkout's: try another one.
		var st *session.StartTimeoutError
		return reason == ReasonVanished || reason == ReasonAnnounced || reason == ReasonMemory || reason == ReasonProtocol ||
			errors.As(err, &st), false
	}
	p.destroyedLocked(m, DestroyRequested, &a)
	return false, false
}

// checkin returns a checked-out worker that has no session (detached, or
// never attached) to the pool, or stops it when the pool no longer wants
// it. handedOut says a checkout handed the worker out (its EventCheckout
// was emitted): only then is its return an EventRelease, so that the
// event stream pairs each release with a checkout. A worker a checkout
// gave up on before handing it out goes back without one.
func (p *Pool) checkin(m *member, handedOut bool) {
	var a after
	defer p.finish(&a)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case m.state != stBusy:
		// Close's deadline dropped it while it was being reset.
		a.procs = append(a.procs, m.proc)
	case p.closing.Load():
		p.dropLocked(m)
		p.destroyedLocked(m, DestroyClosing, &a)
		a.procs = append(a.procs, m.proc)
	case m.dead || exited(m.proc):
		if !m.dead {
			p.owed++
		}
		p.dropLocked(m)
		p.crashLocked(m, exitReason(m.proc), newIdleExitError(m, "exited while being returned"), &a)
		a.kick = true
		a.procs = append(a.procs, m.proc)
	default:
		m.sess.Store(nil)
		delete(p.busy, m)
		p.busyAlive--
		p.putLocked(m, false)
		if handedOut {
			a.evs = append(a.evs, Event{Kind: EventRelease, WorkerID: m.id, Pid: m.pid})
		}
	}
}

// release ends a checkout: the worker goes back to the pool when its
// session is clean, and is stopped otherwise.
func (p *Pool) release(s *Session, destroy bool) {
	if !s.released.CompareAndSwap(false, true) {
		return
	}
	m := s.m
	var (
		reason  Reason // a Destroy reason
		recycle bool
		cause   error
	)
	switch {
	case destroy:
		reason = DestroyRequested
	case p.closing.Load():
		reason = DestroyClosing
	case p.cfg.MaxCheckoutsPerWorker > 0 && m.uses.Load() >= int64(p.cfg.MaxCheckoutsPerWorker):
		recycle = true
	}
	if reason == "" && !recycle {
		// The session says whether its worker may be reused, and why not.
		err := s.s.Reusable()
		if err == nil {
			// Set before Detach, whose closing of the session would
			// otherwise show through Cause for a moment as an error.
			s.returned.Store(true)
			ctx, cancel := context.WithTimeout(p.life, p.cfg.StartTimeout)
			_, err = s.s.Detach(ctx)
			cancel()
			if err == nil {
				p.tel.sessionDone(s, true, "")
				p.checkin(m, true)
				return
			}
			s.returned.Store(false)
		}
		cause = err
		reason = destroyReason(err)
	} else {
		cause = s.s.Cause()
	}
	// A recycled worker, or one a closing pool no longer takes back, is
	// stopped however its session went; the session's outcome is still
	// its own (a crash is an error, an unfinished feed abandoned), as it
	// would be otherwise, and as a remote session's is.
	clean, outcome := false, reason
	if recycle || reason == DestroyClosing {
		if err := s.s.Reusable(); err == nil {
			clean = true
		} else {
			outcome = destroyReason(err)
		}
	}
	p.tel.sessionDone(s, clean, outcome)
	s.s.Kill()

	var a after
	p.mu.Lock()
	if dead := m.dead; p.dropLocked(m) {
		if !p.closing.Load() && !dead {
			p.owed++
		}
		a.kick = true
		crashed, ok := crashReason(cause)
		switch {
		case ok:
			p.crashLocked(m, crashed, cause, &a)
		case recycle:
			p.st.recycled++
			a.evs = append(a.evs, Event{Kind: EventRecycle, WorkerID: m.id, Pid: m.pid})
		default:
			p.destroyedLocked(m, reason, &a)
		}
	}
	p.mu.Unlock()
	s.s.Close()
	p.finish(&a)
}

// Run is the one-shot use of a pool: it checks out a session with cfg
// (as Checkout does), runs code in it (as session.Session.Run does, with
// opts) and closes the session, which resets the worker and gives it back
// (or replaces it, when the run left it unusable). Nothing of the run
// outlives it: use Checkout to keep globals between snippets.
//
// Its errors are Checkout's or Run's. Run is safe for concurrent use; each
// call holds one worker for its duration.
func (p *Pool) Run(ctx context.Context, cfg session.Config, code string, opts ...session.RunOption) (*session.Result, error) {
	s, err := p.Checkout(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Run(ctx, code, opts...)
}

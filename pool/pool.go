package pool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// checkoutAttempts bounds how many workers one Checkout tries when the
// Configure fails because the worker turned out to be dead.
const checkoutAttempts = 3

type memberState uint8

const (
	stIdle memberState = iota + 1
	stBusy             // checked out (or being configured for a checkout)
	stGone             // dropped by the pool; its process is being or has been stopped
)

// member is one worker of the pool.
type member struct {
	id      uint64
	proc    *worker.Process
	pid     int
	retired chan struct{} // closed when the pool drops the member; stops its watcher
	uses    atomic.Int64  // checkouts so far
	sess    atomic.Pointer[session.Session]

	// Guarded by Pool.mu.
	state     memberState
	dead      bool // the process exited while checked out
	idleSince time.Time
}

// handoff is what a waiting Checkout receives: a worker, or the error that
// ends its wait.
type handoff struct {
	m   *member
	err error
}

type waiter struct{ ch chan handoff }

// Pool keeps warm monty workers and hands out sessions on them.
//
// A Pool is safe for concurrent use by any number of goroutines.
type Pool struct {
	cfg     Config
	neg     session.Negotiation
	version uint32
	log     *slog.Logger

	life      context.Context // ends when Close stops everything
	stop      context.CancelFunc
	kickCh    chan struct{}
	wg        sync.WaitGroup // supervisor, spawns, watchers
	done      chan struct{}  // closed when Close has finished
	closing   atomic.Bool
	checkouts atomic.Int64

	mu        sync.Mutex
	idle      []*member // a stack: the top is the most recently used
	busy      map[*member]struct{}
	busyAlive int // busy members whose process is running
	spawning  int
	waiters   []*waiter
	nextID    uint64
	drained   chan struct{} // closed when busy empties during Close
	owed      int           // lost workers not yet replaced
	healthy   bool
	unhealthy *UnhealthyError
	failures  []time.Time // within RestartWindow
	backoff   time.Duration
	spawnAt   time.Time // no start before this
	st        counters
}

type counters struct {
	restarts, waited, exhausted, recycled, destroyed, spawnFailures int64
	crashes                                                         map[string]int
}

// Stats is a snapshot of a pool.
//
// Stats is plain data; Stat returns a fresh copy (including the map) each
// time.
type Stats struct {
	// Live is the number of running workers, idle or checked out.
	Live int
	// Idle is the number of workers waiting for a checkout.
	Idle int
	// Busy is the number of checked-out workers still running.
	Busy int
	// Spawning is the number of workers being started.
	Spawning int
	// Waiting is the number of checkouts waiting for a worker.
	Waiting int
	// Restarts counts workers the supervisor started in place of lost,
	// recycled or destroyed ones, or to retry a failed start (prewarm and
	// growth for waiting checkouts are not restarts).
	Restarts int64
	// Crashes counts lost workers by reason (the Reason constants).
	Crashes map[string]int
	// CheckoutsWaited counts checkouts that found no idle worker and had
	// to wait.
	CheckoutsWaited int64
	// Checkouts counts sessions handed out.
	Checkouts int64
	// Exhausted counts checkouts that gave up waiting.
	Exhausted int64
	// Recycled counts workers stopped after MaxCheckoutsPerWorker.
	Recycled int64
	// Destroyed counts workers stopped without a crash (see the Destroy
	// constants).
	Destroyed int64
	// SpawnFailures counts worker starts that failed.
	SpawnFailures int64
	// Healthy is false while the restart cap is tripped.
	Healthy bool
}

// New starts a pool: it resolves the worker binary, negotiates the
// protocol version with the first worker and prewarms MinWorkers, all
// handshaken, so Stat().Idle is MinWorkers when New returns (unless a
// later prewarm start failed; the supervisor then retries it).
//
// An unusable binary, or a first worker that cannot be started or
// configured, is an error: no pool is returned and nothing is left
// running. ctx bounds the prewarm only.
func New(ctx context.Context, cfg Config) (*Pool, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	bin, err := worker.ResolveBinary(cfg.Worker.Binary)
	if err != nil {
		return nil, fmt.Errorf("monty pool: %w", err)
	}
	cfg.Worker.Binary = bin
	p := &Pool{
		cfg:     cfg,
		log:     cfg.Logger.With(slog.String("worker", bin)),
		kickCh:  make(chan struct{}, 1),
		done:    make(chan struct{}),
		busy:    make(map[*member]struct{}),
		healthy: true,
		st:      counters{crashes: make(map[string]int)},
	}
	p.life, p.stop = context.WithCancel(context.Background())

	start := time.Now()
	nctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	peer, neg, err := session.Negotiate(nctx, session.Launch{
		Launcher: session.ProcessLauncher{Worker: cfg.Worker}, ProtocolVersion: cfg.ProtocolVersion,
	}, session.Config{Logger: cfg.Logger})
	cancel()
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("monty pool: first worker: %w", err)
	}
	proc := peer.(*worker.Process) // what a ProcessLauncher starts
	p.neg, p.version = neg, neg.Version
	p.mu.Lock()
	m := p.adoptLocked(proc)
	p.putLocked(m)
	p.mu.Unlock()
	p.emit(Event{Kind: EventSpawn, WorkerID: m.id, Pid: m.pid, Duration: time.Since(start)})

	var wg sync.WaitGroup
	p.mu.Lock()
	for range cfg.MinWorkers - 1 {
		p.spawning++
		wg.Go(func() { p.spawn(ctx) })
	}
	p.mu.Unlock()
	wg.Wait()

	p.wg.Add(1)
	go p.supervise()
	p.kick()
	return p, nil
}

// Version returns the protocol version every worker of the pool speaks.
func (p *Pool) Version() uint32 { return p.version }

// Negotiation reports how the first worker chose the protocol version.
func (p *Pool) Negotiation() session.Negotiation { return p.neg }

// Binary returns the resolved worker executable.
func (p *Pool) Binary() string { return p.cfg.Worker.Binary }

// Stat returns a snapshot of the pool's gauges and counters.
func (p *Pool) Stat() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{
		Live:            p.liveLocked(),
		Idle:            len(p.idle),
		Busy:            p.busyAlive,
		Spawning:        p.spawning,
		Waiting:         len(p.waiters),
		Restarts:        p.st.restarts,
		Crashes:         maps.Clone(p.st.crashes),
		CheckoutsWaited: p.st.waited,
		Checkouts:       p.checkouts.Load(),
		Exhausted:       p.st.exhausted,
		Recycled:        p.st.recycled,
		Destroyed:       p.st.destroyed,
		SpawnFailures:   p.st.spawnFailures,
		Healthy:         p.healthy,
	}
}

func (p *Pool) liveLocked() int { return len(p.idle) + p.busyAlive }

// Checkout hands out a session on a pool worker, configured with cfg (the
// worker and the protocol version are the pool's; a nil cfg.Logger means
// the pool's Logger). It takes an idle worker if there is one, else
// waits until one is returned or started, for as long as ctx and
// CheckoutTimeout allow: giving up is an *ExhaustedError (matching
// ErrExhausted and the context's error). A closed pool gives ErrClosed, a
// tripped restart cap an *UnhealthyError at once. A worker that refuses
// the Configure is destroyed and the refusal returned; one found dead is
// replaced and the next worker tried.
//
// The Session must be closed (Close or Destroy) to give the worker back.
func (p *Pool) Checkout(ctx context.Context, cfg session.Config) (*Session, error) {
	if cfg.Logger == nil {
		cfg.Logger = p.cfg.Logger
	}
	var err error
	for range checkoutAttempts {
		var (
			m      *member
			waited time.Duration
		)
		m, waited, err = p.acquire(ctx)
		if err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			// Configuring now would kill a good worker; give it back.
			p.checkin(m)
			return nil, &ExhaustedError{Waited: waited, Max: p.cfg.MaxWorkers, Err: context.Cause(ctx)}
		}
		var s *session.Session
		s, err = session.Attach(ctx, m.proc, p.version, cfg)
		if err == nil {
			m.sess.Store(s)
			m.uses.Add(1)
			p.checkouts.Add(1)
			p.emit(Event{Kind: EventCheckout, WorkerID: m.id, Pid: m.pid, Waited: waited})
			return &Session{s: s, pool: p, m: m}, nil
		}
		if !p.attachFailed(m, err) || ctx.Err() != nil {
			return nil, err
		}
	}
	return nil, err
}

// acquire takes an idle worker, or waits for one.
func (p *Pool) acquire(ctx context.Context) (*member, time.Duration, error) {
	var a after
	defer p.finish(&a)
	p.mu.Lock()
	if err := p.refuseLocked(&a); err != nil {
		p.mu.Unlock()
		return nil, 0, err
	}
	for n := len(p.idle); n > 0; n = len(p.idle) {
		m := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		if exited(m.proc) {
			p.lostIdleLocked(m, &a)
			if !p.healthy {
				err := p.unhealthy
				p.mu.Unlock()
				return nil, 0, err
			}
			continue
		}
		p.markBusyLocked(m)
		p.mu.Unlock()
		return m, 0, nil
	}
	w := &waiter{ch: make(chan handoff, 1)}
	p.waiters = append(p.waiters, w)
	p.st.waited++
	p.mu.Unlock()
	p.kick()

	start := time.Now()
	var timeout <-chan time.Time
	if d := p.cfg.CheckoutTimeout; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	var why error
	select {
	case h := <-w.ch:
		return h.m, time.Since(start), h.err
	case <-ctx.Done():
		why = context.Cause(ctx)
	case <-timeout:
		why = fmt.Errorf("CheckoutTimeout %v: %w", p.cfg.CheckoutTimeout, context.DeadlineExceeded)
	}
	waited := time.Since(start)
	p.mu.Lock()
	if i := indexOf(p.waiters, w); i >= 0 {
		p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
		p.st.exhausted++
		err := &ExhaustedError{Waited: waited, Live: p.liveLocked(), Max: p.cfg.MaxWorkers, Err: why}
		p.mu.Unlock()
		a.evs = append(a.evs, Event{Kind: EventExhausted, Waited: waited, Err: err})
		return nil, waited, err
	}
	p.mu.Unlock()
	// Handed a worker (or an error) just as the wait ended.
	h := <-w.ch
	if h.err != nil {
		return nil, waited, h.err
	}
	p.checkin(h.m)
	p.mu.Lock()
	p.st.exhausted++
	p.mu.Unlock()
	err := &ExhaustedError{Waited: waited, Max: p.cfg.MaxWorkers, Err: why}
	a.evs = append(a.evs, Event{Kind: EventExhausted, Waited: waited, Err: err})
	return nil, waited, err
}

func indexOf(ws []*waiter, w *waiter) int {
	for i, x := range ws {
		if x == w {
			return i
		}
	}
	return -1
}

func exited(p *worker.Process) bool {
	select {
	case <-p.Exited():
		return true
	default:
		return false
	}
}

// refuseLocked returns the error a checkout gets at once, if any.
func (p *Pool) refuseLocked(a *after) error {
	if p.closing.Load() {
		return ErrClosed
	}
	p.recoverLocked(time.Now(), a)
	if !p.healthy {
		return p.unhealthy
	}
	return nil
}

// markBusyLocked hands m to a checkout.
func (p *Pool) markBusyLocked(m *member) {
	m.state = stBusy
	p.busy[m] = struct{}{}
	p.busyAlive++
}

// putLocked makes m available: to the first waiting checkout, else idle.
func (p *Pool) putLocked(m *member) {
	if len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters[0] = nil
		p.waiters = p.waiters[1:]
		p.markBusyLocked(m)
		w.ch <- handoff{m: m}
		return
	}
	m.state = stIdle
	m.idleSince = time.Now()
	p.idle = append(p.idle, m)
}

// dropLocked removes m from the pool. It reports false if it was gone
// already.
func (p *Pool) dropLocked(m *member) bool {
	switch m.state {
	case stIdle:
		for i, x := range p.idle {
			if x == m {
				p.idle = append(p.idle[:i], p.idle[i+1:]...)
				break
			}
		}
	case stBusy:
		delete(p.busy, m)
		if !m.dead {
			p.busyAlive--
		}
		if p.drained != nil && len(p.busy) == 0 {
			close(p.drained)
			p.drained = nil
		}
	case stGone:
		return false
	}
	m.state = stGone
	close(m.retired)
	return true
}

// adoptLocked makes a started worker a member and watches its exit.
func (p *Pool) adoptLocked(proc *worker.Process) *member {
	p.nextID++
	m := &member{id: p.nextID, proc: proc, pid: proc.Pid(), retired: make(chan struct{})}
	p.wg.Add(1)
	go p.watch(m)
	return m
}

// watch notices the exit of a member's process at once: an idle worker is
// removed and replaced, a busy one stops counting as live (and is replaced)
// while its session learns of the loss on its own.
func (p *Pool) watch(m *member) {
	defer p.wg.Done()
	select {
	case <-m.proc.Exited():
	case <-m.retired:
		return
	}
	var a after
	p.mu.Lock()
	switch m.state {
	case stIdle:
		p.lostIdleLocked(m, &a)
	case stBusy:
		if !m.dead {
			m.dead = true
			p.busyAlive--
			p.owed++
			a.kick = true
		}
	}
	p.mu.Unlock()
	p.finish(&a)
}

// lostIdleLocked handles a worker found dead while idle: a crash and a
// failure toward the restart cap.
func (p *Pool) lostIdleLocked(m *member, a *after) {
	p.dropLocked(m)
	exit, _ := m.proc.Exit()
	err := &idleExitError{id: m.id, pid: m.pid, exit: exit.String()}
	p.crashLocked(m, exitReason(m.proc), err, a)
	p.failLocked(time.Now(), err, a)
	p.owed++
	a.kick = true
	a.procs = append(a.procs, m.proc)
}

func (p *Pool) crashLocked(m *member, reason string, err error, a *after) {
	p.st.crashes[reason]++
	a.evs = append(a.evs, Event{Kind: EventCrash, WorkerID: m.id, Pid: m.pid, Reason: reason, Err: err})
	a.logs = append(a.logs, func() {
		p.log.Info("monty pool: worker lost", slog.Uint64("id", m.id), slog.Int("pid", m.pid),
			slog.String("reason", reason), slog.Any("error", err))
	})
}

// failLocked counts a failure toward the restart cap and trips it.
func (p *Pool) failLocked(now time.Time, err error, a *after) {
	if p.cfg.MaxRestarts < 0 || !p.healthy {
		return
	}
	cut := now.Add(-p.cfg.RestartWindow)
	i := 0
	for i < len(p.failures) && p.failures[i].Before(cut) {
		i++
	}
	p.failures = append(p.failures[:0], p.failures[i:]...)
	p.failures = append(p.failures, now)
	if len(p.failures) <= p.cfg.MaxRestarts {
		return
	}
	p.healthy = false
	p.unhealthy = &UnhealthyError{Failures: len(p.failures), Window: p.cfg.RestartWindow,
		Until: now.Add(p.cfg.RestartWindow), Last: err}
	for _, w := range p.waiters {
		w.ch <- handoff{err: p.unhealthy}
	}
	clear(p.waiters)
	p.waiters = p.waiters[:0]
	uerr := p.unhealthy
	a.evs = append(a.evs, Event{Kind: EventUnhealthy, Err: uerr})
	a.logs = append(a.logs, func() { p.log.Error("monty pool: restart cap tripped", slog.Any("error", uerr)) })
	a.kick = true
}

// recoverLocked ends the unhealthy state once its window has passed.
func (p *Pool) recoverLocked(now time.Time, a *after) {
	if p.healthy || now.Before(p.unhealthy.Until) {
		return
	}
	p.healthy, p.unhealthy = true, nil
	p.failures = p.failures[:0]
	p.backoff, p.spawnAt = 0, time.Time{}
	a.evs = append(a.evs, Event{Kind: EventHealthy})
	a.logs = append(a.logs, func() { p.log.Info("monty pool: healthy again; starting workers") })
	a.kick = true
}

// attachFailed handles a worker whose checkout Configure failed (Attach
// has stopped it). It reports whether another worker should be tried.
func (p *Pool) attachFailed(m *member, err error) bool {
	var a after
	defer p.finish(&a)
	p.mu.Lock()
	defer p.mu.Unlock()
	dead := m.dead
	if !p.dropLocked(m) {
		return false
	}
	if !p.closing.Load() && !dead {
		p.owed++
	}
	a.kick = true
	var pe *session.PythonError
	if errors.As(err, &pe) {
		p.destroyedLocked(m, DestroyRefused, &a)
		return false
	}
	if reason, ok := crashReason(err); ok {
		p.crashLocked(m, reason, err, &a)
		// A worker that died or broke the protocol is the worker's fault, not
		// the checkout's: try another one.
		return reason == ReasonVanished || reason == ReasonAnnounced || reason == ReasonMemory || reason == ReasonProtocol
	}
	p.destroyedLocked(m, DestroyRequested, &a)
	return false
}

func (p *Pool) destroyedLocked(m *member, reason string, a *after) {
	p.st.destroyed++
	a.evs = append(a.evs, Event{Kind: EventDestroy, WorkerID: m.id, Pid: m.pid, Reason: reason})
}

// checkin returns a checked-out worker that has no session (detached, or
// never attached) to the pool, or stops it when the pool no longer wants
// it.
func (p *Pool) checkin(m *member) {
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
		p.crashLocked(m, exitReason(m.proc), &idleExitError{id: m.id, pid: m.pid, exit: "exited while being returned"}, &a)
		a.kick = true
		a.procs = append(a.procs, m.proc)
	default:
		m.sess.Store(nil)
		delete(p.busy, m)
		p.busyAlive--
		p.putLocked(m)
		a.evs = append(a.evs, Event{Kind: EventRelease, WorkerID: m.id, Pid: m.pid})
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
		reason  string // a Destroy reason
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
			ctx, cancel := context.WithTimeout(p.life, p.cfg.StartTimeout)
			_, err = s.s.Detach(ctx)
			cancel()
			if err == nil {
				p.checkin(m)
				return
			}
		}
		cause = err
		reason = destroyReason(err)
	} else {
		cause = s.s.Cause()
	}
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

// spawn starts one worker (p.spawning was raised for it) and adds it to
// the pool.
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
		now := time.Now()
		p.backoff = min(max(2*p.backoff, p.cfg.RestartBackoff.Initial), p.cfg.RestartBackoff.Max)
		p.spawnAt = now.Add(p.backoff)
		a.evs = append(a.evs, Event{Kind: EventSpawnFailed, Duration: d, Err: err})
		backoff := p.backoff
		a.logs = append(a.logs, func() {
			p.log.Warn("monty pool: worker start failed", slog.Any("error", err), slog.Duration("retry_in", backoff))
		})
		p.failLocked(now, err, &a)
		a.kick = true
		return
	}
	p.backoff, p.spawnAt = 0, time.Time{}
	if p.closing.Load() {
		a.procs = append(a.procs, proc)
		return
	}
	m := p.adoptLocked(proc)
	a.evs = append(a.evs, Event{Kind: EventSpawn, WorkerID: m.id, Pid: m.pid, Duration: d})
	p.putLocked(m)
}

// startWorker starts a worker and handshakes it: Configure with the pool's
// version, then Reset, so it is known to speak the protocol.
func (p *Pool) startWorker(ctx context.Context) (*worker.Process, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.StartTimeout)
	defer cancel()
	proc, err := worker.Start(ctx, p.cfg.Worker)
	if err != nil {
		return nil, err
	}
	s, err := session.Attach(ctx, proc, p.version, session.Config{Logger: p.cfg.Logger})
	if err != nil {
		return nil, err
	}
	if _, err := s.Detach(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return proc, nil
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
	if !p.healthy {
		return p.unhealthy.Until
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
		soon(now.Add(d))
	}
	want := min(max(p.cfg.MinWorkers, p.busyAlive+len(p.waiters)), p.cfg.MaxWorkers)
	need := want - p.liveLocked() - p.spawning
	switch {
	case need <= 0:
		if p.spawning == 0 {
			p.owed = 0
		}
	case now.Before(p.spawnAt):
		soon(p.spawnAt)
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
	return next
}

// Close shuts the pool down gracefully: Checkout fails with ErrClosed from
// now on (waiting checkouts too), idle workers are stopped, and checked-out
// sessions may finish until ctx is done; a session closed meanwhile has its
// worker stopped rather than returned. When ctx ends first, the remaining
// sessions' workers are killed (their turns fail with errors matching
// session.ErrClosed) and Close returns ctx's error. Either way every worker
// is stopped and every goroutine of the pool joined before Close returns.
//
// Close is idempotent: later or concurrent calls wait for the first to
// finish (or for their own ctx) and return nil.
func (p *Pool) Close(ctx context.Context) error {
	if !p.closing.CompareAndSwap(false, true) {
		select {
		case <-p.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var idle []*member
	p.mu.Lock()
	for _, w := range p.waiters {
		w.ch <- handoff{err: ErrClosed}
	}
	p.waiters = nil
	for len(p.idle) > 0 {
		m := p.idle[len(p.idle)-1]
		p.dropLocked(m)
		idle = append(idle, m)
	}
	drained := make(chan struct{})
	if len(p.busy) > 0 {
		p.drained = drained
	} else {
		close(drained)
	}
	p.mu.Unlock()

	var stops sync.WaitGroup
	for _, m := range idle {
		stops.Go(func() { m.proc.Close(ctx) })
	}
	var err error
	select {
	case <-drained:
	case <-ctx.Done():
		err = ctx.Err()
		p.mu.Lock()
		var left []*member
		for m := range p.busy {
			left = append(left, m)
		}
		for _, m := range left {
			p.dropLocked(m)
		}
		p.mu.Unlock()
		for _, m := range left {
			stops.Go(func() {
				if s := m.sess.Load(); s != nil {
					s.Kill()
					s.Close()
				}
				m.proc.Kill()
				m.proc.Close(ctx)
			})
		}
	}
	p.stop()
	stops.Wait()
	p.wg.Wait()
	close(p.done)
	return err
}

// after collects what to do once the pool's lock is released: events to
// emit, processes to stop, lines to log, a supervisor to wake.
type after struct {
	evs   []Event
	procs []*worker.Process
	logs  []func()
	kick  bool
}

func (p *Pool) finish(a *after) {
	for _, pr := range a.procs {
		pr.Kill()
		pr.Close(context.Background())
	}
	for _, l := range a.logs {
		l()
	}
	p.emit(a.evs...)
	if a.kick {
		p.kick()
	}
}

func (p *Pool) emit(evs ...Event) {
	if p.cfg.Metrics == nil {
		return
	}
	for _, e := range evs {
		p.cfg.Metrics(e)
	}
}

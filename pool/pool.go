package pool

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// Pool keeps warm monty workers and hands out sessions on them.
//
// A Pool is safe for concurrent use by any number of goroutines.
//
// Get a Pool from [New]; the zero Pool is not usable. After Close every
// Checkout and Run fails with an error matching ErrClosed, and Stat and
// Health still answer.
type Pool struct {
	cfg     Config
	neg     session.Negotiation
	version uint32
	log     *slog.Logger

	life    context.Context // ends when Close stops everything
	stop    context.CancelFunc
	kickCh  chan struct{}
	wg      sync.WaitGroup // supervisor, spawns, watchers
	done    chan struct{}  // closed when Close has finished
	closing atomic.Bool
	// closed ends when Close begins: it cuts short remote starts in
	// flight, which starts counts (Add under mu while not closing) and
	// Close waits for.
	closed    context.Context
	closeNow  context.CancelFunc
	starts    sync.WaitGroup
	checkouts atomic.Int64

	mu        sync.Mutex
	idle      []*member // a stack: the top is the most recently used
	busy      map[*member]struct{}
	busyAlive int // busy members whose process is running
	spawning  int
	waiters   []*waiter
	// chosen counts checkouts that choose sent to the local workers and
	// that have not yet reached acquire: capacity claimed but not yet
	// visible in idle, busy or waiters.
	chosen  int
	nextID  uint64
	drained chan struct{} // closed when busy empties during Close
	// owed counts workers lost (crashed, destroyed, recycled, or a start
	// that failed) since the pool was last at strength and not yet
	// replaced. It only decides whether a start counts as a restart (in
	// Stats and EventReplace): reconcile decrements it for each start it
	// makes while it is positive, and zeroes it once the pool is at
	// strength with nothing starting. Invariant, under mu: 0 <= owed, and
	// a loss is owed at most once (dropLocked reports whether this caller
	// removed the member; only that caller adds to owed, and not for a
	// member already counted dead by watch, nor while closing).
	owed   int
	gate   restartGate
	eps    []*endpoint           // the remote endpoints, in configuration order
	remote map[*Session]struct{} // checked-out remote sessions
	st     counters
	tel    *telemetry
}

type counters struct {
	restarts, waited, exhausted, recycled, destroyed, spawnFailures int64
	crashes                                                         map[Reason]int
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
	Crashes map[Reason]int
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
	// Healthy is false while the restart cap is tripped: what Pool.Health
	// says at the same moment (both end a trip whose window has passed).
	Healthy bool
	// Endpoints reports each remote endpoint, in configuration order (nil
	// without Config.Endpoints). Checkouts counts remote checkouts too;
	// the worker gauges are the local workers'.
	Endpoints []EndpointStat
}

// New starts a pool: it resolves the worker binary, negotiates the
// protocol version with the first worker and prewarms MinWorkers, all
// handshaken, so Stat().Idle is MinWorkers when New returns (unless a
// later prewarm start failed; the supervisor then retries it). Remote
// Endpoints are validated (names, ws:// or wss:// URLs) but not dialled:
// each remote checkout dials its own connection. With Config.NoLocal no
// worker is started at all.
//
// An unusable binary, or a first worker that cannot be started or
// configured, is an error: no pool is returned and nothing is left
// running; a first worker that does not answer within StartTimeout is a
// *session.StartTimeoutError. ctx bounds the prewarm only: starts it cuts
// short are replaced by the supervisor, and do not count toward the
// restart cap.
func New(ctx context.Context, cfg Config) (*Pool, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	eps, err := endpointsOf(cfg.Endpoints)
	if err != nil {
		return nil, err
	}
	p := &Pool{
		cfg:    cfg,
		log:    cfg.Logger,
		kickCh: make(chan struct{}, 1),
		done:   make(chan struct{}),
		busy:   make(map[*member]struct{}),
		gate:   newRestartGate(cfg),
		st:     counters{crashes: make(map[Reason]int)},
		eps:    eps,
		remote: make(map[*Session]struct{}),
	}
	p.life, p.stop = context.WithCancel(context.Background())
	p.closed, p.closeNow = context.WithCancel(context.Background())
	if cfg.NoLocal {
		p.version = cfg.ProtocolVersion
		p.neg.Version, p.neg.Pinned = cfg.ProtocolVersion, cfg.ProtocolVersion != 0
		p.tel = newTelemetry(p)
		return p, nil
	}
	bin, err := worker.ResolveBinary(cfg.Worker.Binary)
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("monty pool: %w", err)
	}
	p.cfg.Worker.Binary = bin
	cfg.Worker.Binary = bin
	p.log = cfg.Logger.With(slog.String("worker", bin))

	start := time.Now()
	var neg session.Negotiation
	peer, err := withinStartTimeout(p, ctx, func(ctx context.Context) (session.Peer, error) {
		peer, n, err := session.Negotiate(ctx, session.Launch{
			Launcher: session.ProcessLauncher{Worker: cfg.Worker}, ProtocolVersion: cfg.ProtocolVersion,
		}, p.handshakeConfig())
		neg = n
		return peer, err
	})
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("monty pool: first worker: %w", err)
	}
	proc := peer.(*worker.Process) // what a ProcessLauncher starts
	p.neg, p.version = neg, neg.Version
	p.tel = newTelemetry(p)
	p.mu.Lock()
	m := p.adoptLocked(proc)
	p.putLocked(m, true)
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

// Version returns the protocol version every local worker of the pool
// speaks. Without local workers (Config.NoLocal) it is the pinned
// Config.ProtocolVersion, or 0 when remote sessions negotiate theirs;
// each Session's Version is the one it speaks.
func (p *Pool) Version() uint32 { return p.version }

// Negotiation reports how the first local worker chose the protocol
// version.
func (p *Pool) Negotiation() session.Negotiation { return p.neg }

// Binary returns the resolved worker executable ("" with
// Config.NoLocal).
func (p *Pool) Binary() string { return p.cfg.Worker.Binary }

// Health returns nil while the pool's restart cap is not tripped, else
// the *UnhealthyError a Checkout would fail with at once (its Until says
// when the pool tries again); ErrClosed once Close has begun. A tripped
// cap whose window has passed is ended here, as a Checkout ends it, so a
// caller that asks (a readiness probe, a server admitting a connection)
// sees the recovery when it is due, not only once the supervisor has run.
// Without local workers (Config.NoLocal) there is no restart cap: nil.
func (p *Pool) Health() error {
	var a after
	defer p.finish(&a)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing.Load() {
		return ErrClosed
	}
	if p.cfg.NoLocal {
		return nil
	}
	p.recoverLocked(time.Now(), &a)
	if t := p.gate.tripped; t != nil {
		return t
	}
	return nil
}

// Stat returns a snapshot of the pool's gauges and counters. Like Health,
// it ends a tripped restart cap whose window has passed, so Stats.Healthy
// and Health agree whenever they are asked (the supervisor would end the
// trip on its next pass anyway).
func (p *Pool) Stat() Stats {
	var a after
	defer p.finish(&a)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closing.Load() && !p.cfg.NoLocal {
		p.recoverLocked(time.Now(), &a)
	}
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
		Healthy:         p.gate.healthy(),
		Endpoints:       p.endpointStatsLocked(),
	}
}

func (p *Pool) liveLocked() int { return len(p.idle) + p.busyAlive }

// Close shuts the pool down gracefully: Checkout fails with ErrClosed from
// now on (waiting checkouts too, those still configuring a worker, and
// remote starts in flight, whose dial or handshake Close cuts short and
// waits for), idle workers are stopped, and checked-out
// sessions may finish until ctx is done; a session closed meanwhile has its
// worker stopped rather than returned. When ctx ends first, the remaining
// sessions' workers are killed, remote sessions' connections closed
// with a going-away Close frame (their turns fail with errors matching
// session.ErrClosed) and Close returns ctx's error. Either way every worker
// is stopped and every goroutine of the pool joined before Close returns.
//
// Close is idempotent: later or concurrent calls wait for the first to
// finish and return nil, or return their own ctx's error if it ends first.
func (p *Pool) Close(ctx context.Context) error {
	if !p.closing.CompareAndSwap(false, true) {
		select {
		case <-p.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.closeNow() // remote starts in flight end with ErrClosed
	var (
		idle []*member
		a    after
	)
	p.mu.Lock()
	for _, w := range p.waiters {
		w.ch <- handoff{err: ErrClosed}
	}
	p.waiters = nil
	for len(p.idle) > 0 {
		m := p.idle[len(p.idle)-1]
		p.dropLocked(m)
		p.destroyedLocked(m, DestroyClosing, &a)
		idle = append(idle, m)
	}
	drained := make(chan struct{})
	if len(p.busy) > 0 || len(p.remote) > 0 {
		p.drained = drained
	} else {
		close(drained)
	}
	p.mu.Unlock()
	p.finish(&a)

	var stops sync.WaitGroup
	for _, m := range idle {
		stops.Go(func() { m.proc.Close(ctx) })
	}
	var err error
	select {
	case <-drained:
	case <-ctx.Done():
		err = ctx.Err()
		a = after{}
		p.mu.Lock()
		var left []*member
		for m := range p.busy {
			left = append(left, m)
		}
		for _, m := range left {
			p.dropLocked(m)
			p.closeKilledLocked(m, &a)
		}
		var rem []*Session
		for s := range p.remote {
			rem = append(rem, s)
		}
		p.mu.Unlock()
		p.finish(&a)
		for _, s := range rem {
			stops.Go(func() { p.releaseRemote(s, DestroyClosing) })
		}
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
	p.starts.Wait()
	p.wg.Wait()
	p.tel.close(p)
	close(p.done)
	return err
}

// closeKilledLocked reports m, a checked-out worker Close's deadline has
// just dropped (its session's Close will find it gone): DestroyClosing,
// or the crash of a worker that had died already.
func (p *Pool) closeKilledLocked(m *member, a *after) {
	if !m.dead {
		p.destroyedLocked(m, DestroyClosing, a)
		return
	}
	var cause error
	if s := m.sess.Load(); s != nil {
		cause = s.Cause()
	}
	reason, ok := crashReason(cause)
	if !ok {
		reason = exitReason(m.proc)
	}
	p.crashLocked(m, reason, cause, a)
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
	for _, e := range evs {
		p.tel.observe(e)
		if p.cfg.Metrics != nil {
			p.cfg.Metrics(e)
		}
	}
}

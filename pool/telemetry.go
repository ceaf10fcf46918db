package pool

import (
	"context"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/gomonty/monty/session"
)

// Metric names, upstream's. The session-level ones (monty.run.*,
// monty.turn.duration, ...) are package session's, recorded by every
// checked-out session through the same MeterProvider.
const (
	// MetricWorkersLive is an observable gauge of the running workers,
	// idle or checked out.
	MetricWorkersLive = "monty.pool.workers.live"
	// MetricWorkersIdle is an observable gauge of the workers waiting for
	// a checkout.
	MetricWorkersIdle = "monty.pool.workers.idle"
	// MetricWorkersBusy is an observable gauge of the checked-out workers
	// still running.
	MetricWorkersBusy = "monty.pool.workers.busy"
	// MetricWorkersSuspended counts checked-out workers whose feed waits
	// on the host (session.StateSuspended).
	MetricWorkersSuspended = "monty.pool.workers.suspended"
	// MetricCheckoutWait is a histogram of the time a checkout waited
	// for its session (seconds), by AttrCheckoutOutcome and AttrEndpoint.
	MetricCheckoutWait = "monty.pool.checkout.wait"
	// MetricWorkerTerminated counts the workers that left the pool, by
	// AttrReason.
	MetricWorkerTerminated = "monty.pool.worker.terminated"
	// MetricSessionDuration is a histogram of a pool session's life,
	// checkout to close (seconds), by AttrCheckoutOutcome (ok, error,
	// abandoned) and AttrEndpoint.
	MetricSessionDuration = "monty.pool.session.duration"
	// MetricSessionResumed counts remote sessions resumed on a new
	// connection after a ShutdownDump (a drain), by the endpoint they
	// resumed on and outcome (ok, or error when the resume failed and the
	// session was lost).
	MetricSessionResumed = "monty.pool.session.resumed"
	// AttrReason is why a worker left the pool: a crash Reason
	// (announced, vanished, memory, timeout, protocol, canceled, drained),
	// a destroy Reason, recycled or scale_down.
	AttrReason = attribute.Key("monty.reason")
	// AttrCheckoutOutcome is the outcome of a checkout (idle: an idle
	// worker or a remote start; waited: a worker given back by another
	// session; spawned: a worker started while it waited; exhausted: it
	// gave up waiting; error: any other failure), of a pool session (ok,
	// error, abandoned) or of a resume (ok, error).
	AttrCheckoutOutcome = attribute.Key("monty.outcome")
	// MetricEndpointFailures counts remote session starts that failed, by
	// endpoint.
	MetricEndpointFailures = "monty.pool.endpoint.failures"
	// MetricEndpointDrops counts remote sessions lost by their endpoint's
	// fault after they started (EventEndpointDropped), by endpoint.
	MetricEndpointDrops = "monty.pool.endpoint.drops"
	// AttrEndpoint is the endpoint of a checkout, a session duration or an
	// endpoint failure: LocalEndpoint or an Endpoint's Name (a closed set
	// fixed by the Config; never a URL or a token).
	AttrEndpoint            = attribute.Key("monty.endpoint")
	sessionOutcomeOK        = "ok"
	sessionOutcomeError     = "error"
	sessionOutcomeAbandoned = "abandoned"
)

// telemetry is a pool's instruments. It consumes the pool's Events (the
// same stream Config.Metrics receives), so there is one source of truth
// for what happened; only the session duration and a failed checkout's
// wait, which no event carries, are recorded where they end.
type telemetry struct {
	log        *slog.Logger
	wait       metric.Float64Histogram
	terminated metric.Int64Counter
	sessDur    metric.Float64Histogram
	resumed    metric.Int64Counter
	gauges     *providerGauges // the worker gauges of the pool's MeterProvider

	local epOpts
	// errNone is a failed checkout that tried no endpoint (a closed pool,
	// every endpoint backed off).
	errNone []metric.RecordOption
	// byEndpoint holds the record options of each remote endpoint, and
	// epFailures.
	byEndpoint map[string]*epOpts
	epFailures metric.Int64Counter
	epDrops    metric.Int64Counter
	terminate  map[Reason][]metric.AddOption
}

// epOpts are the prebuilt attribute sets of one endpoint.
type epOpts struct {
	waitIdle, waitWaited, waitSpawned, waitExhausted, waitError []metric.RecordOption
	sessOK, sessError, sessAbandoned                            []metric.RecordOption
	resumeOK, resumeError                                       []metric.AddOption
	epFail                                                      []metric.AddOption
}

func newEpOpts(ep string) *epOpts {
	rec := func(v string) []metric.RecordOption {
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(AttrCheckoutOutcome.String(v), AttrEndpoint.String(ep)))}
	}
	add := func(kv ...attribute.KeyValue) []metric.AddOption {
		return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(append(kv, AttrEndpoint.String(ep))...))}
	}
	return &epOpts{
		waitIdle: rec("idle"), waitWaited: rec("waited"), waitSpawned: rec("spawned"),
		waitExhausted: rec("exhausted"), waitError: rec("error"),
		sessOK: rec(sessionOutcomeOK), sessError: rec(sessionOutcomeError), sessAbandoned: rec(sessionOutcomeAbandoned),
		resumeOK: add(AttrCheckoutOutcome.String("ok")), resumeError: add(AttrCheckoutOutcome.String("error")),
		epFail: add(),
	}
}

// terminationReasons is the closed set of MetricWorkerTerminated's
// AttrReason (every Reason constant, and the recycled and scale_down
// stops); each has its attribute set made once, at New.
var terminationReasons = []Reason{
	ReasonAnnounced, ReasonVanished, ReasonMemory, ReasonTimeout, ReasonProtocol, ReasonCanceled, ReasonDrained,
	DestroyRequested, DestroyInterrupted, DestroySuspended, DestroyBusy, DestroyRefused, DestroyClosing,
	"recycled", "scale_down",
}

func newTelemetry(p *Pool) *telemetry {
	mp := p.cfg.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(session.ScopeName)
	t := &telemetry{log: p.log, local: *newEpOpts(LocalEndpoint)}
	t.errNone = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(AttrCheckoutOutcome.String("error")))}
	t.terminate = make(map[Reason][]metric.AddOption, len(terminationReasons))
	for _, r := range terminationReasons {
		t.terminate[r] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(AttrReason.String(string(r))))}
	}
	t.wait, _ = m.Float64Histogram(MetricCheckoutWait, metric.WithUnit("s"),
		metric.WithDescription("Time a checkout waited for a session, by outcome (idle, waited, spawned, exhausted, error)."),
		metric.WithExplicitBucketBoundaries(session.DurationBuckets...))
	t.terminated, _ = m.Int64Counter(MetricWorkerTerminated, metric.WithUnit("{worker}"),
		metric.WithDescription("Workers that left the pool, by reason."))
	t.sessDur, _ = m.Float64Histogram(MetricSessionDuration, metric.WithUnit("s"),
		metric.WithDescription("Checkout to close of a pool session, by outcome (ok, error, abandoned)."),
		metric.WithExplicitBucketBoundaries(session.DurationBuckets...))
	if len(p.eps) > 0 {
		t.epFailures, _ = m.Int64Counter(MetricEndpointFailures, metric.WithUnit("{start}"),
			metric.WithDescription("Remote session starts that failed, by endpoint."))
		t.epDrops, _ = m.Int64Counter(MetricEndpointDrops, metric.WithUnit("{session}"),
			metric.WithDescription("Remote sessions lost by their endpoint's fault after they started, by endpoint."))
		t.resumed, _ = m.Int64Counter(MetricSessionResumed, metric.WithUnit("{session}"),
			metric.WithDescription("Remote sessions resumed after a drain, by the endpoint they resumed on and outcome (ok, error)."))
		t.byEndpoint = make(map[string]*epOpts, len(p.eps))
		for _, e := range p.eps {
			t.byEndpoint[e.Name] = newEpOpts(e.Name)
		}
	}
	t.gauges = joinGauges(mp, m, p)
	return t
}

// providerGauges is the worker gauges of one MeterProvider: one callback
// observing the sum over the open pools that record through it. The
// gauges have no attribute telling pools apart, so each pool observing
// them itself would leave the value of whichever observed last; and a
// closed pool counts for nothing, so that once every pool is closed they
// read 0 (a periodic reader's last export included) rather than
// vanishing at their last value.
type providerGauges struct {
	mu    sync.Mutex
	pools map[*Pool]struct{}
	reg   metric.Registration // nil when registering failed
	// shared: held in gaugesByProvider; else the pool's own (a provider
	// that cannot be a map key), unregistered when the pool closes.
	shared bool
}

// gaugesByProvider holds the gauges of the MeterProviders seen last, at
// most maxGaugeProviders of them with no open pool: a process that makes
// a provider per pool must not keep them all alive.
var (
	gaugesMu         sync.Mutex
	gaugesByProvider = map[metric.MeterProvider]*providerGauges{}
)

const maxGaugeProviders = 16

// joinGauges adds p to the worker gauges of mp (whose Meter is m),
// registering them on first use, and returns them.
func joinGauges(mp metric.MeterProvider, m metric.Meter, p *Pool) *providerGauges {
	if !reflect.TypeOf(mp).Comparable() {
		g := newProviderGauges(m, false)
		g.add(p)
		return g
	}
	gaugesMu.Lock()
	defer gaugesMu.Unlock()
	if g, ok := gaugesByProvider[mp]; ok {
		g.add(p) // under gaugesMu: not forgotten meanwhile
		return g
	}
	if len(gaugesByProvider) >= maxGaugeProviders {
		// Forget the providers no open pool uses; their gauges go with
		// them (they would read 0 for good).
		for k, g := range gaugesByProvider {
			g.mu.Lock()
			idle := len(g.pools) == 0
			g.mu.Unlock()
			if idle {
				g.unregister()
				delete(gaugesByProvider, k)
			}
		}
	}
	g := newProviderGauges(m, true)
	g.add(p)
	gaugesByProvider[mp] = g
	return g
}

func newProviderGauges(m metric.Meter, shared bool) *providerGauges {
	g := &providerGauges{pools: make(map[*Pool]struct{}), shared: shared}
	live, _ := m.Int64ObservableGauge(MetricWorkersLive, metric.WithUnit("{worker}"), metric.WithDescription("Running workers, idle or checked out."))
	idle, _ := m.Int64ObservableGauge(MetricWorkersIdle, metric.WithUnit("{worker}"), metric.WithDescription("Workers waiting for a checkout."))
	busy, _ := m.Int64ObservableGauge(MetricWorkersBusy, metric.WithUnit("{worker}"), metric.WithDescription("Checked-out workers still running."))
	susp, _ := m.Int64ObservableGauge(MetricWorkersSuspended, metric.WithUnit("{worker}"), metric.WithDescription("Checked-out workers whose feed waits on the host."))
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		var nLive, nIdle, nBusy, nSusp int64
		g.mu.Lock()
		for p := range g.pools {
			st, suspended := p.gauges()
			nLive += int64(st.Live)
			nIdle += int64(st.Idle)
			nBusy += int64(st.Busy)
			nSusp += int64(suspended)
		}
		g.mu.Unlock()
		o.ObserveInt64(live, nLive)
		o.ObserveInt64(idle, nIdle)
		o.ObserveInt64(busy, nBusy)
		o.ObserveInt64(susp, nSusp)
		return nil
	}, live, idle, busy, susp)
	if err == nil {
		g.reg = reg
	}
	return g
}

func (g *providerGauges) add(p *Pool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pools[p] = struct{}{}
}

// remove takes a closed pool out of the gauges.
func (g *providerGauges) remove(p *Pool) {
	g.mu.Lock()
	delete(g.pools, p)
	g.mu.Unlock()
	if !g.shared {
		g.unregister()
	}
}

func (g *providerGauges) unregister() {
	if g.reg != nil {
		g.reg.Unregister()
	}
}

// gauges reads the worker gauges only (no map copy, unlike Stat), and
// how many checked-out workers have a feed suspended.
func (p *Pool) gauges() (Stats, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	suspended := 0
	for m := range p.busy {
		if s := m.sess.Load(); s != nil && !m.dead && s.State() == session.StateSuspended {
			suspended++
		}
	}
	return Stats{Live: p.liveLocked(), Idle: len(p.idle), Busy: p.busyAlive}, suspended
}

// at returns the record options of the named endpoint (the local
// workers' for LocalEndpoint or "").
func (t *telemetry) at(endpoint string) *epOpts {
	if o, ok := t.byEndpoint[endpoint]; ok {
		return o
	}
	return &t.local
}

// terminatedOpts is the attribute set of a termination reason.
func (t *telemetry) terminatedOpts(r Reason) []metric.AddOption {
	if o, ok := t.terminate[r]; ok {
		return o
	}
	return []metric.AddOption{metric.WithAttributes(AttrReason.String(string(r)))}
}

// checkoutFailed records the wait of a checkout that failed other than
// by giving up waiting (which EventExhausted records); ep is the endpoint
// it last tried, "" for none.
func (t *telemetry) checkoutFailed(ep string, waited time.Duration) {
	if t == nil {
		return
	}
	opts := t.errNone
	if ep != "" {
		opts = t.at(ep).waitError
	}
	t.wait.Record(context.Background(), waited.Seconds(), opts...)
}

// resumeDone records a remote session's resume after a drain, on the
// endpoint it resumed on.
func (t *telemetry) resumeDone(ep string, err error) {
	if t == nil || t.resumed == nil {
		return
	}
	opts := t.at(ep).resumeOK
	if err != nil {
		opts = t.at(ep).resumeError
	}
	t.resumed.Add(context.Background(), 1, opts...)
}

// close takes p, closed, out of the worker gauges.
func (t *telemetry) close(p *Pool) {
	if t != nil && t.gauges != nil {
		t.gauges.remove(p)
	}
}

// observe records one pool event and logs the ones operators want to see.
func (t *telemetry) observe(e Event) {
	if t == nil {
		return
	}
	bg := context.Background()
	switch e.Kind {
	case EventSpawn:
		// Routine (a recycled or scaled-down worker's stop is Debug too);
		// a failed start is a Warn of its own.
		t.log.Debug("monty pool: worker spawned", slog.Uint64("id", e.WorkerID), slog.Int("pid", e.Pid), slog.Duration("took", e.Duration))
	case EventCheckout:
		at := t.at(e.Endpoint)
		opts, waited := at.waitIdle, e.Waited
		switch {
		case e.Endpoint != LocalEndpoint && e.Endpoint != "":
			waited = e.Duration // a remote checkout waits for its start
		case e.Spawned:
			opts = at.waitSpawned
		case e.Waited > 0:
			opts = at.waitWaited
		}
		t.wait.Record(bg, waited.Seconds(), opts...)
	case EventExhausted:
		t.wait.Record(bg, e.Waited.Seconds(), t.at(e.Endpoint).waitExhausted...)
		t.log.Warn("monty pool: checkout refused", slog.String("why", "exhausted"), slog.String("endpoint", e.Endpoint), slog.Duration("waited", e.Waited))
	case EventEndpointFailed:
		t.epFailures.Add(bg, 1, t.at(e.Endpoint).epFail...)
		t.log.Warn("monty pool: remote session start failed", slog.String("endpoint", e.Endpoint), slog.Any("error", e.Err))
	case EventEndpointDropped:
		t.epDrops.Add(bg, 1, t.at(e.Endpoint).epFail...)
		if e.Duration > 0 {
			t.log.Warn("monty pool: endpoint backed off after dropping sessions", slog.String("endpoint", e.Endpoint),
				slog.Duration("backoff", e.Duration), slog.Any("error", e.Err))
		} else {
			t.log.Warn("monty pool: remote session dropped by its endpoint", slog.String("endpoint", e.Endpoint), slog.Any("error", e.Err))
		}
	case EventCrash, EventDestroy:
		t.terminated.Add(bg, 1, t.terminatedOpts(e.Reason)...)
		if e.Kind == EventDestroy {
			lvl := slog.LevelDebug
			if e.Reason == DestroyRefused {
				lvl = slog.LevelWarn // the checkout's Configure was refused
			}
			t.log.Log(bg, lvl, "monty pool: worker stopped", slog.Uint64("id", e.WorkerID), slog.Int("pid", e.Pid), slog.String("reason", string(e.Reason)))
		}
		// A crash is logged where it is classified (crashLocked).
	case EventRecycle:
		t.terminated.Add(bg, 1, t.terminatedOpts("recycled")...)
		t.log.Debug("monty pool: worker stopped", slog.Uint64("id", e.WorkerID), slog.Int("pid", e.Pid), slog.String("reason", "recycled"))
	case EventScaleDown:
		t.terminated.Add(bg, 1, t.terminatedOpts("scale_down")...)
		t.log.Debug("monty pool: worker stopped", slog.Uint64("id", e.WorkerID), slog.Int("pid", e.Pid), slog.String("reason", "scale_down"))
	}
}

// sessionDone records a pool session's checkout-to-close time: ok when
// the session ended clean (its worker went back to the pool, or was
// recycled or stopped by a closing pool after it), abandoned when it was
// closed with a turn or a feed unfinished, error otherwise.
func (t *telemetry) sessionDone(s *Session, returned bool, reason Reason) {
	if t == nil {
		return
	}
	at := t.at(s.Endpoint())
	opts := at.sessError
	switch {
	case returned:
		opts = at.sessOK
	case reason == DestroySuspended || reason == DestroyBusy || reason == DestroyInterrupted:
		opts = at.sessAbandoned
	}
	t.sessDur.Record(context.Background(), time.Since(s.start).Seconds(), opts...)
}

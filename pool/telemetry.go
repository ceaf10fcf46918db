package pool

import (
	"context"
	"log/slog"
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
	MetricWorkersLive      = "monty.pool.workers.live"
	MetricWorkersIdle      = "monty.pool.workers.idle"
	MetricWorkersBusy      = "monty.pool.workers.busy"
	MetricCheckoutWait     = "monty.pool.checkout.wait"
	MetricWorkerTerminated = "monty.pool.worker.terminated"
	MetricSessionDuration  = "monty.pool.session.duration"
	AttrReason             = attribute.Key("monty.reason")
	AttrCheckoutOutcome    = attribute.Key("monty.outcome")
	// MetricEndpointFailures counts remote session starts that failed, by
	// endpoint.
	MetricEndpointFailures = "monty.pool.endpoint.failures"
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
// for what happened; only the session duration, which no event carries,
// is recorded at release.
type telemetry struct {
	log        *slog.Logger
	wait       metric.Float64Histogram
	terminated metric.Int64Counter
	sessDur    metric.Float64Histogram
	reg        metric.Registration

	waitIdle, waitWaited, waitExhausted []metric.RecordOption
	sessOK, sessError, sessAbandoned    []metric.RecordOption
	// byEndpoint holds the same record options for each remote endpoint
	// (the fields above are the local workers'), and epFailures.
	byEndpoint map[string]*telemetry
	epFailures metric.Int64Counter
	epFailOpts []metric.AddOption
}

func newTelemetry(p *Pool) *telemetry {
	mp := p.cfg.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(session.ScopeName)
	t := &telemetry{log: p.log}
	ep := LocalEndpoint
	rec := func(k attribute.Key, v string) []metric.RecordOption {
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(k.String(v), AttrEndpoint.String(ep)))}
	}
	t.wait, _ = m.Float64Histogram(MetricCheckoutWait, metric.WithUnit("s"),
		metric.WithDescription("Time a checkout waited for a worker, by outcome (idle, waited, exhausted)."),
		metric.WithExplicitBucketBoundaries(session.DurationBuckets...))
	t.terminated, _ = m.Int64Counter(MetricWorkerTerminated, metric.WithUnit("{worker}"),
		metric.WithDescription("Workers that left the pool, by reason."))
	t.sessDur, _ = m.Float64Histogram(MetricSessionDuration, metric.WithUnit("s"),
		metric.WithDescription("Checkout to close of a pool session, by outcome (ok, error, abandoned)."),
		metric.WithExplicitBucketBoundaries(session.DurationBuckets...))
	t.waitIdle, t.waitWaited, t.waitExhausted = rec(AttrCheckoutOutcome, "idle"), rec(AttrCheckoutOutcome, "waited"), rec(AttrCheckoutOutcome, "exhausted")
	t.sessOK, t.sessError, t.sessAbandoned = rec(AttrCheckoutOutcome, sessionOutcomeOK), rec(AttrCheckoutOutcome, sessionOutcomeError), rec(AttrCheckoutOutcome, sessionOutcomeAbandoned)
	if len(p.eps) > 0 {
		t.epFailures, _ = m.Int64Counter(MetricEndpointFailures, metric.WithUnit("{start}"),
			metric.WithDescription("Remote session starts that failed, by endpoint."))
		t.byEndpoint = make(map[string]*telemetry, len(p.eps))
		for _, e := range p.eps {
			ep = e.Name
			o := &telemetry{epFailOpts: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(AttrEndpoint.String(ep)))}}
			o.waitIdle, o.waitWaited, o.waitExhausted = rec(AttrCheckoutOutcome, "idle"), rec(AttrCheckoutOutcome, "waited"), rec(AttrCheckoutOutcome, "exhausted")
			o.sessOK, o.sessError, o.sessAbandoned = rec(AttrCheckoutOutcome, sessionOutcomeOK), rec(AttrCheckoutOutcome, sessionOutcomeError), rec(AttrCheckoutOutcome, sessionOutcomeAbandoned)
			t.byEndpoint[ep] = o
		}
	}

	live, _ := m.Int64ObservableGauge(MetricWorkersLive, metric.WithUnit("{worker}"), metric.WithDescription("Running workers, idle or checked out."))
	idle, _ := m.Int64ObservableGauge(MetricWorkersIdle, metric.WithUnit("{worker}"), metric.WithDescription("Workers waiting for a checkout."))
	busy, _ := m.Int64ObservableGauge(MetricWorkersBusy, metric.WithUnit("{worker}"), metric.WithDescription("Checked-out workers still running."))
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := p.gauges()
		o.ObserveInt64(live, int64(st.Live))
		o.ObserveInt64(idle, int64(st.Idle))
		o.ObserveInt64(busy, int64(st.Busy))
		return nil
	}, live, idle, busy)
	if err == nil {
		t.reg = reg
	}
	return t
}

// gauges reads the worker gauges only (no map copy, unlike Stat).
func (p *Pool) gauges() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Live: p.liveLocked(), Idle: len(p.idle), Busy: p.busyAlive}
}

// at returns the record options of the named endpoint (the local
// workers' for LocalEndpoint or "").
func (t *telemetry) at(endpoint string) *telemetry {
	if o, ok := t.byEndpoint[endpoint]; ok {
		return o
	}
	return t
}

// close stops the gauges' callback.
func (t *telemetry) close() {
	if t != nil && t.reg != nil {
		t.reg.Unregister()
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
		t.log.Info("monty pool: worker spawned", slog.Uint64("id", e.WorkerID), slog.Int("pid", e.Pid), slog.Duration("took", e.Duration))
	case EventCheckout:
		at := t.at(e.Endpoint)
		opts := at.waitIdle
		if e.Waited > 0 {
			opts = at.waitWaited
		}
		t.wait.Record(bg, e.Waited.Seconds(), opts...)
	case EventExhausted:
		t.wait.Record(bg, e.Waited.Seconds(), t.waitExhausted...)
		t.log.Warn("monty pool: checkout refused", slog.String("why", "exhausted"), slog.Duration("waited", e.Waited))
	case EventEndpointFailed:
		t.epFailures.Add(bg, 1, t.at(e.Endpoint).epFailOpts...)
		t.log.Warn("monty pool: remote session start failed", slog.String("endpoint", e.Endpoint), slog.Any("error", e.Err))
	case EventUnhealthy:
		t.log.Warn("monty pool: checkouts refused until the restart window passes", slog.Any("error", e.Err))
	case EventCrash, EventDestroy:
		t.terminated.Add(bg, 1, metric.WithAttributes(AttrReason.String(string(e.Reason))))
		if e.Kind == EventDestroy {
			lvl := slog.LevelDebug
			if e.Reason == DestroyRefused {
				lvl = slog.LevelWarn // the checkout's Configure was refused
			}
			t.log.Log(bg, lvl, "monty pool: worker stopped", slog.Uint64("id", e.WorkerID), slog.Int("pid", e.Pid), slog.String("reason", string(e.Reason)))
		}
		// A crash is logged where it is classified (crashLocked).
	case EventRecycle:
		t.terminated.Add(bg, 1, metric.WithAttributes(AttrReason.String("recycled")))
		t.log.Debug("monty pool: worker stopped", slog.Uint64("id", e.WorkerID), slog.Int("pid", e.Pid), slog.String("reason", "recycled"))
	case EventScaleDown:
		t.terminated.Add(bg, 1, metric.WithAttributes(AttrReason.String("scale_down")))
		t.log.Debug("monty pool: worker stopped", slog.Uint64("id", e.WorkerID), slog.Int("pid", e.Pid), slog.String("reason", "scale_down"))
	}
}

// sessionDone records a pool session's checkout-to-close time: ok when
// the worker went back to the pool, abandoned when it was closed with a
// turn or a feed unfinished, error otherwise.
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

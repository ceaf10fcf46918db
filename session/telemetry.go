package session

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// ScopeName is the instrumentation scope of gomonty's tracers and meters.
const ScopeName = "github.com/gomonty/monty"

// Span names. A session span covers one session (Start or Attach to Close,
// Kill or Detach; for a pool, checkout to close), a run span one feed held
// across its suspensions, and a host span one host round trip (from the
// suspension's arrival to the departure of an answer the worker accepts).
const (
	SpanSession = "monty.session"
	SpanRun     = "monty.run"
	SpanHost    = "monty.host"
)

// Attribute keys. Every attribute but the opt-in ones (see
// Config.TelemetryContent) takes its value from a closed set.
const (
	// AttrHostKind is the kind of host round trip: function_call,
	// name_lookup, os_call or future_wait.
	AttrHostKind = attribute.Key("monty.host.kind")
	// AttrOutcome is how a run ended: ok, error (a failed run, including
	// one the parent aborted itself for a tripped limit or an answer it
	// could not deliver, and a Feed refused, or overtaken by Close or
	// Kill, before it was sent, whose span's status says "not sent" and
	// which the run metrics do not count), typing_error, aborted (the
	// caller's AbortFeed, a Run whose context ended, or a Reset that
	// discarded the suspended feed), lost (the worker was lost, or
	// discarded: a protocol violation, a print function that panicked) or
	// closed (Close or Kill). Only error and lost set the run span's
	// status to Error.
	AttrOutcome = attribute.Key("monty.outcome")
	// AttrProtocol is the negotiated protocol version.
	AttrProtocol = attribute.Key("monty.protocol.version")
	// AttrSuspensions is a run's suspension count.
	AttrSuspensions = attribute.Key("monty.suspensions")
	// AttrDirection is a frame's direction: sent or received.
	AttrDirection = attribute.Key("monty.direction")
	// AttrSnapshotOp is what a snapshot size measured: dump (a Dump's
	// result) or load (the bytes of a Load the worker took, a resume's
	// included; a refused Load loaded nothing).
	AttrSnapshotOp = attribute.Key("monty.snapshot.op")
	// AttrCode is the fed code (opt-in).
	AttrCode = attribute.Key("monty.code")
	// AttrFunction is a host function's name, or an OS call's operation (opt-in).
	AttrFunction = attribute.Key("monty.function")
	// AttrArguments is the repr of a host call's arguments (opt-in).
	AttrArguments = attribute.Key("monty.arguments")
	// AttrResult is the repr of a run's result (opt-in).
	AttrResult = attribute.Key("monty.result")
	// AttrPrint is the text of a print segment, on a "print" span event (opt-in).
	AttrPrint = attribute.Key("monty.print")
)

// Metric names, upstream's. All are histograms (DurationBuckets,
// CountBuckets or ByteBuckets) but MetricPrintBytes, a counter.
const (
	// MetricRunDuration is the wall time of a run, from its feed to its
	// completion, suspensions included (seconds).
	MetricRunDuration = "monty.run.duration"
	// MetricRunExecutionTime is a run's sandbox execution time as the
	// worker measured it (seconds).
	MetricRunExecutionTime = "monty.run.execution_time"
	// MetricRunSuspensions is the number of suspensions (host round
	// trips) of a run.
	MetricRunSuspensions = "monty.run.suspensions"
	// MetricTurnDuration is the wall time of one turn, from the request
	// written to the turn-ending event read (seconds).
	MetricTurnDuration = "monty.turn.duration"
	// MetricExtCallDuration is the host's time in one round trip, from
	// the suspension read to the answer written (seconds), by
	// AttrHostKind.
	MetricExtCallDuration = "monty.ext.call.duration"
	// MetricPrintBytes counts the bytes of the sandbox's print output.
	MetricPrintBytes = "monty.print.bytes"
	// MetricWireFrameBytes is the body size of each frame on the wire
	// (bytes), by AttrDirection.
	MetricWireFrameBytes = "monty.wire.frame.bytes"
	// MetricSnapshotBytes is the size of each dump made or loaded
	// (bytes), by AttrSnapshotOp.
	MetricSnapshotBytes = "monty.snapshot.bytes"
)

// Histogram buckets shared with package pool.
var (
	// DurationBuckets (seconds) span a 100 µs turn to a minute-long run.
	DurationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	// ByteBuckets span a 16-byte frame to the 64 MiB frame cap, by fours.
	ByteBuckets = []float64{16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20, 16 << 20, 64 << 20}
	// CountBuckets are for suspensions per run.
	CountBuckets = []float64{0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}
)

// Host round-trip kinds, the closed set of AttrHostKind.
const (
	hostNone = iota
	hostFunction
	hostLookup
	hostOS
	hostFutures
	nHostKinds
)

var hostKindNames = [nHostKinds]string{"", "function_call", "name_lookup", "os_call", "future_wait"}

// Run outcomes, the closed set of AttrOutcome.
const (
	outcomeOK = iota
	outcomeError
	outcomeTyping
	outcomeAborted
	outcomeLost
	outcomeClosed
	nOutcomes
)

var outcomeNames = [nOutcomes]string{"ok", "error", "typing_error", "aborted", "lost", "closed"}

// Span attributes built once, so that starting and ending a run or host
// span allocates little of gomonty's own: spans start and end with no
// timestamps (their times are the SDK's clock readings; an explicit
// timestamp costs an allocation per span), and take their closed-set
// attributes from these slices (the SDK copies them). A host span's kind
// is a start option, one allocation in the SDK, so that a sampler that
// decides by attributes sees it.
var (
	hostSpanAttrs [nHostKinds][]attribute.KeyValue
	hostStartOpts [nHostKinds][]trace.SpanStartOption
	// runEndAttrs[o][n] is a run's end attributes: outcome o, n
	// suspensions (for the common small n).
	runEndAttrs [nOutcomes][16][]attribute.KeyValue
)

func init() {
	for k := 1; k < nHostKinds; k++ {
		hostSpanAttrs[k] = []attribute.KeyValue{AttrHostKind.String(hostKindNames[k])}
		hostStartOpts[k] = []trace.SpanStartOption{trace.WithAttributes(hostSpanAttrs[k]...)}
	}
	for o := range nOutcomes {
		for n := range runEndAttrs[o] {
			runEndAttrs[o][n] = []attribute.KeyValue{AttrOutcome.String(outcomeNames[o]), AttrSuspensions.Int64(int64(n))}
		}
	}
}

// instruments are the session metrics of one MeterProvider, with the
// record options of every closed attribute value built once (so that
// recording allocates nothing).
type instruments struct {
	runDur, runExec, runSusp, turnDur, extDur, frameBytes, snapBytes metric.Float64Histogram
	printBytes                                                       metric.Int64Counter

	none     []metric.RecordOption
	noneAdd  []metric.AddOption
	host     [nHostKinds][]metric.RecordOption
	outcome  [nOutcomes][]metric.RecordOption
	sent     []metric.RecordOption
	received []metric.RecordOption
	dump     []metric.RecordOption
	load     []metric.RecordOption
}

// instrumentCache holds the instruments of the MeterProviders seen last,
// at most maxCachedProviders of them: a process that makes providers as
// it goes (one per pool or tenant, shut down with it) must not keep them
// all alive, aggregated data and all.
var (
	instrumentCache   sync.Map // metric.MeterProvider -> *instruments
	instrumentCacheMu sync.Mutex
	instrumentCacheN  int // entries stored, under instrumentCacheMu
)

const maxCachedProviders = 16

func instrumentsFor(mp metric.MeterProvider) *instruments {
	comparable := reflect.TypeOf(mp).Comparable()
	if comparable {
		if v, ok := instrumentCache.Load(mp); ok {
			return v.(*instruments)
		}
	}
	m := mp.Meter(ScopeName)
	hist := func(name, unit, desc string, b []float64) metric.Float64Histogram {
		h, _ := m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(b...))
		return h // never nil: a failing meter returns a no-op instrument
	}
	in := &instruments{
		runDur:     hist(MetricRunDuration, "s", "Wall time of a run, feed to completion, suspensions included.", DurationBuckets),
		runExec:    hist(MetricRunExecutionTime, "s", "Sandbox execution time of a run, as the worker measured it.", DurationBuckets),
		runSusp:    hist(MetricRunSuspensions, "{suspension}", "Suspensions (host round trips) of a run.", CountBuckets),
		turnDur:    hist(MetricTurnDuration, "s", "Wall time of one turn: request written to turn-ending event read.", DurationBuckets),
		extDur:     hist(MetricExtCallDuration, "s", "Host time of one round trip: suspension read to answer written.", DurationBuckets),
		frameBytes: hist(MetricWireFrameBytes, "By", "Frame body sizes on the wire.", ByteBuckets),
		snapBytes:  hist(MetricSnapshotBytes, "By", "Snapshot sizes, dumped or loaded.", ByteBuckets),
	}
	in.printBytes, _ = m.Int64Counter(MetricPrintBytes, metric.WithUnit("By"), metric.WithDescription("Bytes of sandbox print output."))
	for k := 1; k < nHostKinds; k++ {
		in.host[k] = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(AttrHostKind.String(hostKindNames[k])))}
	}
	for o := range nOutcomes {
		in.outcome[o] = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(AttrOutcome.String(outcomeNames[o])))}
	}
	in.sent = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(AttrDirection.String("sent")))}
	in.received = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(AttrDirection.String("received")))}
	in.dump = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(AttrSnapshotOp.String("dump")))}
	in.load = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(AttrSnapshotOp.String("load")))}
	if comparable {
		instrumentCacheMu.Lock()
		defer instrumentCacheMu.Unlock()
		if v, ok := instrumentCache.Load(mp); ok {
			return v.(*instruments)
		}
		if instrumentCacheN >= maxCachedProviders {
			// Full: start over; the providers in use come back at their
			// next session.
			instrumentCache.Clear()
			instrumentCacheN = 0
		}
		instrumentCache.Store(mp, in)
		instrumentCacheN++
	}
	return in
}

// telemetry is a session's tracing and metrics state. The span fields
// are guarded by mu: the turn goroutine starts and ends them, Close and
// Kill (any goroutine) end what is left.
type telemetry struct {
	in      *instruments
	tracer  trace.Tracer // nil when the session span is not recorded
	content bool

	mu       sync.Mutex
	sess     trace.Span
	sessCtx  context.Context
	run      trace.Span
	runCtx   context.Context
	runStart time.Time
	runExec  time.Duration // the session's execution total when the run began
	// resetExec is the session's execution total when a Reset was sent
	// during the run (0 if none): the Reset's reply zeroes the stamps
	// before the run it discards ends (see recordRun).
	resetExec time.Duration
	runSusp   uint64
	inRun     bool
	host      trace.Span
	hostKind  int
	hostT     time.Time
	// abortFails marks the next request, an AbortFeed the parent sends
	// on its own because the run failed (a limit tripped, an answer that
	// could not be sent or was rejected): its run ends with outcome
	// error, not aborted. Only the turn goroutine touches it.
	abortFails bool
	// holdHost marks a request of the caller's own (Resume, Do,
	// AbortFeed), which the worker may refuse and stay suspended: an
	// answer it carries ends the host round trip only once the worker
	// accepts it, so sent notes its departure in answerT instead, and
	// the round trip ends at that time (see endHostLocked) unless the
	// answer was refused. Run's answers (the hot path) end it as they
	// are sent: a refusal ends Run's feed. Only the turn goroutine sets
	// holdHost; answerT is guarded as the host span is.
	holdHost bool
	answerT  time.Time
}

// startTelemetry opens the session span (a child of the span in ctx) and
// picks the instruments. Runs and host round trips get spans only when
// the session span is recorded, so with no SDK installed a turn starts no
// span at all.
func (s *Session) startTelemetry(ctx context.Context) {
	t := &s.tel
	mp := s.cfg.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	t.in = instrumentsFor(mp)
	t.content = s.cfg.TelemetryContent
	tp := s.cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	tr := tp.Tracer(ScopeName)
	_, span := tr.Start(ctx, SpanSession, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(AttrProtocol.Int64(int64(s.codec.Version()))))
	if !span.IsRecording() {
		span.End()
		return
	}
	t.tracer, t.sess = tr, span
	t.sessCtx = trace.ContextWithSpan(context.Background(), span)
}

// failTelemetry marks the session span failed (a refused Configure). The
// error's text is not recorded: it may quote the sandbox's data.
func (s *Session) failTelemetry() {
	t := &s.tel
	if t.tracer == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sess != nil {
		t.sess.SetStatus(codes.Error, "configure failed")
	}
}

// endTelemetry ends the spans still open (outcome closed) and the session
// span. Safe for concurrent use; idempotent.
func (s *Session) endTelemetry() {
	t := &s.tel
	if t.in == nil {
		return
	}
	if t.tracer == nil {
		// Metrics only: the turn goroutine keeps the run's state without
		// t.mu. With no turn in flight (the turn lock free), none can
		// start once it is taken here (the session is closed), so the
		// open run and host round trip are recorded as with spans; a turn
		// in flight records its own end when it fails.
		if s.busy.CompareAndSwap(false, true) {
			now := time.Now()
			t.endHostLocked(now)
			if t.inRun {
				t.endRunLocked(s, outcomeClosed, now)
			}
			s.busy.Store(false)
		}
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endHostLocked(time.Now())
	if t.inRun {
		t.endRunLocked(s, outcomeClosed, time.Now())
	}
	if t.sess != nil {
		t.sess.End()
		t.sess = nil
	}
}

// exchange sends req and reads events up to the turn-ending one,
// recording the turn (see roundTrip). The caller holds s.busy.
func (s *Session) exchange(ctx context.Context, req message.Request) (*message.ChildEvent, error) {
	t := &s.tel
	if t.in == nil {
		return s.roundTrip(ctx, req, trace.SpanContextFromContext(ctx))
	}
	kind := req.RequestKind()
	abortFails := t.abortFails && kind == message.KindAbortFeed
	t.abortFails = false
	start := time.Now()
	if t.tracer != nil {
		t.mu.Lock()
	}
	// A Feed starts a run unless one is open: a Feed sent (with Do) while
	// a feed is suspended is refused by the worker, which stays
	// suspended, and the open run goes on.
	newRun := kind == message.KindFeed && !t.inRun
	if newRun {
		t.startRunLocked(s, start, req.(*message.Feed))
	} else if kind == message.KindReset {
		t.resetExec = s.stamps.TotalExecution
	}
	// The span the worker is sent, read under the lock already held (an
	// answer ends its host round trip once written: see sent).
	var sc trace.SpanContext
	if t.tracer != nil {
		sc = t.spanContextLocked(ctx)
		t.mu.Unlock()
	} else {
		sc = trace.SpanContextFromContext(ctx)
	}

	ev, err := s.roundTrip(ctx, req, sc)

	end := time.Now()
	var refused, unsent bool
	if err != nil {
		refused, unsent = notSent(err)
		unsent = unsent || refused
	}
	if isDrive(kind) && !unsent {
		t.in.turnDur.Record(context.Background(), end.Sub(start).Seconds(), t.in.none...)
	}
	hk := hostNone
	if err == nil && s.cur() == StateSuspended && ev == s.susp {
		hk = hostKindOf(ev)
	}
	if t.tracer != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	if hk != hostNone && !t.inRun { // a Load that resumed a suspended run
		t.startRunLocked(s, start, nil)
	}
	if !t.inRun {
		return ev, err
	}
	if unsent && newRun {
		// Refused, or the session closed before it was sent: the worker
		// never saw this Feed.
		t.dropRunLocked()
		return ev, err
	}
	if hk != hostNone {
		if t.hostKind != hostNone {
			t.endHostLocked(end) // an answer of the caller's, accepted (holdHost)
		}
		t.runSusp++
		t.hostKind, t.hostT = hk, end
		if t.tracer != nil {
			_, t.host = t.tracer.Start(t.runCtx, SpanHost, hostStartOpts[hk]...)
			if t.content {
				t.host.SetAttributes(contentOf(ev)...)
			}
		}
		return ev, err
	}
	if s.cur() == StateSuspended && !s.closed.Load() {
		// A refused answer (or one not sent): the worker is still
		// suspended, and the host round trip goes on.
		t.answerT = time.Time{}
		return ev, err
	}
	o := outcomeLost
	switch {
	case err != nil && s.closed.Load():
		if closedByCaller(err) {
			o = outcomeClosed // as endTelemetry says when Close or Kill gets there first
		}
	case err != nil:
		o = outcomeError
	case abortFails:
		o = outcomeError // the parent's own abort of a failed run
	case kind == message.KindAbortFeed, kind == message.KindReset:
		o = outcomeAborted // a Reset discards a suspended feed
	case ev != nil:
		switch b := ev.Body.(type) {
		case *message.Complete:
			o = outcomeOK
			if t.content && t.run != nil {
				t.run.SetAttributes(AttrResult.String(b.Values.Repr(b.Value)))
			}
		case *message.TypingError:
			o = outcomeTyping
		default:
			o = outcomeError
		}
	}
	t.endRunLocked(s, o, end)
	return ev, err
}

func (t *telemetry) startRunLocked(s *Session, start time.Time, feed *message.Feed) {
	t.inRun = true
	t.runStart, t.runExec, t.runSusp, t.resetExec = start, s.stamps.TotalExecution, 0, 0
	if t.tracer == nil {
		return
	}
	if t.content && feed != nil {
		t.runCtx, t.run = t.tracer.Start(t.sessCtx, SpanRun, trace.WithAttributes(AttrCode.String(feed.Code)))
		return
	}
	t.runCtx, t.run = t.tracer.Start(t.sessCtx, SpanRun)
}

func (t *telemetry) endHostLocked(now time.Time) {
	if t.hostKind == hostNone {
		return
	}
	held := !t.answerT.IsZero()
	if held {
		now = t.answerT // the departure of the caller's answer (holdHost)
		t.answerT = time.Time{}
	}
	t.in.extDur.Record(context.Background(), now.Sub(t.hostT).Seconds(), t.in.host[t.hostKind]...)
	if t.host != nil {
		if held {
			t.host.End(trace.WithTimestamp(now))
		} else {
			t.host.End()
		}
		t.host = nil
	}
	t.hostKind = hostNone
}

// dropRunLocked ends the run that a Feed refused (or closed under it)
// before it was sent opened (its span had to exist for the frame to carry
// its context): the worker never saw the feed, so no run is recorded in
// the metrics, and the span ends as an error, "not sent".
func (t *telemetry) dropRunLocked() {
	t.inRun = false
	if t.run == nil {
		return
	}
	t.run.SetAttributes(runEndAttrs[outcomeError][0]...)
	t.run.SetStatus(codes.Error, "not sent")
	t.run.End()
	t.run, t.runCtx = nil, nil
}

func (t *telemetry) endRunLocked(s *Session, o int, now time.Time) {
	t.endHostLocked(now)
	t.recordRun(s, now)
	t.inRun = false
	if t.run == nil {
		return
	}
	if t.runSusp < uint64(len(runEndAttrs[o])) {
		t.run.SetAttributes(runEndAttrs[o][t.runSusp]...)
	} else {
		t.run.SetAttributes(AttrOutcome.String(outcomeNames[o]), AttrSuspensions.Int64(int64(t.runSusp)))
	}
	if o == outcomeError || o == outcomeLost {
		t.run.SetStatus(codes.Error, outcomeNames[o])
	}
	t.run.End()
	t.run, t.runCtx = nil, nil
}

func (t *telemetry) recordRun(s *Session, now time.Time) {
	bg := context.Background()
	t.in.runDur.Record(bg, now.Sub(t.runStart).Seconds(), t.in.none...)
	// The stamps' total only grows within a session, but for a Reset,
	// which zeroes it: a run it discarded ran until the Reset was sent.
	if d := max(s.stamps.TotalExecution, t.resetExec) - t.runExec; d >= 0 {
		t.in.runExec.Record(bg, d.Seconds(), t.in.none...)
	}
	t.in.runSusp.Record(bg, float64(t.runSusp), t.in.none...)
}

// panickedTelemetry ends the run of a turn a panic unwinds through (the
// print function's, which discards the worker), whose end exchange will
// not record: lost, as any run whose worker the parent discarded. The
// caller is the turn goroutine.
func (s *Session) panickedTelemetry() {
	t := &s.tel
	if t.in == nil {
		return
	}
	if t.tracer != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	if t.inRun {
		t.endRunLocked(s, outcomeLost, time.Now())
	}
}

// sent records a request frame once written, while the worker works on
// it (off the turn's critical path): its size, and the end of the host
// round trip an answer (or an abort) ends.
func (s *Session) sent(n int, kind message.RequestKind) {
	t := &s.tel
	if t.in == nil {
		return
	}
	s.frameBytes(n, true)
	switch kind {
	case message.KindResumeCall, message.KindResumeNameLookup, message.KindResumeFutures, message.KindAbortFeed:
	default:
		return
	}
	if t.tracer != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	if t.holdHost && t.hostKind != hostNone {
		t.answerT = time.Now() // the worker may refuse it: see holdHost
		return
	}
	t.endHostLocked(time.Now())
}

// frameBytes records one frame body's size.
func (s *Session) frameBytes(n int, sent bool) {
	if in := s.tel.in; in != nil {
		opts := in.received
		if sent {
			opts = in.sent
		}
		in.frameBytes.Record(context.Background(), float64(n), opts...)
	}
}

// snapshotBytes records a snapshot's size: a dump's, or a load's.
func (s *Session) snapshotBytes(n int, dump bool) {
	if in := s.tel.in; in != nil {
		opts := in.load
		if dump {
			opts = in.dump
		}
		in.snapBytes.Record(context.Background(), float64(n), opts...)
	}
}

// printed records a Print event's bytes, and with the content opt-in its
// text as span events.
func (s *Session) printed(p *message.Print) {
	t := &s.tel
	if t.in == nil {
		return
	}
	n := 0
	for _, seg := range p.Segments {
		n += len(seg.Text)
	}
	t.in.printBytes.Add(context.Background(), int64(n), t.in.noneAdd...)
	if t.content && t.tracer != nil {
		t.mu.Lock()
		if t.run != nil {
			for _, seg := range p.Segments {
				t.run.AddEvent("print", trace.WithAttributes(AttrPrint.String(seg.Text)))
			}
		}
		t.mu.Unlock()
	}
}

// spanContextLocked is the span whose context travels to the worker: the
// run span during a feed, else the session span, else the span in ctx.
// t.mu is held and tracing is on.
func (t *telemetry) spanContextLocked(ctx context.Context) trace.SpanContext {
	if t.run != nil {
		return t.run.SpanContext()
	}
	if t.sess != nil {
		return t.sess.SpanContext()
	}
	return trace.SpanContextFromContext(ctx)
}

// notSent classifies the error of a request that was not sent: refused
// when it could not be encoded or was over the frame cap (the session
// goes on), closed when the session was closed before it was sent. Both
// are false for any other error.
func notSent(err error) (refused, closed bool) {
	var tl *RequestTooLargeError
	var ir *InvalidRequestError
	var ce *closedError
	switch {
	case errors.As(err, &tl), errors.As(err, &ir):
		return true, false
	case errors.As(err, &ce):
		return false, ce.unsent
	}
	return false, false
}

// closedByCaller reports whether err is the end of a turn that Close or
// Kill interrupted (a closed session with no other cause).
func closedByCaller(err error) bool {
	var ce *closedError
	return errors.As(err, &ce) && ce.cause == nil
}

// currentSpanContext is the span whose context travels to the worker
// (see spanContextLocked), for a request sent again within a turn.
func (s *Session) currentSpanContext(ctx context.Context) trace.SpanContext {
	t := &s.tel
	if t.tracer == nil {
		return trace.SpanContextFromContext(ctx)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.spanContextLocked(ctx)
}

func hostKindOf(ev *message.ChildEvent) int {
	switch ev.Body.(type) {
	case *message.FunctionCall:
		return hostFunction
	case *message.NameLookup:
		return hostLookup
	case *message.OsCall:
		return hostOS
	case *message.ResolveFutures:
		return hostFutures
	}
	return hostNone
}

// contentOf is the opt-in attributes of a suspension.
func contentOf(ev *message.ChildEvent) []attribute.KeyValue {
	switch b := ev.Body.(type) {
	case *message.FunctionCall:
		args := make([]byte, 0, 64)
		args = append(args, '(')
		for i, a := range b.Args {
			if i > 0 {
				args = append(args, ", "...)
			}
			args = value.AppendRepr(args, &b.Values, a)
		}
		for i, kw := range b.Kwargs {
			if i > 0 || len(b.Args) > 0 {
				args = append(args, ", "...)
			}
			args = value.AppendRepr(args, &b.Values, kw.Key)
			args = append(args, '=')
			args = value.AppendRepr(args, &b.Values, kw.Value)
		}
		args = append(args, ')')
		return []attribute.KeyValue{AttrFunction.String(b.FunctionName), AttrArguments.String(string(args))}
	case *message.NameLookup:
		return []attribute.KeyValue{AttrFunction.String(b.Name)}
	case *message.OsCall:
		return []attribute.KeyValue{AttrFunction.String(b.Op.String()), AttrArguments.String(b.Path)}
	}
	return nil
}

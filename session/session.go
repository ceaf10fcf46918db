package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/satdur"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// State is the coarse state of a session.
//
// A State is a plain value, safe for concurrent use.
type State uint8

// The session states.
const (
	// StateIdle: no feed is in progress; the session accepts Feed, Dump,
	// Load (before the first feed) and Reset.
	StateIdle State = 1
	// StateSuspended: a feed waits on the host (see Session.Suspension).
	StateSuspended State = 2
	// StateClosed: the worker is gone.
	StateClosed State = 3
)

// String names the state.
func (s State) String() string {
	switch s {
	case StateIdle:
		return "idle"
	case StateSuspended:
		return "suspended"
	case StateClosed:
		return "closed"
	}
	return "unknown"
}

// Stamps are the session metadata the worker reported last.
//
// Stamps is plain data, safe to share.
type Stamps struct {
	// TotalExecution is the session's cumulative sandbox execution time.
	TotalExecution time.Duration
	// MaxDuration is the session's duration limit; valid when
	// HasMaxDuration.
	MaxDuration time.Duration
	// HasMaxDuration reports whether the worker stamped a duration limit.
	HasMaxDuration bool
	// MaxDurationMicros is the duration limit exactly as the worker
	// stamped it, in microseconds; valid when HasMaxDuration. It differs
	// from MaxDuration only past time.Duration's range (~292 years),
	// where MaxDuration saturates.
	MaxDurationMicros uint64
	// MaxSuspensions is the session's suspension limit; valid when
	// HasMaxSuspensions.
	MaxSuspensions uint64
	// HasMaxSuspensions reports whether the worker stamped a suspension
	// limit.
	HasMaxSuspensions bool
	// TotalSleep is the system sleep this session's parent has charged
	// to the sleep budget so far (protocol 5). No event stamps the time a
	// loaded dump had already slept, so after a Load it counts from zero,
	// or from what LoadWith was told (LoadOptions.TotalSleep); a remote
	// session resumed after a ShutdownDump keeps its total.
	TotalSleep time.Duration
	// FeedExecution is the running feed's execution clock, ratcheted: it
	// never goes back within a feed, restarts at each Feed (not at one
	// refused while a feed is suspended) and is the restored feed's after
	// a Load (protocol 5).
	FeedExecution time.Duration
	// MaxFeedDuration, MaxTurnDuration and MaxTotalSleep are the limits
	// the worker echoed (protocol 5); 0 when not echoed (a Load's reply
	// sets all three: the dump's limits).
	MaxFeedDuration, MaxTurnDuration, MaxTotalSleep time.Duration
}

// Negotiation records how the session's protocol version was chosen.
//
// A Negotiation is plain data, safe to share.
type Negotiation struct {
	// Version is the protocol version in use.
	Version uint32
	// Attempts is the number of workers started to find it (2 after a
	// downgrade).
	Attempts int
	// FromCache is set when the first attempt used the process-wide cache
	// of earlier negotiations with the same binary (or, for a
	// RemoteLauncher, the same URL).
	FromCache bool
	// Pinned is set when Launch.ProtocolVersion (or Attach) chose the version.
	Pinned bool
	// Worker is the worker's supported range when it reported one (after
	// a refusal); zero otherwise.
	Worker protocol.VersionRange
}

// Values of Session.interrupt. A turn moves it from irIdle to irNone and
// back; whoever kills the worker mid-turn swaps irNone for its reason
// first, so a turn learns why its worker died and a late timer can never
// kill a worker whose turn already ended.
const (
	irIdle int32 = iota
	irNone
	irContext
	irWatchdog
	irClosed
	// irDetached: Detach handed the worker back; Close and Kill leave it
	// alone (see attach.go).
	irDetached
)

// maxRetainedBuf is the largest request buffer kept between turns.
const maxRetainedBuf = 1 << 20

// Session is the parent side of one worker: one sandboxed Python session
// with persistent globals.
//
// A Session is not safe for concurrent use. It runs one turn at a time
// (strict alternation) on the calling goroutine; an overlapping call fails
// with ErrBusy. Close and Kill are the exceptions: they may be called from
// any goroutine at any time, and interrupt a turn in flight (State and
// Cause, which only read, may be called from any goroutine too, and so may
// Version, Negotiation, Binary and Pid, which never change).
//
// Get a Session from [Start] or [Attach]; the zero Session is not usable.
// After Close its turns fail with an error matching ErrClosed, while the
// queries (State, Cause, Version, Pid, Stamps, ...) keep answering.
type Session struct {
	cfg   Config
	bin   string
	peer  Peer
	conn  transport.Conn
	codec codec.Codec
	lim   codec.Limits
	neg   Negotiation
	log   *slog.Logger

	busy      atomic.Bool
	interrupt atomic.Int32
	closed    atomic.Bool
	// watch is the cancellation watch of the turns' context (ctxwatch.go).
	watch ctxWatch
	// aborted is set when a feed was aborted because its context ended.
	aborted atomic.Bool
	// hostCancel cancels the host functions of the Run in progress, so
	// Close and Kill also release a Run blocked in one.
	hostCancel atomic.Pointer[context.CancelFunc]
	// written, set by the Run in progress (nil otherwise), is called on
	// the turn's goroutine when a request has been encoded and is about
	// to be written to the worker (nothing can stop it now but the loss
	// of the connection): the new host objects the request carries are
	// registered then, before the worker can name them (see
	// runner.commitHeld).
	written func()

	// configured is set once the worker has taken a Configure (Start's,
	// or the one after a Reset); a Reset clears it. A remote session drained before
	// then has no state to lose (remote.go, shutdownDump).
	configured bool
	// ownConfigure is set while the session sends its own Configure
	// (configure); doConfigure is a copy of the last Configure the worker
	// accepted that was not the session's own (one sent through Do), nil
	// when the session's own is in force: a remote session's resume
	// configures the new replica with it, as the old one was.
	ownConfigure bool
	doConfigure  *message.Configure
	// state is the State, written on the turn goroutine (setState) and
	// read anywhere (cur, State).
	state   atomic.Uint32
	started bool                // an interpreter exists (a feed ran, or a Dump or a Load built it)
	susp    *message.ChildEvent // the pending suspension
	resumed int                 // remote resumes after a ShutdownDump
	// turnResumes counts the resumes of the request in flight (remote.go).
	turnResumes int
	remoteID    []byte // a storing relay's session id (protocol 5)
	// handover is a draining server's ShutdownDump that came right behind
	// the answer to the last request (remote sessions only): the server
	// handed the then idle session its state, and it answers the next
	// request, which is not sent (see handedOver).
	handover *message.ChildEvent
	// deadErr is the cause of the loss, set once; guarded by deadMu so
	// that Cause may read it from any goroutine.
	deadMu  sync.Mutex
	deadErr error

	ownMaxSusp uint64 // from our Configure; 0 = none
	ownMaxDur  time.Duration
	hasOwnDur  bool
	// dumpLimits is set while the limits in force are a loaded dump's
	// (from Load to the next Configure): the watchdog no longer backstops
	// the Config's protocol-5 feed and turn limits (own5).
	dumpLimits bool
	stamps     Stamps
	suspCount  uint64

	// Call-id bookkeeping of the current feed, to catch a child that
	// reuses or rewinds call ids, or reports futures it was never given.
	lastCall uint32
	callSeen bool
	futures  map[uint32]struct{} // ids registered as external futures
	restored bool                // the feed came from a dump: its futures are unknown

	print PrintFunc
	// waitingHook, set by tests only, is called when a Run starts waiting
	// for host futures (the worker is suspended on ResolveFutures).
	waitingHook func()
	preq        message.ParentRequest
	tpSpan      trace.SpanContext // the span of tpStr, the last traceparent sent
	tpStr       string
	wbuf        []byte
	scratch     value.Graph
	wd          *time.Timer
	wdBudget    time.Duration
	wdDeadline  atomic.Int64 // when the armed watchdog may fire, in nanoseconds since monoBase
	wdLimit     DurationLimit

	hostObjs objectStore // host objects sent by Run; emptied by Reset and Detach

	tel telemetry // spans and metrics (telemetry.go)
}

// Version returns the negotiated protocol version.
func (s *Session) Version() uint32 { return s.codec.Version() }

// Negotiation reports how the protocol version was chosen.
func (s *Session) Negotiation() Negotiation { return s.neg }

// Binary returns the worker executable's path, or "" when the worker is
// not a local process.
func (s *Session) Binary() string { return s.bin }

// Pid returns the worker's process id, or 0 when the worker is not a local
// process. It keeps returning that id after Close, Kill, Detach or the
// loss of the worker, so that logs can name the worker a session ran on;
// the process may be gone by then (and its id reused by another process)
// or, after Detach, serve someone else: do not signal it.
func (s *Session) Pid() int { return pidOf(s.peer) }

func pidOf(p Peer) int {
	if pp, ok := p.(interface{ Pid() int }); ok {
		return pp.Pid()
	}
	return 0
}

// State returns the session's state. It is safe to call from any
// goroutine (a concurrent turn may change it at any moment).
func (s *Session) State() State {
	if s.closed.Load() {
		return StateClosed
	}
	return s.cur()
}

// cur is the session's state, closed or not.
func (s *Session) cur() State { return State(s.state.Load()) }

// setState sets the session's state (on the turn goroutine).
func (s *Session) setState(st State) { s.state.Store(uint32(st)) }

// Suspension returns the event the feed is suspended on (a FunctionCall,
// OsCall, NameLookup or ResolveFutures), or nil when it is not suspended.
func (s *Session) Suspension() *message.ChildEvent {
	if s.State() != StateSuspended {
		return nil
	}
	return s.susp
}

// Stamps returns the metadata the worker reported last.
func (s *Session) Stamps() Stamps { return s.stamps }

// SuspensionCount returns how many suspensions the current (or last) feed
// has made; the parent aborts a feed whose count exceeds the limit.
func (s *Session) SuspensionCount() uint64 { return s.suspCount }

// Do sends one raw request and returns the turn-ending event, after
// passing every Print segment to the print sink. It is the primitive below
// all other turn methods and does no state checking of its own: the
// worker judges the request. The session's state, limits and stamps are
// still tracked, the suspension limit is still enforced (a
// *SuspensionLimitError replaces the over-limit suspension) and an event
// that does not fit the request discards the worker with a
// *ProtocolError. Do leaves the protocol-5 sleep budget to its caller: a
// system sleep is returned uncharged (Feed and Resume charge it), so that
// a relay forwarding turns with Do does not count its parent's sleeps.
//
// A Configure sent with Do that the worker accepts (after a Reset, say)
// is the session's configuration from then on, in place of Config's: a
// remote session that resumes on a new replica after a ShutdownDump
// configures it with that Configure, as sent, before loading its dump. A
// Configure the worker refuses changes nothing (the montygo server
// refuses every Configure after the first). The session's own checks
// keep Config's limits either way: the suspension limit and the duration
// watchdog follow Config.Limits, not the Configure's, and Reset and a
// pool's checkout configure with Config again.
//
// Error and TypingError events are returned as events, not errors. A nil
// req, or a nil pointer of a request type, is an *InvalidRequestError and
// sends nothing.
func (s *Session) Do(ctx context.Context, req message.Request) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	if isNilRequest(req) {
		what := "request"
		if req != nil {
			what = fmt.Sprintf("%T", req)
		}
		return nil, &InvalidRequestError{Err: errors.New("monty session: Do with a nil " + what)}
	}
	s.tel.holdHost = true
	ev, err := s.exchange(ctx, req)
	s.tel.holdHost = false
	return ev, err
}

// isNilRequest reports a nil request or a nil pointer in one. The codecs
// disagree on a nil body (protocol 2 refuses it, 4 and 5 send the empty
// message), and the session reads the request's fields.
func isNilRequest(req message.Request) bool {
	if req == nil {
		return true
	}
	v := reflect.ValueOf(req)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// notDone reports a context that is already done as a session-preserving
// error; nothing has been sent.
func notDone(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{Err: context.Cause(ctx), unsent: true}
	}
	return &CanceledError{Err: context.Cause(ctx)}
}

// isDrive reports whether the request makes the worker run sandbox code.
func isDrive(k message.RequestKind) bool {
	switch k {
	case message.KindFeed, message.KindResumeCall, message.KindResumeNameLookup,
		message.KindResumeFutures, message.KindAbortFeed:
		return true
	}
	return false
}

// encodeError is the error of a request encoded as buf (with the codec's
// err) for a connection whose frame cap is max: an *InvalidRequestError
// or a *RequestTooLargeError, nil when buf may be sent.
func encodeError(buf []byte, err error, max int) error {
	if err != nil {
		var tl *frame.TooLargeError
		switch {
		case errors.As(err, &tl):
			return &RequestTooLargeError{Len: int(min(tl.Len, 1<<62)), Max: int(tl.Max)}
		case errors.Is(err, frame.ErrTooLarge):
			// The codec sizes a request before encoding it and refuses
			// one over the cap without saying by how much.
			return &RequestTooLargeError{Max: max, Err: err}
		}
		return &InvalidRequestError{Err: err}
	}
	if len(buf) > max {
		return &RequestTooLargeError{Len: len(buf), Max: max}
	}
	return nil
}

// roundTrip sends req and reads events up to the turn-ending one, with
// the traceparent of sc (the current span: see spanContextLocked) when valid.
// The caller holds s.busy; it is called through exchange (telemetry.go).
func (s *Session) roundTrip(ctx context.Context, req message.Request, sc trace.SpanContext) (*message.ChildEvent, error) {
	if s.closed.Load() {
		return nil, &closedError{cause: s.cause(), unsent: true}
	}
	kind := req.RequestKind()
	s.preq.Body = req
	s.preq.TraceParent = nil
	if sc.IsValid() {
		if !sc.Equal(s.tpSpan) { // rendered once per span, not per turn
			s.tpSpan = sc
			s.tpStr, _ = traceParent(sc)
		}
		s.preq.TraceParent = &s.tpStr
	}
	buf, err := s.codec.AppendRequest(s.wbuf[:0], &s.preq)
	s.preq.Body = nil
	if err = encodeError(buf, err, s.lim.FrameLen()); err != nil {
		if buf != nil {
			s.keep(buf)
		}
		return nil, err
	}
	s.watchCtx(ctx)
	if !s.interrupt.CompareAndSwap(irIdle, irNone) {
		return nil, &closedError{cause: s.cause(), unsent: true}
	}
	if ctx.Done() != nil && ctx.Err() != nil {
		// Done before the turn began: its watch may have fired while
		// the session was idle, when a kill does nothing.
		s.kill(irContext)
	}
	// Strict alternation: with no request outstanding the child has
	// nothing to say. Bytes already waiting are an unsolicited event,
	// which would otherwise be taken for the answer to this request.
	if s.handover != nil || s.conn.Pending() {
		if ev, ok := s.handedOver(); ok {
			// A draining server handed the idle session its state: the
			// ShutdownDump answers this request, which was not sent.
			s.keep(buf)
			if !s.interrupt.CompareAndSwap(irNone, irIdle) {
				return nil, s.interrupted(ctx, s.interrupt.Load())
			}
			return s.settle(ctx, req, ev)
		}
		s.interrupt.CompareAndSwap(irNone, irIdle)
		return nil, s.fail(&ProtocolError{Msg: "worker spoke before the request was sent", Err: ErrStrayEvent})
	}

	if s.written != nil {
		// The request goes out now (a peer may read it before
		// WriteFrame returns).
		s.written()
	}
	if kind == message.KindFeed && s.cur() != StateSuspended {
		// A Feed sent while a feed is suspended is refused and changes
		// nothing: the suspended feed's clock stays.
		s.stamps.FeedExecution = 0
	}
	watched := true
	if isDrive(kind) {
		watched = s.armWatchdog()
	} else {
		s.armReplyBound()
	}

	op := transport.OpWaiting
	if kind == message.KindAbortFeed {
		op = transport.OpAborting
	}
	var (
		ev     *message.ChildEvent
		ioErr  error
		decErr error
	)
	if err := s.conn.WriteFrame(buf); err != nil {
		if hv, ok := s.handedOver(); ok {
			// The connection had ended with the ShutdownDump of a drain
			// that handed the idle session its state (the frame arrived
			// as the request was being sent): it answers the request.
			ev = hv
		} else {
			ioErr = err
			if op != transport.OpAborting {
				op = transport.OpSending
			}
		}
	} else {
		s.sent(len(buf), kind)
		for {
			body, err := s.conn.ReadFrame()
			if err != nil {
				ioErr = err
				break
			}
			s.frameBytes(len(body), false)
			e, err := s.codec.DecodeEvent(body, s.lim)
			if err != nil {
				decErr = err
				break
			}
			if p, ok := e.Body.(*message.Print); ok {
				s.deliver(p)
				continue
			}
			ev = e
			break
		}
	}
	// Strict alternation again: after a turn-ending event the child has
	// nothing more to say until the next request. Bytes already behind
	// the answer are a second event for one request (see stray below).
	stray := ev != nil && s.conn.Pending()
	if stray && !isShutdownDump(ev) {
		// A server whose drain grace ran out just after it answered
		// found the session idle and handed it its state at once: that
		// ShutdownDump is no second answer to this request but the
		// answer to the next.
		if hv, ok := s.handedOver(); ok {
			s.handover, stray = hv, false
		}
	}
	s.keep(buf)

	if watched {
		s.wd.Stop()
	}
	if !s.interrupt.CompareAndSwap(irNone, irIdle) {
		return nil, s.interrupted(ctx, s.interrupt.Load())
	}
	switch {
	case ioErr != nil:
		return nil, s.lost(op, ioErr)
	case decErr != nil:
		return nil, s.fail(&ProtocolError{Msg: "invalid payload from worker", Err: decErr})
	case stray:
		what := "answer"
		if ev.Body != nil { // a kindless event is no answer either, but it came first
			what = ev.Body.EventKind().String() + " answer"
		}
		return nil, s.fail(&ProtocolError{Msg: "worker sent another event after its " + what, Err: ErrStrayEvent})
	}
	return s.settle(ctx, req, ev)
}

// handedOver returns the ShutdownDump waiting on a remote session's
// connection before a request was sent (or kept from behind the last
// answer, s.handover): a draining server whose grace ran out while the
// session was idle sends it (the session's signed dump) and closes, where
// it would otherwise have answered the next request with it. It is that
// request's answer: the request did not run, and settle resumes the
// session elsewhere as for any ShutdownDump. The server may send it as
// soon as it has written an answer, so it may already be waiting when
// that answer is read. It reports false when nothing is waiting, or what
// is waiting (then read) is something else.
func (s *Session) handedOver() (*message.ChildEvent, bool) {
	if ev := s.handover; ev != nil {
		s.handover = nil
		return ev, true
	}
	if _, ok := s.peer.(*remotePeer); !ok || !s.conn.Pending() {
		return nil, false
	}
	body, err := s.conn.ReadFrame()
	if err != nil {
		return nil, false
	}
	s.frameBytes(len(body), false)
	ev, err := s.codec.DecodeEvent(body, s.lim)
	if err != nil {
		return nil, false
	}
	if _, ok := ev.Body.(*message.ShutdownDump); !ok {
		return nil, false
	}
	return ev, true
}

func isShutdownDump(ev *message.ChildEvent) bool {
	_, ok := ev.Body.(*message.ShutdownDump)
	return ok
}

// keep retains buf for the next request unless it grew too large.
func (s *Session) keep(buf []byte) {
	if cap(buf) <= maxRetainedBuf {
		s.wbuf = buf[:0]
	} else {
		s.wbuf = nil
	}
}

// errPrintPanicked is the cause of a session whose print function panicked
// mid-turn.
var errPrintPanicked = errors.New("monty session: the print function panicked mid-turn; the worker was discarded")

func (s *Session) deliver(p *message.Print) {
	s.printed(p)
	if s.print == nil {
		return
	}
	done := false
	defer func() {
		if !done {
			// The print function panicked (or called runtime.Goexit)
			// mid-turn: the rest of the turn will never be read, so the
			// worker cannot be kept in step. Discard it; the panic goes on.
			s.die(errPrintPanicked, true)
			s.panickedTelemetry()
		}
	}()
	for _, seg := range p.Segments {
		s.print(seg.Stream, seg.Text)
	}
	done = true
}

// kill kills the worker mid-turn for reason, unless the turn has already
// ended or someone else got there first.
func (s *Session) kill(reason int32) {
	if s.interrupt.CompareAndSwap(irNone, reason) {
		s.peer.Kill()
	}
}

// watchdogFire is the watchdog timer's callback. A callback that runs
// before the deadline in force belongs to an earlier arming (its timer
// expired as that turn ended and the callback ran late, after the next turn
// had armed the timer again): it must not kill the turn in flight.
func (s *Session) watchdogFire() {
	if int64(time.Since(monoBase)) < s.wdDeadline.Load() {
		return
	}
	s.kill(irWatchdog)
}

// monoBase is the origin of the watchdog's deadlines (monotonic clock).
var monoBase = time.Now()

// armWatchdog starts the max_duration backstop for a turn that runs code:
// the remaining budget plus the grace. It reports whether a budget is
// known.
func (s *Session) armWatchdog() bool {
	budget, ok := s.durationBudget()
	d := satdur.Add(max(budget-s.stamps.TotalExecution, 0), s.cfg.WatchdogGrace)
	limit := LimitDuration
	if d5, b5, l5, ok5 := s.backstop5(); ok5 && (!ok || d5 < d) {
		d, budget, limit, ok = d5, b5, l5, true
	}
	if !ok {
		return false
	}
	s.startWatchdog(d, budget, limit)
	return true
}

// armReplyBound starts the backstop of a turn that runs no code (a Dump,
// a Load, a Reset, a Shutdown, the Configure exchanges, any request Do
// sends that is not a feed or a resume),
// which the max_duration watchdog does not cover: without it a worker
// that never answers would hold the turn for as long as its context
// allows, for ever under context.Background. A healthy worker answers
// such a request in far less than a feed may run: the bound is the
// max_duration budget in force (DefaultMaxDuration when there is none)
// or Config.StartTimeout, whichever is longer, plus the grace. Its
// *TimeoutError reports the whole bound as its Budget, Limit LimitReply.
func (s *Session) armReplyBound() {
	budget, ok := s.durationBudget()
	if !ok {
		budget = DefaultMaxDuration
	}
	d := satdur.Add(max(budget, s.cfg.StartTimeout), s.cfg.WatchdogGrace)
	s.startWatchdog(d, d, LimitReply)
}

// startWatchdog starts (or restarts) the watchdog timer: d from now, it
// kills the turn, whose error then names limit and budget.
func (s *Session) startWatchdog(d, budget time.Duration, limit DurationLimit) {
	s.wdBudget, s.wdLimit = budget, limit
	// Taken before the timer starts, so the deadline is never later than
	// the timer's own expiry.
	s.wdDeadline.Store(int64(satdur.Add(time.Since(monoBase), d)))
	if s.wd == nil {
		s.wd = time.AfterFunc(d, s.watchdogFire)
	} else {
		s.wd.Reset(d)
	}
}

// durationBudget returns the max_duration limit in force: ours from
// Configure and the worker's stamp, whichever is lower.
func (s *Session) durationBudget() (time.Duration, bool) {
	switch {
	case s.hasOwnDur && s.stamps.HasMaxDuration:
		return min(s.ownMaxDur, s.stamps.MaxDuration), true
	case s.hasOwnDur:
		return s.ownMaxDur, true
	case s.stamps.HasMaxDuration:
		return s.stamps.MaxDuration, true
	}
	return 0, false
}

// SuspensionLimit returns the max_suspensions limit the parent enforces:
// the session's own configured limit, else the one the worker stamped, the
// lower of the two when both are known, and 1000 when neither is.
func (s *Session) SuspensionLimit() uint64 {
	switch {
	case s.ownMaxSusp != 0 && s.stamps.HasMaxSuspensions:
		return min(s.ownMaxSusp, s.stamps.MaxSuspensions)
	case s.ownMaxSusp != 0:
		return s.ownMaxSusp
	case s.stamps.HasMaxSuspensions:
		return s.stamps.MaxSuspensions
	}
	return protocol.DefaultMaxSuspensions
}

// interrupted builds the error of a turn whose worker was killed for
// reason, and discards the worker.
func (s *Session) interrupted(ctx context.Context, reason int32) error {
	var err error
	switch reason {
	case irContext:
		if ae, ok := context.Cause(ctx).(*abortExpired); ok {
			err = ae.err // the AbortTimeout of the parent's own AbortFeed
		} else if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = &TimeoutError{Killed: true, Err: context.Cause(ctx)}
		} else {
			err = &CanceledError{Killed: true, Err: context.Cause(ctx)}
		}
	case irWatchdog:
		err = &TimeoutError{Watchdog: true, Limit: s.wdLimit, Budget: s.wdBudget, Killed: true}
	default:
		s.die(nil, true)
		return s.closedErr()
	}
	return s.die(err, true)
}

// lost classifies an I/O failure on the worker's connection (a frame over
// the cap, a WebSocket text message or a frame that breaks the WebSocket
// protocol is the worker's protocol violation) and discards the worker.
func (s *Session) lost(op transport.Op, ioErr error) error {
	if errors.Is(ioErr, frame.ErrTooLarge) || errors.Is(ioErr, ws.ErrNotBinary) || errors.Is(ioErr, ws.ErrProtocol) {
		return s.fail(&ProtocolError{Msg: "invalid frame from worker", Err: ioErr})
	}
	err := s.peer.Lost(transport.Loss{Op: op, Err: ioErr})
	// A worker that dies on purpose writes a FatalError first (a
	// desynchronized frame, a panic); it may still be in the connection.
	if !errors.Is(err, worker.ErrMemoryLimit) {
		if body, rerr := s.conn.ReadFrame(); rerr == nil {
			if ev, derr := s.codec.DecodeEvent(body, s.lim); derr == nil {
				if fe, ok := ev.Body.(*message.FatalError); ok {
					err = s.peer.Lost(transport.Loss{Announced: true, Message: fe.Message})
				}
			}
		}
	}
	return s.die(err, false)
}

// fail discards a worker that broke the protocol.
func (s *Session) fail(err error) error {
	s.log.Warn("monty worker discarded", slog.Int("pid", s.Pid()), slog.Any("error", err))
	return s.die(err, true)
}

// die marks the session closed with cause err, stops the worker (killing
// it first when kill is set, else letting the ladder wait for its exit) and
// returns err. It retires the context watch, as Close does: a session that
// ends without Close (Shutdown, a lost worker) must not stay reachable
// from the context of its last turn.
func (s *Session) die(err error, kill bool) error {
	s.setState(StateClosed)
	s.susp = nil
	s.setCause(err)
	s.closed.Store(true)
	s.interrupt.Store(irClosed)
	s.unwatchCtx()
	if s.wd != nil {
		s.wd.Stop()
	}
	if kill {
		s.peer.Kill()
	}
	s.peer.Close(context.Background())
	return err
}

func (s *Session) closedErr() error { return &closedError{cause: s.cause()} }

// setCause records err as the cause of the loss unless one is known.
func (s *Session) setCause(err error) {
	s.deadMu.Lock()
	if s.deadErr == nil {
		s.deadErr = err
	}
	s.deadMu.Unlock()
}

func (s *Session) cause() error {
	s.deadMu.Lock()
	defer s.deadMu.Unlock()
	return s.deadErr
}

// noteSessionID keeps the session id a storing relay sends (protocol 5)
// on its first reply to Configure or Load.
func (s *Session) noteSessionID(ev *message.ChildEvent) {
	if ev.SessionID != nil {
		s.remoteID = bytes.Clone(ev.SessionID)
	}
}

// RemoteSessionID returns the id under which a relay that stores sessions
// keeps this one (protocol 5, sent when Config.Persistence asks for it or
// the relay stores by default), nil when none was sent. Load(ctx, id) on a
// session to the same relay restores the session parked under it, as
// Load does with a dump. The result is a copy.
func (s *Session) RemoteSessionID() []byte { return bytes.Clone(s.remoteID) }

// noteStamps records the metadata of a stamped event.
func (s *Session) noteStamps(ev *message.ChildEvent) {
	s.noteStamps5(ev)
	if ev.MaxSuspensions == nil && ev.MaxDurationMicros == nil && ev.TotalExecutionMicros == 0 {
		return
	}
	s.stamps.TotalExecution = satdur.Micros(ev.TotalExecutionMicros)
	if ev.MaxSuspensions != nil {
		s.stamps.MaxSuspensions = *ev.MaxSuspensions
		s.stamps.HasMaxSuspensions = true
	}
	if ev.MaxDurationMicros != nil {
		s.stamps.MaxDuration = satdur.Micros(*ev.MaxDurationMicros)
		s.stamps.MaxDurationMicros = *ev.MaxDurationMicros
		s.stamps.HasMaxDuration = true
	}
}

// microsOpt is satdur.Micros of an optional echoed limit; 0 (none) when absent.
func microsOpt(us *uint64) time.Duration {
	d, _ := satdur.MicrosOpt(us)
	return d
}

// applyOwnLimits adopts the limits of our Configure.
func (s *Session) applyOwnLimits() {
	s.ownMaxSusp = s.cfg.Limits.MaxSuspensions
	s.ownMaxDur = s.cfg.Limits.maxDuration()
	s.hasOwnDur = s.ownMaxDur > 0
	s.dumpLimits = false
}

func (s *Session) unexpected(ev *message.ChildEvent, req message.Request) error {
	return s.fail(&ProtocolError{Msg: "unexpected " + ev.Body.EventKind().String() +
		" event in reply to " + req.RequestKind().String()})
}

// settle checks that ev may answer req and updates the session state.
// newFeedCalls forgets the call ids of the previous feed.
func (s *Session) newFeedCalls(restored bool) {
	s.lastCall, s.callSeen, s.restored = 0, false, restored
	clear(s.futures)
}

// trackFutures records the external futures a request registers or
// settles.
func (s *Session) trackFutures(req message.Request) {
	switch r := req.(type) {
	case *message.ResumeCall:
		if r.Result != nil && r.Result.Kind == message.ResultFuture {
			if s.futures == nil {
				s.futures = make(map[uint32]struct{})
			}
			s.futures[r.Result.Future] = struct{}{}
		}
	case *message.ResumeFutures:
		for _, fr := range r.Results {
			if fr.Result != nil && fr.Result.Kind != message.ResultFuture {
				delete(s.futures, fr.CallID)
			}
		}
	}
}

// checkCalls rejects a suspension whose call ids cannot come from an
// honest child: the worker numbers calls upwards within a feed, and only
// lists futures the parent registered.
func (s *Session) checkCalls(ev *message.ChildEvent) error {
	var id uint32
	switch b := ev.Body.(type) {
	case *message.FunctionCall:
		id = b.CallID
	case *message.OsCall:
		id = b.CallID
	case *message.ResolveFutures:
		// An empty list is honest: sandbox code awaiting an external
		// future of an earlier feed, which the worker no longer counts as
		// pending. The released worker ends the feed with a RuntimeError
		// when that empty list is answered with nothing (Run does so).
		if s.restored {
			return nil
		}
		for _, p := range b.PendingCallIDs {
			if _, ok := s.futures[p]; !ok {
				return &ProtocolError{Msg: "worker reported call id " + strconv.FormatUint(uint64(p), 10) +
					" as a pending future, but no future was registered under it"}
			}
		}
		return nil
	default:
		return nil
	}
	if s.callSeen && id <= s.lastCall {
		return &ProtocolError{Msg: "worker announced call id " + strconv.FormatUint(uint64(id), 10) +
			" after call id " + strconv.FormatUint(uint64(s.lastCall), 10) + " in the same feed"}
	}
	s.lastCall, s.callSeen = id, true
	return nil
}

func (s *Session) settle(ctx context.Context, req message.Request, ev *message.ChildEvent) (*message.ChildEvent, error) {
	// A request the worker refuses while a feed is suspended (a Feed, or
	// an answer that does not fit) leaves its state as it was, futures
	// and call ids included: so must it leave ours.
	if e, ok := ev.Body.(*message.Error); !ok || !isProtocolViolation(e.Exception) || s.cur() != StateSuspended {
		s.trackFutures(req)
		if req.RequestKind() == message.KindFeed {
			s.newFeedCalls(false)
		}
	}
	switch b := ev.Body.(type) {
	case nil:
		return nil, s.fail(&ProtocolError{Msg: "unexpected event"})
	case *message.FatalError:
		return nil, s.die(s.peer.Lost(transport.Loss{Announced: true, Message: b.Message}), false)
	case *message.ShutdownDump:
		return s.shutdownDump(ctx, req, b)
	case *message.Error:
		if b.Exception == nil {
			return nil, s.fail(&ProtocolError{Msg: "error event with no exception"})
		}
	}
	s.noteSessionID(ev)
	s.noteStamps(ev)
	ek := ev.Body.EventKind()
	switch req.RequestKind() {
	case message.KindAbortFeed:
		if ek != message.KindError {
			return nil, s.fail(&ProtocolError{Msg: "worker answered AbortFeed with something other than an Error"})
		}
		if isProtocolViolation(ev.Body.(*message.Error).Exception) {
			// The worker refused the abort (for example an exception type
			// it does not know) and is still suspended, as after a refused
			// resume.
			return ev, nil
		}
		s.toIdle()
		return ev, nil

	case message.KindFeed, message.KindResumeCall, message.KindResumeNameLookup, message.KindResumeFutures:
		switch {
		case ek.IsSuspension():
			return s.suspended(ctx, ev)
		case ek == message.KindComplete, ek == message.KindTypingError:
			s.toIdle()
			s.started = true
		case ek == message.KindError:
			exc := ev.Body.(*message.Error).Exception
			if err := s.serverSuspensionLimit(exc); err != nil {
				s.toIdle()
				s.started = true
				return nil, err
			}
			if !isProtocolViolation(exc) || s.cur() != StateSuspended {
				// A violation leaves the worker's state as it was; code
				// that ran (or a rejected feed) leaves it idle.
				s.toIdle()
				s.started = s.started || !isProtocolViolation(exc)
			}
		default:
			return nil, s.unexpected(ev, req)
		}
		return ev, nil

	case message.KindConfigure:
		switch ek {
		case message.KindOk:
			s.toIdle()
			s.started = false
			s.configured = true
			s.stamps = Stamps{}
			s.applyOwnLimits()
			s.doConfigure = nil
			if c, ok := req.(*message.Configure); ok && !s.ownConfigure {
				s.doConfigure = s.copyConfigure(c)
			}
		case message.KindError:
		default:
			return nil, s.fail(&ProtocolError{Msg: "unexpected reply to Configure: " + ek.String()})
		}
		return ev, nil

	case message.KindDump:
		if ek != message.KindDumpResult && ek != message.KindError {
			return nil, s.unexpected(ev, req)
		}
		if ek == message.KindDumpResult {
			// A Dump of a configured session builds its interpreter, as
			// a feed does: the worker refuses a Load from now on.
			s.started = true
		}
		return ev, nil

	case message.KindLoad:
		switch {
		case ek == message.KindError:
			// A refused Load changes nothing, not even the count.
			return ev, nil
		case ek == message.KindOk, ek == message.KindComplete, ek.IsSuspension():
			// The dump brings its own limits; adopt them from the stamps.
			s.ownMaxSusp, s.hasOwnDur, s.dumpLimits = 0, false, true
			// And its own feed clock, lower or not: the ratchet holds
			// within a feed, and the restored feed is not the one before.
			s.stamps.FeedExecution = satdur.Micros(ev.FeedExecutionMicros)
			if s.codec.Version() >= protocol.Version5 {
				// The reply echoes the dump's limits: one it leaves out
				// is one the dump does not have, not the last echo's.
				s.stamps.MaxFeedDuration = microsOpt(ev.MaxFeedDurationMicros)
				s.stamps.MaxTurnDuration = microsOpt(ev.MaxTurnDurationMicros)
				s.stamps.MaxTotalSleep = microsOpt(ev.MaxTotalSleepMicros)
			}
			s.suspCount = 0
			s.newFeedCalls(true)
			s.started = true
			if ek.IsSuspension() {
				return s.suspended(ctx, ev)
			}
			s.toIdle()
			return ev, nil
		}
		return nil, s.unexpected(ev, req)

	case message.KindReset:
		switch ek {
		case message.KindOk:
			s.toIdle()
			s.started = false
			s.configured = false
			s.stamps = Stamps{}
			s.suspCount = 0
		case message.KindError:
		default:
			return nil, s.unexpected(ev, req)
		}
		return ev, nil

	case message.KindShutdown:
		if ek != message.KindOk {
			return nil, s.unexpected(ev, req)
		}
		// The worker exits now, however the Shutdown was sent (Shutdown,
		// or raw through Do): the session ends with it.
		s.die(nil, false)
		return ev, nil

	case message.KindInstallDependencies:
		if ek != message.KindOk && ek != message.KindError {
			return nil, s.unexpected(ev, req)
		}
		return ev, nil
	}
	return nil, s.unexpected(ev, req)
}

// copyConfigure returns a copy of c, a Configure the worker accepted, that
// shares nothing with it (the caller of Do may reuse its message): c as
// the worker read it, encoded and decoded again.
func (s *Session) copyConfigure(c *message.Configure) *message.Configure {
	if buf, err := s.codec.AppendRequest(nil, &message.ParentRequest{Body: c}); err == nil {
		if pr, err := s.codec.DecodeRequest(buf, s.lim); err == nil {
			if cp, ok := pr.Body.(*message.Configure); ok {
				return cp
			}
		}
	}
	// Not reached for a Configure the codec has just sent; a shallow copy
	// at worst.
	cp := *c
	return &cp
}

func (s *Session) toIdle() {
	s.setState(StateIdle)
	s.susp = nil
}

// serverSuspensionLimit recognizes the Error a remote server ends a feed
// with when it enforces max_suspensions itself (docs/PROTOCOL.md): the
// suspension past the limit never reaches this parent, which has seen
// exactly the limit, and the feed is aborted with the RuntimeError the
// parent would have raised. It returns the *SuspensionLimitError the
// parent's own enforcement reports (Position unknown), or nil.
func (s *Session) serverSuspensionLimit(exc *message.RaisedException) error {
	if !s.isRemote() || s.cfg.PassSuspensions || exc.Type != "RuntimeError" {
		return nil
	}
	limit := s.SuspensionLimit()
	if s.suspCount != limit || exc.Msg() != "suspension limit "+strconv.FormatUint(limit, 10)+" exceeded" {
		return nil
	}
	return &SuspensionLimitError{Limit: limit, Exception: exc}
}

// suspended records a suspension, or aborts the feed when it exceeds the
// suspension limit.
func (s *Session) suspended(ctx context.Context, ev *message.ChildEvent) (*message.ChildEvent, error) {
	if err := s.checkCalls(ev); err != nil {
		return nil, s.fail(err)
	}
	s.setState(StateSuspended)
	s.susp = ev
	s.started = true
	s.suspCount++
	limit := s.SuspensionLimit()
	if s.suspCount <= limit || s.cfg.PassSuspensions {
		return ev, nil
	}
	exc := message.NewException("RuntimeError", "suspension limit "+strconv.FormatUint(limit, 10)+" exceeded")
	// Part of the turn that brought the suspension (exchange records it,
	// and the run's end, once): not a turn of its own.
	reply, err := s.roundTrip(ctx, &message.AbortFeed{Exception: exc}, s.currentSpanContext(ctx))
	if err != nil {
		return nil, err
	}
	return nil, &SuspensionLimitError{Limit: limit, Exception: reply.Body.(*message.Error).Exception,
		Position: message.PositionOrZero(suspensionPosition(ev))}
}

// Close stops the worker with the kill ladder (close its stdin, wait up to
// the kill grace for a clean exit, then SIGKILL) and releases everything.
// A turn in flight on another goroutine is interrupted (the worker is
// killed at once) and fails with an error matching ErrClosed; a Run waiting
// on its host functions has their context cancelled, and returns once they
// do (Go cannot stop a function that ignores its context); one waiting out
// a system sleep (protocol 5) returns at once. Close is
// idempotent, safe for concurrent use and never hangs. It returns nil
// unless the worker may still be running: a local process that could not
// be signalled (worker.Process.Close's error), or the error of a custom
// Peer's Close. A remote session's close handshake is not reported: the
// socket is dropped either way.
func (s *Session) Close() error {
	s.closed.Store(true)
	s.cancelHost()
	s.unwatchCtx()
	defer s.endTelemetry()
	for {
		v := s.interrupt.Load()
		if v == irDetached {
			return nil
		}
		if v != irIdle && v != irNone {
			break
		}
		if s.interrupt.CompareAndSwap(v, irClosed) {
			if v == irNone {
				s.peer.Kill()
			}
			break
		}
	}
	return s.peer.Close(context.Background())
}

// Kill sends SIGKILL to the worker at once. A turn in flight fails with an
// error matching ErrClosed. Kill does not wait: the worker is reaped and
// its connection released in the background once it is gone, so a killed
// session needs no Close (Close afterwards is harmless, and waits for that
// release).
func (s *Session) Kill() {
	s.closed.Store(true)
	s.cancelHost()
	s.unwatchCtx()
	defer s.endTelemetry()
	for {
		v := s.interrupt.Load()
		if v == irDetached {
			return
		}
		if v != irIdle && v != irNone {
			break
		}
		if s.interrupt.CompareAndSwap(v, irClosed) {
			break
		}
	}
	s.peer.Kill()
	// Release the connection (a process's pipes and its share of the pipe
	// budget) once the worker is gone. Close is idempotent: a turn in
	// flight, or the caller's own Close, shares this one. Its context is
	// done already: the worker is being killed, there is no grace to give.
	go s.peer.Close(doneCtx)
}

// doneCtx is a context that is already done.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func (s *Session) cancelHost() {
	if c := s.hostCancel.Load(); c != nil {
		(*c)()
	}
}

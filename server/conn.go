package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/child/relay"
	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/peek"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/safetext"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
)

// errKilled is the cause of a session context the server cancels at
// shutdown (Close, or a drain cut short).
var errKilled = errors.New("server shutting down")

// errDrainOver is the cause of a session context the server cancels when
// a drain's grace has passed.
var errDrainOver = errors.New("drain grace over")

// drainDumpBound bounds the handover of an idle session at the end of a
// drain's grace, its dump and the ShutdownDump's delivery together (at
// most TurnTimeout): an idle worker dumps at once, a client that reads
// takes the frame at once, and the server's exit waits for both.
const drainDumpBound = 10 * time.Second

// errSessionTimeout is the cause of a session context past SessionTimeout.
var errSessionTimeout = errors.New("session timeout")

// conn is one served session: the gate in front of child.Serve (a
// transport.Conn) and the policy engine behind it (a child.Engine), over
// one WebSocket and one pooled worker. Serve drives both from one
// goroutine; end may be called from any goroutine.
type conn struct {
	srv *Server
	id  string
	ws  *ws.Conn
	log *slog.Logger
	ctx context.Context
	// cancel ends ctx, interrupting a turn in flight (the worker is then
	// killed and replaced, never reused).
	cancel context.CancelCauseFunc

	eng *relay.Engine

	// Touched by the serving goroutine only.
	idleT      *time.Timer // the idle timeout of a read, reused
	stuckT     *time.Timer // the bound on a write the client does not drain, reused
	codec      codec.Codec // encodes the gate's own replies
	configured bool
	limits     DumpLimits // the session's limits, signed into its dumps
	maxSusp    uint64
	susp       uint64
	refused    int // requests the gate refused, for the log's sake
	wbuf       []byte

	// idleMu hands the engine between the serving goroutine, while it
	// waits for the client's next request (waiting), and drainIdle at the
	// end of a drain's grace: whoever holds it may use the engine.
	idleMu  sync.Mutex
	waiting bool

	endOnce sync.Once
	mu      sync.Mutex
	outcome string
}

// errEnded is the cause of a session context the server ended itself.
var errEnded = errors.New("session ended")

// end closes the WebSocket with code, records the outcome and ends the
// session's context; only the first call counts.
func (c *conn) end(code int, reason, outcome string) {
	c.finish(code, reason, outcome, c.ws.CloseWith)
}

// endUnread is end for a client that stopped reading (a write to it stuck
// past the idle timeout): the connection is reset rather than closed
// gracefully (ws.Conn.Abort), so that what the server wrote and the
// client never took does not stay in the kernel, in a socket closing for
// as long as the client keeps its window shut.
func (c *conn) endUnread(code int, reason, outcome string) {
	c.finish(code, reason, outcome, c.ws.Abort)
}

func (c *conn) finish(code int, reason, outcome string, closeWS func(code int, reason string) error) {
	c.endOnce.Do(func() {
		c.mu.Lock()
		c.outcome = outcome
		c.mu.Unlock()
		closeWS(code, reason)
		c.cancel(errEnded)
	})
}

func (c *conn) ended() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outcome
}

// gate is the transport.Conn child.Serve reads: it enforces the idle
// timeout, refuses requests the server does not allow, and answers the
// next request during a drain with a ShutdownDump.
type gate struct{ *conn }

// ReadFrame returns the next request the child may see.
func (g gate) ReadFrame() ([]byte, error) {
	for {
		if g.idleT == nil {
			g.idleT = time.AfterFunc(g.srv.cfg.IdleTimeout, func() {
				g.end(CloseIdleTimeout, "idle timeout", OutcomeIdleTimeout)
			})
		} else {
			g.idleT.Reset(g.srv.cfg.IdleTimeout)
		}
		g.idleMu.Lock()
		g.waiting = true
		g.idleMu.Unlock()
		b, err := g.ws.ReadFrame()
		g.idleMu.Lock() // waits for a drainIdle under way
		g.waiting = false
		g.idleMu.Unlock()
		g.idleT.Stop()
		if err != nil {
			return nil, g.readFailed(err)
		}
		if g.ended() != "" {
			return nil, io.EOF
		}
		// Decide before counting: once the frame is counted, a drain that
		// begins no longer stops it (tests rely on that order).
		draining := g.srv.adm.isDraining()
		g.srv.m.framesIn.Inc()
		g.srv.m.bytesIn.Add(float64(len(b)))
		if draining {
			g.shutdownDump()
			return nil, io.EOF
		}
		k, known := requestKind(b)
		if why := refusal(k, known, g.configured); why != "" {
			g.srv.m.refusals.WithLabelValues(ReasonRequestRefused).Inc()
			// The first refusal of a session is logged at Info, the rest at
			// Debug (the metric counts them all): a client repeating a
			// refused request cannot flood the log.
			g.refused++
			level := slog.LevelInfo
			if g.refused > 1 {
				level = slog.LevelDebug
			}
			g.log.Log(g.ctx, level, "request refused", slog.String("kind", k.String()), slog.String("why", why), slog.Int("refused", g.refused))
			if err := g.send(&message.Error{Exception: message.NewException("RuntimeError", "protocol violation: "+why)}); err != nil {
				return nil, io.EOF
			}
			continue
		}
		return b, nil
	}
}

// requestKind returns the kind of request the child's decoder reads from
// frame b: its last known arm, skipping what the decoders skip, so that
// no field appended after a refused arm hides it from the gate.
func requestKind(b []byte) (message.RequestKind, bool) {
	k := peek.DecodedRequest(b)
	return message.RequestKind(k), k != 0
}

// readFailed records why the client side ended and hands child.Serve a
// clean end of stream (there is nobody left to send a FatalError to). It
// is also called by the session's watcher when the client leaves while a
// turn runs; ending the session then interrupts the turn.
func (g gate) readFailed(err error) error {
	if g.ended() != "" {
		return io.EOF
	}
	var ce *ws.CloseError
	switch {
	case errors.Is(err, frame.ErrTooLarge):
		g.end(CloseTooLarge, "frame over the cap", OutcomeOversize)
	case errors.Is(err, ws.ErrNotBinary):
		g.end(CloseProtocol, "frames must be binary messages", OutcomeProtocol)
	case errors.Is(err, ws.ErrProtocol):
		// A frame that breaks the WebSocket framing (a reserved opcode,
		// an unmasked frame): the library may have sent its own Close
		// (1002) already.
		g.end(CloseProtocol, "broken WebSocket frame", OutcomeProtocol)
	case errors.As(err, &ce) && (ce.Code == CloseNormal || ce.Code == CloseDrain):
		g.end(CloseNormal, "", OutcomeOK)
	default:
		g.end(CloseNormal, "", OutcomeClientDropped)
	}
	return io.EOF
}

// send writes one of the gate's own events.
func (g gate) send(ev message.Event) error {
	buf, err := g.codec.AppendEvent(g.wbuf[:0], &message.ChildEvent{Body: ev})
	if err != nil {
		return err
	}
	g.wbuf = buf
	return g.WriteFrame(buf)
}

// shutdownDump answers a request that arrived during a drain: the session
// is dumped, signed and handed back in a ShutdownDump (the request did not
// run), and the connection closes with CloseDrain.
func (g gate) shutdownDump() {
	ctx, cancel := context.WithTimeout(g.ctx, g.srv.cfg.TurnTimeout)
	defer cancel()
	// The delivery needs no bound of its own: the session's end (at the
	// end of the grace at the latest) closes the connection through Close,
	// with the code its cause calls for.
	g.handOver(ctx, context.Background())
}

// drainIdle ends, at the end of a drain's grace, a session that is
// waiting for its next request: it is handed its signed dump in a
// ShutdownDump before the connection closes with CloseDrain, as its next
// request would have been, so that a client can restore it elsewhere
// instead of losing it. The ShutdownDump comes before that request; a
// client reads it as its answer (the request did not run). It reports
// false, doing nothing, for a session with a request in hand (or not yet
// configured, or already ended).
func (g gate) drainIdle() bool {
	g.idleMu.Lock()
	defer g.idleMu.Unlock()
	if !g.waiting || !g.configured || g.ended() != "" {
		return false
	}
	// The session's context has ended; the handover is bounded on its own,
	// and ends at once when the server must (Close, or a second signal).
	bound := drainDumpBound
	if g.srv.cfg.handOverBound > 0 {
		bound = g.srv.cfg.handOverBound
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(g.ctx), min(g.srv.cfg.TurnTimeout, bound))
	defer cancel()
	stop := context.AfterFunc(g.srv.abortCtx, cancel)
	defer stop()
	g.log.Info("drain grace over: handing an idle session its dump")
	g.handOver(ctx, ctx)
	return true
}

// handOver sends the session's signed dump (none when the session is not
// configured or the dump fails within ctx) in a ShutdownDump, and closes
// the connection with CloseDrain. The connection is closed when deliver
// ends first: a client that does not read its ShutdownDump would
// otherwise hold the write, and the server's exit after a drain, until
// its idle timeout. Closed with the write stuck, it is reset.
func (g gate) handOver(ctx, deliver context.Context) {
	sd := &message.ShutdownDump{}
	if g.configured {
		ev, err := g.eng.Dump(ctx)
		if dr, ok := ev.(*message.DumpResult); ok && err == nil {
			signed := g.srv.signer.Sign(dr.State, g.limits)
			sd.Dump = &signed
		} else {
			g.log.Warn("drain: dump failed", slog.Any("error", err))
		}
	}
	// When deliver ends with the write under way, the client is not
	// taking its ShutdownDump (its window is shut): the connection is
	// reset rather than closed gracefully (endUnread), or the unsent rest
	// of the dump (megabytes) would wait in the kernel, in a socket
	// closing for as long as the client keeps its window shut. Before the
	// write, or after it, nothing is stuck, and the close stays graceful.
	var writing atomic.Bool
	stop := context.AfterFunc(deliver, func() {
		if writing.Load() {
			g.endUnread(CloseDrain, "server shutting down", OutcomeShutdown)
			return
		}
		g.end(CloseDrain, "server shutting down", OutcomeShutdown)
	})
	defer stop()
	writing.Store(true)
	err := g.send(sd)
	var tl *frame.TooLargeError
	if errors.As(err, &tl) {
		// The dump does not fit the frame cap: the client still learns
		// that its request did not run.
		g.log.Warn("drain: signed dump over the frame cap; ShutdownDump sent without it", slog.Uint64("bytes", tl.Len))
		err = g.send(&message.ShutdownDump{})
	}
	writing.Store(false)
	if err != nil {
		g.log.Info("drain: ShutdownDump not delivered", slog.Any("error", err))
	}
	g.end(CloseDrain, "server draining", OutcomeDrained)
}

// WriteFrame sends one event frame to the client. A client that stops
// reading (its TCP window full) for longer than the idle timeout ends the
// session, so it cannot hold a worker until the session timeout, and its
// connection is reset, so that what it left unread is freed at once.
func (g gate) WriteFrame(b []byte) error {
	if g.stuckT == nil {
		g.stuckT = time.AfterFunc(g.srv.cfg.IdleTimeout, func() {
			g.endUnread(CloseIdleTimeout, "client not reading", OutcomeIdleTimeout)
		})
	} else {
		g.stuckT.Reset(g.srv.cfg.IdleTimeout)
	}
	defer g.stuckT.Stop()
	if err := g.ws.WriteFrame(b); err != nil {
		return err
	}
	// Counted once sent: a frame refused (over the cap) or not delivered
	// (the client gone) was not carried.
	g.srv.m.framesOut.Inc()
	g.srv.m.bytesOut.Add(float64(len(b)))
	return nil
}

// Pending reports whether the client has sent a frame not yet read.
func (g gate) Pending() bool { return g.ws.Pending() }

// MaxFrameLen is the WebSocket's frame cap.
func (g gate) MaxFrameLen() int { return g.ws.MaxFrameLen() }

// Close ends the connection; child.Serve calls it when the session's
// context ends.
func (g gate) Close() error {
	switch context.Cause(g.ctx) {
	case errSessionTimeout:
		g.end(CloseSessionTimeout, "session timeout", OutcomeSessionTimeout)
	case errDrainOver:
		if !g.drainIdle() {
			g.end(CloseDrain, "server shutting down", OutcomeShutdown)
		}
	case errKilled:
		g.end(CloseDrain, "server shutting down", OutcomeShutdown)
	default:
		g.end(CloseNormal, "", OutcomeOK)
	}
	return nil
}

// policy is the child.Engine child.Serve calls: the relay to the pooled
// worker, with the server's ceilings, suspension limit, turn timeout and
// dump signing around it.
type policy struct{ *conn }

// Configure clamps the client's limits to the ceilings and configures the
// worker.
func (p policy) Configure(ctx context.Context, cfg *message.Configure) error {
	c := *cfg
	c.Limits = clampLimits(cfg.Limits, &p.srv.cfg)
	p.maxSusp = protocol.DefaultMaxSuspensions
	if c.Limits.MaxSuspensions != nil {
		p.maxSusp = *c.Limits.MaxSuspensions
	}
	err := p.turn(ctx, func(ctx context.Context) (message.Event, error) {
		return nil, p.eng.Configure(ctx, &c)
	}, false)
	if err != nil {
		return err
	}
	// The limits held to replace the ones asked for in the Configure
	// child.Serve keeps, so that its events stamp the max_suspensions the
	// server enforces (see child.Engine's Configure).
	cfg.Limits = c.Limits
	if cd, ok := codec.ForVersion(cfg.ProtocolVersion); ok {
		p.codec = cd
	}
	p.configured = true
	p.limits = DumpLimits{
		MaxDurationMicros: *c.Limits.MaxDurationMicros,
		MaxMemoryBytes:    *c.Limits.MaxMemoryBytes,
		MaxRecursionDepth: *c.Limits.MaxRecursionDepth,
	}
	return nil
}

// Feed runs a snippet, counting its suspensions.
func (p policy) Feed(ctx context.Context, f *message.Feed, out child.Output) (message.Event, error) {
	p.susp = 0
	return p.counted(ctx, out, func(ctx context.Context) (message.Event, error) { return p.eng.Feed(ctx, f, out) })
}

// Resume continues the feed, counting its suspensions.
func (p policy) Resume(ctx context.Context, req message.Request, out child.Output) (message.Event, error) {
	return p.counted(ctx, out, func(ctx context.Context) (message.Event, error) { return p.eng.Resume(ctx, req, out) })
}

// dumpEventOverhead bounds what a DumpResult event adds to its state: the
// event and DumpResult tags and lengths (12 bytes) and the stamps (at most
// seven varint fields of 12 bytes).
const dumpEventOverhead = 128

// Dump snapshots the session and signs the dump. A signed dump that would
// not fit the frame cap is refused with an Error (the session lives on)
// rather than written and failing the connection.
func (p policy) Dump(ctx context.Context) (message.Event, error) {
	ev, err := p.turnEvent(ctx, p.eng.Dump)
	if dr, ok := ev.(*message.DumpResult); ok && err == nil {
		if n := headerLen + len(dr.State); n+dumpEventOverhead > p.ws.MaxFrameLen() {
			return &message.Error{Exception: message.NewException("RuntimeError",
				"dump of "+strconv.Itoa(n)+" bytes (signed) exceeds the maximum frame of "+
					strconv.Itoa(p.ws.MaxFrameLen())+" bytes")}, nil
		}
		return &message.DumpResult{State: p.srv.signer.Sign(dr.State, p.limits)}, nil
	}
	return ev, err
}

// Load restores a dump this server (or the previous key) signed, within
// the server's ceilings: a dump restores the limits it was made with.
func (p policy) Load(ctx context.Context, state []byte, out child.Output) (message.Event, error) {
	if !p.configured {
		return nil, &child.Violation{Text: "Load before Configure (this server restores a dump into a configured session)"}
	}
	raw, limits, err := p.srv.signer.Open(state)
	if err == nil && !limits.Within(p.srv.ceilings) {
		err = ErrAboveCeilings
	}
	if err != nil {
		reason := ReasonLoadUnsigned
		if errors.Is(err, ErrAboveCeilings) {
			reason = ReasonLoadAboveCeilings
		}
		p.srv.m.refusals.WithLabelValues(reason).Inc()
		p.log.Info("load refused", slog.String("why", err.Error()))
		return nil, &child.Violation{Text: "Load refused: " + err.Error()}
	}
	ev, err := p.turnEvent(ctx, func(ctx context.Context) (message.Event, error) { return p.eng.Load(ctx, raw, out) })
	if err != nil {
		return nil, err
	}
	if _, refused := ev.(*message.Error); !refused {
		p.limits = limits
	}
	if st := p.eng.Stamps(); st.MaxSuspensions != nil {
		// The dump's limit, within this server's ceiling (the replica
		// that signed it may have had a higher one).
		p.maxSusp = min(*st.MaxSuspensions, p.srv.cfg.MaxSuspensions)
	}
	p.susp = 0
	if ev != nil && ev.EventKind().IsSuspension() {
		p.susp = 1
	}
	return ev, nil
}

// Reset is never reached (the gate refuses Reset); it resets the worker
// if it is.
func (p policy) Reset(ctx context.Context) error { return p.eng.Reset(ctx) }

// Stamps reports the worker's figures.
func (p policy) Stamps() child.Stamps { return p.eng.Stamps() }

// Close gives the worker back to the pool (or stops it).
func (p policy) Close() error { return p.eng.Close() }

// counted runs a feed turn and aborts the feed once it suspends more often
// than max_suspensions, as a parent does.
func (p policy) counted(ctx context.Context, out child.Output, f func(context.Context) (message.Event, error)) (message.Event, error) {
	ev, err := p.turnEvent(ctx, f)
	if err != nil || ev == nil || !ev.EventKind().IsSuspension() {
		return ev, err
	}
	p.susp++
	if p.susp <= p.maxSusp {
		return ev, nil
	}
	abort := &message.AbortFeed{Exception: message.NewException("RuntimeError",
		"suspension limit "+strconv.FormatUint(p.maxSusp, 10)+" exceeded")}
	return p.turnEvent(ctx, func(ctx context.Context) (message.Event, error) { return p.eng.Resume(ctx, abort, out) })
}

func (p policy) turnEvent(ctx context.Context, f func(context.Context) (message.Event, error)) (message.Event, error) {
	var ev message.Event
	err := p.turn(ctx, func(ctx context.Context) (message.Event, error) {
		var err error
		ev, err = f(ctx)
		return ev, err
	}, true)
	return ev, err
}

// turn runs one worker turn under the turn timeout, and ends the session
// with the matching close code when the worker is lost.
func (p policy) turn(ctx context.Context, f func(context.Context) (message.Event, error), observe bool) error {
	tctx, cancel := context.WithTimeout(ctx, p.srv.cfg.TurnTimeout)
	defer cancel()
	start := time.Now()
	_, err := f(tctx)
	if observe {
		p.srv.m.turn.Observe(time.Since(start).Seconds())
	}
	if err == nil {
		return nil
	}
	var v *child.Violation
	if errors.As(err, &v) {
		return err
	}
	switch {
	case p.ctx.Err() != nil:
		// The session's own context ended it (shutdown, session timeout,
		// the client gone): its close code goes out now, which Close
		// would send, so that the client is not first told that the
		// worker failed (child.Serve's FatalError for this error then
		// finds the connection closed).
		gate(p).Close()
	case ctx.Err() != nil:
		// The session's own context: Close picks the code.
	case errors.Is(err, pool.ErrUnhealthy):
		// No worker to be had (checked before the worker's own failures:
		// the trip's last failure is in the chain too).
		p.end(CloseTryAgainLater, "worker pool unhealthy", OutcomePoolUnhealthy)
	case tctx.Err() != nil:
		p.end(CloseTurnTimeout, "turn timeout", OutcomeTurnTimeout)
	default:
		code, reason, outcome := lostClose(err)
		if code == CloseWorkerFailed {
			p.log.Warn("worker lost", slog.Any("error", err))
		}
		p.end(code, reason, outcome)
	}
	return err
}

// lostClose returns the close code, reason and outcome of a session whose
// worker was lost with err, no context of the server's having ended it: a
// memory-limit exit is 4003; the watchdog's kill past a duration limit
// of the client's is 4004, the reason naming the limit (max_duration, or
// at protocol 5 max_feed_duration or max_turn_duration); anything else is
// the worker's failure (1011), among them the watchdog's reply bound
// (session.LimitReply: a worker that never answered a turn running no
// code, a Dump or a Load, overran no limit of the client's), a
// *session.TimeoutError of no limit (a context's, or an AbortFeed left
// unanswered within session.Config.AbortTimeout) and one of a limit this
// server does not know.
func lostClose(err error) (code int, reason, outcome string) {
	var me *worker.MemoryLimitError
	var te *session.TimeoutError
	var ee *child.ExitError
	switch {
	case errors.As(err, &me), errors.As(err, &ee) && ee.Code == protocol.ExitOOM:
		return CloseMemoryLimit, "worker memory limit", OutcomeMemory
	case errors.As(err, &te):
		switch te.Limit {
		case session.LimitDuration, session.LimitFeed, session.LimitTurn:
			return CloseDurationBackstop, te.Limit.String() + " overrun", OutcomeDuration
		}
	}
	// The reason begins "worker failed" for every failure of the worker,
	// and no other 1011 of this server's does: gomonty's pool tells by it
	// a worker the session's code may have crashed from a failing server,
	// which it backs off (docs/PROTOCOL.md, "Close codes"; pool's
	// TestUserFailuresDoNotBackOffTheEndpoint).
	return CloseWorkerFailed, safetext.Prefix(fmt.Sprint("worker failed: ", err), 120), OutcomeWorkerFailed
}

package relay

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/session"
)

// Eager await (contract §10) over an inner worker that predates it.
//
// A protocol-4 worker sets FunctionCall.allow_eager_await when the call's
// result is awaited straight away (`x = await f()`), and then accepts a
// one-entry ResumeFutures as the call's answer. The protocol-2 worker has
// neither, so the relay finds out by asking the worker itself:
//
//   - Probe. At a FunctionCall, when the outer parent speaks 4 or 5, the inner
//     worker does not, and some source fed in this session could contain
//     an await (a lexical check for the word, sticky per session; after a
//     Load the source is unknown, so yes), the relay dumps the inner
//     session, answers the inner call with a future registered under the
//     call's own id, and looks at what comes next. The call is awaited
//     straight away exactly when the very next event is ResolveFutures
//     waiting on that one id, with no print and no other suspension in
//     between: nothing else ran that the parent could see or answer, so the
//     parent awaiting the coroutine itself before anything else can neither
//     reorder nor deadlock anything.
//   - Awaited. The FunctionCall goes out flagged and the inner worker
//     stays where the probe left it, at that ResolveFutures. An eager
//     ResumeFutures (Serve has checked its shape, §10's rejections) is
//     exactly the inner worker's answer there and is forwarded unchanged;
//     a ResumeCall returning a future under the call's id is answered with
//     the ResolveFutures already in hand; a Dump returns the dump taken at
//     the FunctionCall. Anything else (a value, an error, AbortFeed) first
//     restores the FunctionCall: Reset, the session's Configure again, Load
//     of the dump (the worker re-announces the same call), then the
//     request as usual. A refused request leaves everything where it was.
//   - Not awaited. The FunctionCall goes out unflagged, and the relay
//     restores the inner worker at once the same way, so the parent's
//     answer meets the suspension it saw. The sandbox time the probe used
//     is rolled back with the dump (its consumed time comes from the dump).
//
// The probe runs the code between the call and its next suspension ahead
// of time, and, when the call turns out not to be awaited straight away,
// runs it again after the parent's answer. It is bounded by probeBudget of
// wall time (at protocol 5 over an older worker, also by what is left of
// the feed budget and by the turn budget, see probeLimit); past it the
// inner worker is killed, a fresh one started and the dump loaded there
// (the call goes out unflagged). Code with no `await` in its source pays
// nothing: one substring search per Feed.
type eager struct {
	// outer is the protocol version the parent speaks (0 before Configure
	// or ParentVersion).
	outer uint32
	// mayAwait: some source fed in this session could hold an await.
	mayAwait bool
	// cfg is the Configure the inner session was configured with since
	// the last Reset (replayed on a restore), nil when none.
	cfg *message.Configure
	// probed is the suspension held at the inner ResolveFutures, nil when
	// the inner worker is where the parent thinks it is.
	probed *probed
	// probes counts the probes run (for tests).
	probes int
}

type probed struct {
	callID uint32
	next   *message.ChildEvent // the inner worker's ResolveFutures
	dump   []byte              // the session at the FunctionCall
	stamps session.Stamps      // the inner stamps at the FunctionCall
}

// probeBudget bounds the wall time of one probe (see eager); a variable
// so that a test can exercise the path past it.
var probeBudget = time.Second

// ParentVersion records the protocol version the parent speaks when it
// started with a Load (see child.ParentVersioner).
func (e *Engine) ParentVersion(v uint32) { e.eg.outer = v }

var _ child.ParentVersioner = (*Engine)(nil)

// eagerConfigure starts a new session's emulation state.
func (e *Engine) eagerConfigure(c *message.Configure) {
	cp := *c
	e.eg = eager{outer: c.ProtocolVersion, cfg: &cp}
}

// eagerInner notes the Configure sent to the inner worker when it is not
// the parent's own (protocol 5's, translated by configure5): a restore
// replays it.
func (e *Engine) eagerInner(c *message.Configure) {
	if e.eg.cfg != nil {
		cp := *c
		e.eg.cfg = &cp
	}
}

// eagerReset drops the emulation state with the inner session.
func (e *Engine) eagerReset() { e.eg = eager{outer: e.eg.outer} }

// eagerScan notes a fed source that could hold an await.
func (e *Engine) eagerScan(code string) {
	if !e.eg.mayAwait && strings.Contains(code, "await") {
		e.eg.mayAwait = true
	}
}

// eagerLoaded notes a Load: the session's source is unknown.
func (e *Engine) eagerLoaded() { e.eg.mayAwait = true }

func (e *Engine) emulatesEager() bool {
	return e.eg.mayAwait && e.eg.outer >= protocol.Version &&
		e.s != nil && e.s.Version() < protocol.Version
}

// innerStamps are the inner session's stamps as the parent must see them:
// those of the FunctionCall while the inner worker is held past it.
func (e *Engine) innerStamps() session.Stamps {
	if p := e.eg.probed; p != nil {
		return p.stamps
	}
	return e.s.Stamps()
}

// eagerAfter flags a FunctionCall the probe finds awaited straight away.
func (e *Engine) eagerAfter(ctx context.Context, ev message.Event, err error) (message.Event, error) {
	if err != nil || !e.emulatesEager() {
		return ev, err
	}
	fc, ok := ev.(*message.FunctionCall)
	if !ok || fc.AllowEagerAwait {
		return ev, nil
	}
	awaited, err := e.probe(ctx, fc.CallID)
	if err != nil {
		return nil, err
	}
	fc.AllowEagerAwait = awaited
	return fc, nil
}

// probe finds out whether the suspended call is awaited straight away,
// leaving the inner worker held at its ResolveFutures when it is and at
// the FunctionCall otherwise.
func (e *Engine) probe(ctx context.Context, callID uint32) (bool, error) {
	budget := e.probeLimit()
	if budget <= 0 {
		return false, nil // no time left to look ahead: the call goes out unflagged
	}
	e.eg.probes++
	pre := e.s.Stamps()
	dev, err := e.do(ctx, &message.Dump{})
	if err != nil {
		return false, err
	}
	dr, ok := dev.(*message.DumpResult)
	if !ok {
		return false, nil // no dump, no probe: the call goes out unflagged
	}
	pctx, cancel := context.WithTimeout(ctx, budget)
	var sink probeSink
	e.out = &sink
	ev, perr := e.s.Do(pctx, &message.ResumeCall{CallID: callID,
		Result: &message.ExtResult{Kind: message.ResultFuture, Future: callID}})
	e.out = nil
	cancel()
	if perr == nil && !sink.printed {
		if rf, ok := ev.Body.(*message.ResolveFutures); ok && len(rf.PendingCallIDs) == 1 && rf.PendingCallIDs[0] == callID {
			e.eg.probed = &probed{callID: callID, next: ev, dump: dr.State, stamps: pre}
			return true, nil
		}
	}
	if perr != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		// The probe outran its budget (the inner worker was killed) or
		// the worker died running ahead: the session lives on in the
		// dump.
		if err := e.respawn(ctx); err != nil {
			return false, err
		}
	}
	return false, e.restore(ctx, dr.State, callID)
}

// probeLimit is the wall time a probe may run: probeBudget, and at
// protocol 5 over an older worker no more than what is left of the feed
// budget, nor than the turn budget. The relay times those budgets itself
// around the turns it relays, and the probe runs sandbox code outside
// them (its time is rolled back with the dump), so without this a loop
// after a call ran for probeBudget at every suspension whatever the
// limits said. The code the probe runs ahead runs again, timed, after
// the parent's answer, so a probe stopped here loses nothing.
func (e *Engine) probeLimit() time.Duration {
	limit := probeBudget
	if x := &e.v5; x.on {
		if x.hasFeed {
			limit = min(limit, x.feedLim-x.feedExec)
		}
		if x.hasTurn {
			limit = min(limit, x.turnLim)
		}
	}
	return limit
}

// respawn replaces a lost inner worker with a fresh one.
func (e *Engine) respawn(ctx context.Context) error {
	_ = e.s.Close()
	e.s = nil
	base := workerDefaults()
	if e.eg.cfg != nil {
		base, _ = sessionConfig(e.eg.cfg)
	}
	return e.start(ctx, base)
}

// restore brings the inner worker back to the FunctionCall in dump: Reset,
// the session's Configure, Load.
func (e *Engine) restore(ctx context.Context, dump []byte, callID uint32) error {
	fail := func(what string, ev message.Event) error {
		return &child.ExitError{Code: protocol.ExitFatal, Message: "relay: restoring the suspension after an eager-await probe: " + what + ": " + describe(ev)}
	}
	ev, err := e.do(ctx, &message.Reset{})
	if err != nil {
		return err
	}
	if _, ok := ev.(*message.Ok); !ok {
		return fail("Reset", ev)
	}
	if e.eg.cfg != nil {
		c := *e.eg.cfg
		c.ProtocolVersion = e.s.Version()
		if ev, err = e.do(ctx, &c); err != nil {
			return err
		}
		if _, ok := ev.(*message.Ok); !ok {
			return fail("Configure", ev)
		}
	}
	if ev, err = e.do(ctx, &message.Load{State: dump}); err != nil {
		return err
	}
	if fc, ok := ev.(*message.FunctionCall); !ok || fc.CallID != callID {
		return fail("Load", ev)
	}
	return nil
}

// eagerResume answers a resume while the inner worker is held past the
// FunctionCall; handled is false when the request is to be relayed as
// usual (after any restore).
func (e *Engine) eagerResume(ctx context.Context, req message.Request, out child.Output, prefix string) (message.Event, bool, error) {
	p := e.eg.probed
	if p == nil {
		return nil, false, nil
	}
	switch r := req.(type) {
	case *message.ResumeFutures:
		// Serve let it through only as the one-entry eager answer: it is
		// the inner worker's answer at its ResolveFutures.
		e.eg.probed = nil
		ev, err := e.turn(ctx, req, out, prefix)
		var v *child.Violation
		if errors.As(err, &v) || (err == nil && isViolationEvent(ev)) {
			e.eg.probed = p // refused: still held, still answerable
		}
		ev, err = e.eagerAfter(ctx, ev, err)
		return ev, true, err
	case *message.ResumeCall:
		if r.Result != nil && r.Result.Kind == message.ResultFuture && r.Result.Future == p.callID && r.CallID == p.callID {
			e.eg.probed = nil
			return p.next.Body, true, nil
		}
	}
	e.eg.probed = nil
	if err := e.restore(ctx, p.dump, p.callID); err != nil {
		return nil, true, err
	}
	return nil, false, nil
}

// eagerDump answers a Dump while the inner worker is held past the
// FunctionCall: with the dump taken at the FunctionCall.
func (e *Engine) eagerDump() (message.Event, bool) {
	if p := e.eg.probed; p != nil {
		return &message.DumpResult{State: bytes.Clone(p.dump)}, true
	}
	return nil, false
}

func isViolationEvent(ev message.Event) bool {
	er, ok := ev.(*message.Error)
	return ok && er.Exception != nil && er.Exception.Type == "RuntimeError" &&
		strings.HasPrefix(er.Exception.Msg(), "protocol violation: ")
}

// probeSink notes whether the probe printed; the text is dropped (the
// suspension is then restored and the code runs again).
type probeSink struct{ printed bool }

func (s *probeSink) Print(message.PrintStream, string) { s.printed = true }

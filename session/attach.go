package session

import (
	"context"
	"errors"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
)

// This file lets a worker outlive its session, for pools: Negotiate settles
// the protocol version once, Attach configures a session on a worker that
// is already running, and Detach resets the worker and hands it back
// without stopping it.

// errDetached is the cause recorded in a session whose worker was handed
// back by Detach, which a pool's Session.Close calls: the text names both,
// since a pool's caller never calls Detach itself.
var errDetached = errors.New("monty session: worker detached from the session (handed back by Detach, as a pool session's Close does)")

// Negotiate starts a worker with l, settles the protocol version exactly
// like Start (pinned, cached or negotiated, with a downgrade when the
// worker refuses) and returns that worker detached: running, with no
// session, ready for Attach. The Negotiation says which version was
// chosen; give its Version to Attach for every later worker of the same
// binary, which then needs no negotiation of its own. cfg is the
// Configure used for the negotiation (and its logger).
//
// ctx bounds the negotiation. On error no worker is left running. Its
// errors are Start's, and Detach's; a RemoteLauncher's connection is no
// worker to hand back, so it fails with ErrSingleUse.
func Negotiate(ctx context.Context, l Launch, cfg Config) (Peer, Negotiation, error) {
	s, err := Start(ctx, l, cfg)
	if err != nil {
		return nil, Negotiation{}, err
	}
	neg := s.Negotiation()
	p, err := s.Detach(ctx)
	if err != nil {
		s.Close()
		return nil, neg, err
	}
	return p, neg, nil
}

// Attach configures a session with protocol version on p, a worker that is
// running and has no session: fresh from worker.Start (or any other
// Peer), or handed back by Detach or Negotiate. Nothing is negotiated: a
// worker that refuses the version fails the Configure with the error its
// Lifecycle classifies (a *worker.CrashError for a process); a version
// this module has no codec for is an *UnknownVersionError. The frame cap
// is the connection's (transport.Conn.MaxFrameLen).
//
// Attach takes ownership of p: on success the session stops it on Close,
// and on error p has already been stopped. ctx bounds the Configure;
// cancelling it later has no effect on the session. Attach is safe for
// concurrent use on different workers.
func Attach(ctx context.Context, p Peer, version uint32, cfg Config) (*Session, error) {
	if p == nil {
		return nil, errors.New("monty session: Attach needs a worker")
	}
	c, ok := codec.ForVersion(version)
	if !ok {
		p.Close(context.Background())
		return nil, unknownVersion(version)
	}
	cfg = cfg.withDefaults()
	var bin string
	if b, ok := p.(interface{ Binary() string }); ok {
		bin = b.Binary()
	}
	s, err := configureOn(ctx, cfg, bin, p, c)
	if err != nil {
		return nil, err
	}
	s.neg = Negotiation{Version: version, Pinned: true}
	return s, nil
}

// configureOn builds the session for a started child and configures it with
// codec c. On error the child has been stopped.
func configureOn(ctx context.Context, cfg Config, bin string, p Peer, c codec.Codec) (*Session, error) {
	conn := p.Conn()
	s := &Session{
		cfg:   cfg,
		bin:   bin,
		peer:  p,
		conn:  conn,
		codec: c,
		lim:   cfg.codecLimits(conn.MaxFrameLen()),
		log:   cfg.Logger,
		print: cfg.Print,
	}
	s.setState(StateIdle)
	if err := s.begin(ctx); err != nil {
		s.Close()
		return nil, err
	}
	defer s.end()
	s.startTelemetry(ctx)
	if err := s.configure(ctx); err != nil {
		s.failTelemetry()
		s.Close()
		return nil, err
	}
	return s, nil
}

// Detach ends the session but keeps its worker: it sends Reset, which
// discards the sandbox session (globals and all), and on Ok returns the
// still-running worker, ready for Attach. A second round trip fences the
// Reset: a Dump, which a reset worker refuses with an Error, so that a
// worker that sent an unsolicited Ok (which would otherwise answer the
// Reset and shift every later answer by one) is caught here. The session is then closed:
// every later call fails with an error matching ErrClosed, and Close and
// Kill no longer touch the worker.
//
// Detach only hands back a worker whose state is known. It fails, leaving
// the worker with the session, when a turn is in flight (ErrBusy) or a
// feed is suspended (ErrSuspended); the caller decides whether to answer
// the suspension or stop the worker with Close. A remote session has no
// worker to hand back: ErrSingleUse. On a closed session it
// returns an error matching ErrClosed whose chain holds the cause of the
// loss (a *worker.CrashError, a *ProtocolError, ...). A worker that
// dies during the Reset or answers anything but Ok is discarded as usual
// and the error says why. ctx bounds the Reset; if it ends first the worker
// is killed.
//
// Detach is a turn: like the other turn methods it must not be called
// concurrently with them. Close or Kill racing with it from another
// goroutine is safe: exactly one of them gets the worker.
func (s *Session) Detach(ctx context.Context) (Peer, error) {
	if s.isRemote() {
		return nil, ErrSingleUse
	}
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	if s.cur() != StateIdle {
		return nil, ErrSuspended
	}
	ev, err := s.exchange(ctx, &message.Reset{})
	if err != nil {
		return nil, err
	}
	if k := ev.Body.EventKind(); k != message.KindOk {
		return nil, s.fail(&ProtocolError{Msg: "worker answered Reset with " + k.String(), Err: errorOf(ev)})
	}
	s.hostObjs.release() // the worker has forgotten them
	// A fence before the worker serves anyone else: Dump on a reset
	// worker is refused with an Error, an answer no stray Ok can imitate.
	// A child that sent an Ok nobody asked for (taken above for Reset's
	// answer) has its real answer to Reset read here instead, and is
	// discarded, rather than shifting every later answer into the next
	// session.
	ev, err = s.exchange(ctx, &message.Dump{})
	if err != nil {
		return nil, err
	}
	if k := ev.Body.EventKind(); k != message.KindError {
		return nil, s.fail(&ProtocolError{Msg: "worker answered a Dump after Reset with " + k.String(), Err: ErrStrayEvent})
	}
	// Between turns the interrupt word is irIdle; whoever swaps it first
	// owns the worker: Close and Kill (irClosed) stop it, Detach takes it.
	if !s.interrupt.CompareAndSwap(irIdle, irDetached) {
		return nil, s.closedErr()
	}
	s.setCause(errDetached)
	s.unwatchCtx()
	s.endTelemetry()
	s.setState(StateClosed)
	s.susp = nil
	s.closed.Store(true)
	if s.wd != nil {
		s.wd.Stop()
	}
	return s.peer, nil
}

// Reusable reports whether the session's worker may serve another session
// after a Reset (Detach): nil when the session is open and idle, no turn is
// in flight and no feed was aborted because its context ended; otherwise
// an error saying why not: ErrBusy, an error matching ErrClosed whose
// chain holds the cause of the loss, ErrSuspended, ErrInterrupted, or
// (when none of those applies) ErrSingleUse for a remote session. A pool
// asks it before taking a worker back, and why a session ended.
//
// Reusable briefly takes the turn lock, like a turn: it is safe for
// concurrent use with Close and Kill, and a turn starting on another
// goroutine at that moment fails with ErrBusy.
func (s *Session) Reusable() error {
	if err := s.take(); err != nil {
		return err
	}
	defer s.end()
	switch {
	case s.closed.Load():
		return s.closedErr()
	case s.cur() == StateSuspended:
		return ErrSuspended
	case s.aborted.Load():
		return ErrInterrupted
	case s.isRemote():
		return ErrSingleUse
	}
	return nil
}

// Cause returns the error that closed the session: the crash, protocol
// violation, memory-limit exit, or context or watchdog kill that lost the
// worker. It returns nil while the session is open and when it was closed
// by Close, Kill or Shutdown. After Detach it returns an error saying the
// worker was detached.
//
// Cause is safe for concurrent use with everything, including a turn in
// flight on another goroutine (which may be about to report the same
// error).
func (s *Session) Cause() error {
	if !s.closed.Load() {
		return nil
	}
	return s.cause()
}

package pool

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
)

// Session is a session on a pool worker. It forwards an explicit set of
// the methods of *session.Session (the turns, the snapshots, the state
// queries); it deliberately has no Detach and no Shutdown, since the worker
// belongs to the pool: Close gives it back instead of stopping it.
//
// A session on a remote endpoint (Endpoint is not LocalEndpoint) is a
// single-use connection: Reset fails with session.ErrSingleUse, Close
// closes the connection, WorkerID and Pid are zero.
//
// Like *session.Session, a Session runs one turn at a time on the calling
// goroutine and is not safe for concurrent use, except that Close, Destroy,
// Kill, State, WorkerID, Pid and Endpoint may be called from any goroutine at any
// time.
// After Close or Destroy every turn fails with an error matching
// session.ErrClosed: the worker it ran on may already serve another
// checkout, and cannot be reached through this Session. The queries
// still answer: State is session.StateClosed, and WorkerID, Pid and
// Endpoint still name where the session ran.
//
// Get a Session from [Pool.Checkout]; the zero Session is not usable.
type Session struct {
	s        *session.Session
	pool     *Pool
	m        *member    // the local worker; nil for a remote session
	ref      *remoteRef // where a remote session runs; nil for a local one
	released atomic.Bool
	returned atomic.Bool // Close gave the worker back to the pool
	dropped  atomic.Bool // the loss of a remote session was charged to its endpoint
	start    time.Time   // when the checkout handed it out
}

// WorkerID returns the pool-assigned id of the session's worker. Ids are
// 1, 2, 3, ... in the order workers joined the pool; a worker keeps its id
// across checkouts.
// A remote session has none: 0.
//
// WorkerID and Pid keep answering after Close or Destroy: they name the
// worker this session ran on, for logs, and that worker may by then serve
// another checkout (or have exited, its pid reused by another process).
// Never signal a pid read after Close.
func (s *Session) WorkerID() uint64 {
	if s.m == nil {
		return 0
	}
	return s.m.id
}

// Pid returns the process id of the session's worker (0 for a remote
// session); see WorkerID for its meaning after Close.
func (s *Session) Pid() int {
	if s.m == nil {
		return 0
	}
	return s.m.pid
}

// Endpoint returns the name of the endpoint the session runs on:
// LocalEndpoint for a local worker, else the Endpoint's Name (the endpoint
// it resumed on, after a drain moved it). It is safe to call from any
// goroutine.
func (s *Session) Endpoint() string {
	if s.ref == nil {
		return LocalEndpoint
	}
	s.pool.mu.Lock()
	defer s.pool.mu.Unlock()
	return s.ref.ep.Name
}

// Resumed is session.Session.Resumed: how many times a remote session
// moved to another endpoint after a ShutdownDump.
func (s *Session) Resumed() int { return s.s.Resumed() }

// RemoteSessionID is session.Session.RemoteSessionID.
func (s *Session) RemoteSessionID() []byte { return s.s.RemoteSessionID() }

// Run is session.Session.Run. A feed aborted because its context ended
// leaves the session usable but not reusable (session.Session.Reusable):
// its worker is destroyed on Close rather than handed to another checkout.
func (s *Session) Run(ctx context.Context, code string, opts ...session.RunOption) (*session.Result, error) {
	r, err := s.s.Run(ctx, code, opts...)
	s.turnEnded(err)
	return r, err
}

// Continue is session.Session.Continue.
func (s *Session) Continue(ctx context.Context, opts ...session.RunOption) (*session.Result, error) {
	r, err := s.s.Continue(ctx, opts...)
	s.turnEnded(err)
	return r, err
}

// Feed is session.Session.Feed.
func (s *Session) Feed(ctx context.Context, code string, inputs ...session.Input) (*message.ChildEvent, error) {
	ev, err := s.s.Feed(ctx, code, inputs...)
	s.turnEnded(err)
	return ev, err
}

// Do is session.Session.Do.
func (s *Session) Do(ctx context.Context, req message.Request) (*message.ChildEvent, error) {
	ev, err := s.s.Do(ctx, req)
	s.turnEnded(err)
	return ev, err
}

// Resume is session.Session.Resume.
func (s *Session) Resume(ctx context.Context, a session.Answer) (*message.ChildEvent, error) {
	ev, err := s.s.Resume(ctx, a)
	s.turnEnded(err)
	return ev, err
}

// AbortFeed is session.Session.AbortFeed.
func (s *Session) AbortFeed(ctx context.Context, exc *message.RaisedException) (*message.ChildEvent, error) {
	ev, err := s.s.AbortFeed(ctx, exc)
	s.turnEnded(err)
	return ev, err
}

// Dump is session.Session.Dump.
func (s *Session) Dump(ctx context.Context) ([]byte, error) {
	b, err := s.s.Dump(ctx)
	s.turnEnded(err)
	return b, err
}

// Load is session.Session.Load.
func (s *Session) Load(ctx context.Context, state []byte) (*message.ChildEvent, error) {
	ev, err := s.s.Load(ctx, state)
	s.turnEnded(err)
	return ev, err
}

// LoadWith is session.Session.LoadWith.
func (s *Session) LoadWith(ctx context.Context, state []byte, opts session.LoadOptions) (*message.ChildEvent, error) {
	ev, err := s.s.LoadWith(ctx, state, opts)
	s.turnEnded(err)
	return ev, err
}

// Reset is session.Session.Reset.
func (s *Session) Reset(ctx context.Context) error { return s.s.Reset(ctx) }

// State is session.Session.State.
func (s *Session) State() session.State { return s.s.State() }

// Suspension is session.Session.Suspension.
func (s *Session) Suspension() *message.ChildEvent { return s.s.Suspension() }

// Stamps is session.Session.Stamps.
func (s *Session) Stamps() session.Stamps { return s.s.Stamps() }

// SuspensionCount is session.Session.SuspensionCount.
func (s *Session) SuspensionCount() uint64 { return s.s.SuspensionCount() }

// SuspensionLimit is session.Session.SuspensionLimit.
func (s *Session) SuspensionLimit() uint64 { return s.s.SuspensionLimit() }

// Version is session.Session.Version.
func (s *Session) Version() uint32 { return s.s.Version() }

// Reusable is session.Session.Reusable: nil when Close would give the
// worker back to the pool.
func (s *Session) Reusable() error { return s.s.Reusable() }

// Cause is session.Session.Cause: the error that lost the worker, nil
// while the session is open and after a Close that gave the worker back
// to the pool (or a Destroy or Kill).
func (s *Session) Cause() error {
	if s.returned.Load() {
		// The pool detached the session from its worker; that is no
		// failure of the caller's.
		return nil
	}
	return s.s.Cause()
}

// HostObject is session.Session.HostObject.
func (s *Session) HostObject(v session.Value) (any, bool) { return s.s.HostObject(v) }

// Kill is session.Session.Kill: the worker is stopped at once and a turn
// in flight fails with an error matching session.ErrClosed. The checkout
// still has to be ended with Close (which then destroys the worker).
func (s *Session) Kill() { s.s.Kill() }

// Close ends the checkout. When the session is idle, its worker alive and
// no Run or Continue was interrupted, the worker is reset (one round trip)
// and returned to the pool, unless it has reached MaxCheckoutsPerWorker
// (then it is recycled) or the pool is closing. In every other case (a
// suspended feed, a crash, a protocol violation, a kill, an interrupted
// turn, a turn still in flight on another goroutine) the worker is
// destroyed and the pool starts a replacement as needed.
//
// Close is idempotent and safe to call from any goroutine; it returns nil.
//
// A remote session's Close closes its connection with a normal Close
// frame and releases its endpoint slot.
func (s *Session) Close() error {
	if s.ref != nil {
		s.pool.releaseRemote(s, "")
		return nil
	}
	s.pool.release(s, false)
	return nil
}

// Destroy ends the checkout and stops the worker, whatever its state; a
// turn in flight fails with an error matching session.ErrClosed. It is
// idempotent, safe to call from any goroutine, and a no-op after Close.
func (s *Session) Destroy() {
	if s.ref != nil {
		s.pool.releaseRemote(s, DestroyRequested)
		return
	}
	s.pool.release(s, true)
}

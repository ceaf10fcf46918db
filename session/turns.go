package session

import (
	"context"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// Input binds a name in the sandbox's globals for one feed. Value is any
// Go value [value.FromGo] accepts, or a [Value].
//
// An Input is plain data; the session only reads its Value.
type Input struct {
	// Name is the global's name; it must be a valid identifier.
	Name string
	// Value is its value.
	Value any
}

// begin takes the turn lock and checks ctx.
func (s *Session) begin(ctx context.Context) error {
	if !s.busy.CompareAndSwap(false, true) {
		return ErrBusy
	}
	if err := notDone(ctx); err != nil {
		s.busy.Store(false)
		return err
	}
	if s.closed.Load() {
		s.busy.Store(false)
		return s.closedErr()
	}
	return nil
}

func (s *Session) end() { s.busy.Store(false) }

// Feed runs a snippet in the session, with inputs bound as globals first,
// and returns the turn-ending event: Complete, Error, TypingError or a
// suspension (FunctionCall, OsCall, NameLookup, ResolveFutures) to answer
// with the Resume methods. Print output goes to the print sink.
//
// If ctx ends while the worker runs, the worker is killed and the error is
// a *CanceledError or *TimeoutError; the session is then
// closed.
func (s *Session) Feed(ctx context.Context, code string, inputs ...Input) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	feed, err := buildFeed(code, inputs)
	if err != nil {
		return nil, err
	}
	return s.feed(ctx, feed)
}

func (s *Session) feed(ctx context.Context, feed *message.Feed) (*message.ChildEvent, error) {
	if s.state == StateSuspended {
		return nil, ErrSuspended
	}
	s.suspCount = 0
	return s.exchange(ctx, feed)
}

func buildFeed(code string, inputs []Input) (*message.Feed, error) {
	feed := &message.Feed{Code: code}
	for _, in := range inputs {
		root, err := toGraph(&feed.Values, in.Value)
		if err != nil {
			return nil, &InvalidRequestError{Err: err}
		}
		feed.Inputs = append(feed.Inputs, message.NamedRef{Name: in.Name, Value: root})
	}
	return feed, nil
}

// pendingCall returns the call id of a suspended FunctionCall or OsCall.
func (s *Session) pendingCall() (uint32, bool) {
	if s.state != StateSuspended || s.susp == nil {
		return 0, false
	}
	switch b := s.susp.Body.(type) {
	case *message.FunctionCall:
		return b.CallID, true
	case *message.OsCall:
		return b.CallID, true
	}
	return 0, false
}

// resumeCall answers the suspended call with r, whose value (if any) is in
// g.
func (s *Session) resumeCall(ctx context.Context, r message.ExtResult, g *value.Graph) (*message.ChildEvent, error) {
	id, ok := s.pendingCall()
	if !ok {
		return nil, ErrNotSuspended
	}
	req := &message.ResumeCall{CallID: id, Result: &r}
	if g != nil {
		req.Values = *g
	}
	return s.exchange(ctx, req)
}

// resumeWith converts v into the scratch graph and answers the suspended
// call with it.
func (s *Session) resumeWith(ctx context.Context, v any) (*message.ChildEvent, error) {
	if _, ok := s.pendingCall(); !ok {
		return nil, ErrNotSuspended
	}
	s.scratch.Reset()
	root, err := toGraph(&s.scratch, v)
	if err != nil {
		return nil, &InvalidRequestError{Err: err}
	}
	ev, err := s.resumeCall(ctx, message.ExtResult{Kind: message.ResultReturn, Value: root}, &s.scratch)
	s.scratch.Reset()
	return ev, err
}

// ResumeReturn answers the suspended FunctionCall or OsCall with the value
// v (any Go value [value.FromGo] accepts, or a [Value]) and returns the next
// turn-ending event.
func (s *Session) ResumeReturn(ctx context.Context, v any) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	return s.resumeWith(ctx, v)
}

// ResumeError answers the suspended call by raising exc at the call site
// (the sandbox may catch it).
func (s *Session) ResumeError(ctx context.Context, exc *message.RaisedException) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	return s.resumeCall(ctx, message.ExtResult{Kind: message.ResultError, Error: exc}, nil)
}

// ResumeFuture answers the suspended FunctionCall with an external future
// registered under the call's own id; the sandbox gets an awaitable, and
// the result is delivered later with ResumeFutures.
func (s *Session) ResumeFuture(ctx context.Context) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	id, ok := s.pendingCall()
	if !ok {
		return nil, ErrNotSuspended
	}
	return s.resumeCall(ctx, message.ExtResult{Kind: message.ResultFuture, Future: id}, nil)
}

// ResumeNotFound answers the suspended call with NameError "name 'name' is
// not defined".
func (s *Session) ResumeNotFound(ctx context.Context, name string) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	return s.resumeCall(ctx, message.ExtResult{Kind: message.ResultNotFound, Name: name}, nil)
}

// ResumeNotHandled answers a suspended OsCall with "no handler": the
// sandbox raises the call's default error (PermissionError for filesystem
// calls).
func (s *Session) ResumeNotHandled(ctx context.Context) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	if !s.suspendedOn(message.KindOsCall) {
		return nil, ErrNotSuspended
	}
	return s.resumeCall(ctx, message.ExtResult{Kind: message.ResultNotHandled}, nil)
}

func (s *Session) suspendedOn(k message.EventKind) bool {
	return s.state == StateSuspended && s.susp != nil && s.susp.Body.EventKind() == k
}

// ResumeLookupValue answers the suspended NameLookup by binding the name to
// v.
func (s *Session) ResumeLookupValue(ctx context.Context, v any) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	if !s.suspendedOn(message.KindNameLookup) {
		return nil, ErrNotSuspended
	}
	req := &message.ResumeNameLookup{Kind: message.LookupValue}
	root, err := toGraph(&req.Values, v)
	if err != nil {
		return nil, &InvalidRequestError{Err: err}
	}
	req.Value = root
	return s.exchange(ctx, req)
}

// ResumeLookupUndefined answers the suspended NameLookup with "undefined":
// NameError (or AttributeError for a host object's attribute).
func (s *Session) ResumeLookupUndefined(ctx context.Context) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	if !s.suspendedOn(message.KindNameLookup) {
		return nil, ErrNotSuspended
	}
	return s.exchange(ctx, &message.ResumeNameLookup{Kind: message.LookupUndefined})
}

// ResumeLookupError answers the suspended NameLookup by raising exc where
// the name was read.
func (s *Session) ResumeLookupError(ctx context.Context, exc *message.RaisedException) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	if !s.suspendedOn(message.KindNameLookup) {
		return nil, ErrNotSuspended
	}
	return s.exchange(ctx, &message.ResumeNameLookup{Kind: message.LookupError, Error: exc})
}

// FutureOutcome resolves one external future: the value of a finished
// host call, or its error (a *message.RaisedException is raised as is, any
// other error as RuntimeError).
//
// A FutureOutcome is plain data; the session only reads it.
type FutureOutcome struct {
	// CallID is the id of the call whose future this resolves.
	CallID uint32
	// Value is the result, used when Err is nil.
	Value any
	// Err fails the future.
	Err error
}

// ResumeFutures resolves some of the futures a ResolveFutures event listed
// (any subset; the worker asks again for the rest).
func (s *Session) ResumeFutures(ctx context.Context, outcomes ...FutureOutcome) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	if !s.suspendedOn(message.KindResolveFutures) {
		return nil, ErrNotSuspended
	}
	req, err := buildFutures(outcomes)
	if err != nil {
		return nil, err
	}
	return s.exchange(ctx, req)
}

// ResumeEager answers a suspended FunctionCall whose AllowEagerAwait is set
// (protocol 4, `x = await f()`) with its settled result: v, or the error
// err when it is non-nil. The worker continues without a ResolveFutures
// round.
func (s *Session) ResumeEager(ctx context.Context, v any, err error) (*message.ChildEvent, error) {
	if e := s.begin(ctx); e != nil {
		return nil, e
	}
	defer s.end()
	if !s.suspendedOn(message.KindFunctionCall) {
		return nil, ErrNotSuspended
	}
	fc := s.susp.Body.(*message.FunctionCall)
	if !fc.AllowEagerAwait {
		return nil, ErrNotSuspended
	}
	req, e := buildFutures([]FutureOutcome{{CallID: fc.CallID, Value: v, Err: err}})
	if e != nil {
		return nil, e
	}
	return s.exchange(ctx, req)
}

func buildFutures(outcomes []FutureOutcome) (*message.ResumeFutures, error) {
	req := &message.ResumeFutures{Results: make([]message.FutureResult, 0, len(outcomes))}
	for _, o := range outcomes {
		r := &message.ExtResult{}
		if o.Err != nil {
			r.Kind, r.Error = message.ResultError, exceptionFor(o.Err)
		} else {
			root, err := toGraph(&req.Values, o.Value)
			if err != nil {
				return nil, &InvalidRequestError{Err: err}
			}
			r.Kind, r.Value = message.ResultReturn, root
		}
		req.Results = append(req.Results, message.FutureResult{CallID: o.CallID, Result: r})
	}
	return req, nil
}

// AbortFeed ends the suspended feed by raising exc, uncatchably, where it
// is suspended, and returns the worker's Error event. The session survives
// with the globals assigned before the suspension. A worker that answers
// with anything but an Error is discarded (*ProtocolError).
func (s *Session) AbortFeed(ctx context.Context, exc *message.RaisedException) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	if s.state != StateSuspended {
		return nil, ErrNotSuspended
	}
	return s.exchange(ctx, &message.AbortFeed{Exception: exc})
}

// Dump returns a snapshot of the session, idle or suspended, in monty's own
// dump format. The session carries on unchanged. A worker refusal (for
// example a dump over the frame cap) is a *PythonError.
func (s *Session) Dump(ctx context.Context) ([]byte, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	ev, err := s.exchange(ctx, &message.Dump{})
	if err != nil {
		return nil, err
	}
	if d, ok := ev.Body.(*message.DumpResult); ok {
		return d.State, nil
	}
	return nil, errorOf(ev)
}

// Load restores a dump into a session that has not run a feed yet (a
// fresh one, or one just Reset). It returns the worker's reply: Ok for an
// idle dump, the re-announced suspension for a suspended one (answer it as
// usual; see also Continue), or Complete. The dump brings its own limits,
// consumed time and script name. A refusal is a *PythonError and leaves
// the session as it was.
func (s *Session) Load(ctx context.Context, state []byte) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	ev, err := s.exchange(ctx, &message.Load{State: state})
	if err != nil {
		return nil, err
	}
	if err := errorOf(ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// Reset discards the sandbox session (globals, any suspension) and
// configures a fresh one with the same Config, ready for Feed or Load.
func (s *Session) Reset(ctx context.Context) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.end()
	ev, err := s.exchange(ctx, &message.Reset{})
	if err != nil {
		return err
	}
	if err := errorOf(ev); err != nil {
		return err
	}
	s.hostObjs.release() // the worker has forgotten them
	return s.configure(ctx)
}

// configure sends our Configure and checks the reply.
func (s *Session) configure(ctx context.Context) error {
	ev, err := s.exchange(ctx, s.cfg.configure(s.codec.Version()))
	if err != nil {
		return err
	}
	if err := errorOf(ev); err != nil {
		return s.fail(&ProtocolError{Msg: "worker refused Configure", Err: err})
	}
	return nil
}

// Shutdown asks the worker to exit cleanly, waits for it and closes the
// session. Use Close to stop a worker without the round trip.
func (s *Session) Shutdown(ctx context.Context) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.end()
	if _, err := s.exchange(ctx, &message.Shutdown{}); err != nil {
		return err
	}
	s.die(nil, false)
	return nil
}

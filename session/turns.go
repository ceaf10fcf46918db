package session

import (
	"context"
	"fmt"
	"time"

	"github.com/gomonty/monty/internal/pyident"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// Input binds a name in the sandbox's globals for one feed. Value is any
// Go value [value.FromGo] accepts, or a [Value].
//
// An Input is plain data; the session only reads its Value.
type Input struct {
	// Name is the global's name. It is bound as the sandbox's code reads
	// it, NFKC-normalized (ｘ is x, x² is x2), and in that form it must be
	// an identifier that is not a hard keyword (match, type and _ are
	// names); Feed and Run refuse any other name, and two inputs that are
	// one name in that form (x and ｘ), with an *InvalidRequestError
	// before sending anything.
	Name string
	// Value is its value. One that holds a repr or a cycle placeholder
	// (value.ReprValue, value.CycleValue, or a Value the sandbox sent that
	// holds one) is refused with an *InvalidRequestError before anything
	// is sent: the sandbox sends those but does not take them back.
	Value any
}

// begin takes the turn lock and checks ctx.
func (s *Session) begin(ctx context.Context) error {
	if err := s.take(); err != nil {
		return err
	}
	// Closed first: a done context's error would say the session
	// survives.
	if s.closed.Load() {
		s.end()
		return s.closedErr()
	}
	if err := notDone(ctx); err != nil {
		s.end()
		return err
	}
	return nil
}

func (s *Session) end() { s.busy.Store(false) }

// take takes the turn lock, or says why not: ErrBusy, or the closed error
// when Close or Kill holds it for a moment (see endTelemetry) or a turn
// of a session closed under it is ending.
func (s *Session) take() error {
	if s.busy.CompareAndSwap(false, true) {
		return nil
	}
	if s.closed.Load() {
		return s.closedErr()
	}
	return ErrBusy
}

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
	ev, err := s.feed(ctx, feed)
	return s.chargeHandedSleep(ctx, ev, err)
}

func (s *Session) feed(ctx context.Context, feed *message.Feed) (*message.ChildEvent, error) {
	if s.cur() == StateSuspended {
		return nil, ErrSuspended
	}
	s.suspCount = 0
	return s.exchange(ctx, feed)
}

func buildFeed(code string, inputs []Input) (*message.Feed, error) {
	feed := &message.Feed{Code: code}
	if err := checkInputNames(inputs); err != nil {
		return nil, err
	}
	for _, in := range inputs {
		n := feed.Values.Len()
		root, err := toGraph(&feed.Values, in.Value)
		if err == nil {
			err = outputOnlyInput(&feed.Values, n, root)
		}
		if err != nil {
			return nil, &InvalidRequestError{Err: fmt.Errorf("input %q: %w", in.Name, err)}
		}
		feed.Inputs = append(feed.Inputs, message.NamedRef{Name: nfkc(in.Name), Value: root})
	}
	return feed, nil
}

// checkInputName refuses an input name the worker would refuse with a
// SyntaxError ("Input name ... not a valid identifier") once the session
// had sent it: the name as it is sent (NFKC-normalized) must be an
// identifier that is not a hard keyword. A character that Go's Unicode
// tables do not have yet is left to the worker, whose tables are newer
// (pyident.Global, the rule montygo run's --input shares);
// TestRealInputNamesAgreeWithWorker holds the rule to the worker's.
func checkInputName(name string) error {
	if _, ok := pyident.Global(name); ok {
		return nil
	}
	return &InvalidRequestError{Err: fmt.Errorf("input %q: not a Python identifier (or a keyword) as the sandbox reads it", name)}
}

// checkInputNames checks each input's name (checkInputName) and refuses
// two inputs that are one global once normalized (x and ｘ, or x twice):
// the worker binds both, the last silently winning.
func checkInputNames(inputs []Input) error {
	var seen map[string]string // bound name -> the input's name; made for a second input
	for i, in := range inputs {
		if err := checkInputName(in.Name); err != nil {
			return err
		}
		if i == 0 {
			continue
		}
		if seen == nil {
			seen = make(map[string]string, len(inputs))
			seen[pyident.Bound(inputs[0].Name)] = inputs[0].Name
		}
		bound := pyident.Bound(in.Name)
		if first, dup := seen[bound]; dup {
			if first == in.Name {
				return &InvalidRequestError{Err: fmt.Errorf("input %q given twice", in.Name)}
			}
			return &InvalidRequestError{Err: fmt.Errorf("inputs %q and %q given: both are the global %s as the sandbox reads it", first, in.Name, bound)}
		}
		seen[bound] = in.Name
	}
	return nil
}

// Answer is how the host answers a suspension in [Session.Resume]. Build
// one with [Return], [Raise], [Undefined], [NotHandled], [AsFuture] or
// [Resolve].
//
// An Answer is plain data; the session only reads it.
type Answer struct {
	kind     answerKind
	value    any
	exc      *message.RaisedException
	outcomes []FutureOutcome
}

type answerKind uint8

const (
	answerReturn answerKind = iota + 1
	answerRaise
	answerUndefined
	answerNotHandled
	answerFuture
	answerResolve
)

// Return answers a FunctionCall or OsCall with the value v, or binds a
// NameLookup's name to v. v is any Go value [value.FromGo] accepts, or a
// [Value]. A v that holds a repr or a cycle placeholder, which the sandbox
// sends but does not take back, is refused by Resume with an
// *InvalidRequestError; the feed stays suspended.
func Return(v any) Answer { return Answer{kind: answerReturn, value: v} }

// Raise raises exc where the feed is suspended: at the call site of a
// FunctionCall or OsCall (the sandbox may catch it), or where a NameLookup
// read the name. As for a host function's error, an exception type the
// worker does not know is raised as RuntimeError naming it, a message
// that is not UTF-8 is repaired, and the exception's traceback is not
// sent. A nil exc raises RuntimeError("raised by the host"), as a nil
// exception given to [Session.AbortFeed] raises a RuntimeError of its
// own: the protocol has no error answer without an exception.
func Raise(exc *message.RaisedException) Answer { return Answer{kind: answerRaise, exc: exc} }

// raised is the exception a Raise answer sends (for nil, the RuntimeError
// Raise documents).
func (a Answer) raised() *message.RaisedException {
	if a.exc == nil {
		return message.NewException("RuntimeError", "raised by the host")
	}
	return exceptionFor(a.exc, "RuntimeError")
}

// Undefined answers a NameLookup with "undefined" (NameError, or
// AttributeError for a host object's attribute), or a FunctionCall with
// NameError "name '<function>' is not defined".
func Undefined() Answer { return Answer{kind: answerUndefined} }

// NotHandled answers an OsCall with "no handler": the sandbox raises the
// call's default error (PermissionError for filesystem calls).
func NotHandled() Answer { return Answer{kind: answerNotHandled} }

// AsFuture answers a FunctionCall with an external future registered under
// the call's own id: the sandbox gets an awaitable, and the result is
// delivered later by resuming a ResolveFutures suspension with [Resolve].
func AsFuture() Answer { return Answer{kind: answerFuture} }

// Resolve settles futures: on a ResolveFutures suspension, any subset of
// the listed call ids (the worker asks again for the rest); on a
// FunctionCall whose AllowEagerAwait is set (protocol 4, `x = await f()`),
// exactly one outcome for that call, which the worker takes without a
// ResolveFutures round.
func Resolve(outcomes ...FutureOutcome) Answer {
	return Answer{kind: answerResolve, outcomes: outcomes}
}

// Resume answers the pending suspension with a and returns the next
// turn-ending event. An answer that does not fit the suspension (Undefined
// for an OsCall, NotHandled for a FunctionCall, a Resolve on a call that
// cannot await eagerly, ...) fails with ErrNotSuspended and sends nothing.
func (s *Session) Resume(ctx context.Context, a Answer) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	if s.cur() != StateSuspended || s.susp == nil {
		return nil, ErrNotSuspended
	}
	req, err := s.answerRequest(a)
	if err != nil {
		return nil, err
	}
	s.tel.holdHost = true
	ev, err := s.exchange(ctx, req)
	s.tel.holdHost = false
	s.scratch.Reset()
	return s.chargeHandedSleep(ctx, ev, err)
}

// answerRequest builds the request that answers the pending suspension
// with a.
func (s *Session) answerRequest(a Answer) (message.Request, error) {
	switch b := s.susp.Body.(type) {
	case *message.FunctionCall, *message.OsCall:
		var id uint32
		call, isCall := b.(*message.FunctionCall)
		if isCall {
			id = call.CallID
		} else {
			id = b.(*message.OsCall).CallID
		}
		req := &message.ResumeCall{CallID: id, Result: &message.ExtResult{}}
		switch {
		case a.kind == answerReturn:
			s.scratch.Reset()
			root, err := toGraph(&s.scratch, a.value)
			if err == nil {
				err = outputOnlyInput(&s.scratch, 0, root)
			}
			if err != nil {
				return nil, &InvalidRequestError{Err: err}
			}
			req.Result.Kind, req.Result.Value, req.Values = message.ResultReturn, root, s.scratch
		case a.kind == answerRaise:
			req.Result.Kind, req.Result.Error = message.ResultError, a.raised()
		case a.kind == answerUndefined && isCall:
			req.Result.Kind, req.Result.Name = message.ResultNotFound, call.FunctionName
		case a.kind == answerNotHandled && !isCall:
			req.Result.Kind = message.ResultNotHandled
		case a.kind == answerFuture && isCall:
			req.Result.Kind, req.Result.Future = message.ResultFuture, id
		case a.kind == answerResolve && isCall && call.AllowEagerAwait &&
			len(a.outcomes) == 1 && a.outcomes[0].CallID == id:
			return buildFutures(a.outcomes)
		default:
			return nil, ErrNotSuspended
		}
		return req, nil
	case *message.NameLookup:
		switch a.kind {
		case answerReturn:
			req := &message.ResumeNameLookup{Kind: message.LookupValue}
			root, err := toGraph(&req.Values, a.value)
			if err == nil {
				err = outputOnlyInput(&req.Values, 0, root)
			}
			if err != nil {
				return nil, &InvalidRequestError{Err: err}
			}
			req.Value = root
			return req, nil
		case answerRaise:
			return &message.ResumeNameLookup{Kind: message.LookupError, Error: a.raised()}, nil
		case answerUndefined:
			return &message.ResumeNameLookup{Kind: message.LookupUndefined}, nil
		}
	case *message.ResolveFutures:
		if a.kind == answerResolve {
			return buildFutures(a.outcomes)
		}
	}
	return nil, ErrNotSuspended
}

// FutureOutcome resolves one external future: the value of a finished
// host call, or its error (raised as a [Func]'s error is).
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

func buildFutures(outcomes []FutureOutcome) (*message.ResumeFutures, error) {
	req := &message.ResumeFutures{Results: make([]message.FutureResult, 0, len(outcomes))}
	for _, o := range outcomes {
		r := &message.ExtResult{}
		if o.Err != nil {
			r.Kind, r.Error = message.ResultError, exceptionFor(o.Err, "RuntimeError")
		} else {
			n := req.Values.Len()
			root, err := toGraph(&req.Values, o.Value)
			if err == nil {
				err = outputOnlyInput(&req.Values, n, root)
			}
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
// with the globals assigned before the suspension. A nil exc raises
// RuntimeError("feed aborted by the host"), as a nil exception given to
// [Raise] raises a RuntimeError. exc is sent as [Raise] sends
// its exception: a type the worker does not know is raised as a
// RuntimeError naming it, a message that is not UTF-8 is repaired, and the
// traceback is left out (the caller's exc is not modified). A worker that
// refuses the abort anyway answers with a "protocol violation" Error
// event, which AbortFeed returns with the session still suspended, as the
// worker is; one that answers with anything but an Error is discarded
// (*ProtocolError).
func (s *Session) AbortFeed(ctx context.Context, exc *message.RaisedException) (*message.ChildEvent, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	if s.cur() != StateSuspended {
		return nil, ErrNotSuspended
	}
	if exc == nil {
		// The protocol has no AbortFeed without an exception: the worker
		// refuses one with an Error event and stays suspended, which a
		// caller would read as the feed's end.
		exc = message.NewException("RuntimeError", "feed aborted by the host")
	} else {
		// The worker refuses an unknown type (and stays suspended, so the
		// caller would read its refusal as the feed's end), and the codec
		// a message that is not UTF-8.
		exc = exceptionFor(exc, "RuntimeError")
	}
	s.tel.holdHost = true
	ev, err := s.exchange(ctx, &message.AbortFeed{Exception: exc})
	s.tel.holdHost = false
	return ev, err
}

// Dump returns a snapshot of the session, idle or suspended, in monty's own
// dump format. The session carries on unchanged, except that dumping a
// session that has not run a feed builds its interpreter, as a feed does
// (it no longer takes a Load until Reset). A worker refusal (for example a
// dump over the protocol's 256 MiB frame cap) is a *PythonError. The
// worker knows no lower cap of the parent's: a dump over
// worker.Config.MaxFrameLen or Config.MaxDecodeBytes arrives anyway and
// discards the worker with a *ProtocolError. Building a dump allocates
// several times the session's heap in the worker, under its memory
// limit: dumping a session that holds more than about a quarter of
// Limits.MaxMemory ends the worker (a *worker.MemoryLimitError; the
// session is closed). Measured with the released worker at the default
// 256 MiB: 60 MiB of globals dumped, 70 MiB ended the worker.
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
		s.snapshotBytes(len(d.State), true)
		return d.State, nil
	}
	return nil, errorOf(ev)
}

// Load restores a dump into a session that has not run a feed yet (a
// fresh one, or one just Reset) and has not been dumped or loaded since: a
// Dump or a successful Load builds the interpreter as a feed does, and the
// worker then refuses a Load (a *PythonError) until the next Reset. It
// returns the worker's reply: Ok for an idle dump, the re-announced
// suspension for a suspended one (answer it as usual; see also Continue),
// or Complete. The dump brings its own limits, consumed time and script
// name. A refusal (that, or a dump that is not one: garbage, truncated)
// is a *PythonError and leaves the session as it was, still loadable.
//
// The dump's limits replace the Config's (max_memory included, and the
// watchdog follows the dump's duration limits) until the next Reset; only
// the protocol-5 sleep budget, which the parent enforces itself, stays the
// lower of the two (see Limits.MaxTotalSleep). A dump made
// by a session with looser limits, or crafted, runs under those. Load only
// dumps the caller trusts as much as its Config.
//
// Host objects are not part of a dump: the sandbox keeps the instances it
// held, but a session loading a dump (fresh, or Reset, which releases its
// objects) holds none of the Go values behind them, so calling a method of
// one raises AttributeError.
func (s *Session) Load(ctx context.Context, state []byte) (*message.ChildEvent, error) {
	return s.LoadWith(ctx, state, LoadOptions{})
}

// LoadOptions carries into a Load what the parent knew of the dumped
// session and no event can tell it back.
//
// LoadOptions is plain data, safe to share.
type LoadOptions struct {
	// TotalSleep is the system sleep already charged to the dumped
	// session's sleep budget: its Stamps().TotalSleep when it was dumped
	// (protocol 5). The slept total travels inside a protocol-5 dump, but
	// no event reports it, so without it the restored session charges its
	// sleeps from zero against the dump's limit. A session resumed by the
	// remote transport after a ShutdownDump keeps its own total.
	TotalSleep time.Duration
}

// LoadWith is Load with options: the restored session starts from the
// charges opts carries (see LoadOptions). A refused Load changes nothing.
func (s *Session) LoadWith(ctx context.Context, state []byte, opts LoadOptions) (*message.ChildEvent, error) {
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
	s.snapshotBytes(len(state), false) // loaded: a refused Load is not counted
	s.stamps.TotalSleep = max(opts.TotalSleep, 0)
	return ev, nil
}

// Reset discards the sandbox session (globals, any suspension) and
// configures a fresh one with the same Config, ready for Feed or Load.
// A remote session is single-use: Reset fails with ErrSingleUse.
func (s *Session) Reset(ctx context.Context) error {
	if s.isRemote() {
		return ErrSingleUse
	}
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

// configure sends our Configure and checks the reply, within
// Config.StartTimeout.
func (s *Session) configure(ctx context.Context) error {
	// Refused unsent: a negative duration would go as no limit at all.
	if err := s.cfg.Limits.check(); err != nil {
		return err
	}
	if s.codec.Version() >= protocol.Version5 {
		// Refused unsent, with Config.Validate's error: a child refuses
		// such a policy in its own words, which match nothing.
		if err := s.cfg.OsPolicy.Validate(); err != nil {
			return &InvalidRequestError{Err: err}
		}
	}
	tctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	s.ownConfigure = true
	ev, err := s.exchange(tctx, s.cfg.configure(s.codec.Version()))
	s.ownConfigure = false
	if err != nil {
		if tctx.Err() != nil && ctx.Err() == nil {
			// exchange killed the worker when tctx ended.
			return &StartTimeoutError{Timeout: s.cfg.StartTimeout, Err: err}
		}
		return err
	}
	if err := errorOf(ev); err != nil {
		return s.fail(&ProtocolError{Msg: "worker refused Configure", Err: err})
	}
	return nil
}

// Shutdown asks the worker to exit cleanly, waits for it and closes the
// session. Use Close to stop a worker without the round trip.
//
// A remote session has no worker of its own to stop: Shutdown closes the
// connection with a normal Close frame, like Close.
func (s *Session) Shutdown(ctx context.Context) error {
	if s.isRemote() {
		return s.Close()
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.end()
	_, err := s.exchange(ctx, &message.Shutdown{}) // its Ok closes the session (settle)
	return err
}

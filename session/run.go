package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/gomonty/monty/internal/unsent"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// RunOption configures one Run or Continue.
//
// It is a plain function value, safe to share between runs. A nil
// RunOption is ignored, so a list may hold options set only on some runs.
type RunOption func(*runOptions)

type runOptions struct {
	funcs         *Registry
	inputs        []Input
	os            OSHandler
	skipTypeCheck bool
	cwd           string
	print         PrintFunc
}

// WithFunctions makes the registry's functions and values reachable from
// the sandbox. Without it every unknown name is a NameError.
func WithFunctions(r *Registry) RunOption { return func(o *runOptions) { o.funcs = r } }

// WithInputs binds globals before the snippet runs.
func WithInputs(inputs ...Input) RunOption {
	return func(o *runOptions) { o.inputs = append(o.inputs, inputs...) }
}

// WithOS routes the sandbox's OS calls to h. Without it every OS call is
// answered "not handled", so filesystem access raises PermissionError and
// os.getenv and the clocks raise RuntimeError.
func WithOS(h OSHandler) RunOption { return func(o *runOptions) { o.os = h } }

// WithPrint sends the run's output to f instead of Config.Print, so one
// session can give each run its own sink (an agent capturing each step's
// output). f is called as Config.Print is: on the goroutine of the run,
// one segment at a time, in order. A nil f leaves Config.Print in place
// (to discard a run's output, pass a function that does nothing).
func WithPrint(f PrintFunc) RunOption { return func(o *runOptions) { o.print = f } }

// WithSkipTypeCheck runs the snippet without type checking it.
func WithSkipTypeCheck() RunOption { return func(o *runOptions) { o.skipTypeCheck = true } }

// WithCwd sets the sandbox's current directory (an absolute virtual path)
// for the feed. Protocol 2 (the released worker) has no such field: there
// the feed is refused with an *InvalidRequestError.
func WithCwd(dir string) RunOption { return func(o *runOptions) { o.cwd = dir } }

// Run feeds code to the session and drives the feed to completion: host
// function calls, name lookups, OS calls and future resolutions are
// answered from the options, and output is streamed. It returns the value
// of the last expression.
//
// Errors that leave the session usable: *PythonError (the code raised,
// including the worker's TimeoutError and MemoryError limits),
// *TypeCheckError, *SuspensionLimitError, and the *CanceledError or
// *TimeoutError of a context that ended while the feed waited on the
// host (the feed is then aborted with AbortFeed). If the context ends while
// the worker computes, the worker is killed and the session is closed; so
// is a worker that does not answer that AbortFeed within
// Config.AbortTimeout, and the error (Killed) is still the context's.
//
// Every host goroutine started for the feed is cancelled and joined before
// Run returns.
func (s *Session) Run(ctx context.Context, code string, opts ...RunOption) (*Result, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	if s.cur() == StateSuspended {
		return nil, ErrSuspended
	}
	r := s.newRunner(ctx, opts)
	defer r.finish()
	feed, err := r.buildFeed(code)
	if err != nil {
		return nil, err
	}
	feed.SkipTypeCheck = r.o.skipTypeCheck
	feed.Cwd = r.o.cwd
	ev, err := s.feed(ctx, feed)
	r.settleHeld() // the inputs' objects not sent (they were registered if they were)
	res, err := r.drive(ev, err)
	if pe, ok := err.(*PythonError); ok {
		pe.source = code // for Traceback
	}
	return res, err
}

// Continue drives a suspended feed to completion like Run, starting from
// the pending suspension, for example one re-announced by Load. Futures
// started before a Dump cannot be resumed: their ids are answered with
// RuntimeError. The options that shape a new feed (WithInputs, WithCwd,
// WithSkipTypeCheck) have no feed to apply to here and are ignored, so one
// option list may serve both Run and Continue.
func (s *Session) Continue(ctx context.Context, opts ...RunOption) (*Result, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	if s.cur() != StateSuspended {
		return nil, ErrNotSuspended
	}
	r := s.newRunner(ctx, opts)
	defer r.finish()
	return r.drive(s.susp, nil)
}

// runner drives one feed.
type runner struct {
	s      *Session
	ctx    context.Context
	fctx   context.Context // for host functions; cancelled by finish
	cancel context.CancelFunc
	o      runOptions
	print  PrintFunc   // the session's own, restored by finish
	g      value.Graph // reply graph, reused across turns
	rc     message.ResumeCall
	res    message.ExtResult

	wg      sync.WaitGroup
	mu      sync.Mutex
	futures map[uint32]*future
	notify  chan struct{}

	abortedAt message.SourceRange // where the runner's own AbortFeed raised

	decOnce sync.Once
	dec     value.Decoder // the arguments' decoder, with the host-object hook

	// What the current answer answers, for the exception raised when it
	// cannot be sent (see resend): a host function, a host value or the
	// OS handler's op, and the futures resolve took from futures.
	what  unsent.Subject
	taken []takenFuture

	// held are the new host objects of the answer (or Feed) being sent,
	// apart from the futures' own (future.held): registered once it has
	// gone out, forgotten if it did not (see settleHeld).
	held []*heldObjects

	// The last exceptions host calls raised, with the Go errors behind
	// them (a ring, under mu: futures raise from their goroutines), for
	// PythonError.HostErr.
	raised  [8]hostRaised
	nraised int
}

// hostRaised is an exception a host call raised and the Go error behind it.
type hostRaised struct {
	exc *message.RaisedException
	err error
}

// raise returns the exception to raise for a host call's error err (see
// exceptionFor) and remembers err behind it.
func (r *runner) raise(err error, fallback string) *message.RaisedException {
	exc := exceptionFor(err, fallback)
	r.mu.Lock()
	r.raised[r.nraised%len(r.raised)] = hostRaised{exc, err}
	r.nraised++
	r.mu.Unlock()
	return exc
}

// hostErr returns the Go error behind exc, the exception that ended the
// feed, when it is the last of the remembered host exceptions with its
// type and message (the sandbox let it through, or raised it again as
// is); nil otherwise.
func (r *runner) hostErr(exc *message.RaisedException) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := r.nraised - 1; i >= 0 && i >= r.nraised-len(r.raised); i-- {
		h := r.raised[i%len(r.raised)]
		if h.exc.Type == exc.Type && h.exc.Msg() == exc.Msg() {
			return h.err
		}
	}
	return nil
}

type future struct {
	done bool
	name string // the host function's
	g    value.Graph
	res  message.ExtResult
	// held are the new host objects of the result: they enter the
	// session's store when a ResumeFutures carrying the result goes out,
	// and are forgotten if the worker never takes it (see settleHeld and
	// finish).
	held *heldObjects
}

// takenFuture is a finished future answered by the current ResumeFutures.
type takenFuture struct {
	id uint32
	f  *future
}

func (s *Session) newRunner(ctx context.Context, opts []RunOption) *runner {
	r := &runner{s: s, ctx: ctx, print: s.print}
	for _, o := range opts {
		if o != nil {
			o(&r.o)
		}
	}
	if r.o.print != nil {
		s.print = r.o.print // until finish
	}
	r.fctx, r.cancel = context.WithCancel(ctx)
	s.hostCancel.Store(&r.cancel)
	s.written = r.commitHeld
	return r
}

// finish cancels and joins the feed's host goroutines. The host objects
// of results the worker never received (futures it did not collect, an
// answer never sent) are forgotten.
func (r *runner) finish() {
	r.s.hostCancel.Store(nil)
	r.s.written = nil
	r.cancel()
	r.wg.Wait()
	r.s.print = r.print
	r.dropHeld()
	r.mu.Lock()
	for _, f := range r.futures {
		f.held.drop()
		f.held = nil
	}
	r.mu.Unlock()
}

// hold adds h, the new host objects of the answer being built, to the
// objects that wait for it to go out.
func (r *runner) hold(h *heldObjects) {
	if h != nil {
		r.held = append(r.held, h)
	}
}

// commitHeld registers the host objects of the request being written to
// the worker (the current answer's, or the Feed's inputs', and those of
// the futures it carries): the worker may name them from now on. It runs
// as the session's written hook, once the request is encoded and before
// its frame is written, so that the worker finds every object it is
// sent in the store. What a request refused by
// the encoder (too large, not expressible) or never written held is
// forgotten instead, by settleHeld after the exchange.
func (r *runner) commitHeld() { r.endHeld((*heldObjects).commit) }

// settleHeld ends the exchange of a request: the host objects it held
// that were not registered as it was written (commitHeld) were never
// sent, and are forgotten.
func (r *runner) settleHeld() { r.dropHeld() }

// dropHeld forgets the host objects of an answer that will not be sent:
// the current one's and those of the futures it took.
func (r *runner) dropHeld() { r.endHeld((*heldObjects).drop) }

// endHeld ends, by commit or drop, the hold of the current answer's host
// objects and of those of the futures it took.
func (r *runner) endHeld(end func(*heldObjects)) {
	for _, h := range r.held {
		end(h)
	}
	clear(r.held)
	r.held = r.held[:0]
	for i := range r.taken {
		f := r.taken[i].f
		end(f.held)
		f.held = nil
	}
}

func (r *runner) drive(ev *message.ChildEvent, err error) (*Result, error) {
	s := r.s
	for {
		if err != nil {
			return nil, err
		}
		var req message.Request
		r.what, r.taken = unsent.Subject{}, r.taken[:0]
		switch b := ev.Body.(type) {
		case *message.Complete:
			return &Result{Value: Value{Graph: &b.Values, Root: b.Value}, TotalExecution: s.stamps.TotalExecution}, nil
		case *message.Error:
			if s.cur() == StateSuspended {
				return nil, r.rejected(b.Exception)
			}
			return nil, &PythonError{Exception: b.Exception, Position: r.abortedAt, HostErr: r.hostErr(b.Exception)}
		case *message.TypingError:
			return nil, &TypeCheckError{Diagnostics: b.Diagnostics}
		case *message.FunctionCall:
			req = r.call(b)
		case *message.NameLookup:
			req = r.lookup(b)
		case *message.OsCall:
			req = r.osCall(b)
		case *message.ResolveFutures:
			req = r.resolve(b)
		case *message.Ok:
			return nil, errors.New("monty session: nothing to run (the session is idle)")
		default:
			return nil, fmt.Errorf("monty session: unexpected %s event", ev.Body.EventKind())
		}
		if r.ctx.Err() != nil || req == nil {
			r.dropHeld()
			return nil, r.abort()
		}
		if _, ok := req.(*message.AbortFeed); ok {
			r.abortedAt = message.PositionOrZero(suspensionPosition(ev))
		}
		ev, err = s.exchange(r.ctx, req)
		// An answer that could not be sent (nothing reached the worker)
		// is replaced, where the protocol lets a call or lookup be
		// answered with an exception, by the exception the sandbox
		// raises: at most a few times, each replacement smaller.
		for try := 0; try < 3 && err != nil && s.cur() == StateSuspended && !s.closed.Load(); try++ {
			if req = r.resend(req, err); req == nil {
				break
			}
			ev, err = s.exchange(r.ctx, req)
		}
		r.settleHeld()
		r.g.Reset()
		if err != nil && s.cur() == StateSuspended && !s.closed.Load() {
			// The answer could not be sent (too large for a frame, or not
			// expressible in this protocol version): nothing reached the
			// worker, so end the feed rather than leave it suspended.
			return nil, r.unsendable(err)
		}
	}
}

// resend returns the request to send in place of req, an answer to the
// suspension that the encoder refused with cause (over the frame cap, or
// not expressible in this protocol version: see notSent), or nil when
// there is none and the feed must end. A function call's or a name
// lookup's answer becomes a ValueError naming what could not be sent, as
// one with no Python equivalent is a TypeError, so that the sandbox's code
// can catch it. A ResumeFutures that holds several finished futures' results
// is sent one result at a time (the rest wait for the worker's next
// ResolveFutures), and a lone one is replaced as a call's answer is.
func (r *runner) resend(req message.Request, cause error) message.Request {
	var tl *RequestTooLargeError
	var ir *InvalidRequestError
	why := ""
	switch {
	case errors.As(cause, &tl):
		why = tl.Error()
	case errors.As(cause, &ir):
		why = ir.Err.Error()
	default:
		return nil
	}
	switch q := req.(type) {
	case *message.ResumeCall, *message.ResumeNameLookup:
		// The stand-in carries none of the answer's values: its host
		// objects are never sent.
		r.dropHeld()
		return r.what.StandIn(req, why)
	case *message.ResumeFutures:
		if len(q.Results) > 1 && len(r.taken) == len(q.Results) {
			// Only the first now; the others are finished futures again.
			first := r.taken[0]
			r.mu.Lock()
			for _, t := range r.taken[1:] {
				r.futures[t.id] = t.f
			}
			r.mu.Unlock()
			r.taken = r.taken[:1]
			res := first.f.res
			return &message.ResumeFutures{Results: []message.FutureResult{{CallID: first.id, Result: &res}}, Values: first.f.g}
		}
		if len(q.Results) != 1 || q.Results[0].Result == nil {
			return nil
		}
		fr := q.Results[0]
		if !unsent.Replaceable(fr.Result.Kind) {
			return nil
		}
		what := r.what
		if len(r.taken) == 1 {
			what = unsent.Function(r.taken[0].f.name)
		}
		r.dropHeld()
		return &message.ResumeFutures{Results: []message.FutureResult{{CallID: fr.CallID, Result: what.Result(fr.Result.Kind, why)}}}
	}
	return nil
}

// unsendable aborts the suspended feed whose answer could not be sent, and
// returns that error (the session survives, idle).
func (r *runner) unsendable(cause error) error {
	s := r.s
	exc := message.NewException("RuntimeError", "the host's answer could not be sent: "+cause.Error())
	s.tel.abortFails = true
	if err := s.abortFeed(r.ctx, exc, s.abortUnanswered()); err != nil {
		return err
	}
	return cause
}

// abortExpired is the cause of the context of an AbortFeed the parent
// sends on its own (abortFeed) when Config.AbortTimeout expires: err is
// the error of the turn whose worker was killed for not answering.
type abortExpired struct{ err error }

func (e *abortExpired) Error() string { return e.err.Error() }

// abortFeed sends the AbortFeed of exc, bounded by Config.AbortTimeout
// and not by ctx, which may already be done. A worker that has not
// answered by then is killed, and the turn fails with expired (see
// interrupted), recorded as the session's cause.
func (s *Session) abortFeed(ctx context.Context, exc *message.RaisedException, expired error) error {
	actx, cancel := context.WithTimeoutCause(context.WithoutCancel(ctx), s.cfg.AbortTimeout, &abortExpired{expired})
	defer cancel()
	_, err := s.exchange(actx, &message.AbortFeed{Exception: exc})
	return err
}

// abortUnanswered is the error of a turn whose worker did not answer,
// within Config.AbortTimeout, the AbortFeed the parent sent after a reply
// that could not be sent or that the worker refused: no context of the
// caller's ended, so it matches ErrTimeout and no context error.
func (s *Session) abortUnanswered() error {
	return &TimeoutError{Killed: true, Err: &abortTimeoutError{s.cfg.AbortTimeout}, abortTimeout: true}
}

// abortTimeoutError says that the worker did not answer an AbortFeed
// within Config.AbortTimeout.
type abortTimeoutError struct{ d time.Duration }

func (e *abortTimeoutError) Error() string {
	return "no answer to AbortFeed within the AbortTimeout of " + e.d.String()
}

// abort ends the suspended feed because the caller's context is done.
func (r *runner) abort() error {
	s := r.s
	cause := context.Cause(r.ctx)
	deadline := errors.Is(r.ctx.Err(), context.DeadlineExceeded)
	if s.closed.Load() {
		return s.closedErr()
	}
	if s.cur() != StateSuspended {
		return notDone(r.ctx)
	}
	s.aborted.Store(true)
	// The cause is the caller's text: make sure it can travel as a str.
	why := strings.ToValidUTF8(cause.Error(), "\uFFFD")
	exc := message.NewException("RuntimeError", "feed canceled by the host: "+why)
	if deadline {
		exc = message.NewException("TimeoutError", "host deadline exceeded: "+why)
	}
	pos := message.PositionOrZero(suspensionPosition(s.susp))
	// A worker that does not answer the abort is killed; the turn still
	// fails with the error the caller's context caused.
	var expired error = &CanceledError{Killed: true, Err: cause}
	if deadline {
		expired = &TimeoutError{Killed: true, Err: cause}
	}
	s.tel.abortFails = false // the caller's abort, in place of any the parent meant to send
	if err := s.abortFeed(r.ctx, exc, expired); err != nil {
		return err
	}
	if deadline {
		return &TimeoutError{Err: cause, Position: pos}
	}
	return &CanceledError{Err: cause, Position: pos}
}

// rejected handles a worker that refused our answer to its suspension (a
// protocol violation; it is still suspended): the feed is aborted and the
// refusal reported.
func (r *runner) rejected(exc *message.RaisedException) error {
	s := r.s
	abort := message.NewException("RuntimeError", "the host's reply was rejected: "+exc.Msg())
	s.tel.abortFails = true
	if err := s.abortFeed(r.ctx, abort, s.abortUnanswered()); err != nil {
		return err
	}
	return fmt.Errorf("monty session: the worker rejected the host's reply: %w", &PythonError{Exception: exc})
}

// invoke runs a host function, turning a panic into a RuntimeError.
func (r *runner) invoke(h *hostFunc, c *Call) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.s.log.Error("monty host function panicked", slog.String("function", h.name), slog.Any("panic", p))
			v, err = nil, message.NewException("RuntimeError", fmt.Sprintf("host function %s panicked: %v", h.name, p))
		}
	}()
	return h.fn(r.fctx, c)
}

// buildFeed builds the Feed of code with the run's inputs, which may hold
// host objects.
func (r *runner) buildFeed(code string) (*message.Feed, error) {
	feed := &message.Feed{Code: code}
	if err := checkInputNames(r.o.inputs); err != nil {
		return nil, err
	}
	// A Feed refused for one of its inputs registers none of the host
	// objects of any (see heldObjects).
	var held *heldObjects
	for _, in := range r.o.inputs {
		n := feed.Values.Len()
		root, h, err := r.encode(&feed.Values, in.Value, true, held)
		held = h
		if err == nil {
			err = outputOnlyInput(&feed.Values, n, root)
		}
		if err != nil {
			held.drop()
			return nil, &InvalidRequestError{Err: fmt.Errorf("input %q: %w", in.Name, err)}
		}
		feed.Inputs = append(feed.Inputs, message.NamedRef{Name: nfkc(in.Name), Value: root})
	}
	// Registered once the Feed is sent (see settleHeld).
	r.hold(held)
	return feed, nil
}

// ext converts the outcome of the host function name into an
// ExtFunctionResult whose value (if any) is added to g. A value that holds
// one the sandbox does not take back (a repr, a cycle placeholder) is
// answered with a TypeError instead (see outputOnlyCall). The conversion runs the caller's code too
// (an error's Error method, a value.GraphAppender): a panic there is a
// RuntimeError, as in the function itself, and g is left as it was.
//
// The new host objects of the value are returned held: the caller
// registers them once the answer has gone out, or forgets them (see
// settleHeld).
func (r *runner) ext(g *value.Graph, name string, v any, err error) (res message.ExtResult, held *heldObjects) {
	n := g.Len()
	defer func() {
		if p := recover(); p != nil {
			r.s.log.Error("monty host function result panicked", slog.Any("panic", p))
			g.Truncate(n)
			held.drop()
			res, held = message.ExtResult{Kind: message.ResultError,
				Error: message.NewException("RuntimeError", fmt.Sprintf("converting a host function's result panicked: %v", p))}, nil
		}
	}()
	if err != nil {
		return message.ExtResult{Kind: message.ResultError, Error: r.raise(err, "RuntimeError")}, nil
	}
	// A result answered with an error instead registers none of its
	// host objects (see heldObjects).
	root, held, cerr := r.encode(g, v, true, nil)
	if cerr != nil {
		if limit := (*HostObjectLimitError)(nil); errors.As(cerr, &limit) {
			return message.ExtResult{Kind: message.ResultError, Error: message.NewException("RuntimeError", limit.Error())}, nil
		}
		return message.ExtResult{Kind: message.ResultError,
			Error: typeError("host function returned a value with no Python equivalent: %s", conversionText(cerr))}, nil
	}
	if exc := outputOnlyCall(g, n, root, name); exc != nil {
		held.drop()
		g.Truncate(n)
		return message.ExtResult{Kind: message.ResultError, Error: exc}, nil
	}
	return message.ExtResult{Kind: message.ResultReturn, Value: root}, held
}

func (r *runner) call(fc *message.FunctionCall) message.Request {
	if fc.ObjectID != nil {
		return r.callObject(fc)
	}
	if req, ok := r.callBound(fc); ok {
		return req
	}
	h := r.o.funcs.fn(fc.FunctionName)
	if h == nil {
		if c := r.o.funcs.class(fc.FunctionName); c != nil {
			return r.construct(fc, c)
		}
		return &message.ResumeCall{CallID: fc.CallID,
			Result: &message.ExtResult{Kind: message.ResultNotFound, Name: fc.FunctionName}}
	}
	if h.async && !fc.AllowEagerAwait {
		c := &Call{Name: fc.FunctionName, CallID: fc.CallID, Args: fc.Args, Kwargs: fc.Kwargs, Position: message.PositionOrZero(fc.Position),
			Values: &fc.Values, r: r}
		r.startFuture(h, c)
		return &message.ResumeCall{CallID: fc.CallID,
			Result: &message.ExtResult{Kind: message.ResultFuture, Future: fc.CallID}}
	}
	if h.async {
		return r.answerEager(fc, h)
	}
	return r.answer(fc, h)
}

// answerEager answers an Async function's call that the worker awaits at
// once (protocol 4's eager await): the result is wanted now, but it is
// computed on a goroutine of its own, as every Async function runs, so
// that one ending its goroutine (runtime.Goexit) raises RuntimeError
// instead of ending the goroutine of Run.
func (r *runner) answerEager(fc *message.FunctionCall, h *hostFunc) message.Request {
	done := make(chan message.Request, 1)
	go func() {
		var req message.Request
		defer func() {
			if req == nil {
				res := goexitResult(h.name)
				req = &message.ResumeFutures{Results: []message.FutureResult{{CallID: fc.CallID, Result: &res}}}
			}
			done <- req
		}()
		req = r.answer(fc, h)
	}()
	return <-done
}

// goexitResult is the outcome of an Async host function whose goroutine
// ended without returning: it (or its result's conversion) called
// runtime.Goexit, say through t.FailNow.
func goexitResult(name string) message.ExtResult {
	return message.ExtResult{Kind: message.ResultError, Error: message.NewException("RuntimeError",
		fmt.Sprintf("host function %s ended its goroutine without returning (runtime.Goexit)", name))}
}

func (r *runner) startFuture(h *hostFunc, c *Call) {
	f := &future{name: h.name}
	r.mu.Lock()
	if r.futures == nil {
		r.futures = map[uint32]*future{}
		r.notify = make(chan struct{}, 1)
	}
	r.futures[c.CallID] = f
	notify := r.notify
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		var g value.Graph
		// The outcome if the goroutine ends without returning. The
		// future finishes either way, or the feed would wait for it
		// until its context ended.
		res := goexitResult(h.name)
		var held *heldObjects
		defer func() {
			r.mu.Lock()
			f.g, f.res, f.held, f.done = g, res, held, true
			r.mu.Unlock()
			select {
			case notify <- struct{}{}:
			default:
			}
		}()
		v, err := r.invoke(h, c)
		res, held = r.ext(&g, h.name, v, err)
	}()
}

// resolve waits until at least one of the pending futures has finished and
// answers every finished one. It returns nil when the context ends first,
// or Close or Kill cancels the run's host context.
func (r *runner) resolve(rf *message.ResolveFutures) message.Request {
	req := &message.ResumeFutures{}
	if len(rf.PendingCallIDs) == 0 {
		// The worker waits for no future this run can settle (one of an
		// earlier feed's, say): answer at once with nothing, which ends
		// the feed with the worker's RuntimeError, rather than wait for
		// futures it did not list.
		return req
	}
	for {
		r.mu.Lock()
		for _, id := range rf.PendingCallIDs {
			f, ok := r.futures[id]
			if !ok {
				req.Results = append(req.Results, message.FutureResult{CallID: id, Result: &message.ExtResult{
					Kind: message.ResultError, Error: message.NewException("RuntimeError",
						fmt.Sprintf("no host call is running for future %d", id))}})
				continue
			}
			if !f.done {
				continue
			}
			delete(r.futures, id)
			r.taken = append(r.taken, takenFuture{id, f})
			res := f.res
			if res.Kind == message.ResultReturn {
				res.Value += req.Values.Append(&f.g)
			}
			req.Results = append(req.Results, message.FutureResult{CallID: id, Result: &res})
		}
		notify := r.notify
		r.mu.Unlock()
		if len(req.Results) > 0 {
			return req
		}
		if notify == nil {
			// Nothing of ours is pending and the worker listed nothing.
			return req
		}
		if h := r.s.waitingHook; h != nil {
			h()
		}
		select {
		case <-notify:
		case <-r.fctx.Done():
			// The caller's context ended, or Close or Kill cancelled the
			// host context: a future whose wait that stopped (an
			// asyncio.sleep's) would never complete.
			return nil
		}
	}
}

func (r *runner) lookup(nl *message.NameLookup) message.Request {
	if nl.ObjectID != nil {
		return r.lookupObject(nl)
	}
	if v, ok := r.o.funcs.value(nl.Name); ok {
		return r.lookupValue(nl.Name, v)
	}
	if c := r.o.funcs.class(nl.Name); c != nil {
		return r.lookupValue(nl.Name, c)
	}
	if h := r.o.funcs.fn(nl.Name); h != nil {
		req := &message.ResumeNameLookup{Kind: message.LookupValue}
		req.Value = req.Values.Add(value.FunctionNode(value.Function{Name: nl.Name, Docstring: h.doc}))
		return req
	}
	return &message.ResumeNameLookup{Kind: message.LookupUndefined}
}

func (r *runner) osCall(oc *message.OsCall) message.Request {
	if oc.Op.IsSystemSleep() {
		return r.systemSleep(oc)
	}
	notHandled := &message.ResumeCall{CallID: oc.CallID, Result: &message.ExtResult{Kind: message.ResultNotHandled}}
	if r.o.os == nil {
		return notHandled
	}
	r.what = unsent.OS(oc.Op)
	rc, exc := r.handleOS(oc)
	switch {
	case r.ctx.Err() != nil:
		return nil
	case exc != nil:
		return &message.ResumeCall{CallID: oc.CallID, Result: &message.ExtResult{Kind: message.ResultError, Error: exc}}
	case rc == nil:
		return notHandled
	}
	rc.CallID = oc.CallID
	if res := rc.Result; res.Kind == message.ResultReturn {
		// The whole graph: the handler built it.
		if exc := outputOnlyResult(&rc.Values, 0, res.Value, r.what.String(), ""); exc != nil {
			return &message.ResumeCall{CallID: oc.CallID, Result: &message.ExtResult{Kind: message.ResultError, Error: exc}}
		}
	}
	if res := rc.Result; res.Kind == message.ResultError && res.Error != nil {
		// The handler's own exception, made what the worker takes as a
		// host function's error is.
		res.Error = exceptionFor(res.Error, "OSError")
	}
	return sleepFutureRefused(oc, rc)
}

// handleOS runs the OS handler and reads its outcome: a ResumeCall with a
// result, nil for not handled, or the exception to raise. Reading the
// handler's error runs its code too (Error, Is, As): a panic in either is
// a RuntimeError.
func (r *runner) handleOS(oc *message.OsCall) (rc *message.ResumeCall, exc *message.RaisedException) {
	defer func() {
		if p := recover(); p != nil {
			r.s.log.Error("monty OS handler panicked", slog.String("op", oc.Op.String()), slog.Any("panic", p))
			rc, exc = nil, message.NewException("RuntimeError", fmt.Sprintf("OS handler panicked: %v", p))
		}
	}()
	rc, err := r.o.os.HandleOS(message.ContextWithPolicy(r.fctx, r.s.policyInForce()), oc)
	switch {
	case errors.Is(err, ErrNotHandled), err == nil && (rc == nil || rc.Result == nil):
		return nil, nil
	case err != nil:
		return nil, r.raise(err, "OSError")
	}
	return rc, nil
}

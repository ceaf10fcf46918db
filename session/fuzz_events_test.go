package session

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// FuzzEventSequence plays an arbitrary sequence of event frames to the
// session from an in-memory child, in reply to Run, and checks what the
// parent promises for every byte a child sends: no panic, Run returns
// (quickly, the child has nothing to block on), every error is one of the
// typed errors, a session that does not survive is closed with its worker
// stopped, one that survives is idle (Run never leaves a feed suspended),
// and every request the parent sends is well formed and answers what was
// asked.
//
// Input layout:
//
//	byte 0  flags: bit 0 protocol 4 (else 2); bit 1 deal every frame at
//	        the first Feed (else one turn per request); bit 2 the child
//	        reports unread bytes (Pending); bits 3-5 max_suspensions
//	        (0: default); bits 6-7 how the child exits once it has no more
//	        frames: 0 status 0, 1 status 65 (memory), 2 status 76, 3 SIGKILL
//	byte 1  number of frames (bits 0-6); bit 7 protocol 5 (whatever
//	        bit 0 of the flags says)
//	then    per frame, a 2-byte little-endian length and the frame body
//	        (a ChildEvent without its length prefix)
//
// In turn mode the child answers each request with the next frames up to
// and including the first that is not a Print (or does not decode); when
// it has no frames left it closes its stdout, so the parent always meets
// EOF eventually.
func FuzzEventSequence(f *testing.F) {
	for _, seed := range eventSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		playSequence(t, data)
	})
}

// Flags of the fuzz input's first byte.
const (
	seqV4      = 1 << 0
	seqDealAll = 1 << 1
	seqPending = 1 << 2
)

// seqV5 marks a protocol-5 sequence in its frame-count byte.
const seqV5 = 0x80

func seqMaxSusp(flags byte) uint64 { return uint64(flags>>3) & 7 }

// seqVersion is the protocol version of a sequence.
func seqVersion(data []byte) uint32 {
	switch {
	case len(data) >= 2 && data[1]&seqV5 != 0:
		return 5
	case len(data) >= 1 && data[0]&seqV4 != 0:
		return 4
	}
	return 2
}

// seqMaxSleep is the sleep budget of the fuzzed sessions (protocol 5): a
// system sleep the input asks for is either refused or waited out at once.
const seqMaxSleep = time.Millisecond

func seqExit(flags byte) worker.Exit {
	switch flags >> 6 {
	case 1:
		return worker.Exit{Code: 65}
	case 2:
		return worker.Exit{Code: 76}
	case 3:
		return worker.Exit{Code: -1, Signal: syscall.SIGKILL}
	}
	return worker.Exit{Code: 0}
}

// splitSequence parses the input into its flags and frames.
func splitSequence(data []byte) (flags byte, frames [][]byte) {
	if len(data) < 2 {
		return 0, nil
	}
	flags, n, rest := data[0], int(data[1]&^seqV5), data[2:]
	for i := 0; i < n && len(rest) >= 2; i++ {
		l := int(binary.LittleEndian.Uint16(rest))
		rest = rest[2:]
		l = min(l, len(rest))
		frames = append(frames, rest[:l:l])
		rest = rest[l:]
	}
	return flags, frames
}

// joinSequence builds a fuzz input.
func joinSequence(flags byte, frames ...[]byte) []byte {
	out := []byte{flags, byte(len(frames))}
	for _, fr := range frames {
		out = binary.LittleEndian.AppendUint16(out, uint16(len(fr)))
		out = append(out, fr...)
	}
	return out
}

// seqChild is an in-memory worker that answers from a fixed sequence of
// frames. It needs no goroutine: reads never block (no frame left is EOF).
type seqChild struct {
	t           *testing.T
	codec       codec.Codec
	lim         codec.Limits
	maxFrameLen int // 0: the protocol's
	dealAll     bool
	pending     bool
	exit        worker.Exit

	mu         sync.Mutex
	frames     [][]byte // not yet dealt
	queue      []queued // dealt, not yet read
	configured bool
	expect     *message.ChildEvent // the last turn-ending event dealt
	// onEmptyResolve, when set, is called (with the request count) when
	// the parent reads a ResolveFutures listing no call id.
	onEmptyResolve func(requests int)
	killed         bool
	closed         bool
	requests       int
}

func (c *seqChild) Pid() int { return 7 }

// launch returns a Launch that hands out c, pinned to version v.
func (c *seqChild) launch(v uint32) Launch {
	return Launch{ProtocolVersion: v, Launcher: LauncherFunc(func(context.Context) (Peer, error) { return c, nil })}
}

// Conn returns c's frame side.
func (c *seqChild) Conn() transport.Conn { return seqConn{c} }

// seqConn is a seqChild as a transport.Conn.
type seqConn struct{ c *seqChild }

func (s seqConn) ReadFrame() ([]byte, error)   { return s.c.ReadFrame() }
func (s seqConn) WriteFrame(body []byte) error { return s.c.WriteFrame(body) }
func (s seqConn) Pending() bool                { return s.c.Pending() }
func (s seqConn) Close() error                 { return nil }
func (s seqConn) MaxFrameLen() int {
	if s.c.maxFrameLen > 0 {
		return s.c.maxFrameLen
	}
	return protocol.MaxFrameLen
}

func (c *seqChild) ReadFrame() ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.killed || len(c.queue) == 0 {
		return nil, io.EOF
	}
	q := c.queue[0]
	c.queue = c.queue[1:]
	if q.emptyResolve && c.onEmptyResolve != nil {
		c.onEmptyResolve(c.requests)
	}
	return q.b, nil
}

// queued is a frame dealt to the parent.
type queued struct {
	b []byte
	// emptyResolve: the frame is a ResolveFutures listing no call id.
	emptyResolve bool
}

func (c *seqChild) Pending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending && len(c.queue) > 0
}

func (c *seqChild) WriteFrame(body []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.killed || c.closed {
		return syscall.EPIPE
	}
	c.requests++
	req, err := c.codec.DecodeRequest(body, codec.Limits{})
	if err != nil {
		c.t.Errorf("the parent sent an undecodable request: %v\n%x", err, body)
		return syscall.EPIPE
	}
	if _, ok := req.Body.(*message.Configure); ok && !c.configured {
		c.configured = true
		ok, _ := c.codec.AppendEvent(nil, &message.ChildEvent{Body: &message.Ok{}})
		c.queue = append(c.queue, queued{b: ok})
		return nil
	}
	if !c.dealAll {
		c.checkAnswer(req)
	}
	c.deal()
	return nil
}

// checkAnswer checks that req fits the turn-ending event the child dealt
// last (turn mode only, where the child knows what the parent read).
func (c *seqChild) checkAnswer(req *message.ParentRequest) {
	last := c.expect
	c.expect = nil
	if _, ok := req.Body.(*message.AbortFeed); ok {
		if last == nil || !(last.Body.EventKind().IsSuspension() || isError(last)) {
			c.t.Errorf("AbortFeed after %v", kindOf(last))
		}
		return
	}
	if last == nil {
		if _, ok := req.Body.(*message.Feed); !ok {
			c.t.Errorf("%T sent with no suspension", req.Body)
		}
		return
	}
	switch e := last.Body.(type) {
	case *message.FunctionCall:
		switch r := req.Body.(type) {
		case *message.ResumeCall:
			if r.CallID != e.CallID {
				c.t.Errorf("ResumeCall for call %d, the worker asked %d", r.CallID, e.CallID)
			}
		case *message.ResumeFutures:
			if !e.AllowEagerAwait || len(r.Results) != 1 || r.Results[0].CallID != e.CallID {
				c.t.Errorf("ResumeFutures %+v answers FunctionCall %d (eager %v)", r.Results, e.CallID, e.AllowEagerAwait)
			}
		default:
			c.t.Errorf("%T answers a FunctionCall", req.Body)
		}
	case *message.OsCall:
		if r, ok := req.Body.(*message.ResumeCall); !ok || r.CallID != e.CallID {
			c.t.Errorf("%T answers OsCall %d", req.Body, e.CallID)
		}
	case *message.NameLookup:
		if _, ok := req.Body.(*message.ResumeNameLookup); !ok {
			c.t.Errorf("%T answers a NameLookup", req.Body)
		}
	case *message.ResolveFutures:
		r, ok := req.Body.(*message.ResumeFutures)
		if !ok {
			c.t.Errorf("%T answers ResolveFutures", req.Body)
			break
		}
		for _, fr := range r.Results {
			if !slices.Contains(e.PendingCallIDs, fr.CallID) {
				c.t.Errorf("ResumeFutures resolves %d, the worker listed %v", fr.CallID, e.PendingCallIDs)
			}
		}
	default:
		// A turn that ended (Complete, Error, ...) ends the Run unless the
		// parent aborts (handled above): only a new Feed may follow.
		if _, ok := req.Body.(*message.Feed); !ok {
			c.t.Errorf("%T sent after %v", req.Body, kindOf(last))
		}
	}
}

func isError(ev *message.ChildEvent) bool {
	_, ok := ev.Body.(*message.Error)
	return ok
}

func kindOf(ev *message.ChildEvent) string {
	if ev == nil {
		return "nothing"
	}
	if ev.Body == nil {
		return "an event with no kind"
	}
	return ev.Body.EventKind().String()
}

// deal moves the next turn's frames (or all of them) to the read queue.
func (c *seqChild) deal() {
	for len(c.frames) > 0 {
		b := c.frames[0]
		c.frames = c.frames[1:]
		ev, err := c.codec.DecodeEvent(b, c.lim)
		q := queued{b: b}
		if err == nil {
			rf, ok := ev.Body.(*message.ResolveFutures)
			q.emptyResolve = ok && len(rf.PendingCallIDs) == 0
		}
		c.queue = append(c.queue, q)
		if c.dealAll {
			continue
		}
		if err != nil {
			return // the parent gives up on it
		}
		if _, ok := ev.Body.(*message.Print); ok {
			continue
		}
		if ev.Body != nil {
			c.expect = ev
		}
		return
	}
}

func (c *seqChild) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.killed {
		c.killed = true
		if !c.closed {
			c.exit = worker.Exit{Code: -1, Signal: syscall.SIGKILL}
		}
	}
	return nil
}

func (c *seqChild) Close(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

func (c *seqChild) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Lost classifies the loss like a process would, with the base the
// goroutine fake uses.
func (c *seqChild) Lost(l transport.Loss) error {
	if l.Announced {
		return classify(l, worker.Exit{Code: 101})
	}
	c.mu.Lock()
	exit := c.exit
	c.mu.Unlock()
	return classify(l, exit)
}

// seqRegistry is what the sandbox can call: a plain function, an async
// one, one that echoes its argument back (so values the worker sent travel
// back in a request), one that fails, one whose answer can exceed the
// frame cap, and a value.
func seqRegistry() *Registry {
	r := NewRegistry()
	r.MustRegister("f", func() int { return 1 })
	r.MustRegister("g", func(ctx context.Context) (int, error) { return 2, nil }, Async())
	r.MustRegister("echo", func(ctx context.Context, c *Call) (any, error) {
		if c.NumArgs() == 0 {
			return nil, nil
		}
		return c.Arg(0), nil
	})
	r.MustRegister("boom", func() error { return errors.New("boom") })
	// big(n) answers with an n-byte str: past seqFrameCap its ResumeCall
	// does not fit a frame.
	r.MustRegister("big", func(n int) string { return strings.Repeat("x", min(max(n, 0), 1<<20)) })
	r.SetValue("limit", 10)
	return r
}

// typedOutcome reports whether err is one of the errors a Run may return.
func typedOutcome(err error) bool {
	var (
		py  *PythonError
		tc  *TypeCheckError
		sl  *SuspensionLimitError
		ir  *InvalidRequestError
		rt  *RequestTooLargeError
		pe  *ProtocolError
		ce  *worker.CrashError
		me  *worker.MemoryLimitError
		te  *TimeoutError
		can *CanceledError
	)
	return errors.As(err, &py) || errors.As(err, &tc) || errors.As(err, &sl) || errors.As(err, &ir) ||
		errors.As(err, &rt) || errors.As(err, &pe) || errors.As(err, &ce) || errors.As(err, &me) ||
		errors.As(err, &te) || errors.As(err, &can) || errors.Is(err, ErrClosed)
}

// seqFrameCap is the frame cap of the fuzzed sessions: above every frame
// the input can carry (2-byte lengths), below what big() can answer.
const seqFrameCap = 1 << 16

// Time bounds. Against the in-memory child a Run takes microseconds, but
// the seed corpus runs as a test on CI's two busy cores under -race, where
// a goroutine can wait seconds for a CPU: a 1 s deadline was within reach
// of a Run that was only slow. Only a hang (which never ends) is meant to
// reach these, so they are far from both.
const (
	// seqRunDeadline is the context deadline of every Run: only a hang
	// reaches it, and it fails the input.
	seqRunDeadline = 10 * time.Second
	// seqRunLimit is when a Run that ignored its deadline fails the test.
	seqRunLimit = 20 * time.Second
	// seqExecLimit bounds one whole input.
	seqExecLimit = 4 * seqRunLimit
)

// runMayHangOnEmptyResolve admits a known hang in Run: a ResolveFutures
// event that lists no call ids, while futures of the feed exist (all of
// them finished, their wake-up already consumed), leaves Run waiting for a
// future to finish that it is not waiting for. Nothing but the caller's
// context ends the wait: not the worker (it waits for the answer), and not
// Close or Kill from another goroutine, which cancel the host functions'
// context but not the caller's. With a context that never ends, Run never
// returns. runBounded cuts such a Run short by cancelling its context with
// errKnownHang, which checkOutcome accepts. Set it to false once Run answers
// an empty ResolveFutures (or refuses it) at once.
const runMayHangOnEmptyResolve = false

func playSequence(t *testing.T, data []byte) {
	// A hang anywhere (not just in Run) must fail the input rather than
	// stall the fuzzer, which has no per-input timeout: crash the process
	// with every goroutine's stack.
	hang := time.AfterFunc(seqExecLimit, func() {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		panic(fmt.Sprintf("FuzzEventSequence: input %x still running after %v\n%s", data, seqExecLimit, buf))
	})
	defer hang.Stop()
	flags, frames := splitSequence(data)
	v := seqVersion(data)
	cfg := Config{
		Limits:         Limits{MaxSuspensions: seqMaxSusp(flags), MaxTotalSleep: seqMaxSleep},
		MaxDecodeBytes: 16 << 20,
		Logger:         quietLogger,
	}
	cd, _ := codec.ForVersion(v)
	c := &seqChild{t: t, codec: cd, lim: cfg.codecLimits(seqFrameCap), maxFrameLen: seqFrameCap, frames: frames,
		dealAll: flags&seqDealAll != 0, pending: flags&seqPending != 0, exit: seqExit(flags)}
	s, err := Start(context.Background(), c.launch(v), cfg)
	if err != nil {
		t.Fatalf("start on the in-memory child: %v", err)
	}
	defer s.Close()
	reg := seqRegistry()
	// Up to three feeds, while the session lasts and frames are left.
	for i := 0; i < 3; i++ {
		res, err := runBounded(t, s, c, reg)
		checkOutcome(t, s, c, res, err)
		if s.State() != StateIdle {
			break
		}
		c.mu.Lock()
		left := len(c.frames) + len(c.queue)
		c.mu.Unlock()
		if left == 0 {
			break
		}
	}
	s.Close()
	if !c.isClosed() {
		t.Error("Close did not stop the child")
	}
}

// errKnownHang is the cancel cause of a Run stuck in the known hang.
var errKnownHang = errors.New("stuck on an empty ResolveFutures (runMayHangOnEmptyResolve)")

// emptyResolveWait is how long TestEmptyResolveFuturesHang waits for its Run
// to end by itself: with the hang admitted, briefly, as the hang is
// expected; with it closed, hangBound, as only a hang takes that long and
// a slow machine may take more than a moment.
func emptyResolveWait() time.Duration {
	if runMayHangOnEmptyResolve {
		return 300 * time.Millisecond
	}
	return hangBound
}

// knownHangWait is how long a Run may go without sending a request after
// it read an empty ResolveFutures before it counts as stuck in the known
// hang.
const knownHangWait = 50 * time.Millisecond

// runBounded runs "f()" with a context deadline of seqRunDeadline and fails
// the test if Run has not returned by seqRunLimit. Against the in-memory
// child nothing blocks, so a Run that reaches its deadline is a hang. The
// one known hang (see runMayHangOnEmptyResolve) is cut short: when Run has
// sent nothing for knownHangWait after it read an empty ResolveFutures,
// its context is cancelled with errKnownHang, which
// checkOutcome accepts while the gap is admitted.
func runBounded(t *testing.T, s *Session, c *seqChild, reg *Registry) (*Result, error) {
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	ctx, cancelDeadline := context.WithTimeout(context.Background(), seqRunDeadline)
	defer cancelDeadline()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// Only while the hang is admitted: the 50 ms it allows a Run to send
	// its next request is no bound for a Run that is only slow, and with
	// the gap closed a hang there is caught at the deadline like any other.
	if runMayHangOnEmptyResolve {
		c.mu.Lock()
		c.onEmptyResolve = func(requests int) {
			time.AfterFunc(knownHangWait, func() {
				c.mu.Lock()
				stuck := c.requests == requests
				c.mu.Unlock()
				if stuck {
					cancel(errKnownHang)
				}
			})
		}
		c.mu.Unlock()
	}
	defer func() {
		c.mu.Lock()
		c.onEmptyResolve = nil
		c.mu.Unlock()
	}()
	go func() {
		res, err := s.Run(ctx, "f()", WithFunctions(reg))
		done <- outcome{res, err}
	}()
	timer := time.NewTimer(seqRunLimit)
	defer timer.Stop()
	select {
	case o := <-done:
		return o.res, o.err
	case <-timer.C:
		s.Kill() // release it, so the failure report is not followed by a hang
		t.Fatalf("Run did not return within %v, %v past its deadline", seqRunLimit, seqRunLimit-seqRunDeadline)
		return nil, nil
	}
}

func checkOutcome(t *testing.T, s *Session, c *seqChild, res *Result, err error) {
	t.Helper()
	st := s.State()
	switch {
	case err == nil:
		if res == nil {
			t.Fatal("Run returned neither a result nor an error")
		}
		_ = res.Repr() // any value that decoded renders
		if st != StateIdle {
			t.Fatalf("state %v after a successful Run", st)
		}
	case !typedOutcome(err):
		t.Fatalf("untyped error %T: %v", err, err)
	case errors.Is(err, context.DeadlineExceeded):
		t.Fatalf("Run only returned at its deadline (%v): a hang", err)
	case errors.Is(err, errKnownHang):
		if !runMayHangOnEmptyResolve {
			t.Fatalf("Run hangs on an empty ResolveFutures: %v", err)
		}
		// The known hang, cut short: the feed is aborted (the session
		// survives) or, had the worker been computing, killed.
		if Survives(err) != (st == StateIdle) || (!Survives(err) && st != StateClosed) {
			t.Fatalf("state %v after %v", st, err)
		}
	case Survives(err):
		if st != StateIdle {
			t.Fatalf("state %v after %T (%v), which the session survives: a Run must not leave a feed suspended", st, err, err)
		}
	default:
		if st != StateClosed {
			t.Fatalf("state %v after %T (%v), which the session does not survive", st, err, err)
		}
		if !c.isClosed() {
			t.Fatalf("the worker was not stopped after %v", err)
		}
		if cause := s.Cause(); cause == nil {
			t.Fatalf("closed session has no Cause after %v", err)
		}
	}
}

// Seeds: valid sequences built with the codecs, and some broken ones.

func eventSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, v := range []uint32{2, 4, 5} {
		cd, _ := codec.ForVersion(v)
		flag := byte(0)
		if v == 4 {
			flag = seqV4
		}
		// join is joinSequence at version v.
		join := func(flags byte, frames ...[]byte) []byte {
			seq := joinSequence(flags, frames...)
			if v == 5 {
				seq[1] |= seqV5
			}
			return seq
		}
		enc := func(b message.Event) []byte {
			out, err := cd.AppendEvent(nil, stamp(ev(b), 1000))
			if err != nil {
				tb.Fatalf("v%d: encoding %T: %v", v, b, err)
			}
			return out
		}
		complete := func(n value.Node) []byte {
			c := &message.Complete{}
			c.Value = c.Values.Add(n)
			return enc(c)
		}
		call := func(name string, id uint32, args ...value.Node) []byte {
			fc := &message.FunctionCall{FunctionName: name, CallID: id}
			for _, a := range args {
				fc.Args = append(fc.Args, fc.Values.Add(a))
			}
			return enc(fc)
		}
		print := func(text string) []byte {
			return enc(&message.Print{Segments: []message.PrintSegment{{Stream: message.StreamStdout, Text: text}}})
		}
		pyerr := func(typ, msg string) []byte { return enc(&message.Error{Exception: message.NewException(typ, msg)}) }
		cycle := func() []byte {
			fc := &message.FunctionCall{FunctionName: "echo", CallID: 0}
			// [[...]]: a list holding itself, as protocol 2 reports it.
			fc.Args = append(fc.Args, fc.Values.Add(value.List()))
			fc.Values.Node(fc.Args[0]).SetRefs([]value.NodeID{fc.Values.Add(value.Cycle("[...]"))})
			return enc(fc)
		}
		withDur := func(b []byte, maxDur, total uint64) []byte {
			e, err := cd.DecodeEvent(b, codec.Limits{})
			if err != nil {
				tb.Fatal(err)
			}
			if v == 5 {
				// Protocol 5's feed budget, echoed, and its feed clock.
				e.MaxFeedDurationMicros, e.FeedExecutionMicros = &maxDur, total
			} else {
				e.MaxDurationMicros = &maxDur
			}
			e.TotalExecutionMicros = total
			out, err := cd.AppendEvent(nil, e)
			if err != nil {
				tb.Fatal(err)
			}
			return out
		}
		eager := &message.FunctionCall{FunctionName: "g", CallID: 3, AllowEagerAwait: v >= 4}
		seeds = append(seeds,
			join(flag, complete(value.Int(3))),
			join(flag, print("a\n"), print("b"), complete(value.Str("done"))),
			join(flag, call("f", 0), complete(value.Int(1))),
			join(flag, call("g", 1), enc(&message.ResolveFutures{PendingCallIDs: []uint32{1}}), complete(value.Int(2))),
			join(flag, call("g", 1), call("g", 2), enc(&message.ResolveFutures{PendingCallIDs: []uint32{1, 2, 9}}), complete(value.None())),
			join(flag, enc(eager), complete(value.Int(2))),
			join(flag, enc(&message.NameLookup{Name: "limit"}), complete(value.Int(10))),
			join(flag, enc(&message.NameLookup{Name: "nosuch"}), pyerr("NameError", "name 'nosuch' is not defined")),
			join(flag, enc(&message.OsCall{CallID: 4, Op: message.OpExists, Path: "/etc/passwd"}), complete(value.Bool(false))),
			join(flag, call("boom", 0), pyerr("RuntimeError", "boom")),
			join(flag, call("echo", 0, value.Str("hi")), complete(value.Str("hi"))),
			join(flag, call("big", 0, value.Int(100)), complete(value.Int(100))),
			join(flag, call("big", 0, value.Int(100_000)), pyerr("RuntimeError", "too large"), complete(value.Int(1))),
			join(flag, cycle(), complete(value.None())),
			join(flag, call("nosuch", 0), pyerr("NameError", "name 'nosuch' is not defined")),
			join(flag, pyerr("ZeroDivisionError", "division by zero"), complete(value.Int(1))),
			join(flag, enc(&message.TypingError{Diagnostics: "error[invalid-assignment]"})),
			join(flag, enc(&message.FatalError{Message: "child panicked: boom"})),
			join(flag|1<<6, call("f", 0)), // then exit 65
			join(flag|3<<6, print("x")),   // then SIGKILL
			// Suspension limit 2: the third call is aborted.
			join(flag|2<<3, call("f", 0), call("f", 1), call("f", 2), pyerr("RuntimeError", "suspension limit 2 exceeded")),
			// The worker rejects the host's answer, then the abort.
			join(flag, call("f", 0), pyerr("RuntimeError", "protocol violation: ResumeCall call_id 0 does not match 1"),
				pyerr("RuntimeError", "the host's reply was rejected")),
			// Turn-structure violations.
			join(flag, enc(&message.Ok{})),
			join(flag, enc(&message.DumpResult{State: []byte("MONTY")})),
			join(flag, call("f", 0), enc(&message.Ok{})),
			join(flag, call("f", 0), call("f", 7)),
			join(flag|seqPending|seqDealAll, complete(value.Int(1)), complete(value.Str("stray"))),
			join(flag|seqDealAll, call("f", 0), complete(value.Int(1)), complete(value.Int(2))),
			join(flag, enc(&message.Error{})),
			// The watchdog's stamps.
			join(flag, withDur(call("f", 0), 50_000, 10_000), complete(value.Int(1))),
			join(flag, withDur(complete(value.Int(1)), 1, 5)),
			// Broken frames.
			join(flag, []byte{}),
			join(flag, []byte{0x32, 0x05, 0xff}),
			join(flag, call("f", 0)[:5]),
			join(flag, complete(value.Int(1)), complete(value.Int(2)), complete(value.Int(3))),
			join(flag),
		)
		if v == 5 {
			sleep := func(op message.OsOp, id uint32, secs float64) []byte {
				return enc(&message.OsCall{CallID: id, Op: op, Seconds: secs,
					Position: &message.SourceRange{Filename: "<python-input-0>", Start: 0, End: 3}})
			}
			echo := func(b []byte, feed, turn, sleep uint64) []byte {
				e, err := cd.DecodeEvent(b, codec.Limits{})
				if err != nil {
					tb.Fatal(err)
				}
				e.MaxFeedDurationMicros, e.MaxTurnDurationMicros, e.MaxTotalSleepMicros = &feed, &turn, &sleep
				out, err := cd.AppendEvent(nil, e)
				if err != nil {
					tb.Fatal(err)
				}
				return out
			}
			seeds = append(seeds,
				// A system sleep within the budget, waited out; one past it,
				// refused (AbortFeed) and the worker's answer to that.
				join(flag, sleep(message.OpSystemSleep, 1, 0.0001), complete(value.None())),
				join(flag, sleep(message.OpSystemSleep, 1, 5), pyerr("TimeoutError", "sleep limit exceeded: 5s > 1ms")),
				join(flag, sleep(message.OpSystemSleep, 1, 9.2e9), pyerr("TimeoutError", "sleep limit exceeded")),
				// An async system sleep, its future and the wait for it.
				join(flag, sleep(message.OpAsyncSystemSleep, 2, 0.0001), enc(&message.ResolveFutures{PendingCallIDs: []uint32{2}}), complete(value.None())),
				join(flag, sleep(message.OpAsyncSystemSleep, 2, 0), complete(value.None())),
				// call_host time and sleeps, for the OS handler.
				join(flag, enc(&message.OsCall{CallID: 3, Op: message.OpTime, Caller: "time.monotonic"}), complete(value.Float(1))),
				join(flag, sleep(message.OpSleep, 4, 0.5), complete(value.None())),
				join(flag, enc(&message.OsCall{CallID: 5, Op: message.OpAsyncSleep, Seconds: 0.5, AllowEagerAwait: true}), complete(value.None())),
				// Echoed limits, a lower sleep budget among them.
				join(flag, echo(call("f", 0), 1_000_000, 1_000_000, 1), sleep(message.OpSystemSleep, 1, 0.0001), complete(value.Int(1))),
				join(flag, echo(withDur(call("f", 0), 50_000, 10_000), 1, 1, 0), complete(value.Int(1))),
			)
		}
	}
	return seeds
}

// TestEventSequenceSeedsAreValid keeps the seed builders honest: the valid
// sequences end in the results they were built for.
func TestEventSequenceSeedsAreValid(t *testing.T) {
	for _, ver := range []uint32{2, 4, 5} {
		for _, c := range []struct {
			frames func(cd codec.Codec) [][]byte
			want   string
		}{
			{func(cd codec.Codec) [][]byte { return [][]byte{mustEnc(t, cd, completeInt(3))} }, "3"},
			{func(cd codec.Codec) [][]byte {
				return [][]byte{mustEnc(t, cd, funcCall("f", 0)), mustEnc(t, cd, completeInt(1))}
			}, "1"},
		} {
			v := byte(0)
			if ver == 4 {
				v = seqV4
			}
			t.Run(fmt.Sprintf("v%d/%s", ver, c.want), func(t *testing.T) {
				cd, _ := codec.ForVersion(ver)
				data := joinSequence(v, c.frames(cd)...)
				if ver == 5 {
					data[1] |= seqV5
				}
				flags, frames := splitSequence(data)
				if flags != v || len(frames) != len(c.frames(cd)) || seqVersion(data) != ver {
					t.Fatalf("split: %d frames", len(frames))
				}
				// Play it and look at the result.
				got := playForResult(t, data)
				if got != c.want {
					t.Fatalf("v%d: got %s, want %s", ver, got, c.want)
				}
			})
		}
	}
	// Every committed seed plays without failing the invariants.
	for i, seed := range eventSeeds(t) {
		t.Run(fmt.Sprint(i), func(t *testing.T) { playSequence(t, seed) })
	}
}

func mustEnc(t *testing.T, cd codec.Codec, e *message.ChildEvent) []byte {
	t.Helper()
	b, err := cd.AppendEvent(nil, e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func playForResult(t *testing.T, data []byte) string {
	_, frames := splitSequence(data)
	v := seqVersion(data)
	cd, _ := codec.ForVersion(v)
	cfg := Config{Logger: quietLogger}
	c := &seqChild{t: t, codec: cd, lim: cfg.codecLimits(0), frames: frames}
	s, err := Start(context.Background(), c.launch(v), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := runBounded(t, s, c, seqRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return res.Repr()
}

// TestEmptyResolveFuturesHang pins down the hang runMayHangOnEmptyResolve
// admits: an async call whose future has finished, then a ResolveFutures
// listing nothing. Run should answer at once (or refuse the event); today
// it waits until the caller's context ends, and Close does not release it.
func TestEmptyResolveFuturesHang(t *testing.T) {
	cd, _ := codec.ForVersion(2)
	enc := func(e *message.ChildEvent) []byte { return mustEnc(t, cd, e) }
	frames := [][]byte{
		enc(funcCall("g", 1)),
		enc(stamp(ev(&message.ResolveFutures{}), 1000)),
		enc(completeInt(1)),
	}
	cfg := Config{Logger: quietLogger}
	c := &seqChild{t: t, codec: cd, lim: cfg.codecLimits(0), frames: frames}
	s, err := Start(context.Background(), c.launch(2), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := s.Run(ctx, "f()", WithFunctions(seqRegistry()))
		done <- outcome{r, err}
	}()
	select {
	case o := <-done:
		// Fixed: the Run ended by itself.
		if o.err != nil && !typedOutcome(o.err) {
			t.Fatalf("untyped error %T: %v", o.err, o.err)
		}
		if st := s.State(); st != StateIdle && st != StateClosed {
			t.Fatalf("state %v", st)
		}
		return
	case <-time.After(emptyResolveWait()):
	}
	if !runMayHangOnEmptyResolve {
		t.Fatal("Run hangs on an empty ResolveFutures")
	}
	// Close must interrupt a Run in flight.
	s.Close()
	select {
	case o := <-done:
		t.Logf("known hang on an empty ResolveFutures; Close released it: %v", o.err)
		if !errors.Is(o.err, ErrClosed) && !typedOutcome(o.err) {
			t.Fatalf("after Close: %T %v", o.err, o.err)
		}
		return
	case <-time.After(300 * time.Millisecond):
	}
	t.Logf("known hang on an empty ResolveFutures: Run still blocked 300ms after Close; only the caller's context releases it")
	cancel()
	select {
	case o := <-done:
		if !typedOutcome(o.err) || !errors.Is(o.err, context.Canceled) {
			t.Fatalf("after cancel: %T %v", o.err, o.err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Run still blocked after its context was cancelled")
	}
}

//go:build unix

package conform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// rt is the state of one running rule. Its methods end the rule (with
// runtime.Goexit) on the first failed expectation, so a check reads as a
// straight sequence of steps.
type rt struct {
	ctx     context.Context
	target  Target
	Version uint32
	cd      codec.Codec
	lim     codec.Limits

	mu     sync.Mutex
	conns  []conn
	killed bool // killAll ran: a session opened later is killed at once
	status Status
	detail string
	step   string
}

func (t *rt) setResult(st Status, detail string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != Pass {
		return // the first verdict wins
	}
	t.status, t.detail = st, detail
}

func (t *rt) result() (Status, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.detail
}

func (t *rt) lastStep() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.step == "" {
		return "before the first request"
	}
	return "last step: " + t.step
}

func (t *rt) noteStep(s string) {
	t.mu.Lock()
	t.step = s
	t.mu.Unlock()
}

// Failf fails the rule with a message of the form "expected …, got …" and
// ends it.
func (t *rt) Failf(format string, args ...any) {
	t.setResult(Fail, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// Skipf marks the rule skipped and ends it.
func (t *rt) Skipf(format string, args ...any) {
	t.setResult(Skip, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (t *rt) closeAll() {
	t.mu.Lock()
	cs := t.conns
	t.conns = nil
	t.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() { defer wg.Done(); c.Close() }()
	}
	wg.Wait()
}

// killAll kills every session of the rule, those it opens later too: a
// rule that was starting a worker as its time ran out (or the run was
// canceled) registers it after this, and would otherwise wait on it
// with nothing left to end the wait.
func (t *rt) killAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.killed = true
	for _, c := range t.conns {
		c.kill()
	}
}

// sess is one session with the worker: one process or one connection.
type sess struct {
	t *rt
	c conn
	n int // requests sent, for step notes
	// outClosed is set once the kit has closed its end of the worker's
	// output (nothing more can be read).
	outClosed bool
}

// Open starts a fresh worker session without configuring it.
func (t *rt) Open() *sess {
	c, err := t.target.open(t.ctx)
	if err != nil {
		t.Failf("expected a worker session to start, got %v", err)
	}
	t.mu.Lock()
	t.conns = append(t.conns, c) // closed by closeAll as the rule ends
	killed := t.killed
	t.mu.Unlock()
	if killed {
		// The rule was ended while this worker started: its verdict is
		// set already (the first one wins), so this one only ends it.
		c.kill()
		t.Failf("expected a worker session to start, got one after the rule was ended")
	}
	return &sess{t: t, c: c}
}

// Config returns a Configure at the rule's protocol version.
func (t *rt) Config() *message.Configure {
	return &message.Configure{ProtocolVersion: t.Version, MontyVersion: "gomonty-conform", ScriptName: "main.py"}
}

// Fresh starts a session and configures it, requiring Ok.
func (t *rt) Fresh() *sess { return t.FreshWith(t.Config()) }

// FreshWith starts a session and sends cfg, requiring Ok.
func (t *rt) FreshWith(cfg *message.Configure) *sess {
	s := t.Open()
	s.Expect(s.Turn(cfg), "Configure", isOk)
	return s
}

// reply is one turn: the Print events and the turn-ending event.
type reply struct {
	Prints []*message.ChildEvent
	Event  *message.ChildEvent
}

// Text returns the concatenated text of the turn's prints.
func (r *reply) Text() string {
	var b strings.Builder
	for _, p := range r.Prints {
		for _, seg := range p.Body.(*message.Print).Segments {
			b.WriteString(seg.Text)
		}
	}
	return b.String()
}

// Kind returns the turn-ending event's kind.
func (r *reply) Kind() message.EventKind {
	if r.Event == nil || r.Event.Body == nil {
		return 0
	}
	return r.Event.Body.EventKind()
}

// Send encodes and writes one request.
func (s *sess) Send(req message.Request) {
	b, err := s.t.cd.AppendRequest(nil, &message.ParentRequest{Body: req})
	if err != nil {
		s.t.Failf("internal: encoding %s: %v", req.RequestKind(), err)
	}
	s.SendBody(b, req.RequestKind().String())
}

// SendBody writes one frame body as is.
func (s *sess) SendBody(b []byte, what string) {
	s.n++
	s.t.noteStep(fmt.Sprintf("request %d (%s)", s.n, what))
	if err := s.c.WriteFrame(b); err != nil {
		// A write fails when the worker has closed its input, as a rule
		// it exits then: the exit note waits a moment for it, so that the
		// stderr quoted is whole (its reader may still be copying).
		s.t.Failf("expected to send %s, got %v%s", what, err, s.exitNote())
	}
}

// SendRaw writes bytes to the worker's input without framing.
func (s *sess) SendRaw(b []byte, what string) {
	s.n++
	s.t.noteStep(fmt.Sprintf("raw write %d (%s)", s.n, what))
	if err := s.c.writeRaw(b); err != nil {
		s.t.Failf("expected to write %s, got %v", what, err)
	}
}

// closeOutput closes the parent's read end of the worker's output.
func (s *sess) closeOutput() {
	s.t.noteStep("closing the worker's output")
	s.outClosed = true
	_ = s.c.closeOutput()
}

// CloseInput closes the worker's input.
func (s *sess) CloseInput() {
	s.t.noteStep("closing the worker's input")
	_ = s.c.closeInput()
}

func (s *sess) stderrNote() string {
	if e := strings.TrimSpace(s.c.stderr()); e != "" {
		if len(e) > 300 {
			e = "…" + strings.ToValidUTF8(e[len(e)-300:], "") // the cut may split a character
		}
		return "; worker stderr: " + oneLine(e)
	}
	return ""
}

// oneLine renders a quote of a peer's output (its stderr) for one line of
// a report: each run of white space becomes one space, and any other
// control character (a terminal escape) is shown escaped, as Go quotes it.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Next reads and decodes the next event. At a clean end of stream (a
// stream's EOF, a WebSocket's normal closure: both match io.EOF through
// errors.Is) it returns nil and io.EOF itself, which the callers compare
// with ==; any other read failure fails the rule.
func (s *sess) Next() (*message.ChildEvent, error) {
	b, err := s.c.ReadFrame()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, err
	}
	ev, err := s.t.cd.DecodeEvent(b, s.t.lim)
	if err != nil {
		s.t.Failf("expected a decodable event, got %v (%d bytes)", err, len(b))
	}
	if ev.Body == nil {
		s.t.Failf("expected an event with a kind, got a frame of %d bytes with none", len(b))
	}
	return ev, nil
}

// Read reads one turn: Prints up to the turn-ending event.
func (s *sess) Read() *reply {
	r := &reply{}
	for {
		ev, err := s.Next()
		if err != nil {
			s.t.Failf("expected a turn-ending event after %s, got %v%s", s.t.lastStepText(), streamErr(err), s.exitNote())
		}
		if ev.Body.EventKind() == message.KindPrint {
			r.Prints = append(r.Prints, ev)
			continue
		}
		r.Event = ev
		return r
	}
}

func (t *rt) lastStepText() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.step
}

func streamErr(err error) string {
	if err == io.EOF {
		return "end of stream"
	}
	return err.Error()
}

func (s *sess) exitNote() string {
	ctx, cancel := context.WithTimeout(s.t.ctx, 300*time.Millisecond)
	defer cancel()
	if ex, err := s.c.wait(ctx); err == nil {
		return " (worker " + ex.String() + ")" + s.stderrNote()
	}
	return s.stderrNote()
}

// Turn sends req and reads the turn it starts.
func (s *sess) Turn(req message.Request) *reply {
	s.Send(req)
	return s.Read()
}

// Feed runs code and returns the turn.
func (s *sess) Feed(code string) *reply { return s.Turn(&message.Feed{Code: code}) }

// Exit waits for the worker to exit and returns its status.
func (s *sess) Exit(within time.Duration) worker.Exit {
	ctx, cancel := context.WithTimeout(s.t.ctx, within)
	defer cancel()
	ex, err := s.c.wait(ctx)
	if errors.Is(err, errNoProcess) {
		s.t.Skipf("the exit status is not visible on this transport")
	}
	if err != nil {
		note := ""
		if p, ok := s.c.(interface{ state() string }); ok {
			note = " (" + p.state() + ")"
		}
		s.t.Failf("expected the worker to exit within %v, it is still running%s%s", within, note, s.stderrNote())
	}
	return ex
}

// exited reports whether the worker process ends within d (true at once
// on a target without a visible process).
func (s *sess) exited(d time.Duration) bool {
	ctx, cancel := context.WithTimeout(s.t.ctx, d)
	defer cancel()
	_, err := s.c.wait(ctx)
	return err == nil || errors.Is(err, errNoProcess)
}

// trySend writes req if it can; a worker that has gone away meanwhile
// fails nothing.
func (s *sess) trySend(req message.Request) {
	b, err := s.t.cd.AppendRequest(nil, &message.ParentRequest{Body: req})
	if err != nil {
		s.t.Failf("internal: encoding %s: %v", req.RequestKind(), err)
	}
	s.n++
	s.t.noteStep(fmt.Sprintf("request %d (%s, may fail)", s.n, req.RequestKind()))
	_ = s.c.WriteFrame(b)
}

// ExpectExit requires exit status code within the given time. On a
// target without a visible process it requires the connection to end
// instead (the relay closes it when its worker exits).
func (s *sess) ExpectExit(code int, within time.Duration) {
	if !s.t.target.process() {
		ev, err := s.Next()
		if err == nil {
			s.t.Failf("expected the worker to go away (exit %d), got %s", code, describe(ev))
		}
		return
	}
	ex := s.Exit(within)
	if ex.Code != code {
		s.t.Failf("expected exit status %d (%s), got %s%s", code, protocol.ExitCode(code), ex, s.stderrNote())
	}
	if s.outClosed {
		return
	}
	// Whatever the worker wrote before it exited is still in the pipe: an
	// event after the last one a rule expected (a second Ok to Shutdown, a
	// FatalError sent twice) is a violation the exit status alone hides.
	s.t.noteStep(fmt.Sprintf("reading the rest of the worker's output after its %s", ex))
	if ev, err := s.Next(); err == nil {
		s.t.Failf("expected no further event before the worker's %s, got %s", ex, describe(ev))
	}
}

// ExpectEOF requires a clean end of stream with no further event.
func (s *sess) ExpectEOF(what string) {
	ev, err := s.Next()
	if err == nil {
		s.t.Failf("expected no event %s, got %s", what, describe(ev))
	}
	if err != io.EOF {
		s.t.Failf("expected a clean end of stream %s, got %v", what, err)
	}
}

// A check on a reply; it returns "" when satisfied, else what it wanted.
type want func(t *rt, r *reply) string

// Expect applies the checks to a turn, failing with the first unmet one.
func (s *sess) Expect(r *reply, what string, checks ...want) *reply {
	for _, c := range checks {
		if msg := c(s.t, r); msg != "" {
			s.t.Failf("%s: expected %s, got %s", what, msg, describeReply(r))
		}
	}
	return r
}

func isKind(k message.EventKind) want {
	return func(_ *rt, r *reply) string {
		if r.Kind() != k {
			return k.String()
		}
		return ""
	}
}

var (
	isOk         = isKind(message.KindOk)
	isComplete   = isKind(message.KindComplete)
	isCall       = isKind(message.KindFunctionCall)
	isLookup     = isKind(message.KindNameLookup)
	isOsCall     = isKind(message.KindOsCall)
	isResolve    = isKind(message.KindResolveFutures)
	isDumpResult = isKind(message.KindDumpResult)
)

// completes requires Complete whose value has the given repr.
func completes(repr string) want {
	return func(_ *rt, r *reply) string {
		c, ok := r.Event.Body.(*message.Complete)
		if !ok {
			return "Complete(" + repr + ")"
		}
		if got := c.Values.Repr(c.Value); got != repr {
			return "Complete(" + repr + ")"
		}
		return ""
	}
}

// violation requires the RuntimeError a worker sends for a protocol
// violation: exact message, no traceback.
func violation(text string) want {
	return raises("RuntimeError", text, true)
}

// raises requires an Error with the given type and exact message; when
// noTraceback is set the traceback must be empty.
func raises(typ, msg string, noTraceback bool) want {
	return func(_ *rt, r *reply) string {
		e, ok := r.Event.Body.(*message.Error)
		w := fmt.Sprintf("Error %s(%q)", typ, msg)
		if noTraceback {
			w += " without traceback"
		}
		if !ok || e.Exception == nil || e.Exception.Type != typ || e.Exception.Msg() != msg {
			return w
		}
		if noTraceback && len(e.Exception.Traceback) > 0 {
			return w
		}
		return ""
	}
}

// raisesLike requires an Error of type typ whose message contains sub.
func raisesLike(typ, sub string) want {
	return func(_ *rt, r *reply) string {
		e, ok := r.Event.Body.(*message.Error)
		if !ok || e.Exception == nil || e.Exception.Type != typ || !strings.Contains(e.Exception.Msg(), sub) {
			return fmt.Sprintf("Error %s with a message containing %q", typ, sub)
		}
		return ""
	}
}

// fatal requires a FatalError with the exact message.
func fatal(msg string) want {
	return func(_ *rt, r *reply) string {
		f, ok := r.Event.Body.(*message.FatalError)
		if !ok || f.Message != msg {
			return fmt.Sprintf("FatalError(%q)", msg)
		}
		return ""
	}
}

// unstamped requires the turn-ending event to carry none of fields 20–23.
func unstamped(_ *rt, r *reply) string {
	e := r.Event
	if e.TotalExecutionMicros != 0 || e.MaxDurationMicros != nil || e.MaxSuspensions != nil || e.RestoredScriptName != nil {
		return "an event without stamps (fields 20–23)"
	}
	return ""
}

// stampedSusp requires max_suspensions == n.
func stampedSusp(n uint64) want {
	return func(_ *rt, r *reply) string {
		if r.Event.MaxSuspensions == nil || *r.Event.MaxSuspensions != n {
			return fmt.Sprintf("max_suspensions stamped as %d", n)
		}
		return ""
	}
}

func noPrints(_ *rt, r *reply) string {
	if len(r.Prints) > 0 {
		return "no Print before the turn-ending event"
	}
	return ""
}

func printed(text string) want {
	return func(_ *rt, r *reply) string {
		if r.Text() != text {
			return fmt.Sprintf("printed text %q", text)
		}
		return ""
	}
}

func describeReply(r *reply) string {
	if r == nil || r.Event == nil {
		return "nothing"
	}
	s := describe(r.Event)
	if len(r.Prints) > 0 {
		s = fmt.Sprintf("%d Print(s) %q, then %s", len(r.Prints), clip(r.Text(), 120), s)
	}
	return s
}

// describe renders an event briefly for a failure message.
func describe(ev *message.ChildEvent) string {
	if ev == nil || ev.Body == nil {
		return "an event with no kind"
	}
	var s string
	switch b := ev.Body.(type) {
	case *message.Complete:
		s = "Complete(" + clip(b.Values.Repr(b.Value), 120) + ")"
	case *message.Error:
		if b.Exception == nil {
			s = "Error(no exception)"
		} else {
			s = fmt.Sprintf("Error %s(%q)", b.Exception.Type, clip(b.Exception.Msg(), 300))
			if n := len(b.Exception.Traceback); n > 0 {
				s += fmt.Sprintf(" with %d traceback frame(s)", n)
			}
		}
	case *message.FatalError:
		s = fmt.Sprintf("FatalError(%q)", b.Message)
	case *message.FunctionCall:
		s = fmt.Sprintf("FunctionCall %s(%s) call_id %d", b.FunctionName, argsRepr(b), b.CallID)
		if b.AllowEagerAwait {
			s += " allow_eager_await"
		}
	case *message.NameLookup:
		s = fmt.Sprintf("NameLookup(%q)", b.Name)
	case *message.OsCall:
		s = fmt.Sprintf("OsCall %s(%q) call_id %d", b.Op, b.Path, b.CallID)
	case *message.ResolveFutures:
		s = fmt.Sprintf("ResolveFutures%v", b.PendingCallIDs)
	case *message.Print:
		s = fmt.Sprintf("Print(%q)", clip(printText(b), 120))
	case *message.TypingError:
		s = fmt.Sprintf("TypingError(%q)", clip(b.Diagnostics, 200))
	case *message.DumpResult:
		s = fmt.Sprintf("DumpResult(%d bytes)", len(b.State))
	default:
		s = ev.Body.EventKind().String()
	}
	var st []string
	if ev.TotalExecutionMicros != 0 {
		st = append(st, "total_execution_micros")
	}
	if ev.MaxDurationMicros != nil {
		st = append(st, fmt.Sprintf("max_duration_micros=%d", *ev.MaxDurationMicros))
	}
	if ev.MaxSuspensions != nil {
		st = append(st, fmt.Sprintf("max_suspensions=%d", *ev.MaxSuspensions))
	}
	if ev.RestoredScriptName != nil {
		st = append(st, fmt.Sprintf("restored_script_name=%q", *ev.RestoredScriptName))
	}
	if len(st) > 0 {
		s += " [" + strings.Join(st, " ") + "]"
	}
	return s
}

func argsRepr(c *message.FunctionCall) string {
	var parts []string
	for _, a := range c.Args {
		if int(a) < c.Values.Len() {
			parts = append(parts, c.Values.Repr(a))
		}
	}
	for _, kw := range c.Kwargs {
		if int(kw.Key) < c.Values.Len() && int(kw.Value) < c.Values.Len() {
			parts = append(parts, c.Values.Str(kw.Key)+"="+c.Values.Repr(kw.Value))
		}
	}
	return strings.Join(parts, ", ")
}

func printText(p *message.Print) string {
	var b strings.Builder
	for _, s := range p.Segments {
		b.WriteString(s.Text)
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Values builders.

// ret answers a call with a Go value converted to a graph.
func ret(callID uint32, v any) *message.ResumeCall {
	var g value.Graph
	id, err := value.FromGo(&g, v)
	if err != nil {
		panic(err) // only constant test values are converted
	}
	return &message.ResumeCall{CallID: callID, Result: &message.ExtResult{Kind: message.ResultReturn, Value: id}, Values: g}
}

// raiseResult answers a call with an exception.
func raiseResult(callID uint32, typ, msg string) *message.ResumeCall {
	return &message.ResumeCall{CallID: callID, Result: &message.ExtResult{Kind: message.ResultError, Error: message.NewException(typ, msg)}}
}

// feedWith returns a Feed binding inputs (name → Go value).
func feedWith(code string, inputs ...any) *message.Feed {
	f := &message.Feed{Code: code}
	for i := 0; i+1 < len(inputs); i += 2 {
		id, err := value.FromGo(&f.Values, inputs[i+1])
		if err != nil {
			panic(err)
		}
		f.Inputs = append(f.Inputs, message.NamedRef{Name: inputs[i].(string), Value: id})
	}
	return f
}

// callOf returns the FunctionCall of a reply (the reply must be one).
func callOf(r *reply) *message.FunctionCall {
	c, _ := r.Event.Body.(*message.FunctionCall)
	return c
}

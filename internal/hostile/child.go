package hostile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gomonty/monty/frame"
	p2 "github.com/gomonty/monty/internal/pb/montyp2v1"
	p4 "github.com/gomonty/monty/internal/pb/montyv1"
	"github.com/gomonty/monty/protocol"
)

// Options configure [Run].
type Options struct {
	// Protocols lists the protocol versions the child claims to speak
	// (2 and/or 4). Empty means the scenario's default (see
	// [Scenario.DefaultProtocol]).
	Protocols []uint32
	// Stderr receives the child's diagnostics, including the stderr flood.
	// Nil discards them.
	Stderr io.Writer
	// Context bounds every hang and sleep. When it ends, a hanging scenario
	// returns its cause. Nil means context.Background(): hang forever.
	Context context.Context
	// CloseStdout closes the child's stdout, for the close_stdout scenario.
	// Nil means stdout's own Close method, if it has one.
	CloseStdout func() error
	// Scale divides the size of the amplification and nesting payloads
	// (element counts and depths); 0 or 1 means full size (about 64 MiB
	// frames, a million levels). A parent test with a small decode budget
	// needs much less to exceed it. Frames tied to the frame cap
	// (print_at_cap, print_over_cap, the oversize prefixes) never scale.
	Scale int
	// OnConfigure, when set, is told the version of a Configure before
	// the child answers it: accepted when the child claims the version
	// (the scenario plays it, whatever its answer), not accepted when the
	// child refuses it as a version it does not claim (the released
	// worker's FatalError, then exit). A Configure that a scenario answers
	// its own way with a version the child does not claim is not told.
	OnConfigure func(version uint32, accepted bool)
}

// ExitError asks the caller of [Run] to end the process with Code.
type ExitError struct {
	Code int
}

func (e *ExitError) Error() string { return "hostile: exit status " + strconv.Itoa(e.Code) }

// SignalError asks the caller of [Run] to kill its own process with Signal.
type SignalError struct {
	Signal syscall.Signal
}

func (e *SignalError) Error() string { return "hostile: die by " + e.Signal.String() }

// errStop ends Run cleanly (exit status 0).
var errStop = errors.New("hostile: stop")

// Run plays scenario name as a worker reading requests from stdin and
// writing events to stdout. An empty name plays "normal".
//
// It returns nil for a clean end (status 0), an *ExitError or *SignalError
// when the scenario ends the process some other way, and any other error
// for bad arguments or an ended Context.
func Run(name string, stdin io.Reader, stdout io.Writer, opts Options) error {
	if name == "" {
		name = "normal"
	}
	ent := lookup(name)
	if ent == nil {
		return fmt.Errorf("hostile: unknown scenario %q", name)
	}
	claim := slices.Clone(opts.Protocols)
	if len(claim) == 0 {
		claim = []uint32{ent.DefaultProtocol()}
	}
	slices.Sort(claim)
	claim = slices.Compact(claim)
	for _, v := range claim {
		if v != 2 && v != 4 {
			return fmt.Errorf("hostile: protocol %d is not implemented (use 2 or 4)", v)
		}
		if !ent.Supports(v) {
			return fmt.Errorf("hostile: scenario %q is not defined for protocol %d", name, v)
		}
	}
	c := &child{
		ent:      ent,
		ctx:      opts.Context,
		in:       frame.NewReader(stdin, frame.MaxFrameLen),
		out:      stdout,
		stderr:   opts.Stderr,
		closeOut: opts.CloseStdout,
		claim:    claim,
		maxSusp:  protocol.DefaultMaxSuspensions,
		scale:    max(1, opts.Scale),
		onConf:   opts.OnConfigure,
	}
	if c.ctx == nil {
		c.ctx = context.Background()
	}
	if c.stderr == nil {
		c.stderr = io.Discard
	}
	if c.closeOut == nil {
		if cl, ok := stdout.(io.Closer); ok {
			c.closeOut = cl.Close
		} else {
			c.closeOut = func() error { return nil }
		}
	}
	err := c.serve()
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

type state int

const (
	noSession state = iota
	configured
	ready
	suspended
)

// child is one worker process's state.
type child struct {
	ent      *entry
	ctx      context.Context
	in       *frame.Reader
	out      io.Writer
	stderr   io.Writer
	closeOut func() error
	claim    []uint32
	onConf   func(version uint32, accepted bool)
	scale    int

	ver   uint32 // negotiated protocol; 0 before a successful Configure
	st    state
	repl  bool // an interpreter exists: turn-ending events are stamped
	micro uint64

	maxSusp uint64
	maxDur  *uint64

	nextCall uint32
	pending  uint32   // call id of the suspended call
	rest     []string // statements left after the suspended call
	counts   [16]int  // requests seen, by kind
}

// request is one decoded ParentRequest, in the negotiated version's types.
type request struct {
	kind protowire.Number
	v2   *p2.ParentRequest
	v4   *p4.ParentRequest
}

func kindOf(m proto.Message) protowire.Number {
	r := m.ProtoReflect()
	fd := r.WhichOneof(r.Descriptor().Oneofs().ByName(protoreflect.Name("kind")))
	if fd == nil {
		return 0
	}
	return fd.Number()
}

func (c *child) serve() error {
	if h := c.ent.onSpawn; h != nil {
		if err := h(c); err != nil {
			return err
		}
	}
	for {
		body, err := c.in.ReadFrame()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			// The request stream is desynchronized: announce and exit 76,
			// as the released worker does.
			fmt.Fprintf(c.stderr, "monty subprocess fatal error: malformed request frame: %v\n", err)
			_ = c.fatal("malformed request frame: " + err.Error())
			return &ExitError{Code: int(protocol.ExitProtocol)}
		}
		req, derr := c.decode(body)
		if derr != nil {
			if err := c.send(c.runtimeError("protocol violation: malformed request: "+derr.Error(), false)); err != nil {
				return err
			}
			continue
		}
		if int(req.kind) < len(c.counts) {
			c.counts[req.kind]++
		}
		if req.kind == reqConfigure && c.onConf != nil {
			// Told before the answer: a parent may end the child as soon
			// as it has read it.
			if v, _, _ := configureArgs(req); c.claims(v) {
				c.onConf(v, true)
			}
		}
		if h := c.ent.on[req.kind]; h != nil {
			err = h(c, req)
		} else {
			err = c.handle(req)
		}
		if err != nil {
			return err
		}
	}
}

func (c *child) decode(body []byte) (*request, error) {
	if c.ver == 4 {
		m := new(p4.ParentRequest)
		if err := proto.Unmarshal(body, m); err != nil {
			return nil, err
		}
		return &request{kind: kindOf(m), v4: m}, nil
	}
	m := new(p2.ParentRequest)
	if err := proto.Unmarshal(body, m); err != nil {
		return nil, err
	}
	return &request{kind: kindOf(m), v2: m}, nil
}

// first reports whether req is the first request of its kind.
func (c *child) first(req *request) bool {
	return int(req.kind) < len(c.counts) && c.counts[req.kind] == 1
}

// --- output ---------------------------------------------------------------

// send writes body as one frame. A failed write means the parent is gone:
// exit 3, as the released worker does.
func (c *child) send(body []byte) error {
	if _, err := c.out.Write(frame.AppendFrame(nil, body)); err != nil {
		return &ExitError{Code: int(protocol.ExitStdoutBroken)}
	}
	return nil
}

// sendRaw writes bytes as they are, framing included.
func (c *child) sendRaw(b []byte) error {
	if _, err := c.out.Write(b); err != nil {
		return &ExitError{Code: int(protocol.ExitStdoutBroken)}
	}
	return nil
}

func (c *child) sendBig(f bigFrame, prefix int64) error {
	if err := writeBig(c.out, f, prefix); err != nil {
		return &ExitError{Code: int(protocol.ExitStdoutBroken)}
	}
	return nil
}

// stamps returns the message-level fields a turn-ending event carries once
// an interpreter exists.
func (c *child) stamps() []byte {
	if !c.repl {
		return nil
	}
	var b []byte
	if c.micro > 0 {
		b = varintField(b, 20, c.micro)
	}
	if c.maxDur != nil {
		b = varintField(b, 21, *c.maxDur)
	}
	susp := protowire.Number(23)
	if c.ver == 4 {
		susp = 22
	}
	return varintField(b, susp, c.maxSusp)
}

// turn builds a stamped turn-ending event.
func (c *child) turn(arm protowire.Number, payload []byte) []byte {
	return append(event(arm, payload), c.stamps()...)
}

func (c *child) ok() []byte { return event(armOk, nil) }

// fatal sends a FatalError (never stamped).
func (c *child) fatal(msg string) error {
	return c.send(event(armFatalError, marshal(&p2.FatalError{Message: msg})))
}

// errorEvent builds an Error event carrying exc.
func (c *child) errorEvent(exc *p2.RaisedException, stamped bool) []byte {
	payload := msgField(nil, 1, marshal(exc))
	if stamped {
		return c.turn(armError, payload)
	}
	return event(armError, payload)
}

func (c *child) runtimeError(msg string, stamped bool) []byte {
	return c.errorEvent(&p2.RaisedException{ExcType: "RuntimeError", Message: &msg}, stamped)
}

// violation is the reply to a request that is invalid in the current state.
func (c *child) violation(msg string) error {
	return c.send(c.runtimeError("protocol violation: "+msg, true))
}

// completeLeaf returns a Complete payload whose value is one leaf.
func (c *child) completeLeaf(leafBytes []byte) []byte {
	if c.ver == 4 {
		arena := varintField(nil, 1, 1)
		arena = msgField(arena, 2, leafBytes)
		return msgField(nil, 2, arena)
	}
	return msgField(nil, 1, leafBytes)
}

// completeArena returns a v4 Complete payload with an explicit arena.
func completeArena(root uint32, nodes ...[]byte) []byte {
	var arena []byte
	if len(nodes) > 0 {
		arena = varintField(arena, 1, uint64(len(nodes)))
	}
	for _, n := range nodes {
		arena = msgField(arena, 2, n)
	}
	var b []byte
	if root != 0 {
		b = varintField(b, 1, uint64(root))
	}
	return msgField(b, 2, arena)
}

// printEvent builds a Print event carrying text on stdout.
func (c *child) printEvent(text string) []byte {
	return c.printOn(uint64(p2.PrintStream_PRINT_STREAM_STDOUT), text)
}

// printOn builds a Print of text on stream (a raw varint: any number).
func (c *child) printOn(stream uint64, text string) []byte {
	seg := msgField(varintField(nil, 1, stream), 2, []byte(text))
	if c.ver == 4 {
		return event(armPrint, msgField(nil, 1, seg))
	}
	return event(armPrint, seg)
}

// functionCall builds a FunctionCall for name() with no arguments.
func (c *child) functionCall(name string, id uint32) []byte {
	return c.turn(armFunctionCall, marshal(&p2.FunctionCall{FunctionName: name, CallId: id}))
}

// --- waiting --------------------------------------------------------------

// hang blocks until the context ends.
func (c *child) hang() error {
	<-c.ctx.Done()
	return fmt.Errorf("hostile: hang ended: %w", context.Cause(c.ctx))
}

// sleep waits d or until the context ends.
func (c *child) sleep(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-c.ctx.Done():
		return fmt.Errorf("hostile: sleep ended: %w", context.Cause(c.ctx))
	}
}

// drain reads and drops requests until stdin ends, then hangs: the child
// stays alive without answering anything.
func (c *child) drain() error {
	for {
		if _, err := c.in.ReadFrame(); err != nil {
			return c.hang()
		}
	}
}

// --- normal behaviour -----------------------------------------------------

// handle answers req as a well-behaved worker would.
func (c *child) handle(req *request) error {
	switch req.kind {
	case 0:
		return c.send(c.runtimeError("protocol violation: request has no kind", false))
	case reqConfigure:
		return c.configure(req)
	case reqInstallDependencies:
		return c.send(c.runtimeError("dependency installation is only supported by the CPython worker", true))
	case reqFeed:
		return c.feed(req)
	case reqResumeCall:
		return c.resumeCall(req)
	case reqResumeNameLookup:
		return c.violation("ResumeNameLookup without a suspended name lookup")
	case reqResumeFutures:
		return c.violation("ResumeFutures without suspended futures")
	case reqDump:
		if c.st == noSession {
			return c.violation("session has not been configured")
		}
		if c.st == configured {
			c.st, c.repl = ready, true
		}
		return c.send(c.turn(armDumpResult, msgField(nil, 1, []byte(dumpMagic))))
	case reqLoad:
		return c.load(req)
	case reqReset:
		c.st, c.repl, c.rest = noSession, false, nil
		c.maxSusp, c.maxDur = protocol.DefaultMaxSuspensions, nil
		return c.send(c.ok())
	case reqShutdown:
		if err := c.send(c.ok()); err != nil {
			return err
		}
		return errStop
	case reqAbortFeed:
		return c.abort(req)
	}
	return c.send(c.runtimeError("protocol violation: request has no kind", false))
}

// dumpMagic is the opaque state this child dumps and accepts back.
const dumpMagic = "MONTY\x00\x08\x00hostilechild"

// configureArgs extracts what the child uses from a Configure.
func configureArgs(req *request) (version uint32, maxSusp, maxDur *uint64) {
	if req.v4 != nil {
		cf := req.v4.GetConfigure()
		if l := cf.GetLimits(); l != nil {
			maxSusp, maxDur = l.MaxSuspensions, l.MaxDurationMicros
		}
		return cf.GetProtocolVersion(), maxSusp, maxDur
	}
	cf := req.v2.GetConfigure()
	if l := cf.GetLimits(); l != nil {
		maxSusp, maxDur = l.MaxSuspensions, l.MaxDurationMicros
	}
	return cf.GetProtocolVersion(), maxSusp, maxDur
}

// refusal is the FatalError text for an unsupported version v, worded as
// the released worker words it.
func (c *child) refusal(v uint32) string {
	lo, hi := c.claim[0], c.claim[len(c.claim)-1]
	return (&protocol.UnsupportedVersionError{Requested: v, Supported: protocol.VersionRange{Min: lo, Max: hi}}).Error()
}

// claims reports whether the child speaks version v.
func (c *child) claims(v uint32) bool { return v != 0 && slices.Contains(c.claim, v) }

func (c *child) configure(req *request) error {
	v, ms, md := configureArgs(req)
	if !c.claims(v) {
		if c.onConf != nil {
			c.onConf(v, false)
		}
		if err := c.fatal(c.refusal(v)); err != nil {
			return err
		}
		return &ExitError{Code: int(protocol.ExitFatal)}
	}
	if c.st != noSession {
		return c.violation("Configure while a session already exists")
	}
	c.ver, c.st = v, configured
	c.maxSusp, c.maxDur = protocol.DefaultMaxSuspensions, md
	if ms != nil {
		c.maxSusp = *ms
	}
	if err := c.send(c.ok()); err != nil {
		return err
	}
	if h := c.ent.afterConfigure; h != nil && c.counts[reqConfigure] == 1 {
		return h(c)
	}
	return nil
}

func (c *child) load(req *request) error {
	var state []byte
	if req.v4 != nil {
		state = req.v4.GetLoad().GetState()
	} else {
		state = req.v2.GetLoad().GetState()
	}
	if c.repl {
		return c.violation("Load requires a session that has not started (a feed has already run)")
	}
	if string(state) != dumpMagic {
		return c.violation("failed to load session: not a monty dump")
	}
	if c.ver == 0 {
		c.ver = c.claim[len(c.claim)-1]
	}
	c.st, c.repl = ready, true
	return c.send(c.turn(armOk, nil))
}

func feedCode(req *request) string {
	if req.v4 != nil {
		return req.v4.GetFeed().GetCode()
	}
	return req.v2.GetFeed().GetCode()
}

// startFeed moves to the Ready state for a Feed, reporting false (after
// answering) when the state forbids one.
func (c *child) startFeed() (bool, error) {
	switch c.st {
	case noSession:
		return false, c.violation("session has not been configured")
	case suspended:
		return false, c.violation("Feed without a session ready for input")
	}
	c.st, c.repl = ready, true
	c.nextCall = 0
	c.micro += 50
	return true, nil
}

func (c *child) feed(req *request) error {
	okay, err := c.startFeed()
	if !okay {
		return err
	}
	return c.run(statements(feedCode(req)), nil)
}

// run executes statements; result is the value of the last one so far
// (nil for none).
func (c *child) run(stmts []string, result []byte) error {
	if result == nil {
		result = leafNone()
	}
	for i, s := range stmts {
		r := eval(s)
		switch {
		case r.err != "":
			c.st = ready
			exc := &p2.RaisedException{ExcType: r.errType, Message: &r.err}
			return c.send(c.errorEvent(exc, true))
		case r.call != "":
			c.st, c.pending, c.rest = suspended, c.nextCall, stmts[i+1:]
			c.nextCall++
			return c.send(c.functionCall(r.call, c.pending))
		case r.print != "":
			if err := c.send(c.printEvent(r.print)); err != nil {
				return err
			}
			result = leafNone()
		default:
			result = r.value
		}
	}
	c.st = ready
	return c.send(c.turn(armComplete, c.completeLeaf(result)))
}

func (c *child) resumeCall(req *request) error {
	if c.st != suspended {
		return c.violation("ResumeCall without a suspended function/OS call")
	}
	if req.v4 != nil {
		return c.resumeCallV4(req.v4.GetResumeCall())
	}
	rc := req.v2.GetResumeCall()
	if rc.GetCallId() != c.pending {
		return c.violation(fmt.Sprintf("ResumeCall call_id %d does not match %d", rc.GetCallId(), c.pending))
	}
	if rc.GetResult() == nil {
		return c.violation("ResumeCall has no result")
	}
	c.micro += 10
	rest := c.rest
	c.rest = nil
	switch k := rc.GetResult().GetKind().(type) {
	case nil:
		return c.violation("invalid result: missing required field ExtFunctionResult.kind")
	case *p2.ExtFunctionResult_ReturnValue:
		if len(rest) > 0 {
			return c.run(rest, nil)
		}
		c.st = ready
		return c.send(c.turn(armComplete, msgField(nil, 1, marshal(k.ReturnValue))))
	case *p2.ExtFunctionResult_Error:
		return c.raise(&p2.RaisedException{ExcType: k.Error.GetExcType(), Message: k.Error.Message})
	case *p2.ExtFunctionResult_NotFound:
		return c.raise(nameError(k.NotFound))
	case *p2.ExtFunctionResult_NotHandled:
		return c.violation("NotHandled is only valid answering a suspended OS call")
	default:
		return c.raise(&p2.RaisedException{ExcType: "RuntimeError", Message: ptr("hostilechild: external futures are not supported")})
	}
}

func (c *child) resumeCallV4(rc *p4.ResumeCall) error {
	if rc.GetCallId() != c.pending {
		return c.violation(fmt.Sprintf("ResumeCall call_id %d does not match %d", rc.GetCallId(), c.pending))
	}
	if rc.GetResult() == nil {
		return c.violation("ResumeCall has no result")
	}
	c.micro += 10
	rest := c.rest
	c.rest = nil
	switch k := rc.GetResult().GetKind().(type) {
	case nil:
		return c.violation("invalid result: missing required field ExtFunctionResult.kind")
	case *p4.ExtFunctionResult_ReturnValue:
		if len(rest) > 0 {
			return c.run(rest, nil)
		}
		c.st = ready
		// Echo the parent's arena and root: the value round-trips without
		// this child having to understand it.
		var payload []byte
		if k.ReturnValue != 0 {
			payload = varintField(payload, 1, uint64(k.ReturnValue))
		}
		if rc.GetValues() != nil {
			payload = msgField(payload, 2, marshal(rc.GetValues()))
		}
		return c.send(c.turn(armComplete, payload))
	case *p4.ExtFunctionResult_Error:
		return c.raise(excV4toV2(k.Error))
	case *p4.ExtFunctionResult_NotFound:
		return c.raise(nameError(k.NotFound))
	case *p4.ExtFunctionResult_NotHandled:
		return c.violation("NotHandled is only valid answering a suspended OS call")
	default:
		return c.raise(&p2.RaisedException{ExcType: "RuntimeError", Message: ptr("hostilechild: external futures are not supported")})
	}
}

func nameError(name string) *p2.RaisedException {
	return &p2.RaisedException{ExcType: "NameError", Message: ptr("name '" + name + "' is not defined")}
}

func excV4toV2(e *p4.RaisedException) *p2.RaisedException {
	return &p2.RaisedException{ExcType: e.GetExcType(), Message: e.Message}
}

// raise ends the feed with an Error event.
func (c *child) raise(exc *p2.RaisedException) error {
	c.st, c.rest = ready, nil
	return c.send(c.errorEvent(exc, true))
}

func (c *child) abort(req *request) error {
	if c.st != suspended {
		return c.violation("AbortFeed without a suspended feed")
	}
	var exc *p2.RaisedException
	if req.v4 != nil {
		if e := req.v4.GetAbortFeed().GetException(); e != nil {
			exc = excV4toV2(e)
		}
	} else if e := req.v2.GetAbortFeed().GetException(); e != nil {
		exc = &p2.RaisedException{ExcType: e.GetExcType(), Message: e.Message}
	}
	if exc == nil {
		return c.violation("AbortFeed has no exception")
	}
	return c.raise(exc)
}

func ptr[T any](v T) *T { return &v }

// --- the fake interpreter ---------------------------------------------------

// statements splits code into simple statements, dropping blank lines and
// comments.
func statements(code string) []string {
	var out []string
	for line := range strings.SplitSeq(code, "\n") {
		for s := range strings.SplitSeq(line, ";") {
			s = strings.TrimSpace(s)
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			out = append(out, s)
		}
	}
	return out
}

// evalResult is the effect of one statement.
type evalResult struct {
	value   []byte // leaf value of an expression
	print   string // text printed (then the value is None)
	call    string // name of an external function called
	err     string // message of an exception raised
	errType string
}

// eval runs one statement of the tiny language the fake interpreter
// understands: integer literals, "A + B" / "A - B" / "A * B" on integers,
// None / True / False, a quoted string, print('text'), and name() (an
// external call).
func eval(s string) evalResult {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return evalResult{value: leafInt(n)}
	}
	switch s {
	case "None", "pass":
		return evalResult{value: leafNone()}
	case "True", "False":
		return evalResult{value: leafBool(s == "True")}
	}
	if t, ok := quoted(s); ok {
		return evalResult{value: leafStr(t)}
	}
	if inner, ok := strings.CutPrefix(s, "print("); ok && strings.HasSuffix(inner, ")") {
		if t, ok := quoted(strings.TrimSuffix(inner, ")")); ok {
			return evalResult{print: t + "\n"}
		}
	}
	for _, op := range []string{"+", "-", "*"} {
		a, b, found := strings.Cut(s, op)
		if !found {
			continue
		}
		x, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
		y, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		switch op {
		case "+":
			return evalResult{value: leafInt(x + y)}
		case "-":
			return evalResult{value: leafInt(x - y)}
		default:
			return evalResult{value: leafInt(x * y)}
		}
	}
	if name, ok := strings.CutSuffix(s, "()"); ok && isIdent(name) {
		return evalResult{call: name}
	}
	return evalResult{errType: "NotImplementedError", err: "hostilechild cannot run " + strconv.Quote(s)}
}

func quoted(s string) (string, bool) {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] &&
		!strings.ContainsRune(s[1:len(s)-1], rune(s[0])) {
		return s[1 : len(s)-1], true
	}
	return "", false
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}

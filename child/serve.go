package child

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gomonty/monty/codec"
	_ "github.com/gomonty/monty/codec/codecv2" // protocol 2
	_ "github.com/gomonty/monty/codec/codecv4" // protocol 4
	_ "github.com/gomonty/monty/codec/codecv5" // protocol 5
	"github.com/gomonty/monty/codec/peek"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport"
)

// Options configure [Serve]. The zero value serves protocols 4 and 2 with
// the protocol's default limits.
//
// DefaultVersions are the protocol versions the child side serves when
// Options.Versions is nil: 4 and 2. Protocol 5 is served on request (see
// [SupportedVersions]); it is not a default because a parent that
// negotiates 5 first would then lose protocol 4's cumulative max_duration
// when the child relays to the released worker. Do not modify.
var DefaultVersions = []uint32{protocol.Version2, protocol.Version}

// SupportedVersions are every protocol version Serve can serve when
// Options.Versions asks for it: 2, 4 and 5. At 5 Serve validates the
// Configure's OsPolicy (an invalid one is refused with a recoverable
// Error, "protocol violation: invalid os_policy: …"), stamps
// feed_execution_micros from the engine's [Stamps] and echoes the feed,
// turn and sleep limits; the engine enforces the limits and the policy,
// or refuses what it cannot honour with a [*Violation]. 5 is not in
// DefaultVersions yet: a parent that negotiates 5 first would otherwise
// lose protocol 4's cumulative max_duration. Do not modify.
var SupportedVersions = []uint32{protocol.Version2, protocol.Version, protocol.Version5}

// ErrNoCodec is wrapped by the error [Serve] returns, before it reads any
// request, when Options.Versions names a protocol version that no
// linked-in codec speaks (see [SupportedVersions]): an *[ExitError] with
// status 4 and no FatalError, for the server is misconfigured, not the
// parent.
var ErrNoCodec = errors.New("no codec for protocol version")

type noCodecError struct{ v uint32 }

func (e *noCodecError) Error() string {
	return "child: Options.Versions: " + ErrNoCodec.Error() + " " + strconv.FormatUint(uint64(e.v), 10)
}

func (e *noCodecError) Unwrap() error { return ErrNoCodec }

// Options is plain data, safe to share.
type Options struct {
	// Versions lists the protocol versions the child accepts in
	// Configure; nil means [DefaultVersions] (4 and 2). Each must have a
	// codec (see [SupportedVersions]), or Serve returns an error wrapping
	// [ErrNoCodec]. The refusal text names the range from the lowest to
	// the highest.
	Versions []uint32
	// Limits bound each request decode (frame cap, decode budget). The
	// frame cap also bounds every event sent, and is never above the
	// connection's own MaxFrameLen.
	Limits codec.Limits
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
}

// The session states of the contract (§8).
type state uint8

const (
	sNoSession state = iota
	sConfigured
	sReady
	sSuspended
)

type server struct {
	conn transport.Conn
	eng  Engine
	lim  codec.Limits
	log  *slog.Logger

	versions []uint32
	codec    codec.Codec
	picked   bool // the version is settled (Configure, or InitialVersion)

	st      state
	cfg     *message.Configure // the session's Configure (nil in no session)
	preLoad state              // the state a running Load started from
	susp    message.EventKind
	callID  uint32
	eager   bool
	maxSusp *uint64
	// lim5 holds the protocol-5 limits Serve echoes (feed, turn, sleep).
	lim5 [3]*uint64

	pr   printer
	wbuf []byte
	pbuf []byte
	// ce and ms back the event stamped returns.
	ce message.ChildEvent
	ms uint64
}

// Serve runs the child side of one connection until the parent shuts it
// down, the stream ends, or the child must exit. It returns nil for a
// clean end and an *[ExitError] otherwise (see the package documentation);
// a done ctx closes conn and returns the context's error. Serve closes
// neither conn nor, until it returns, the engine (it calls engine.Close
// once on the way out).
func Serve(ctx context.Context, conn transport.Conn, engine Engine, opts Options) error {
	s := &server{conn: conn, eng: engine, lim: opts.Limits, log: opts.Logger}
	if m := conn.MaxFrameLen(); m > 0 && m < s.lim.FrameLen() {
		// The connection refuses a frame over its own cap: an event over
		// it must be handled as over the protocol's (a result becomes the
		// "result frame" Error), not fail as a broken output stream.
		s.lim.MaxFrameLen = m
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.versions = slices.Clone(opts.Versions)
	if len(s.versions) == 0 {
		s.versions = slices.Clone(DefaultVersions)
	}
	slices.Sort(s.versions)
	defer engine.Close()
	for _, v := range s.versions {
		if _, ok := codec.ForVersion(v); !ok {
			// Served, it would be refused with a text naming it as
			// supported.
			return &ExitError{Code: protocol.ExitFatal, Err: &noCodecError{v}}
		}
	}
	s.codec, _ = codec.ForVersion(s.versions[len(s.versions)-1])
	s.pr.emit = s.writePrint
	s.pr.reset(protocol.DefaultPrintFlushInterval, s.codec.Version() == protocol.Version2)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	// A Print that cannot be sent (the parent is gone) ends the running
	// turn through its context, as a failed print ends the native
	// worker's turn; the child then exits 3.
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.pr.broken = func(err error) { cancel(&ExitError{Code: protocol.ExitStdoutBroken, Err: err}) }
	err := s.loop(tctx)
	s.pr.stop()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (s *server) loop(ctx context.Context) error {
	for {
		body, err := s.conn.ReadFrame()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return s.fatal(protocol.ExitProtocol, "malformed request frame: "+frameErrText(err), err)
		}
		done, err := s.handleFrame(ctx, body)
		if err != nil || done {
			return err
		}
	}
}

// frameErrText renders a read failure the way the protocol's FrameError
// displays it.
func frameErrText(err error) string {
	var fe *frame.IOError
	var tl *frame.TooLargeError
	switch {
	case errors.As(err, &tl), errors.Is(err, frame.ErrTruncated), errors.As(err, &fe):
		return err.Error()
	}
	return "frame I/O error: " + err.Error()
}

// fatal sends a FatalError (best effort) and returns the exit. Like every
// event once an interpreter exists, the FatalError is stamped then (the
// native worker stamps its framing FatalError too).
func (s *server) fatal(code protocol.ExitCode, msg string, cause error) error {
	ev := &message.ChildEvent{Body: fatalError(msg)}
	if werr := s.send(ev, true); werr != nil && code != protocol.ExitStdoutBroken {
		s.log.Debug("monty child: FatalError not delivered", slog.Any("error", werr))
	}
	return &ExitError{Code: code, Message: msg, Err: cause}
}

// fatalError is a FatalError event with msg, made UTF-8 (it may quote an
// error's text, and a frame carries only UTF-8).
func fatalError(msg string) *message.FatalError {
	return &message.FatalError{Message: strings.ToValidUTF8(msg, "\uFFFD")}
}

func violation(text string) message.Event {
	return &message.Error{Exception: message.NewException("RuntimeError", "protocol violation: "+text)}
}

// isViolation reports an Error event that refuses a request, leaving the
// state as it was.
func isViolation(ev message.Event) bool {
	e, ok := ev.(*message.Error)
	return ok && e.Exception != nil && e.Exception.Type == "RuntimeError" &&
		strings.HasPrefix(e.Exception.Msg(), "protocol violation: ")
}

// handleFrame decodes and answers one request; done reports a Shutdown.
func (s *server) handleFrame(ctx context.Context, body []byte) (done bool, err error) {
	req, derr := s.codec.DecodeRequest(body, s.lim)
	if !s.picked && derr == nil && req != nil {
		// A Load decodes alike at every version (arm 8, its state at 1),
		// so the frame read at the default version is the Load to pick by.
		if l, ok := req.Body.(*message.Load); ok {
			s.pickInitial(ctx, l.State)
		}
	}
	if c, ok := configureOf(req, derr); ok && c.ProtocolVersion != s.codec.Version() &&
		slices.Contains(s.versions, c.ProtocolVersion) {
		// A Configure is read at the version it declares: the schemas
		// differ in its fields (protocol 5 reserves max_duration_micros
		// and adds its own limits and os_policy), so read at the version
		// the child last spoke, its limits could be dropped unseen.
		if cd, ok := codec.ForVersion(c.ProtocolVersion); ok {
			req, derr = cd.DecodeRequest(body, s.lim)
		}
	}
	if derr != nil {
		return false, s.replyDecodeError(body, derr)
	}
	if req.Body == nil {
		return false, s.send(&message.ChildEvent{Body: violation("request has no kind")}, false)
	}
	return s.handle(ctx, req.Body)
}

// configureOf returns the Configure a decode produced, if any.
func configureOf(req *message.ParentRequest, err error) (*message.Configure, bool) {
	if err != nil || req == nil {
		return nil, false
	}
	c, ok := req.Body.(*message.Configure)
	return c, ok
}

// pickInitial settles the version of a parent that starts with Load
// (see [InitialVersioner]); state is the Load's.
func (s *server) pickInitial(ctx context.Context, state []byte) {
	s.picked = true
	if pv, ok := s.eng.(ParentVersioner); ok {
		defer func() { pv.ParentVersion(s.codec.Version()) }()
	}
	iv, ok := s.eng.(InitialVersioner)
	if !ok {
		return
	}
	v, err := iv.InitialVersion(ctx, state)
	if err != nil {
		s.log.Debug("monty child: engine has no initial version", slog.Any("error", err))
		return
	}
	c, ok := codec.ForVersion(v)
	if !ok || !slices.Contains(s.versions, v) {
		return
	}
	s.codec = c
	s.pr.reset(protocol.DefaultPrintFlushInterval, v == protocol.Version2)
}

// replyDecodeError answers a request whose frame arrived intact but did
// not decode. Errors found after decoding (arena structure, required
// fields, exception types) are reported the way the contract attributes
// them to the request's conversion, after the state checks that precede
// it.
func (s *server) replyDecodeError(body []byte, derr error) error {
	var de *codec.DecodeError
	if !errors.As(derr, &de) || !de.Structural {
		return s.send(&message.ChildEvent{Body: violation("malformed request: " + derr.Error())}, false)
	}
	var ev message.Event
	switch message.RequestKind(peek.DecodedRequest(body)) {
	case message.KindFeed:
		switch s.st {
		case sNoSession:
			ev = violation("session has not been configured")
		case sSuspended:
			ev = violation("Feed without a session ready for input")
		default:
			s.st = sReady
			var ie *codec.InputError
			if errors.As(derr, &ie) { // protocol 2 names the input
				ev = violation(ie.Error())
			} else {
				ev = violation("invalid inputs: " + derr.Error())
			}
		}
	case message.KindResumeCall:
		if s.st != sSuspended || (s.susp != message.KindFunctionCall && s.susp != message.KindOsCall) {
			ev = violation("ResumeCall without a suspended function/OS call")
		} else if id := resumeCallID(body); id != s.callID {
			// The id is checked before the result is converted.
			ev = violation("ResumeCall call_id " + strconv.FormatUint(uint64(id), 10) +
				" does not match " + strconv.FormatUint(uint64(s.callID), 10))
		} else {
			ev = violation("invalid result: " + derr.Error())
		}
	case message.KindResumeNameLookup:
		if s.st != sSuspended || s.susp != message.KindNameLookup {
			ev = violation("ResumeNameLookup without a suspended name lookup")
		} else {
			ev = violation("invalid result: " + derr.Error())
		}
	case message.KindResumeFutures:
		if s.codec.Version() == protocol.Version2 && (s.st != sSuspended || s.susp != message.KindResolveFutures) {
			// The released protocol-2 worker checks the state before it
			// converts the results; protocol 4 converts first (contract
			// §8), and so does the child at 4.
			ev = violation("ResumeFutures without suspended futures")
		} else {
			ev = violation("invalid results: " + derr.Error())
		}
	case message.KindAbortFeed:
		if s.st != sSuspended {
			ev = violation("AbortFeed without a suspended feed")
		} else {
			ev = violation("invalid exception: " + derr.Error())
		}
	default:
		ev = violation("malformed request: " + derr.Error())
		return s.send(&message.ChildEvent{Body: ev}, false)
	}
	return s.send(&message.ChildEvent{Body: ev}, true)
}

// handle answers one decoded request.
func (s *server) handle(ctx context.Context, req message.Request) (bool, error) {
	switch r := req.(type) {
	case *message.Configure:
		return false, s.configure(ctx, r)
	case *message.InstallDependencies:
		if di, ok := s.eng.(DependencyInstaller); ok {
			ev, err := di.InstallDependencies(ctx, r)
			if err != nil {
				return false, s.engineFailed(err)
			}
			switch ev.(type) {
			case *message.Ok, *message.Error:
				return false, s.reply(ev)
			}
			return false, s.wrongEvent(req, ev)
		}
		return false, s.reply(&message.Error{Exception: message.NewException("RuntimeError",
			"dependency installation is only supported by the CPython worker")})
	case *message.Feed:
		switch s.st {
		case sNoSession:
			return false, s.reply(violation("session has not been configured"))
		case sSuspended:
			return false, s.reply(violation("Feed without a session ready for input"))
		}
		s.pr.begin()
		ev, err := s.eng.Feed(ctx, r, &s.pr)
		if s.st == sConfigured {
			s.st = sReady
		}
		return false, s.drive(ctx, req, ev, err)
	case *message.ResumeCall:
		if s.st != sSuspended || (s.susp != message.KindFunctionCall && s.susp != message.KindOsCall) {
			return false, s.reply(violation("ResumeCall without a suspended function/OS call"))
		}
		if r.CallID != s.callID {
			return false, s.reply(violation("ResumeCall call_id " + strconv.FormatUint(uint64(r.CallID), 10) +
				" does not match " + strconv.FormatUint(uint64(s.callID), 10)))
		}
		if r.Result == nil {
			return false, s.reply(violation("ResumeCall has no result"))
		}
		if r.Result.Kind == message.ResultNotHandled && s.susp == message.KindFunctionCall {
			return false, s.reply(violation("NotHandled is only valid answering a suspended OS call"))
		}
		return false, s.resume(ctx, req)
	case *message.ResumeNameLookup:
		if s.st != sSuspended || s.susp != message.KindNameLookup {
			return false, s.reply(violation("ResumeNameLookup without a suspended name lookup"))
		}
		return false, s.resume(ctx, req)
	case *message.ResumeFutures:
		if s.st == sSuspended && s.susp == message.KindResolveFutures {
			return false, s.resume(ctx, req)
		}
		if s.st == sSuspended && s.susp == message.KindFunctionCall && s.eager {
			if len(r.Results) != 1 || r.Results[0].CallID != s.callID {
				return false, s.reply(violation("eager ResumeFutures must contain exactly the suspended call id"))
			}
			res := r.Results[0].Result
			if res == nil {
				return false, s.reply(violation("invalid results: missing required field FutureResult.result"))
			}
			if k := res.Kind; k != message.ResultReturn && k != message.ResultError {
				return false, s.reply(violation("eager coroutine must resolve to a value or exception"))
			}
			return false, s.resume(ctx, req)
		}
		return false, s.reply(violation("ResumeFutures without suspended futures"))
	case *message.AbortFeed:
		if s.st != sSuspended {
			return false, s.reply(violation("AbortFeed without a suspended feed"))
		}
		if r.Exception == nil {
			return false, s.reply(violation("AbortFeed has no exception"))
		}
		return false, s.resume(ctx, req)
	case *message.Dump:
		if s.st == sNoSession {
			return false, s.reply(violation("session has not been configured"))
		}
		s.pr.begin()
		ev, err := s.eng.Dump(ctx)
		if err != nil {
			return false, s.engineFailed(err)
		}
		if s.st == sConfigured {
			s.st = sReady
		}
		switch ev.(type) {
		case *message.DumpResult, *message.Error:
			return false, s.reply(ev)
		}
		return false, s.wrongEvent(req, ev)
	case *message.Load:
		if s.st == sReady || s.st == sSuspended {
			return false, s.reply(violation("Load requires a session that has not started (a feed has already run)"))
		}
		s.pr.begin()
		s.preLoad = s.st
		ev, err := s.eng.Load(ctx, r.State, &s.pr)
		return false, s.drive(ctx, req, ev, err)
	case *message.Reset:
		if err := s.eng.Reset(ctx); err != nil {
			return false, s.engineFailed(err)
		}
		s.st, s.cfg, s.maxSusp, s.eager, s.lim5 = sNoSession, nil, nil, false, [3]*uint64{}
		s.pr.reset(protocol.DefaultPrintFlushInterval, s.codec.Version() == protocol.Version2)
		return false, s.send(&message.ChildEvent{Body: &message.Ok{}}, false)
	case *message.Shutdown:
		return true, s.send(&message.ChildEvent{Body: &message.Ok{}}, false)
	}
	return false, s.send(&message.ChildEvent{Body: violation("request has no kind")}, false)
}

func (s *server) configure(ctx context.Context, c *message.Configure) error {
	if !slices.Contains(s.versions, c.ProtocolVersion) {
		// The worker checks the version first, in a session too, and
		// stamps this FatalError as it stamps every event once an
		// interpreter exists.
		err := &protocol.UnsupportedVersionError{Requested: c.ProtocolVersion,
			Supported: protocol.VersionRange{Min: s.versions[0], Max: s.versions[len(s.versions)-1]}}
		if werr := s.send(&message.ChildEvent{Body: fatalError(err.Error())}, true); werr != nil {
			s.log.Debug("monty child: FatalError not delivered", slog.Any("error", werr))
		}
		return &ExitError{Code: protocol.ExitFatal, Message: err.Error(), Err: err}
	}
	if s.st != sNoSession {
		return s.reply(violation("Configure while a session already exists"))
	}
	cd, ok := codec.ForVersion(c.ProtocolVersion)
	if !ok {
		err := &protocol.UnsupportedVersionError{Requested: c.ProtocolVersion,
			Supported: protocol.VersionRange{Min: s.versions[0], Max: s.versions[len(s.versions)-1]}}
		return s.fatal(protocol.ExitFatal, err.Error(), err)
	}
	if c.ProtocolVersion >= protocol.Version5 && c.OsPolicy != nil {
		if err := c.OsPolicy.Validate(); err != nil {
			return s.reply(violation("invalid os_policy: " + strings.TrimPrefix(err.Error(), message.ErrInvalidPolicy.Error()+": ")))
		}
	}
	if err := s.eng.Configure(ctx, c); err != nil {
		var v *Violation
		if errors.As(err, &v) {
			return s.reply(violation(v.Text))
		}
		return s.engineFailed(err)
	}
	s.codec, s.picked = cd, true
	interval := protocol.DefaultPrintFlushInterval
	if c.PrintFlushIntervalMs != nil {
		interval = time.Duration(*c.PrintFlushIntervalMs) * time.Millisecond
	}
	s.pr.reset(interval, cd.Version() == protocol.Version2)
	s.configured(c)
	return s.send(&message.ChildEvent{Body: &message.Ok{}}, false)
}

// configured enters the Configured state with c's limits.
func (s *server) configured(c *message.Configure) {
	ms := uint64(protocol.DefaultMaxSuspensions)
	if c.Limits != nil && c.Limits.MaxSuspensions != nil {
		ms = *c.Limits.MaxSuspensions
	}
	s.maxSusp = &ms
	s.lim5 = [3]*uint64{}
	if l := c.Limits; l != nil && s.codec.Version() >= protocol.Version5 {
		s.lim5 = [3]*uint64{l.MaxFeedDurationMicros, l.MaxTurnDurationMicros, l.MaxTotalSleepMicros}
	}
	s.st, s.cfg = sConfigured, c
}

// unload refuses a Load whose outcome cannot be sent, leaving the state as
// it was before the Load (§12): the engine drops the loaded session and,
// when the child was configured, is configured again with the session's
// Configure.
func (s *server) unload(ctx context.Context, refusal message.Event) error {
	if err := s.eng.Reset(ctx); err != nil {
		return s.engineFailed(err)
	}
	s.st, s.maxSusp, s.eager, s.lim5 = sNoSession, nil, false, [3]*uint64{}
	if c := s.cfg; c != nil && s.preLoad == sConfigured {
		if err := s.eng.Configure(ctx, c); err != nil {
			return s.engineFailed(err)
		}
		s.configured(c)
	}
	return s.reply(refusal)
}

// resume hands a checked resume to the engine.
func (s *server) resume(ctx context.Context, req message.Request) error {
	s.pr.begin()
	ev, err := s.eng.Resume(ctx, req, &s.pr)
	return s.drive(ctx, req, ev, err)
}

// drive applies the outcome of Feed, Resume or Load and answers it.
func (s *server) drive(ctx context.Context, req message.Request, ev message.Event, err error) error {
	if err != nil {
		var v *Violation
		if errors.As(err, &v) {
			return s.reply(violation(v.Text))
		}
		return s.engineFailed(err)
	}
	if ev == nil {
		return s.wrongEvent(req, ev)
	}
	kind := req.RequestKind()
	ek := ev.EventKind()
	load := kind == message.KindLoad
	switch {
	case ek.IsSuspension() && kind != message.KindAbortFeed:
		s.st, s.susp, s.eager, s.callID = sSuspended, ek, false, 0
		switch b := ev.(type) {
		case *message.FunctionCall:
			s.callID = b.CallID
			if s.codec.Version() == protocol.Version2 {
				b.AllowEagerAwait = false
			}
			s.eager = b.AllowEagerAwait
		case *message.OsCall:
			s.callID = b.CallID
		}
	case ek == message.KindComplete && kind != message.KindAbortFeed,
		ek == message.KindTypingError && kind == message.KindFeed,
		ek == message.KindOk && load:
		s.st = sReady
	case ek == message.KindError:
		if isViolation(ev) {
			// A refusal leaves the state as it was.
			return s.reply(ev)
		}
		if load {
			return s.wrongEvent(req, ev)
		}
		s.st = sReady
	default:
		return s.wrongEvent(req, ev)
	}
	if load {
		s.adoptLoaded()
	}
	return s.answer(ctx, ev, load)
}

// adoptLoaded takes the limits of a loaded dump.
func (s *server) adoptLoaded() {
	ms := uint64(protocol.DefaultMaxSuspensions)
	if st := s.eng.Stamps(); st.MaxSuspensions != nil {
		ms = *st.MaxSuspensions
	}
	s.maxSusp = &ms
	if s.st != sSuspended {
		s.st = sReady
	}
}

// answer sends a drive outcome, aborting a suspension that cannot be
// framed.
func (s *server) answer(ctx context.Context, ev message.Event, load bool) error {
	ce := s.stamped(ev, load)
	buf, err := s.codec.AppendEvent(s.wbuf[:0], ce)
	if err == nil && len(buf) > s.lim.FrameLen() {
		err = &frame.TooLargeError{Len: uint64(len(buf)), Max: uint64(s.lim.FrameLen())}
	}
	if err == nil {
		s.wbuf = buf
		return s.write(buf)
	}
	size := tooLarge(err)
	if size == "" {
		// The event cannot be expressed in this protocol version.
		s.log.Warn("monty child: event cannot be encoded", slog.Any("error", err))
		if ev.EventKind().IsSuspension() {
			if load {
				return s.unload(ctx, violation("argument frame cannot be encoded: "+err.Error()))
			}
			return s.abortOversize(ctx, "argument frame cannot be encoded: "+err.Error(),
				"response frame cannot be encoded: "+err.Error())
		}
		return s.reply(&message.Error{Exception: message.NewException("RuntimeError",
			"result cannot be encoded: "+err.Error())})
	}
	if ev.EventKind().IsSuspension() {
		if load {
			return s.unload(ctx, violation("argument frame of "+size+" bytes exceeds the maximum of "+
				strconv.Itoa(s.lim.FrameLen())+" bytes"))
		}
		return s.abortOversize(ctx, "argument frame of "+size+" bytes exceeds the maximum of "+
			strconv.Itoa(s.lim.FrameLen())+" bytes",
			"response frame of "+size+" bytes exceeds maximum of "+strconv.Itoa(s.lim.FrameLen())+" bytes")
	}
	return s.reply(&message.Error{Exception: message.NewException("RuntimeError",
		"result frame of "+size+" bytes exceeds the maximum of "+strconv.Itoa(s.lim.FrameLen())+" bytes")})
}

// abortOversize aborts a feed whose suspension cannot be sent, raising
// text at the suspension point; when even that fails there is no resume
// point left, and the child ends with fatal (§8).
func (s *server) abortOversize(ctx context.Context, text, fatal string) error {
	ev, err := s.eng.Resume(ctx, &message.AbortFeed{Exception: message.NewException("RuntimeError", text)}, &s.pr)
	if err != nil {
		return s.engineFailed(err)
	}
	if _, ok := ev.(*message.Error); !ok {
		return s.fatal(protocol.ExitProtocol, fatal, nil)
	}
	s.st = sReady
	return s.reply(ev)
}

// tooLarge returns the size of an over-cap frame from an encode error
// ("" when the error is not about size).
func tooLarge(err error) string {
	var tl *frame.TooLargeError
	if errors.As(err, &tl) {
		return strconv.FormatUint(tl.Len, 10)
	}
	if errors.Is(err, frame.ErrTooLarge) || strings.Contains(err.Error(), "frame cap") {
		return "more than " + strconv.Itoa(protocol.MaxFrameLen)
	}
	return ""
}

// wrongEvent ends the child after an engine answered a request with an
// event that cannot answer it.
func (s *server) wrongEvent(req message.Request, ev message.Event) error {
	name := "no event"
	if ev != nil {
		name = ev.EventKind().String()
	}
	return s.fatal(protocol.ExitFatal, "engine answered "+req.RequestKind().String()+" with "+name, nil)
}

// engineFailed ends the child after an engine error.
func (s *server) engineFailed(err error) error {
	if perr := s.pr.failure(); perr != nil {
		// The turn was stopped because its output could not be sent.
		return &ExitError{Code: protocol.ExitStdoutBroken, Err: perr}
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Message != "" {
			s.send(&message.ChildEvent{Body: fatalError(ee.Message)}, false)
		}
		return ee
	}
	return s.fatal(protocol.ExitFatal, "engine failed: "+err.Error(), err)
}

// reply sends a turn-ending event, stamped when an interpreter exists.
func (s *server) reply(ev message.Event) error {
	return s.send(&message.ChildEvent{Body: ev}, true)
}

// stamped wraps ev with the session's metadata when an interpreter exists.
// The result is the server's own, valid until the next call: it is
// encoded at once and never kept (a relayed turn then allocates nothing
// for its stamps).
func (s *server) stamped(ev message.Event, load bool) *message.ChildEvent {
	s.ce = message.ChildEvent{Body: ev}
	ce := &s.ce
	if s.st < sReady {
		return ce
	}
	st := s.eng.Stamps()
	ce.TotalExecutionMicros = st.TotalExecutionMicros
	ce.MaxDurationMicros = st.MaxDurationMicros
	s.ms = uint64(protocol.DefaultMaxSuspensions)
	if s.maxSusp != nil {
		s.ms = *s.maxSusp
	}
	ce.MaxSuspensions = &s.ms
	if load {
		name := st.ScriptName
		ce.RestoredScriptName = &name
	}
	if s.codec.Version() >= protocol.Version5 {
		// Protocol 5 has no per-session duration limit; it stamps the
		// feed's clock and echoes the feed, turn and sleep limits.
		ce.MaxDurationMicros = nil
		ce.FeedExecutionMicros = st.FeedExecutionMicros
		ce.MaxFeedDurationMicros, ce.MaxTurnDurationMicros, ce.MaxTotalSleepMicros = s.lim5[0], s.lim5[1], s.lim5[2]
		if st.Limits5 != nil {
			ce.MaxFeedDurationMicros, ce.MaxTurnDurationMicros, ce.MaxTotalSleepMicros = st.Limits5[0], st.Limits5[1], st.Limits5[2]
		}
	}
	return ce
}

// send encodes and writes a turn-ending event after the turn's output.
func (s *server) send(ce *message.ChildEvent, stamp bool) error {
	if stamp {
		ce = s.stamped(ce.Body, false)
	}
	buf, err := s.codec.AppendEvent(s.wbuf[:0], ce)
	if err == nil && len(buf) > s.lim.FrameLen() {
		err = &frame.TooLargeError{Len: uint64(len(buf)), Max: uint64(s.lim.FrameLen())}
	}
	if err != nil {
		size := tooLarge(err)
		switch {
		case ce.Body.EventKind() == message.KindFatalError:
			// Best effort (see fatal): the child ends either way, and a
			// FatalError is never replaced by an Error.
			return err
		case size != "":
			// An event over the cap, an Error included, is replaced by
			// the contract's shortened form (§8); exit 76 only when even
			// that cannot be sent (§14).
			short := &message.ChildEvent{Body: &message.Error{Exception: message.NewException("RuntimeError",
				"result frame of "+size+" bytes exceeds the maximum of "+strconv.Itoa(s.lim.FrameLen())+" bytes")}}
			if stamp {
				short = s.stamped(short.Body, false)
			}
			sbuf, serr := s.codec.AppendEvent(s.wbuf[:0], short)
			if serr == nil && len(sbuf) <= s.lim.FrameLen() {
				s.wbuf = sbuf
				return s.write(sbuf)
			}
			return s.fatal(protocol.ExitProtocol, "response frame of "+size+" bytes exceeds maximum of "+
				strconv.Itoa(s.lim.FrameLen())+" bytes", err)
		}
		return s.fatal(protocol.ExitProtocol, "response frame cannot be encoded: "+err.Error(), err)
	}
	s.wbuf = buf
	return s.write(buf)
}

// write sends a turn-ending frame after flushing the turn's prints.
func (s *server) write(buf []byte) error {
	err := s.pr.end(func() error { return s.conn.WriteFrame(buf) })
	if cap(s.wbuf) > 1<<20 {
		s.wbuf = nil
	}
	if err != nil {
		return &ExitError{Code: protocol.ExitStdoutBroken, Err: err}
	}
	return nil
}

// writePrint encodes and writes one Print event (printer lock held). A
// Print over the frame cap (a cap below what the 8 KiB print buffer
// holds) is sent as several that fit: a segment at a time, a segment's
// text cut between characters, so the output arrives whole and in order.
func (s *server) writePrint(p *message.Print) error {
	buf, err := s.codec.AppendEvent(s.pbuf[:0], &message.ChildEvent{Body: p})
	if err != nil {
		return err
	}
	s.pbuf = buf
	if cap(s.pbuf) > 1<<20 {
		s.pbuf = nil
	}
	if len(buf) <= s.lim.FrameLen() {
		return s.conn.WriteFrame(buf)
	}
	if len(p.Segments) > 1 {
		for i := range p.Segments {
			if err := s.writePrint(&message.Print{Segments: p.Segments[i : i+1]}); err != nil {
				return err
			}
		}
		return nil
	}
	var seg message.PrintSegment
	if len(p.Segments) == 1 {
		seg = p.Segments[0]
	}
	cut := len(seg.Text) / 2
	for cut > 0 && !utf8.RuneStart(seg.Text[cut]) {
		cut--
	}
	if cut == 0 {
		// Not even one character fits.
		return &frame.TooLargeError{Len: uint64(len(buf)), Max: uint64(s.lim.FrameLen())}
	}
	for _, text := range [2]string{seg.Text[:cut], seg.Text[cut:]} {
		if err := s.writePrint(&message.Print{Segments: []message.PrintSegment{{Stream: seg.Stream, Text: text}}}); err != nil {
			return err
		}
	}
	return nil
}

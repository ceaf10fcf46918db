// Package relay is the first [child.Engine]: it relays each session to a
// real `monty subprocess` worker through gomonty's own parent (package
// session), at whatever protocol version that worker speaks. The version
// the outer parent configured is independent of the inner one: requests
// and events are decoded into the version-free domain types and
// re-encoded, so values travel as value graphs (sharing kept where both
// versions can express it) and limits, dumps, type-check diagnostics and
// tracebacks pass through unchanged.
//
// When the inner worker dies, the engine reports a *child.ExitError with
// the inner worker's exit status (or signal) and any FatalError text it
// announced, so the serving child can end the same way and any parent
// classifies the death as it would for the real worker.
//
// At an outer protocol 4 or 5 over an older inner worker the relay
// emulates the eager-await handshake (eager.go); at an outer 5 it also
// enforces the feed and turn budgets, answers the date calls from the OS
// policy and wraps dumps with the protocol-5 limits (v5.go); and at any
// version it words an older dump's Load refusal as
// the contract does (dumpcheck.go). What the relay cannot
// carry: stderr output and inputs deeper than protocol 2 nests (see
// docs/CONFORMANCE.md); a request the inner version cannot express (Feed.cwd for a
// protocol-2 worker, an input with no protocol-2 form or whose protocol-2
// form is over the inner frame cap) is refused as a protocol violation in
// the contract's words for what it carries ("invalid inputs: …"; an
// answer with no stand-in "invalid result(s): …", an abort's exception
// "invalid exception: …", a dump "failed to load session: …") and the
// session lives on. An
// answer to a suspension that the inner worker cannot take (a result
// nested too deep for protocol 2, or whose tree is over the frame cap) is
// replaced by the catchable ValueError package session raises for its
// own at protocol 2 (unsent.go).
package relay

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"syscall"
	"time"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/mount"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// Config configures the relay engine. The zero value resolves the inner
// worker like any gomonty parent and negotiates its version.
//
// Config is plain data, safe to share.
type Config struct {
	// Worker configures the inner worker process (binary, stderr, kill
	// grace).
	Worker worker.Config
	// ProtocolVersion pins the inner protocol version; 0 negotiates.
	ProtocolVersion uint32
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// Start, when set, opens the inner session in place of session.Start
	// (for example a checkout from a prewarmed pool, whose *pool.Session
	// satisfies Inner); its Close then ends it. Worker and ProtocolVersion
	// are not applied to the session.Config it receives: the source
	// chooses those.
	Start func(ctx context.Context, cfg session.Config) (Inner, error)
}

// Inner is what the relay needs of the inner session: *session.Session
// and *pool.Session both provide it.
//
// The relay calls it from one goroutine at a time, except Close, which a
// protocol-5 feed clock may call from a timer's goroutine while a turn is
// in flight (as *session.Session and *pool.Session allow).
type Inner interface {
	Do(ctx context.Context, req message.Request) (*message.ChildEvent, error)
	Stamps() session.Stamps
	Version() uint32
	Pid() int
	Close() error
}

// Engine relays one served session to an inner worker. It implements
// child.Engine; like every engine it is used from one goroutine at a
// time and is not safe for concurrent use.
type Engine struct {
	cfg   Config
	s     Inner
	out   child.Output
	reset bool // the inner worker has no session (after Reset)
	fresh bool // started by InitialVersion: configured with defaults, unused
	name  string
	v5    v5    // protocol-5 translation over an older inner worker
	eg    eager // eager await over an older inner worker (eager.go)
	// What the parent's answers answer, to name one the inner worker
	// cannot take (unsent.go): the suspension passed on last, and the
	// functions of the calls answered with a future, by call id.
	asked   asked
	futures map[uint32]string
	// The classes of the host objects the parent sent, by object id, to
	// name a method or an attribute as session does (unsent.go).
	hosts map[value.UUID]hostObject
}

// New returns an engine; the inner worker starts on the first Configure
// (or Load).
func New(cfg Config) *Engine {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Engine{cfg: cfg}
}

var _ child.Engine = (*Engine)(nil)

// Pid returns the inner worker's process id, or 0 before it started.
func (e *Engine) Pid() int {
	if e.s == nil {
		return 0
	}
	return e.s.Pid()
}

// Configure starts the inner worker on the first call (negotiating its
// version) and configures its session with the outer Configure's fields.
func (e *Engine) Configure(ctx context.Context, c *message.Configure) error {
	e.eagerConfigure(c)
	e.forgetSession()
	if e.s != nil && e.fresh {
		// Started early by InitialVersion with a default session: drop it.
		if _, err := e.do(ctx, &message.Reset{}); err != nil {
			return err
		}
		e.fresh, e.reset = false, true
	}
	if e.s == nil {
		base, exact := sessionConfig(c)
		if err := e.start(ctx, base); err != nil {
			return err
		}
		if exact && c.ProtocolVersion < protocol.Version5 {
			return nil
		}
		if exact && e.serves5(c.ProtocolVersion) {
			// The relay keeps protocol 5's limits and policy for itself,
			// so the session's Configure was the inner one: no Reset,
			// which would leave the inner worker counting some 100–200
			// bytes of heap it kept from the first session (the released
			// worker's accounting) that a worker configured once does not.
			return e.adopt5(ctx, c)
		}
		// The session's Config cannot express every Configure (explicit
		// zero limits, an empty script name, protocol 5's limits and
		// policy): reconfigure with the exact fields.
		if _, err := e.do(ctx, &message.Reset{}); err != nil {
			return err
		}
	}
	inner := *c
	if e.v5.clock != nil {
		e.v5.clock.Close()
	}
	e.v5 = v5{}
	if e.serves5(c.ProtocolVersion) {
		in, err := e.configure5(c)
		if err != nil {
			return err
		}
		inner = *in
	}
	inner.ProtocolVersion = e.s.Version()
	ev, err := e.do(ctx, &inner)
	if err != nil {
		return err
	}
	if _, ok := ev.(*message.Ok); !ok {
		return &child.ExitError{Code: protocol.ExitFatal, Message: "inner worker refused Configure: " + describe(ev)}
	}
	e.reset = false
	return nil
}

// adopt5 prepares the protocol-5 translation for c over an inner worker
// already configured with c's inner fields; when the relay refuses c, the
// inner session is dropped so that the next Configure is served.
func (e *Engine) adopt5(ctx context.Context, c *message.Configure) error {
	if e.v5.clock != nil {
		e.v5.clock.Close()
	}
	e.v5 = v5{}
	if _, err := e.configure5(c); err != nil {
		if _, rerr := e.do(ctx, &message.Reset{}); rerr != nil {
			return rerr
		}
		e.reset = true
		return err
	}
	e.reset = false
	return nil
}

func (e *Engine) start(ctx context.Context, base session.Config) error {
	base.Logger = e.cfg.Logger
	base.PassSuspensions = true
	base.Print = e.print
	if e.cfg.Start != nil {
		s, err := e.cfg.Start(ctx, base)
		if err != nil {
			return died(err)
		}
		e.s = s
		return nil
	}
	launch := session.Launch{
		Launcher:        session.ProcessLauncher{Worker: e.cfg.Worker},
		ProtocolVersion: e.cfg.ProtocolVersion,
	}
	s, err := session.Start(ctx, launch, base)
	if err != nil {
		return died(err)
	}
	e.s = s
	return nil
}

func (e *Engine) print(stream message.PrintStream, text string) {
	if e.out != nil {
		e.out.Print(stream, text)
	}
}

// workerDefaults is the inner session's configuration before a Configure
// says otherwise: the relay stands in for a worker, whose defaults (no
// memory limit, no duration limit) are the ones its parent expects, not a
// session's.
func workerDefaults() session.Config {
	return session.Config{Limits: session.Limits{MaxMemory: session.NoMemoryLimit, MaxDuration: session.NoDurationLimit}}
}

// sessionConfig maps a Configure onto a session.Config, reporting whether
// the mapping is exact.
func sessionConfig(c *message.Configure) (session.Config, bool) {
	cfg := session.Config{
		Limits:                   workerDefaults().Limits,
		ScriptName:               c.ScriptName,
		TypeCheck:                c.TypeCheck,
		TypeCheckFormat:          c.TypeCheckFormat,
		TypeCheckColor:           c.TypeCheckColor,
		AssertMessageAnnotations: c.AssertMessageAnnotations,
		MontyVersion:             c.MontyVersion,
	}
	exact := c.ScriptName != ""
	if c.TypeCheckStubs != nil {
		cfg.TypeCheckStubs = *c.TypeCheckStubs
		exact = exact && cfg.TypeCheckStubs != ""
	}
	if ms := c.PrintFlushIntervalMs; ms != nil {
		if *ms == 0 {
			cfg.LineBufferedPrint = true
		} else {
			cfg.PrintFlushInterval = time.Duration(*ms) * time.Millisecond
		}
	}
	if l := c.Limits; l != nil {
		set := func(p *uint64, dst *uint64) {
			if p != nil {
				*dst = *p
				exact = exact && *p != 0
			}
		}
		set(l.MaxMemoryBytes, &cfg.Limits.MaxMemory)
		if cfg.Limits.MaxMemory == 0 {
			cfg.Limits.MaxMemory = session.NoMemoryLimit // 0 is not a session's to send; inexact
		}
		set(l.MaxRecursionDepth, &cfg.Limits.MaxRecursionDepth)
		set(l.MaxSuspensions, &cfg.Limits.MaxSuspensions)
		set(l.GCInterval, &cfg.Limits.GCInterval)
		if d, ok := l.MaxDuration(); ok && d > 0 {
			// 0 is not a session's to send (it would mean the session's
			// default); the exact Configure carries it. Inexact.
			cfg.Limits.MaxDuration = d
		}
		if l.MaxDurationMicros != nil {
			exact = exact && *l.MaxDurationMicros != 0 && *l.MaxDurationMicros < 1<<53
		}
	}
	return cfg, exact
}

// InitialVersion starts the inner worker (negotiating its version) and
// reports the version it speaks: before any Configure the child speaks
// it, as the worker it stands in for would (see child.InitialVersioner).
// A relay protocol-5 dump (see dump5) is made only for a protocol-5
// parent, so loading one first settles the child at 5 whatever the inner
// worker speaks.
func (e *Engine) InitialVersion(ctx context.Context, state []byte) (uint32, error) {
	if bytes.HasPrefix(state, dumpMagic5) || bytes.HasPrefix(state, dumpMagic5Old) {
		return protocol.Version5, nil
	}
	if e.s == nil {
		if err := e.start(ctx, workerDefaults()); err != nil {
			return 0, err
		}
		e.fresh = true
	}
	return e.s.Version(), nil
}

var _ child.InitialVersioner = (*Engine)(nil)

// Feed runs the snippet on the inner worker.
func (e *Engine) Feed(ctx context.Context, f *message.Feed, out child.Output) (message.Event, error) {
	if e.s == nil || e.reset {
		return nil, &child.ExitError{Code: protocol.ExitFatal, Message: "relay: Feed without an inner session"}
	}
	e.eagerScan(f.Code)
	e.learn(f)
	ev, err := e.turn(ctx, f, out, "invalid inputs: ")
	return e.asking(e.eagerAfter(ctx, ev, err))
}

// Resume relays a resume or an abort.
func (e *Engine) Resume(ctx context.Context, req message.Request, out child.Output) (message.Event, error) {
	prefix := "invalid result: "
	switch req.(type) {
	case *message.ResumeFutures:
		prefix = "invalid results: "
	case *message.AbortFeed:
		prefix = "invalid exception: "
	}
	e.learn(req)
	e.answering(req)
	ev, handled, err := e.eagerResume(ctx, req, out, prefix)
	if !handled {
		ev, err = e.turn(ctx, req, out, prefix)
		ev, err = e.eagerAfter(ctx, ev, err)
	}
	e.answered(req, ev, err)
	return e.asking(ev, err)
}

// Dump snapshots the inner session (at protocol 5 with the relay's own
// settings; see dump5).
func (e *Engine) Dump(ctx context.Context) (message.Event, error) {
	if ev, ok := e.eagerDump(); ok {
		return e.dump5(ev, nil)
	}
	return e.dump5(e.turn(ctx, &message.Dump{}, nil, "dump failed: "))
}

// Load restores a dump on the inner worker, starting one first when none
// runs yet.
func (e *Engine) Load(ctx context.Context, state []byte, out child.Output) (message.Event, error) {
	if e.s == nil {
		if err := e.start(ctx, workerDefaults()); err != nil {
			return nil, err
		}
		// Configured with defaults and unused, as by InitialVersion: a
		// Configure after a refused Load must drop that session first.
		e.fresh = true
	}
	state, saved, err := split5(state)
	if err != nil {
		return nil, err
	}
	if !e.v5.on && e.serves5(e.eg.outer) {
		// A protocol-5 parent that starts with Load (or loads after a
		// Reset) sent no Configure: translate with the defaults, which a
		// relay dump's settings then replace.
		clock, err := clock5(nil)
		if err != nil {
			return nil, err
		}
		e.v5 = v5{on: true, clock: clock}
	}
	// The dump's settings are checked before the inner worker loads
	// anything, so that a refusal leaves the child able to load again.
	var clock *mount.Table
	if e.v5.on && saved != nil {
		if clock, err = clock5(saved.OsPolicy); err != nil {
			return nil, err
		}
	}
	ev, err := e.turnEvent(ctx, &message.Load{State: state}, out, "failed to load session: ")
	loaded := false
	if err == nil {
		_, refused := ev.Body.(*message.Error)
		loaded = !refused
	}
	if loaded && e.v5.on && saved != nil {
		e.restore5(saved, clock)
	} else if clock != nil {
		clock.Close()
	}
	if err != nil {
		return nil, err
	}
	if ev.RestoredScriptName != nil {
		e.name = *ev.RestoredScriptName
	}
	body := rewordLoadRefusal(state, ev.Body)
	if _, ok := body.(*message.Error); !ok {
		e.reset, e.fresh = false, false
		e.eagerLoaded()
		e.forgetSession()
	}
	return e.asking(e.eagerAfter(ctx, body, nil))
}

// Reset drops the inner session; the next Configure reconfigures the same
// worker.
func (e *Engine) Reset(ctx context.Context) error {
	e.name = ""
	e.eagerReset()
	e.forgetSession()
	if e.v5.tripped {
		// The inner worker was killed by a time limit: the next
		// Configure starts a fresh one.
		e.s, e.v5 = nil, v5{}
		return nil
	}
	if e.s == nil {
		return nil
	}
	ev, err := e.do(ctx, &message.Reset{})
	if err != nil {
		return err
	}
	if _, ok := ev.(*message.Ok); !ok {
		return &child.ExitError{Code: protocol.ExitFatal, Message: "inner worker refused Reset: " + describe(ev)}
	}
	// The session's protocol-5 limits and clock go with it.
	if e.v5.clock != nil {
		e.v5.clock.Close()
	}
	e.v5 = v5{}
	e.reset = true
	return nil
}

// Stamps reports the inner worker's stamps.
func (e *Engine) Stamps() child.Stamps {
	if e.s == nil {
		return child.Stamps{}
	}
	st := e.innerStamps()
	out := child.Stamps{TotalExecutionMicros: uint64(st.TotalExecution / time.Microsecond), ScriptName: e.name}
	if st.HasMaxDuration {
		v := st.MaxDurationMicros
		out.MaxDurationMicros = &v
	}
	if st.HasMaxSuspensions {
		v := st.MaxSuspensions
		out.MaxSuspensions = &v
	}
	e.stamps5(&out)
	return out
}

// Close stops the inner worker.
func (e *Engine) Close() error {
	if e.v5.clock != nil {
		e.v5.clock.Close()
	}
	if e.s == nil {
		return nil
	}
	return e.s.Close()
}

func (e *Engine) turn(ctx context.Context, req message.Request, out child.Output, prefix string) (message.Event, error) {
	ev, err := e.turnEvent(ctx, req, out, prefix)
	if err != nil {
		return nil, err
	}
	return ev.Body, nil
}

func (e *Engine) turnEvent(ctx context.Context, req message.Request, out child.Output, prefix string) (*message.ChildEvent, error) {
	e.out = out
	defer func() { e.out = nil }()
	ev, err := e.sendOrStandIn(ctx, req)
	if err != nil {
		// A request the inner worker cannot take, nested too deep or
		// over its frame cap once in its version's form, is refused in
		// the contract's words for a conversion failure of what it
		// carries (prefix: "invalid inputs: ", "invalid result: ", ...);
		// nothing was sent, so the session is as it was.
		var ie *session.InvalidRequestError
		var tl *session.RequestTooLargeError
		switch {
		case errors.As(err, &ie):
			return nil, &child.Violation{Text: prefix + ie.Err.Error()}
		case errors.As(err, &tl):
			return nil, &child.Violation{Text: prefix + tl.Error()}
		}
		return nil, died(err)
	}
	return ev, nil
}

func (e *Engine) do(ctx context.Context, req message.Request) (message.Event, error) {
	ev, err := e.s.Do(ctx, req)
	if err != nil {
		return nil, died(err)
	}
	return ev.Body, nil
}

// died maps the loss of the inner worker onto the way the serving child
// must end: the inner exit status or signal, and its FatalError text.
func died(err error) error {
	var ce *worker.CrashError
	var me *worker.MemoryLimitError
	var te *session.TimeoutError
	switch {
	case errors.As(err, &ce):
		ee := &child.ExitError{Code: protocol.ExitCode(ce.Exit.Code), Signal: ce.Exit.Signal, Err: err}
		if ce.Reason == worker.Announced {
			ee.Message = ce.Message
		}
		if ce.Exit.Code < 0 && ce.Exit.Signal == 0 {
			ee.Code = protocol.ExitFatal
		}
		return ee
	case errors.As(err, &me):
		return &child.ExitError{Code: protocol.ExitOOM, Err: err}
	case errors.As(err, &te):
		return &child.ExitError{Code: -1, Signal: syscall.SIGKILL, Err: err}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return &child.ExitError{Code: protocol.ExitFatal, Message: "inner worker failed: " + err.Error(), Err: err}
}

func describe(ev message.Event) string {
	if e, ok := ev.(*message.Error); ok && e.Exception != nil {
		return strings.TrimSpace(e.Exception.Type + ": " + e.Exception.Msg())
	}
	if ev == nil {
		return "no event"
	}
	return ev.EventKind().String()
}

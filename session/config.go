package session

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// Defaults for zero Config fields.
const (
	// DefaultScriptName is the script name sent in Configure.
	DefaultScriptName = "main.py"
	// DefaultWatchdogGrace is how long past its duration budget
	// (max_duration, or at protocol 5 max_feed_duration or
	// max_turn_duration) a turn may run before the parent kills the
	// worker.
	DefaultWatchdogGrace = time.Second
	// DefaultAbortTimeout bounds the AbortFeed sent when a context is done
	// while a feed waits on the host.
	DefaultAbortTimeout = 5 * time.Second
	// DefaultStartTimeout bounds the Configure handshake of Start and
	// Attach: a worker that has not answered Configure by then is killed.
	DefaultStartTimeout = 10 * time.Second
	// DefaultMaxMemory is the sandbox heap limit a zero Limits.MaxMemory
	// applies: 256 MiB. Untrusted code must not be able to take the host's
	// memory by default; a session that needs more says so.
	DefaultMaxMemory = 256 << 20
	// NoMemoryLimit, as Limits.MaxMemory, sends the worker no memory
	// limit: its own default, which is unlimited.
	NoMemoryLimit = math.MaxUint64
	// DefaultMaxDuration is the execution-time budget a zero
	// Limits.MaxDuration applies: 60 s, the same as the server's default
	// ceiling (server.DefaultMaxDuration). Untrusted code must not be able
	// to compute forever by default; a session that needs longer says so.
	DefaultMaxDuration = 60 * time.Second
	// NoDurationLimit, as Limits.MaxDuration, lifts the execution-time
	// budget: nothing is sent and the parent keeps no budget of its own,
	// so only the context of each call (and any per-feed or per-turn
	// limit) bounds the time.
	NoDurationLimit = time.Duration(math.MaxInt64)
)

// defaultMaxDuration is DefaultMaxDuration; tests lower it to watch the
// default stop a loop without waiting a minute.
var defaultMaxDuration = DefaultMaxDuration

// ErrInvalidLimits is matched (through an *InvalidRequestError) by the
// error for a Limits that means nothing, such as a negative MaxDuration.
var ErrInvalidLimits = errors.New("monty session: invalid limits")

// Limits are the sandbox's resource limits. The zero value is finite:
// memory is capped at DefaultMaxMemory, execution time at
// DefaultMaxDuration, and a zero field otherwise means the worker's
// default (recursion depth 1000, 1000 suspensions per feed). NoMemoryLimit
// and NoDurationLimit lift the two caps. The context of each call bounds
// the time as well (a done context kills a worker that is running), and
// sleeps are bounded on their own (see MaxTotalSleep). A negative duration
// is refused (an *InvalidRequestError matching ErrInvalidLimits).
//
// Limits is plain data, safe to share.
type Limits struct {
	// MaxDuration caps the session's cumulative execution time (time spent
	// running sandbox code, not time suspended or idle). The worker raises
	// an uncatchable TimeoutError; the parent kills a worker that overruns
	// by more than Config.WatchdogGrace. Protocol 5 has no cumulative
	// limit: there the worker is given MaxDuration as its per-feed limit
	// (so a single feed over the budget still gets the TimeoutError) and
	// the rest is the parent's watchdog. 0 means DefaultMaxDuration;
	// NoDurationLimit lifts the budget, leaving only the context of each
	// call to bound the time.
	MaxDuration time.Duration
	// MaxMemory caps the sandbox heap in bytes. The worker raises
	// MemoryError at its checkpoints; an allocation past the allocator
	// ceiling (its baseline plus this limit plus 4 MiB) ends the worker
	// (worker.ErrMemoryLimit). A result is held twice while the worker
	// builds its frame, so a result over about half the limit ends the
	// worker (measured with the released worker: 126 MiB returned, 130 MiB
	// did not, at 256 MiB); a Dump, over about a quarter (see
	// Session.Dump). Zero means DefaultMaxMemory; NoMemoryLimit lifts the
	// cap.
	MaxMemory uint64
	// MaxRecursionDepth caps Python call depth; 0 means the worker's
	// default (1000).
	MaxRecursionDepth uint64
	// MaxSuspensions caps how often one feed may suspend (host calls, name
	// lookups, OS calls, future waits, protocol-5 system sleeps). The
	// parent enforces it (see Session.SuspensionLimit); 0 means the
	// worker's default (1000), and Config.PassSuspensions lifts it.
	MaxSuspensions uint64
	// GCInterval is the worker's garbage-collection interval; 0 means the
	// worker's default. It bounds no resource.
	GCInterval uint64
	// MaxFeedDuration caps one feed's execution time (protocol 5 only:
	// the budget restarts at each Feed and the worker raises an
	// uncatchable TimeoutError). It overrides MaxDuration's per-feed
	// translation at 5. Protocols 4 and 2 cannot express a per-feed
	// budget: there it is not sent (MaxDuration is their only time limit).
	// The watchdog kills a worker that runs past it by more than
	// Config.WatchdogGrace (a *TimeoutError with Limit LimitFeed). 0 means
	// no per-feed budget beyond MaxDuration's translation.
	MaxFeedDuration time.Duration
	// MaxTurnDuration caps one turn's execution time, the budget
	// restarting at each Feed and each resume (protocol 5 only; not sent
	// at 4 and 2). The watchdog backstops it from the request (Limit
	// LimitTurn). 0 means no per-turn budget.
	MaxTurnDuration time.Duration
	// MaxTotalSleep is the cumulative budget of the sandbox's system
	// sleeps, charged and enforced by the parent (protocol 5 only; not
	// sent at 4 and 2, whose workers have no sleeps). After a Load the
	// dump's limit, which the worker echoes, applies when it is lower.
	// Run waits the sleeps out itself; Feed and Resume return a
	// system_sleep OsCall for the caller to wait out, charged already, and
	// return the aborted feed's Error instead of one past the budget. Each
	// sleep is charged and waited at most the per-call cap of OsPolicy
	// (message.DefaultMaxSleep without one; the OsCall's Seconds is
	// lowered to it), however long a worker asks for. 0 means no budget
	// of the parent's (after a Load, the dump's if it has one): each sleep
	// is then still capped per call and counts as one of the feed's
	// suspensions (MaxSuspensions), so a feed's sleeps stay finite, at
	// most the two caps multiplied (10 s times 1000 by default); the
	// caller's context bounds them sooner.
	MaxTotalSleep time.Duration
}

// wire returns the limits as protocol version v carries them. Protocol 5
// has no cumulative duration limit: MaxDuration goes as the per-feed limit
// (any one feed over the budget is over the session's budget too, and is
// stopped by the worker with a TimeoutError), and the cumulative rest is
// left to the parent's watchdog, which reads total_execution_micros.
func (l Limits) wire(v uint32) *message.ResourceLimits {
	l.MaxDuration = l.maxDuration()
	var r message.ResourceLimits
	set := false
	opt := func(v uint64) *uint64 {
		if v == 0 {
			return nil
		}
		set = true
		return &v
	}
	if l.MaxDuration > 0 {
		us := opt(uint64(max(l.MaxDuration/time.Microsecond, 1)))
		if v >= protocol.Version5 {
			r.MaxFeedDurationMicros = us
		} else {
			r.MaxDurationMicros = us
		}
	}
	if v >= protocol.Version5 {
		l.wire5(&r, opt)
	}
	switch l.MaxMemory {
	case 0:
		r.MaxMemoryBytes = opt(DefaultMaxMemory)
	case NoMemoryLimit:
	default:
		r.MaxMemoryBytes = opt(l.MaxMemory)
	}
	r.MaxRecursionDepth = opt(l.MaxRecursionDepth)
	r.MaxSuspensions = opt(l.MaxSuspensions)
	r.GCInterval = opt(l.GCInterval)
	if !set {
		return nil
	}
	return &r
}

// maxDuration returns the cumulative budget MaxDuration means: the
// default for zero, 0 (none) for NoDurationLimit and for a negative value,
// which check refuses before anything is sent.
func (l Limits) maxDuration() time.Duration {
	switch {
	case l.MaxDuration == 0:
		return defaultMaxDuration
	case l.MaxDuration == NoDurationLimit, l.MaxDuration < 0:
		return 0
	}
	return l.MaxDuration
}

// check refuses limits that mean nothing: a negative duration, which
// would otherwise pass for no limit at all.
func (l Limits) check() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"MaxDuration", l.MaxDuration},
		{"MaxFeedDuration", l.MaxFeedDuration},
		{"MaxTurnDuration", l.MaxTurnDuration},
		{"MaxTotalSleep", l.MaxTotalSleep},
	} {
		if f.d < 0 {
			return &InvalidRequestError{Err: fmt.Errorf("%w: %s is negative (%v)", ErrInvalidLimits, f.name, f.d)}
		}
	}
	return nil
}

// PrintFunc receives sandbox output, one segment at a time, in order.
//
// A session calls it from the goroutine running the turn, one segment at a
// time. The turn waits for it and Go cannot interrupt it: a PrintFunc that
// blocks (a full pipe, a slow network sink) holds the turn past its
// context's end and past Close. The worker does not wait: a context that
// ends, or a Close or Kill, kills it at once, and the turn returns its
// error as soon as the PrintFunc returns. A sink that may block should
// buffer, or give up on its own deadline.
type PrintFunc func(stream message.PrintStream, text string)

// Writers returns a PrintFunc that writes standard output to stdout and
// standard error to stderr (protocol 4 workers only; the released worker
// has no stderr stream). A nil writer discards its stream. Write errors
// are ignored: output is best effort and never fails a turn.
func Writers(stdout, stderr io.Writer) PrintFunc {
	return func(stream message.PrintStream, text string) {
		w := stdout
		if stream == message.StreamStderr {
			w = stderr
		}
		if w != nil {
			io.WriteString(w, text)
		}
	}
}

// Config holds the sandbox and session options of a session: what to
// tell the worker in Configure, the parent-side limits and where output
// and diagnostics go. How the worker is obtained is [Launch]'s business
// (for Start), or the caller's (for Attach and pool checkouts). The zero
// value applies the default limits (see Limits).
//
// A Config is plain data; Start copies it, so it may be reused and shared
// (the functions and loggers it holds must then be safe for concurrent use).
type Config struct {
	// ScriptName appears in type-check diagnostics and dumps; empty means
	// DefaultScriptName.
	ScriptName string
	// Limits are the resource limits.
	Limits Limits
	// TypeCheck turns on static type checking of every snippet before it
	// runs.
	TypeCheck bool
	// TypeCheckStubs declares names for the type checker (for example
	// signatures of host functions).
	TypeCheckStubs string
	// TypeCheckFormat selects the diagnostic format.
	TypeCheckFormat message.TypeCheckFormat
	// TypeCheckColor adds ANSI colors to FULL and CONCISE diagnostics.
	TypeCheckColor bool
	// AssertMessageAnnotations sets how many bytes of each operand an
	// introspected assert message keeps; nil means the worker's default
	// (120) and 0 disables the annotation.
	AssertMessageAnnotations *uint32
	// PrintFlushInterval is how long the worker may hold print output;
	// 0 means the worker's default (5 ms).
	PrintFlushInterval time.Duration
	// LineBufferedPrint makes the worker emit one Print per completed
	// line (it overrides PrintFlushInterval).
	LineBufferedPrint bool
	// MontyVersion is sent as Configure.monty_version (informational).
	MontyVersion string

	// Print receives the sandbox's output of every turn, Run included,
	// one segment at a time and in order; nil discards it. [Writers]
	// adapts a pair of io.Writers. It is called mid-turn: if it panics,
	// the rest of the turn cannot be read, so the worker is discarded
	// (the session is closed) before the panic goes on. A call that
	// blocks holds the turn, even past its context's end (see PrintFunc).
	Print PrintFunc
	// WatchdogGrace is the backstop margin past the max_duration budget;
	// 0 means DefaultWatchdogGrace. The backstop counts wall-clock time
	// from the request, the time spent in Print included: a worker goes
	// on running while its prints are delivered, so that time cannot be
	// left out without letting a worker that floods a slow sink run
	// unbounded. A slow Print sink should buffer, or the grace cover it.
	//
	// A turn that runs no code (Dump, Load, Reset, Shutdown, or a
	// request Do sends that is neither a feed nor a resume) has a
	// backstop too, which a healthy worker never reaches: the
	// max_duration budget in force
	// (DefaultMaxDuration when there is none, as under NoDurationLimit or
	// at protocol 5 without Limits.MaxDuration) or StartTimeout, whichever
	// is longer, plus WatchdogGrace. A worker that has not answered by
	// then is killed and the call fails with a *TimeoutError (Watchdog,
	// Limit LimitReply, Budget that whole bound), whatever its context.
	WatchdogGrace time.Duration
	// AbortTimeout bounds the AbortFeed sent when a context ends while a
	// feed waits on the host; 0 means DefaultAbortTimeout.
	AbortTimeout time.Duration
	// StartTimeout bounds the Configure handshake of Start, Attach and
	// Reset (each Configure exchange, per worker started), and the dial
	// of each remote worker Start connects to; 0 means
	// DefaultStartTimeout. A worker that has not answered by then is
	// killed and the call fails with a *StartTimeoutError.
	StartTimeout time.Duration
	// PassSuspensions makes the session pass every suspension to the
	// caller without enforcing max_suspensions. It is for relays (package
	// child/relay) whose own parent counts suspensions and aborts the feed
	// itself; everyone else wants the limit enforced.
	PassSuspensions bool
	// MaxDecodeBytes is the per-frame decode budget; 0 means 1 GiB.
	MaxDecodeBytes int64
	// OsPolicy says how a protocol-5 worker answers clocks, sleeps and
	// entropy (see message.OsPolicy); nil means the worker's default (its
	// own clock in UTC, its own entropy, sleeps capped at 10 s). It is not
	// sent at protocols 4 and 2, which have no policy.
	OsPolicy *message.OsPolicy
	// Persistence asks a relay that stores sessions (protocol 5) to keep
	// this one (message.PersistenceStored: parked on idle, drain or
	// disconnect, loadable by the id Session.RemoteSessionID returns) or
	// never to (message.PersistenceEphemeral); the zero value leaves it to
	// the relay. Workers ignore it; it is not sent at protocols 4 and 2.
	Persistence message.Persistence
	// Profile names a relay's server-side profile (protocol 5); workers
	// ignore it; it is not sent at protocols 4 and 2.
	Profile string
	// MaxHostObjects caps the host objects (instances of a Class) the
	// session keeps alive for the worker at once; 0 means
	// DefaultMaxHostObjects. Sending one more is a *HostObjectLimitError
	// (in the sandbox, a RuntimeError). Reset and Detach release them all.
	// An answer that is not sent (refused for a value the sandbox does
	// not take back, or a conversion error) keeps none of its new ones;
	// while an answer is built, its new ones count too.
	MaxHostObjects int
	// TracerProvider records the session's spans (see SpanSession);
	// nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider records the session's metrics (see MetricRunDuration
	// and its siblings); nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// TelemetryContent opts in to recording sensitive data on spans: the
	// fed code, host function names and arguments, OS call paths, results
	// and print output. Without it every attribute comes from a closed set.
	TelemetryContent bool

	// Logger receives session diagnostics; nil means slog.Default().
	// (A worker process logs through its own worker.Config.Logger.)
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.ScriptName == "" {
		c.ScriptName = DefaultScriptName
	}
	if c.WatchdogGrace <= 0 {
		c.WatchdogGrace = DefaultWatchdogGrace
	}
	if c.AbortTimeout <= 0 {
		c.AbortTimeout = DefaultAbortTimeout
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c *Config) codecLimits(maxFrameLen int) codec.Limits {
	return codec.Limits{MaxDecodeBytes: c.MaxDecodeBytes, MaxFrameLen: maxFrameLen}
}

// Validate reports whether the Configure request c makes can be sent at
// protocol version v: an *InvalidRequestError when it cannot be encoded
// (a string that is not UTF-8, a value the version cannot express), a
// *RequestTooLargeError when it is over the protocol's frame cap, an
// *InvalidRequestError matching message.ErrInvalidPolicy at protocol 5 when
// OsPolicy is one a child refuses, one matching ErrInvalidLimits for a
// negative duration limit, an *UnknownVersionError for a version with no
// codec.
// Start and Attach find the same errors when they configure a worker
// (the limits and the policy before the Configure is sent), and then have
// stopped it; a
// pool validates before it takes a worker, so that a bad Config costs none.
//
// Validate does not start anything and is safe for concurrent use.
func (c Config) Validate(v uint32) error {
	c = c.withDefaults()
	if err := c.Limits.check(); err != nil {
		return err
	}
	if err := CheckRequest(v, c.configure(v)); err != nil {
		return err
	}
	if v >= protocol.Version5 {
		if err := c.OsPolicy.Validate(); err != nil {
			return &InvalidRequestError{Err: err}
		}
	}
	return nil
}

// CheckRequest reports whether req can be sent at protocol version v, as
// Do finds before it sends anything: an *InvalidRequestError when it
// cannot be encoded (a string that is not UTF-8, a value the version
// cannot express, such as one nested deeper than protocol 2's decoder
// reads), a *RequestTooLargeError when it is over the protocol's frame cap
// (a connection may cap frames lower), an *UnknownVersionError for a
// version with no codec. A relay asks it of one part of an answer that Do
// refused as a whole.
//
// CheckRequest encodes req and sends nothing; it is safe for concurrent
// use.
func CheckRequest(v uint32, req message.Request) error {
	cd, ok := codec.ForVersion(v)
	if !ok {
		return unknownVersion(v)
	}
	buf, err := cd.AppendRequest(nil, &message.ParentRequest{Body: req})
	return encodeError(buf, err, protocol.MaxFrameLen)
}

// configure builds the Configure request for version v.
func (c *Config) configure(v uint32) *message.Configure {
	m := &message.Configure{
		ScriptName:               c.ScriptName,
		Limits:                   c.Limits.wire(v),
		TypeCheck:                c.TypeCheck,
		MontyVersion:             c.MontyVersion,
		AssertMessageAnnotations: c.AssertMessageAnnotations,
		TypeCheckFormat:          c.TypeCheckFormat,
		TypeCheckColor:           c.TypeCheckColor,
		ProtocolVersion:          v,
	}
	if v >= protocol.Version5 {
		m.OsPolicy = c.OsPolicy
		m.Persistence = c.Persistence
		if c.Profile != "" {
			p := c.Profile
			m.Profile = &p
		}
	}
	if c.TypeCheckStubs != "" {
		s := c.TypeCheckStubs
		m.TypeCheckStubs = &s
	}
	switch {
	case c.LineBufferedPrint:
		var z uint32
		m.PrintFlushIntervalMs = &z
	case c.PrintFlushInterval > 0:
		ms := uint32(min(max(c.PrintFlushInterval/time.Millisecond, 1), 1<<31))
		m.PrintFlushIntervalMs = &ms
	}
	return m
}

package hostile

import "slices"

// Outcome is the typed result a correct parent reports for a scenario. The
// values are stable strings so that tables in other packages can match on
// them.
type Outcome string

// The outcomes.
const (
	// OK: the call succeeds (possibly after the parent recovered, for
	// example by killing a refusing child and respawning it).
	OK Outcome = "ok"
	// SandboxError: the call fails with an ordinary Python-level error (an
	// Error event) and the session survives.
	SandboxError Outcome = "sandbox-error"
	// ProtocolError: the worker broke the protocol (undecodable or invalid
	// payload, unexpected event, desync); the worker is discarded.
	ProtocolError Outcome = "protocol-error"
	// CrashAnnounced: the worker sent a FatalError and is gone (or was
	// killed after the grace period); the reason is the FatalError text.
	CrashAnnounced Outcome = "crash-announced"
	// CrashVanished: the worker died or closed its stdout without a
	// FatalError.
	CrashVanished Outcome = "crash-vanished"
	// MemoryLimit: the worker exited with status 65 (OOM_EXIT_CODE); the
	// parent reports a MemoryError.
	MemoryLimit Outcome = "memory-limit"
	// Timeout: the worker never finishes the turn; only the caller's
	// deadline or cancellation ends the call, after which the worker is
	// killed.
	Timeout Outcome = "timeout"
	// FrameTooLarge: a length prefix above the frame cap (256 MiB). The
	// parent must refuse it before allocating the body.
	FrameTooLarge Outcome = "frame-too-large"
	// DecodeBudget: the frame fits the cap but decoding it would exceed the
	// per-frame decode memory budget.
	DecodeBudget Outcome = "decode-budget"
	// VersionMismatch: the parent and the worker share no protocol version.
	VersionMismatch Outcome = "version-mismatch"
)

// Outcomes lists every outcome, in a fixed order.
func Outcomes() []Outcome {
	return []Outcome{OK, SandboxError, ProtocolError, CrashAnnounced, CrashVanished,
		MemoryLimit, Timeout, FrameTooLarge, DecodeBudget, VersionMismatch}
}

// Trigger says when a scenario starts to misbehave. Before that point the
// child behaves normally.
type Trigger string

// The triggers.
const (
	// AtSpawn: before reading anything.
	AtSpawn Trigger = "spawn"
	// AtConfigure: in place of the reply to a Configure.
	AtConfigure Trigger = "configure"
	// AfterConfigure: right after the (valid) Ok to the first Configure,
	// without waiting for another request.
	AfterConfigure Trigger = "after-configure"
	// AtFeed: in place of the reply to the first Feed.
	AtFeed Trigger = "feed"
	// AtResume: in place of the reply to the first ResumeCall.
	AtResume Trigger = "resume"
	// AtAbort: in place of the reply to the first AbortFeed.
	AtAbort Trigger = "abort"
)

// Expectation documents what a correct parent does when it meets a
// scenario. It is plain data.
type Expectation struct {
	// Outcome is the typed result of the call that meets the misbehaviour.
	Outcome Outcome
	// Accept lists further outcomes that are also correct, for cases
	// where the parent has a legitimate choice (a configured decode budget
	// smaller than a legal frame, say). Tests should accept Outcome or any
	// of these.
	Accept []Outcome
	// WorkerSurvives reports whether the same worker process keeps serving
	// afterwards. When false the parent must kill and reap it.
	WorkerSurvives bool
	// SessionSurvives reports whether the session (its globals) is still
	// usable afterwards.
	SessionSurvives bool
	// NeedsDeadline reports that nothing the worker does ends the call:
	// only the caller's deadline or cancellation does.
	NeedsDeadline bool
	// AfterOK, when set, applies when the call returned OK although
	// Outcome is something else (OK is then in Accept): the next call on
	// the same session must produce AfterOK. It covers misbehaviour that a
	// parent can only notice one request later (a stray extra event).
	AfterOK Outcome
	// Note explains the case, including what a wrong parent would do.
	Note string
}

// Allows reports whether o is the expected outcome or an accepted one.
func (e Expectation) Allows(o Outcome) bool {
	return o == e.Outcome || slices.Contains(e.Accept, o)
}

// Scenario is one named misbehaviour of the hostile child.
type Scenario struct {
	// Name selects the scenario (-scenario flag, HOSTILE_SCENARIO).
	Name string
	// Description says what the child does.
	Description string
	// Expect is what a correct parent produces.
	Expect Expectation
	// Trigger is when the misbehaviour starts.
	Trigger Trigger
	// Code is a snippet the parent should feed to reach the trigger (for
	// triggers at or after a Feed). The fake interpreter understands it.
	Code string
	// Protocols lists the protocol versions the misbehaviour is defined
	// for. Unless told otherwise the child claims 2 if it is listed (like
	// the released worker), else the first entry.
	Protocols []uint32
	// MaxSuspensions, when non-zero, is the suspension limit the parent
	// should configure to reach the trigger (AtAbort scenarios rely on the
	// parent aborting a feed that exceeds it).
	MaxSuspensions uint64
	// Result is the Python repr of the value an OK call returns when the
	// parent feeds Code, with host functions f and g returning 1 and 2;
	// empty when not worth checking (or the call never succeeds).
	Result string
	// MaxFrame is an upper bound of the largest frame body a correct
	// parent reads in full from this child (0 when every frame is small).
	// Frames it must refuse on their prefix do not count.
	MaxFrame int64
	// StderrBytes is how much the child writes to its stderr.
	StderrBytes int64
	// Scales reports that the payload (and MaxFrame) shrinks with
	// Options.Scale (-scale, HOSTILE_SCALE): MaxFrame/scale bounds it then.
	Scales bool
}

// DefaultProtocol returns the version the child claims for s when no
// -protocol flag or HOSTILE_PROTOCOL is given.
func (s Scenario) DefaultProtocol() uint32 {
	if len(s.Protocols) == 0 || slices.Contains(s.Protocols, 2) {
		return 2
	}
	return s.Protocols[0]
}

// Supports reports whether the scenario is defined for protocol v.
func (s Scenario) Supports(v uint32) bool {
	return len(s.Protocols) == 0 || slices.Contains(s.Protocols, v)
}

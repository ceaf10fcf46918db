package message

import (
	"time"

	"github.com/gomonty/monty/internal/satdur"
	"github.com/gomonty/monty/value"
)

// RequestKind identifies a request. The numbers are the arm numbers of the
// ParentRequest oneof.
type RequestKind uint8

// The request kinds.
const (
	KindConfigure           RequestKind = 1
	KindInstallDependencies RequestKind = 2
	KindFeed                RequestKind = 3
	KindResumeCall          RequestKind = 4
	KindResumeNameLookup    RequestKind = 5
	KindResumeFutures       RequestKind = 6
	KindDump                RequestKind = 7
	KindLoad                RequestKind = 8
	KindReset               RequestKind = 9
	KindShutdown            RequestKind = 10
	KindAbortFeed           RequestKind = 11
)

var requestNames = [...]string{"", "Configure", "InstallDependencies", "Feed", "ResumeCall",
	"ResumeNameLookup", "ResumeFutures", "Dump", "Load", "Reset", "Shutdown", "AbortFeed"}

// String returns the request's message name.
func (k RequestKind) String() string {
	if int(k) < len(requestNames) && k > 0 {
		return requestNames[k]
	}
	return "UnknownRequest"
}

// Request is the body of a [ParentRequest]: one of *Configure,
// *InstallDependencies, *Feed, *ResumeCall, *ResumeNameLookup,
// *ResumeFutures, *Dump, *Load, *Reset, *Shutdown, *AbortFeed.
type Request interface {
	RequestKind() RequestKind
}

// ParentRequest is one request frame from parent to child.
type ParentRequest struct {
	// Body is the request; nil when the frame carried no (known) kind.
	Body Request
	// TraceParent is the W3C traceparent of the caller's span, if any.
	TraceParent *string
}

// TypeCheckFormat selects how type-check diagnostics are rendered.
type TypeCheckFormat uint32

// The diagnostic formats. Unspecified and unknown values mean Full.
const (
	FormatUnspecified TypeCheckFormat = 0
	FormatFull        TypeCheckFormat = 1
	FormatConcise     TypeCheckFormat = 2
	FormatAzure       TypeCheckFormat = 3
	FormatJSON        TypeCheckFormat = 4
	FormatJSONLines   TypeCheckFormat = 5
	FormatRDJSON      TypeCheckFormat = 6
	FormatPylint      TypeCheckFormat = 7
	FormatGitlab      TypeCheckFormat = 8
	FormatGithub      TypeCheckFormat = 9
)

// ResourceLimits are the sandbox's limits. A nil field means unlimited,
// except MaxRecursionDepth and MaxSuspensions which then default to 1000.
//
// Which time limits exist depends on the protocol version: protocol 4 and 2
// have only the cumulative per-session MaxDurationMicros; protocol 5 has
// only the per-feed, per-turn and sleep budgets. A codec refuses to encode
// a limit its version cannot express (see codec.ErrUnsupported), so a limit
// is never silently dropped.
type ResourceLimits struct {
	// MaxDurationMicros is the cumulative per-session execution budget
	// (protocol 4 and 2 only).
	MaxDurationMicros *uint64
	MaxMemoryBytes    *uint64
	GCInterval        *uint64
	MaxRecursionDepth *uint64
	MaxSuspensions    *uint64
	// MaxFeedDurationMicros is the execution budget of one feed; it resets
	// at each Feed (protocol 5 only).
	MaxFeedDurationMicros *uint64
	// MaxTurnDurationMicros is the execution budget of one turn; it resets
	// at each Feed and each resume (protocol 5 only).
	MaxTurnDurationMicros *uint64
	// MaxTotalSleepMicros is the cumulative budget of system sleeps, charged
	// and enforced by the parent (protocol 5 only).
	MaxTotalSleepMicros *uint64
}

// MaxDuration returns the per-session duration limit, or 0 and false when
// there is none.
func (l *ResourceLimits) MaxDuration() (time.Duration, bool) {
	if l == nil {
		return 0, false
	}
	return satdur.MicrosOpt(l.MaxDurationMicros)
}

// MaxFeedDuration returns the per-feed duration limit, or 0 and false when
// there is none.
func (l *ResourceLimits) MaxFeedDuration() (time.Duration, bool) {
	if l == nil {
		return 0, false
	}
	return satdur.MicrosOpt(l.MaxFeedDurationMicros)
}

// MaxTurnDuration returns the per-turn duration limit, or 0 and false when
// there is none.
func (l *ResourceLimits) MaxTurnDuration() (time.Duration, bool) {
	if l == nil {
		return 0, false
	}
	return satdur.MicrosOpt(l.MaxTurnDurationMicros)
}

// MaxTotalSleep returns the sleep budget, or 0 and false when there is
// none.
func (l *ResourceLimits) MaxTotalSleep() (time.Duration, bool) {
	if l == nil {
		return 0, false
	}
	return satdur.MicrosOpt(l.MaxTotalSleepMicros)
}

// Configure starts a session (state NoSession → Configured).
type Configure struct {
	ScriptName               string
	Limits                   *ResourceLimits
	TypeCheck                bool
	TypeCheckStubs           *string
	MontyVersion             string
	AssertMessageAnnotations *uint32
	TypeCheckFormat          TypeCheckFormat
	TypeCheckColor           bool
	ProtocolVersion          uint32
	// PrintFlushIntervalMs is the print flush interval; nil means the
	// default (5 ms) and 0 line buffering.
	PrintFlushIntervalMs *uint32
	// OsPolicy says how the child answers clocks, sleeps and entropy; nil
	// means the default policy (protocol 5 only).
	OsPolicy *OsPolicy
	// Persistence asks a relay to keep the session or not; children ignore
	// it (protocol 5 only).
	Persistence Persistence
	// Profile names a relay's server-side profile; children ignore it
	// (protocol 5 only).
	Profile *string
}

// InstallDependencies asks a CPython worker to install packages; Monty
// workers refuse it.
type InstallDependencies struct {
	Requirements []string
}

// NamedRef binds an input name to a root of the carrying message's graph.
type NamedRef struct {
	Name  string
	Value value.NodeID
}

// Feed runs a snippet of code.
type Feed struct {
	Code          string
	Inputs        []NamedRef
	Values        value.Graph
	SkipTypeCheck bool
	// Cwd is an absolute virtual path; empty keeps the current directory.
	// Protocol 2 has no such field.
	Cwd string
}

// ResultKind says how an external call was answered.
type ResultKind uint8

// The external call result kinds. The numbers are the ExtFunctionResult arm
// numbers.
const (
	ResultReturn     ResultKind = 1
	ResultError      ResultKind = 2
	ResultFuture     ResultKind = 3
	ResultNotFound   ResultKind = 4
	ResultNotHandled ResultKind = 5
)

// String names the result kind.
func (k ResultKind) String() string {
	switch k {
	case ResultReturn:
		return "return_value"
	case ResultError:
		return "error"
	case ResultFuture:
		return "future"
	case ResultNotFound:
		return "not_found"
	case ResultNotHandled:
		return "not_handled"
	}
	return "unset"
}

// ExtResult answers an external function call or OS call.
type ExtResult struct {
	Kind ResultKind
	// Value is the returned root (ResultReturn), in the carrying message's
	// graph.
	Value value.NodeID
	// Error is the raised exception (ResultError).
	Error *RaisedException
	// Future is the id under which an external future is registered
	// (ResultFuture); normally the call's own id.
	Future uint32
	// Name is the name reported missing (ResultNotFound).
	Name string
}

// ResumeCall answers a suspended FunctionCall or OsCall.
type ResumeCall struct {
	CallID uint32
	Result *ExtResult
	Values value.Graph
}

// LookupKind says how a name lookup was answered.
type LookupKind uint8

// The name lookup answers.
const (
	LookupValue     LookupKind = 1
	LookupUndefined LookupKind = 2
	LookupError     LookupKind = 3
)

// ResumeNameLookup answers a suspended NameLookup.
type ResumeNameLookup struct {
	// Kind is 0 when the answer is missing (a protocol violation).
	Kind   LookupKind
	Value  value.NodeID
	Error  *RaisedException
	Values value.Graph
}

// FutureResult resolves one external future.
type FutureResult struct {
	CallID uint32
	Result *ExtResult
}

// ResumeFutures resolves some or all pending external futures, or answers a
// FunctionCall with AllowEagerAwait set with exactly one result.
type ResumeFutures struct {
	Results []FutureResult
	Values  value.Graph
}

// Dump asks for a snapshot of the session.
type Dump struct{}

// Load restores a session from a dump. At protocol 5, State may instead be
// a session id taken from ChildEvent.SessionID.
type Load struct {
	State []byte
}

// Reset drops the session (any state → NoSession).
type Reset struct{}

// Shutdown asks the child to answer Ok and exit 0.
type Shutdown struct{}

// AbortFeed raises Exception, uncatchably, at the point where the feed is
// suspended.
type AbortFeed struct {
	Exception *RaisedException
}

// RequestKind implementations.
func (*Configure) RequestKind() RequestKind           { return KindConfigure }
func (*InstallDependencies) RequestKind() RequestKind { return KindInstallDependencies }
func (*Feed) RequestKind() RequestKind                { return KindFeed }
func (*ResumeCall) RequestKind() RequestKind          { return KindResumeCall }
func (*ResumeNameLookup) RequestKind() RequestKind    { return KindResumeNameLookup }
func (*ResumeFutures) RequestKind() RequestKind       { return KindResumeFutures }
func (*Dump) RequestKind() RequestKind                { return KindDump }
func (*Load) RequestKind() RequestKind                { return KindLoad }
func (*Reset) RequestKind() RequestKind               { return KindReset }
func (*Shutdown) RequestKind() RequestKind            { return KindShutdown }
func (*AbortFeed) RequestKind() RequestKind           { return KindAbortFeed }

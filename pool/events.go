package pool

import (
	"errors"
	"time"

	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// Reason says why a worker left the pool: a crash reason (the Reason of
// EventCrash and the keys of Stats.Crashes) or a destroy reason (the
// Reason of EventDestroy). Each is a stable name, suitable as a metric
// label.
//
// A Reason is a plain value, safe for concurrent use.
type Reason string

// Crash reasons. The set is closed.
const (
	// ReasonAnnounced: the worker sent a FatalError and exited.
	ReasonAnnounced Reason = "announced"
	// ReasonVanished: the worker exited, was killed or hung up without a
	// FatalError (including a worker that died while idle, and a remote
	// session whose connection dropped: a *session.DisconnectedError).
	ReasonVanished Reason = "vanished"
	// ReasonMemory: the worker exited with status 65, past its allocator
	// ceiling (remotely: the server closed with code 4003).
	ReasonMemory Reason = "memory"
	// ReasonTimeout: a deadline or the duration watchdog killed the
	// worker mid-turn (remotely also: the server closed with code 4002
	// or 4004, having killed its worker for running too long).
	ReasonTimeout Reason = "timeout"
	// ReasonProtocol: the worker broke the protocol and was discarded.
	ReasonProtocol Reason = "protocol"
	// ReasonCanceled: a context cancellation killed the worker mid-turn.
	ReasonCanceled Reason = "canceled"
	// ReasonDrained: a remote session's server drained (it answered a
	// request with a ShutdownDump: a *session.ShutdownError, which
	// carries the dump) and the session was not resumed elsewhere
	// (Config.NoResume, or the resume failed). Remote sessions only.
	ReasonDrained Reason = "drained"
)

// Destroy reasons, for workers the pool stopped although they had not
// crashed. The set is closed.
const (
	// DestroyRequested: Session.Destroy was called, or the session was
	// killed (Session.Kill) or its worker could not be reset.
	DestroyRequested Reason = "destroyed"
	// DestroyInterrupted: a feed was aborted because its context ended
	// (session.ErrInterrupted: the session survived, but the worker is not
	// reused).
	DestroyInterrupted Reason = "interrupted"
	// DestroySuspended: the session was closed with a feed suspended.
	DestroySuspended Reason = "suspended"
	// DestroyBusy: the session was closed while a turn was in flight.
	DestroyBusy Reason = "busy"
	// DestroyRefused: the worker refused the checkout's Configure (the
	// session.Config is at fault, and Checkout returns the refusal).
	DestroyRefused Reason = "refused"
	// DestroyClosing: the pool was closing when the session was closed,
	// Close's deadline killed it, or Close stopped it idle.
	DestroyClosing Reason = "closing"
)

// EventKind names one kind of pool event. The set is closed; each kind
// sets the Event fields listed:
//
//	EventSpawn        a worker started and passed its handshake: WorkerID, Pid, Duration
//	EventSpawnFailed  a worker start failed: Duration, Err
//	EventReplace      the supervisor started a worker in place of a lost one (counted in Stats.Restarts)
//	EventCheckout     a session was handed out: WorkerID, Pid, Waited, Spawned
//	EventExhausted    a checkout gave up waiting: Waited, Err, Endpoint (the one it was waiting for)
//	EventRelease      a checked-out worker went back to the pool, reset: WorkerID, Pid (one per EventCheckout
//	                  of a worker that returns; a worker a checkout gave up on before handing it out
//	                  returns without either)
//	EventRecycle      a worker reached MaxCheckoutsPerWorker and was stopped: WorkerID, Pid
//	EventScaleDown    an idle worker past IdleTimeout was stopped: WorkerID, Pid
//	EventDestroy      a worker was stopped without having crashed: WorkerID, Pid, Reason (a Destroy constant)
//	EventCrash        a worker was lost: WorkerID, Pid, Reason (a Reason constant), Err (when known)
//	EventUnhealthy    the restart cap tripped: Err (an *UnhealthyError)
//	EventHealthy      the restart window passed; the pool starts workers again
//	EventEndpointFailed  a remote session could not be started: Endpoint, Duration, Err
//	EventEndpointClosed  a remote session ended (its connection closed): Endpoint, Reason ("" when it ended idle and unbroken), Err (its Cause)
//	EventEndpointDropped a remote session was lost by its endpoint's fault (see "Sessions an endpoint drops"
//	                     in the package documentation), noticed by the turn that failed or at Close: Endpoint,
//	                     Err (the session's Cause), Duration (how long the endpoint is now skipped when this
//	                     drop backed it off, else 0); its EventEndpointClosed follows at Close
//
// EventCheckout sets Endpoint too: LocalEndpoint for a local worker, else
// the name of the endpoint the session runs on (WorkerID and Pid are then
// zero, and Duration is how long the remote start took). A start that one
// endpoint drained during its Configure and that resumed on another is
// reported on the other, as Session.Endpoint reports it.
//
// An EventKind is a plain value, safe for concurrent use.
type EventKind uint8

// The event kinds.
const (
	EventSpawn EventKind = iota + 1
	EventSpawnFailed
	EventReplace
	EventCheckout
	EventExhausted
	EventRelease
	EventRecycle
	EventScaleDown
	EventDestroy
	EventCrash
	EventUnhealthy
	EventHealthy
	EventEndpointFailed
	EventEndpointClosed
	EventEndpointDropped
)

var eventNames = [...]string{
	EventSpawn:           "spawn",
	EventSpawnFailed:     "spawn_failed",
	EventReplace:         "replace",
	EventCheckout:        "checkout",
	EventExhausted:       "exhausted",
	EventRelease:         "release",
	EventRecycle:         "recycle",
	EventScaleDown:       "scale_down",
	EventDestroy:         "destroy",
	EventCrash:           "crash",
	EventUnhealthy:       "unhealthy",
	EventHealthy:         "healthy",
	EventEndpointFailed:  "endpoint_failed",
	EventEndpointClosed:  "endpoint_closed",
	EventEndpointDropped: "endpoint_dropped",
}

// String returns the kind's stable name, for example "spawn" or
// "spawn_failed", suitable as a metric name or label.
func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return "unknown"
}

// Event is one thing that happened in a pool; EventKind says which fields
// are set. Unset fields are zero.
//
// An Event is plain data, safe to read from several goroutines.
type Event struct {
	// Kind is what happened.
	Kind EventKind
	// WorkerID is the pool-assigned id of the worker (1, 2, ... in the
	// order workers joined the pool).
	WorkerID uint64
	// Pid is the worker's process id.
	Pid int
	// Reason is the crash or destroy reason.
	Reason Reason
	// Waited is how long a checkout waited.
	Waited time.Duration
	// Spawned reports, for a checkout that waited, that the worker it got
	// had just been started (rather than given back by another session).
	Spawned bool
	// Duration is how long a start took; for EventEndpointDropped, how
	// long the endpoint is backed off.
	Duration time.Duration
	// Err is the error behind the event.
	Err error
	// Endpoint names the endpoint of a checkout or a remote session
	// (LocalEndpoint for the local workers; see Endpoint.Name).
	Endpoint string
}

// crashReason classifies the loss of a worker from the error that
// revealed it. ok is false when err does not say the worker was lost by
// a crash (nil, a usage error, a Close or Kill).
func crashReason(err error) (reason Reason, ok bool) {
	if err == nil {
		return "", false
	}
	var (
		me *worker.MemoryLimitError
		ce *worker.CrashError
		pe *session.ProtocolError
		te *session.TimeoutError
		ca *session.CanceledError
		de *session.DisconnectedError
		se *session.ShutdownError
	)
	switch {
	case errors.As(err, &se):
		// Before the resume's own failure, which it wraps.
		return ReasonDrained, true
	case errors.As(err, &me):
		return ReasonMemory, true
	case errors.As(err, &ce):
		if ce.Reason == worker.Announced {
			return ReasonAnnounced, true
		}
		return ReasonVanished, true
	case errors.As(err, &pe):
		return ReasonProtocol, true
	case errors.As(err, &te) && te.Killed:
		return ReasonTimeout, true
	case errors.As(err, &ca) && ca.Killed:
		return ReasonCanceled, true
	case errors.As(err, &de):
		// A remote worker's connection dropped: the server's close code
		// tells its memory limit and its turn timeouts apart.
		switch {
		case errors.Is(err, worker.ErrMemoryLimit):
			return ReasonMemory, true
		case errors.Is(err, session.ErrTimeout):
			return ReasonTimeout, true
		}
		return ReasonVanished, true
	}
	return "", false
}

// exitReason classifies a worker that exited on its own, from its status.
func exitReason(p *worker.Process) Reason {
	if e, ok := p.Exit(); ok && e.Code == int(protocol.ExitOOM) {
		return ReasonMemory
	}
	return ReasonVanished
}

// destroyReason names why a session's worker could not be reused, from
// the sentinel session.Session.Reusable (or Detach) returned.
func destroyReason(err error) Reason {
	switch {
	case errors.Is(err, session.ErrBusy):
		return DestroyBusy
	case errors.Is(err, session.ErrSuspended):
		return DestroySuspended
	case errors.Is(err, session.ErrInterrupted):
		return DestroyInterrupted
	}
	return DestroyRequested
}

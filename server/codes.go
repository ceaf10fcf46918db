package server

// WebSocket close codes the server ends a session with. Codes 1000–1011
// are the standard ones; 4000–4099 are the server's own (documented in
// docs/PROTOCOL.md, "The Monty server").
const (
	// CloseNormal: the session ended normally (the client closed it).
	CloseNormal = 1000
	// CloseDrain ("going away"): the server drained; after a ShutdownDump,
	// or at drain-grace for a silent session, or at shutdown.
	CloseDrain = 1001
	// CloseProtocol: a protocol violation on the WebSocket level (a text
	// message), a frame the child could not parse as a request, or a
	// Configure at a protocol version the server does not speak.
	CloseProtocol = 1008
	// CloseTooLarge: a message over the frame cap.
	CloseTooLarge = 1009
	// CloseWorkerFailed: the worker behind the session crashed, failed
	// to start, stopped answering a turn that runs no code (a Dump or a
	// Load its session's reply bound, session.LimitReply, ended), or was
	// killed on a timeout that is no duration limit of the client's.
	CloseWorkerFailed = 1011
	// CloseTryAgainLater: the session was admitted, but by its Configure
	// the worker pool had become unhealthy (its restart cap tripped) and
	// had no worker for it; a later dial, here or elsewhere, may succeed.
	// Upgrades are refused with 503 ReasonUnhealthy meanwhile.
	CloseTryAgainLater = 1013
	// CloseIdleTimeout: no request within --idle-timeout.
	CloseIdleTimeout = 4000
	// CloseSessionTimeout: the session outlived --session-timeout.
	CloseSessionTimeout = 4001
	// CloseTurnTimeout: a turn ran longer than --turn-timeout; the worker
	// was killed.
	CloseTurnTimeout = 4002
	// CloseMemoryLimit: the worker exceeded its memory limit and exited
	// (upstream's code).
	CloseMemoryLimit = 4003
	// CloseDurationBackstop: the worker overran its max_duration (at
	// protocol 5, or its max_feed_duration or max_turn_duration; the
	// close reason names the limit) by more than the watchdog grace and
	// was killed. A worker killed at the reply bound of a turn that runs
	// no code overran no limit of the client's: that is
	// CloseWorkerFailed.
	CloseDurationBackstop = 4004
)

// Session outcomes (the "outcome" label of monty_server_sessions_ended_total).
const (
	OutcomeOK             = "ok"
	OutcomeClientDropped  = "client_dropped"
	OutcomeIdleTimeout    = "idle_timeout"
	OutcomeSessionTimeout = "session_timeout"
	OutcomeTurnTimeout    = "turn_timeout"
	OutcomeDrained        = "drained"
	OutcomeShutdown       = "shutdown"
	OutcomeOversize       = "oversize"
	OutcomeProtocol       = "protocol_violation"
	OutcomeMemory         = "memory_limit"
	OutcomeDuration       = "duration_backstop"
	OutcomeWorkerFailed   = "worker_failed"
	// OutcomePoolUnhealthy: the worker pool's restart cap tripped between
	// the session's admission and its Configure; closed with 1013.
	OutcomePoolUnhealthy = "pool_unhealthy"
	// OutcomeVersionRefused: the client's Configure asked for a protocol
	// version the server does not speak (a client negotiating down does
	// this on its first session); closed with 1008 after the FatalError.
	OutcomeVersionRefused = "version_refused"
)

var outcomes = []string{OutcomeOK, OutcomeClientDropped, OutcomeIdleTimeout, OutcomeSessionTimeout,
	OutcomeTurnTimeout, OutcomeDrained, OutcomeShutdown, OutcomeOversize, OutcomeProtocol,
	OutcomeMemory, OutcomeDuration, OutcomeWorkerFailed, OutcomeVersionRefused, OutcomePoolUnhealthy}

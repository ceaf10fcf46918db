// Package pool keeps a set of warm `monty subprocess` workers and hands out
// sessions on them, replacing workers that die.
//
// # Using it
//
//	p, err := pool.New(ctx, pool.Config{MinWorkers: 2, MaxWorkers: 8})
//	...
//	defer p.Close(ctx)
//	s, err := p.Checkout(ctx, session.Config{Limits: limits})
//	...
//	defer s.Close()                    // back to the pool when clean
//	res, err := s.Run(ctx, "1 + 1")    // forwarded to *session.Session
//
// A [Session] forwards the turns and queries of *session.Session, but not
// Detach or Shutdown: the worker belongs to the pool. Its Close returns the
// worker to the pool, reset, when that is safe, and stops it otherwise;
// Destroy always stops it.
//
// # Workers
//
// New resolves the binary and negotiates the protocol version with the
// first worker (session.Negotiate); every later worker is started with that
// version (session.Attach), and is handshaken (Configure, Reset) before it
// counts as idle, so an idle worker is known to speak the protocol. New then
// prewarms MinWorkers. Checkout takes an idle worker (the most recently
// used first) and configures it with the checkout's session.Config, one
// round trip; with none idle it waits, and the pool starts more workers up
// to MaxWorkers.
//
// A worker goes back to the pool (Reset, one round trip) only when its
// session is idle, its worker alive, and no turn of a Run or Continue was
// interrupted by a context or deadline. Otherwise it is destroyed: a
// suspended feed, a crash, a protocol violation, a kill, an interrupted
// turn, or Close racing with a turn in flight. After MaxCheckoutsPerWorker
// checkouts a worker is recycled (stopped and replaced). A worker that dies
// while idle is noticed at once (every worker has a goroutine waiting for
// its exit) and is never handed out.
//
// # Supervision
//
// One supervisor goroutine keeps MinWorkers live: it replaces lost,
// recycled and destroyed workers eagerly, grows the pool for waiting
// checkouts, and, with IdleTimeout, stops workers idle for that long while
// more than MinWorkers are live. A failed start is retried after
// RestartBackoff, doubling up to its maximum. Failures (a start that
// fails, or a worker that dies while idle: a broken binary or
// environment, not broken code) are counted: more than MaxRestarts of
// them within RestartWindow trip the pool into an unhealthy state, in
// which it starts nothing and Checkout fails at once with an error
// matching [ErrUnhealthy] (which [Pool.Health] also returns), until
// RestartWindow has passed. An idle worker killed from outside (a kill
// by an operator, the OOM killer) counts too: the pool cannot tell who
// sent the signal, and workers that keep dying while idle are the loop
// the cap exists to stop. Workers that die while running code do not
// count: their rate is bounded by the callers. Nor do prewarm starts cut
// short by New's ctx: the caller stopped waiting, the binary is not at
// fault.
//
// # Remote endpoints
//
// Config.Endpoints adds remote Monty servers (`montygo serve`) beside the
// local workers; with Config.NoLocal they replace them. One pool then
// hands out both kinds of [Session]: a checkout goes to the least-loaded
// endpoint, the local workers counting as one endpoint whose load is their
// checked-out sessions and the checkouts already bound for them (they win
// ties, and are skipped while saturated).
// An endpoint whose dial fails, that refuses with 503 or 429, that does
// not answer Configure within StartTimeout, or that drops or breaks the
// connection before answering it is backed off
// (EndpointBackoff, doubling, at least the server's Retry-After up to a
// bound) and the checkout tries the next one, the local workers last. A
// start whose checkout gives up first (a cancel, the caller's deadline)
// is not held against the endpoint; instead, unless a start there got
// through within the last StartTimeout, the pool checks the endpoint with
// a start of its own bounded by StartTimeout alone, charged as any start:
// an endpoint that accepts connections and never answers is backed off
// even when every caller's deadline is shorter than StartTimeout. With every
// endpoint backed off it waits for a local worker, or fails with
// [ErrNoEndpoint] without any. Remote sessions are single-use connections
// (session.RemoteLauncher): never prewarmed, never Reset or handed to
// another checkout; Close closes the connection. After a ShutdownDump (a
// draining server) a remote session resumes on the least-loaded other
// endpoint, unless NoResume; with none up, its own endpoint is redialled
// once (a balancer's URL may reach another replica), and when that is
// refused the resume fails at once with an error matching
// session.ErrNoReplica. Every dial, a resume's included, carries the
// options (Endpoint.Dial) of the endpoint it goes to: a session that
// moves from one endpoint to another is dialled there with the other's
// token and TLS configuration, and no endpoint is ever sent another's
// credentials. A start whose Configure a draining server answers
// resumes the same way, inside the start: the checkout gets that one
// session, on the endpoint it moved to (Session.Endpoint), and the
// draining endpoint is not counted as having served it: the checkout's
// EventCheckout, its EndpointStat.Checkouts count and its
// AttrEndpoint metric attribute all name the endpoint it moved to.
// Stats.Endpoints reports each endpoint (outstanding sessions, checkouts,
// dial failures, refusals, start failures, resumes, drops, backoff),
// Session.Endpoint and Event.Endpoint
// name it, and the metrics carry it as [AttrEndpoint].
//
// # Sessions an endpoint drops
//
// An endpoint may accept sessions and then lose them: a server that
// crashes or restarts under its sessions, a balancer or proxy that resets
// connections. Such an endpoint starts every session fine, so no start
// failure backs it off, and having the fewest sessions it would take
// every checkout. So the pool looks at what ended each remote session
// after its start (its Cause, as soon as the turn that met it returns,
// else at Close) and charges the endpoint with the ends that are its own:
//
//   - the connection ended without a Close frame (a TCP reset or EOF, a
//     TLS or network error: RFC 6455's abnormal closure, 1006; the
//     *session.DisconnectedError's Code is -1);
//   - the server closed it with 1000 or 1005 (a session its client had not
//     ended), 1001 (going away: shut down or past its drain grace under a
//     turn), 1002 (a WebSocket protocol error), 1011 for anything but its
//     worker (its reason does not begin "worker failed", the reason
//     `montygo serve` gives when the worker behind the session fails),
//     1012 (restarting), 1013 (try again later: its worker pool is
//     unhealthy) or 1014 (a bad gateway);
//   - the server broke the protocol (a *session.ProtocolError), except by
//     a frame over this side's frame cap or decode budget, which may be
//     the size of a value the session's code made.
//
// These are the session's or its caller's, and charge nothing: the
// server's worker exceeded its memory limit (4003, matching
// worker.ErrMemoryLimit) or crashed while it ran the session's code
// (1011 "worker failed: ...", or a FatalError it announced: a
// *session.RemoteCrashError), as the code may make a local worker do; a
// session limit or timeout (4000 idle, 4001 session, 4002 turn, 4004
// max_duration backstop); a request the server could not take (1003,
// 1007, 1008, 1009, 1010); a drain that handed the session its dump (a
// *session.ShutdownError, resumed elsewhere); the caller's cancel,
// deadline, Kill, Close or Destroy; and close codes the pool does not know
// (other codes in 3000–4999).
//
// After three such drops in a row the endpoint is backed off as a failed
// start is (EndpointBackoff), and the checkouts go to the other endpoints
// or the local workers. Past its backoff it is tried again; while no
// session has ended clean there since (closed idle and unbroken), a start
// that succeeds does not end its backoff step, and each further drop
// backs it off again at once, for twice as long. A session that ends clean
// resets the count. A drop is still the error of the turn that met it,
// returned to the caller as before; [EventEndpointDropped] reports it
// (with the backoff it started, if any), Stats.Endpoints counts it
// (EndpointStat.Drops) and [MetricEndpointDrops] records it. Drops
// charge the endpoint the session runs on when it is lost (after a resume,
// the one it moved to).
//
// # Observing it
//
// [Pool.Stat] returns counters and gauges; Config.Metrics receives every
// [Event] as it happens (the closed set is listed on [EventKind]), the
// same stream from which the pool records its OpenTelemetry metrics
// (through Config.MeterProvider or the global provider), with upstream's
// names: [MetricWorkersLive], [MetricWorkersIdle], [MetricWorkersBusy] and
// [MetricWorkersSuspended] (observable gauges, summed over the open pools
// of one MeterProvider: 0 once they are closed), [MetricCheckoutWait] (by
// [AttrCheckoutOutcome]: idle, waited, spawned, exhausted, error),
// [MetricWorkerTerminated] (by [AttrReason]), [MetricSessionDuration] (by
// outcome: ok, error, abandoned), [MetricSessionResumed] (remote sessions
// resumed after a drain, by endpoint and outcome),
// [MetricEndpointFailures] and [MetricEndpointDrops]; checked-out sessions add package session's
// spans and metrics through the same providers. Crash
// reasons are the Reason constants: announced, vanished, memory, timeout,
// protocol, canceled, and for remote sessions drained.
//
// # Concurrency
//
// A Pool is safe for concurrent use by any number of goroutines. A Session
// is like a *session.Session: one goroutine runs its turns, while Close,
// Destroy, Kill, State, WorkerID, Pid and Endpoint may be called from any
// goroutine at any time (Close and Destroy interrupt a turn in flight by
// stopping the worker or closing the connection). The Metrics callback is called from whichever goroutine caused
// the event, never with the pool's lock held, possibly concurrently, and
// possibly on one of the pool's own goroutines: it must not call
// Pool.Close, which joins them.
package pool

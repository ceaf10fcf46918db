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
// bound) and the checkout tries the next one, the local workers last; with every
// endpoint backed off it waits for a local worker, or fails with
// [ErrNoEndpoint] without any. Remote sessions are single-use connections
// (session.RemoteLauncher): never prewarmed, never Reset or handed to
// another checkout; Close closes the connection. After a ShutdownDump (a
// draining server) a remote session resumes on the least-loaded other
// endpoint, unless NoResume; with none up, its own endpoint is redialled
// once (a balancer's URL may reach another replica), and when that is
// refused the resume fails at once with an error matching
// session.ErrNoReplica. Stats.Endpoints reports each endpoint
// (outstanding sessions, checkouts, dial failures, refusals, start
// failures, resumes, backoff), Session.Endpoint and Event.Endpoint name
// it, and the metrics carry it as [AttrEndpoint].
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
// resumed after a drain, by endpoint and outcome) and
// [MetricEndpointFailures]; checked-out sessions add package session's
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

package pool

import (
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/gomonty/monty/worker"
)

// Defaults for zero Config fields.
const (
	// DefaultMinWorkers is the number of workers kept warm.
	DefaultMinWorkers = 1
	// DefaultBackoffInitial is the wait after the first failed start.
	DefaultBackoffInitial = 50 * time.Millisecond
	// DefaultBackoffMax caps the doubling wait between failed starts.
	DefaultBackoffMax = 5 * time.Second
	// DefaultMaxRestarts is how many failures RestartWindow tolerates.
	DefaultMaxRestarts = 10
	// DefaultRestartWindow is the window of the restart cap.
	DefaultRestartWindow = time.Minute
	// DefaultStartTimeout bounds starting and handshaking one worker.
	DefaultStartTimeout = 10 * time.Second
)

// Backoff is the wait between failed worker starts: Initial after the first
// failure, doubling after each further one up to Max, back to Initial after
// a start succeeds.
//
// Backoff is plain data, safe to share.
type Backoff struct {
	// Initial is the first wait; 0 means DefaultBackoffInitial.
	Initial time.Duration
	// Max caps the wait; 0 means DefaultBackoffMax.
	Max time.Duration
}

// Config describes a pool. The zero value is usable: one warm worker,
// up to runtime.NumCPU(), the binary found by worker.ResolveBinary.
//
// A Config is plain data; New copies it. The Logger and Metrics it holds
// must be safe for concurrent use.
type Config struct {
	// MinWorkers is how many workers are kept live (prewarmed by New and
	// replenished after losses); 0 means DefaultMinWorkers.
	MinWorkers int
	// MaxWorkers caps live plus starting workers; 0 means
	// runtime.NumCPU(). MinWorkers > MaxWorkers is an error.
	MaxWorkers int
	// Worker configures every worker process (binary, environment, kill
	// grace, frame cap). Its stderr log bound is the pool's: without a
	// StderrLogLimiter, New makes one (of StderrLogBurst and
	// StderrLogRate) that all the pool's workers share.
	Worker worker.Config
	// ProtocolVersion pins the protocol version; 0 negotiates it once,
	// with the first local worker, and per endpoint URL for remote
	// sessions (cached, see session.RemoteLauncher), so a remote session
	// may speak another version than the local workers
	// (Session.Version says).
	ProtocolVersion uint32

	// CheckoutTimeout bounds how long Checkout waits for a worker (on top
	// of its context), all its waits together when it waits again for
	// another worker after finding one dead; with Endpoints it bounds the
	// whole Checkout, the remote starts tried included. 0 means only the
	// context bounds it.
	CheckoutTimeout time.Duration
	// MaxCheckoutsPerWorker recycles a worker after that many checkouts;
	// 0 means never.
	MaxCheckoutsPerWorker int
	// IdleTimeout stops workers idle for that long while more than
	// MinWorkers are live; 0 means never.
	IdleTimeout time.Duration
	// StartTimeout bounds starting and handshaking one worker, and the
	// Reset that returns a worker to the pool; 0 means
	// DefaultStartTimeout. A start it cuts short fails with a
	// *session.StartTimeoutError.
	StartTimeout time.Duration

	// RestartBackoff is the wait between failed starts.
	RestartBackoff Backoff
	// MaxRestarts is how many failures (a worker start that fails, or a
	// worker that dies while idle, also by a signal from outside the
	// pool) the pool restarts from within
	// RestartWindow; one more makes it unhealthy for RestartWindow.
	// 0 means DefaultMaxRestarts; a negative value disables the cap.
	MaxRestarts int
	// RestartWindow is the window of MaxRestarts and how long the pool
	// stays unhealthy; 0 means DefaultRestartWindow.
	RestartWindow time.Duration

	// Logger receives pool diagnostics, and is the default logger of the
	// sessions and workers; nil means slog.Default().
	Logger *slog.Logger
	// TracerProvider and MeterProvider record the pool's and its
	// sessions' spans and metrics (see MetricWorkersLive and package
	// session's Span and Metric constants); nil means the global ones
	// (otel.GetTracerProvider, otel.GetMeterProvider). A checkout whose
	// session.Config sets its own providers uses those for that session.
	// The handshakes that start workers record metrics (wire frames) but
	// no span: a session span is a checkout's.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider

	// Metrics, when set, receives every Event (see EventKind for the
	// closed set): the same stream the pool's OpenTelemetry instruments
	// are fed from, for callers with their own metrics system. It is called synchronously from the goroutine that
	// caused the event, never with the pool's lock held, possibly from
	// several goroutines at once; it must be fast and safe for concurrent
	// use. That goroutine may be one of the pool's own (its supervisor, a
	// worker start, the watcher of a worker's exit), which Close joins:
	// a callback that calls Pool.Close (or waits for it) never returns,
	// whatever Close's ctx, and one that blocks on a Checkout may stall
	// the supervisor that checkout waits for. Hand such work to another
	// goroutine.
	Metrics func(Event)

	// Endpoints are remote Monty servers checkouts may go to beside the
	// local workers (see "Remote endpoints" in the package
	// documentation). Remote sessions are single-use connections: never
	// prewarmed, never Reset, never handed to another checkout.
	Endpoints []Endpoint
	// NoLocal runs no local worker: every checkout goes to one of
	// Endpoints (at least one is required). MinWorkers, MaxWorkers,
	// Worker, IdleTimeout, MaxCheckoutsPerWorker and the restart settings
	// then have no effect, and New starts nothing.
	NoLocal bool
	// EndpointBackoff is how long an endpoint whose dial failed, that
	// refused with 503 or 429, that did not answer within StartTimeout,
	// or that dropped the connection, announced a fatal error or broke
	// the protocol before answering the Configure is skipped (not one
	// that refused the Configure with an Error or closed on it with 1008
	// or 1009, which may be the session.Config's fault, unless the same
	// checkout then got its session elsewhere: see Checkout), and one
	// that dropped three sessions in a row after starting them (see the
	// package documentation, "Sessions an endpoint drops"): Initial
	// after the first failure, doubling
	// up to Max, back to Initial after a successful start (for an
	// endpoint that drops sessions, after one ends clean there); a
	// Retry-After from the server is honoured when longer, up to 5
	// minutes or Max, whichever is longer. A start its checkout gave up
	// on (a cancel or the caller's deadline) backs nothing off by itself;
	// the pool then checks the endpoint with a start of its own, bounded
	// by StartTimeout alone, which is charged and backed off as any start
	// (see EndpointStat.StartFailures), so that an endpoint that never
	// answers is backed off whatever its callers' deadlines.
	// Zero fields take the RestartBackoff defaults.
	EndpointBackoff Backoff
	// NoResume turns off the automatic resumption of remote sessions after
	// a ShutdownDump (a draining server); by default such a session is
	// loaded on the least-loaded other endpoint and the request re-sent.
	NoResume bool

	// reconciled, when set (by tests), is called after every pass of the
	// supervisor, once its effects are done: a barrier for "the
	// supervisor has looked at the pool".
	reconciled func()
	// attaching, when set (by tests), is called by a local checkout just
	// before it configures its worker (done false) and just after a
	// Configure that succeeded (done true).
	attaching func(done bool)
}

// withDefaults fills zero fields and rejects impossible settings.
func (c Config) withDefaults() (Config, error) {
	if c.MinWorkers < 0 || c.MaxWorkers < 0 {
		return c, fmt.Errorf("monty pool: negative worker count (MinWorkers %d, MaxWorkers %d)", c.MinWorkers, c.MaxWorkers)
	}
	if c.MinWorkers == 0 {
		c.MinWorkers = DefaultMinWorkers
	}
	if c.Worker.StderrLogLimiter == nil {
		// One bound for the pool's stderr lines, not a fresh burst for
		// every worker it starts.
		c.Worker.StderrLogLimiter = worker.NewStderrLogLimiter(c.Worker.StderrLogBurst, c.Worker.StderrLogRate)
	}
	if c.MaxWorkers == 0 {
		c.MaxWorkers = runtime.NumCPU()
	}
	if c.MinWorkers > c.MaxWorkers && !c.NoLocal { // NoLocal ignores both
		return c, fmt.Errorf("monty pool: MinWorkers %d exceeds MaxWorkers %d", c.MinWorkers, c.MaxWorkers)
	}
	for name, d := range map[string]time.Duration{
		"CheckoutTimeout": c.CheckoutTimeout, "IdleTimeout": c.IdleTimeout, "StartTimeout": c.StartTimeout,
		"RestartBackoff.Initial": c.RestartBackoff.Initial, "RestartBackoff.Max": c.RestartBackoff.Max,
		"RestartWindow": c.RestartWindow,
	} {
		if d < 0 {
			return c, fmt.Errorf("monty pool: negative %s %v", name, d)
		}
	}
	if c.MaxCheckoutsPerWorker < 0 {
		return c, fmt.Errorf("monty pool: negative MaxCheckoutsPerWorker %d", c.MaxCheckoutsPerWorker)
	}
	if c.NoLocal && len(c.Endpoints) == 0 {
		return c, fmt.Errorf("monty pool: NoLocal without Endpoints")
	}
	if c.EndpointBackoff.Initial < 0 || c.EndpointBackoff.Max < 0 {
		return c, fmt.Errorf("monty pool: negative EndpointBackoff %+v", c.EndpointBackoff)
	}
	if c.EndpointBackoff.Initial == 0 {
		c.EndpointBackoff.Initial = DefaultBackoffInitial
	}
	if c.EndpointBackoff.Max == 0 {
		c.EndpointBackoff.Max = max(DefaultBackoffMax, c.EndpointBackoff.Initial)
	}
	if c.EndpointBackoff.Max < c.EndpointBackoff.Initial {
		return c, fmt.Errorf("monty pool: EndpointBackoff.Max %v below Initial %v", c.EndpointBackoff.Max, c.EndpointBackoff.Initial)
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.RestartBackoff.Initial == 0 {
		c.RestartBackoff.Initial = DefaultBackoffInitial
	}
	if c.RestartBackoff.Max == 0 {
		c.RestartBackoff.Max = max(DefaultBackoffMax, c.RestartBackoff.Initial)
	}
	if c.RestartBackoff.Max < c.RestartBackoff.Initial {
		return c, fmt.Errorf("monty pool: RestartBackoff.Max %v below Initial %v", c.RestartBackoff.Max, c.RestartBackoff.Initial)
	}
	if c.MaxRestarts == 0 {
		c.MaxRestarts = DefaultMaxRestarts
	}
	if c.RestartWindow == 0 {
		c.RestartWindow = DefaultRestartWindow
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Worker.Logger == nil {
		c.Worker.Logger = c.Logger
	}
	return c, nil
}

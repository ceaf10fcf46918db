package server

import (
	"crypto/tls"
	"log/slog"
	"time"

	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/worker"
)

// Defaults: upstream's server defaults where it has one.
const (
	DefaultMaxSessions          = 64
	DefaultMaxSessionsPerClient = 10
	// DefaultMaxConnections caps open TCP connections (raised to
	// MaxSessions + 256 when that is more).
	DefaultMaxConnections = 1024
	// DefaultMaxConnectionsPerClient caps one peer address's open TCP
	// connections (raised to MaxSessionsPerClient + 32 when that is more).
	DefaultMaxConnectionsPerClient = 64
	DefaultTurnTimeout             = 300 * time.Second
	DefaultIdleTimeout             = 60 * time.Second
	DefaultSessionTimeout          = 3600 * time.Second
	DefaultMaxDuration             = 60 * time.Second
	DefaultMaxMemory               = 64 << 20
	DefaultMaxRecursionDepth       = 1000
	// DefaultMaxSuspensions is the ceiling of max_suspensions: the
	// protocol's default, what a client that asks for nothing would get
	// from any parent.
	DefaultMaxSuspensions    = protocol.DefaultMaxSuspensions
	DefaultDrainGrace        = 30 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultMaxHeaderBytes caps a request's header lines.
	DefaultMaxHeaderBytes = 64 << 10
	DefaultPrewarm        = 2
	// DefaultMaxFrameLen caps every frame in both directions (the
	// protocol's cap).
	DefaultMaxFrameLen = 256 << 20
)

// Config configures a Server. The zero value, with a DumpKey, is a safe
// server with upstream's defaults: every count, duration and ceiling left
// zero takes its default (finite); a negative MaxSessions or
// MaxSessionsPerClient removes that cap.
//
// Config is plain data; New copies it.
type Config struct {
	// MaxSessions caps open sessions server-wide (0: 64; < 0: no cap).
	MaxSessions int
	// MaxSessionsPerClient caps the open sessions of one client identity
	// (0: 10; < 0: no cap): a token's name, a client certificate's name,
	// or else the address, an IPv6 address by its /64.
	MaxSessionsPerClient int

	// MaxConnections caps the open TCP connections, upgraded or not,
	// server-wide; MaxConnectionsPerClient those of one peer address (an
	// IPv6 address by its /64; the TCP peer, never X-Forwarded-For). A
	// connection over either is still read while a small overflow has
	// room (8 connections server-wide, 4 per address, each closed after
	// one answer and at most 5 s after it came, TLS handshake included):
	// a health probe on it (GET /healthz, /readyz or /health) is
	// answered, so that a kubelet probing from an address that carries a
	// flood still gets its answer, and any other request is answered 503
	// with ReasonTooManyConnections. Past the overflow too, a connection
	// is answered that 503 at once (dropped, under TLS, where an answer
	// would cost a handshake) and closed before it is read. 0 takes the
	// default (MaxConnections: 1024, or MaxSessions
	// + 256 when that is more; MaxConnectionsPerClient: 64, or
	// MaxSessionsPerClient + 32 when that is more, and no cap with
	// TrustForwardedFor, where every connection comes from the proxy); a
	// negative count removes the cap.
	MaxConnections          int
	MaxConnectionsPerClient int

	// TurnTimeout bounds one turn (a request reaching the worker until its
	// turn-ending event); the worker is killed past it.
	TurnTimeout time.Duration
	// IdleTimeout bounds the wait for a client's next request.
	IdleTimeout time.Duration
	// SessionTimeout bounds a session's whole life.
	SessionTimeout time.Duration

	// MaxDuration, MaxMemory (bytes) and MaxRecursionDepth are ceilings: a
	// client that asks for more, or for nothing (or zero), gets the
	// ceiling.
	MaxDuration       time.Duration
	MaxMemory         uint64
	MaxRecursionDepth uint64
	// MaxSuspensions is the ceiling of max_suspensions, how often one
	// feed may suspend (host calls, name lookups, OS calls, future
	// waits) before the server aborts it: a client that asks for more,
	// or for nothing, gets the ceiling (0: DefaultMaxSuspensions). A
	// client asking for 0 keeps it (its feeds are aborted at their first
	// suspension): unlike the other limits, the worker does not read it,
	// the server enforces it, and 0 is stricter, not "no limit". It
	// also caps the limit a Load restores from a dump.
	MaxSuspensions uint64

	// DumpKey signs the dumps the server hands out (at least MinKeyLen
	// bytes; required): a secret, the same on every replica that shares
	// dumps, such as 32 bytes from crypto/rand. DumpKeyPrevious, when
	// set, is also accepted on Load (key rotation).
	DumpKey         []byte
	DumpKeyPrevious []byte

	// Tokens, when set, requires "Authorization: Bearer TOKEN" on every
	// upgrade (one Authorization header: an upgrade with two is refused);
	// the token's name is the client identity. Replace it at run time with
	// Server.SetTokens.
	Tokens *Tokens
	// OpenMetrics serves /metrics without authentication even when Tokens
	// is set (for a scraper on a network only it reaches). Without it,
	// with Tokens set, /metrics wants a valid bearer token like "/"; a
	// Prometheus scrape job sends one with its authorization setting.
	OpenMetrics bool
	// MaxAuthFailures is how many failed bearer-token authentications
	// (a missing, unknown or doubled token) one client address may make
	// in a burst; it gets one back every 6 s. An address past it is
	// answered 429 with Retry-After before its token is looked at
	// (0: 10; < 0: no limit). The address is the one of
	// MaxSessionsPerClient (an IPv6 address by its /64), so behind a
	// proxy set TrustForwardedFor, or every client shares the proxy's.
	MaxAuthFailures int
	// TrustForwardedFor takes the client identity of an unauthenticated
	// request from the last X-Forwarded-For address (a port after it is
	// ignored), the one the proxy in
	// front of the server appended, instead of the peer address. The
	// addresses before it are whatever the client sent, so they are never
	// used: behind a chain of proxies, have the outermost one set (not
	// append to) the header.
	TrustForwardedFor bool
	// TLS, when set, makes Serve speak TLS (wss://); it needs a
	// certificate (Certificates or GetCertificate). With ClientAuth set
	// to verify client certificates (which then needs ClientCAs: New
	// refuses to verify them against the system roots) and no Tokens, a
	// client's identity is its certificate's common name (without one,
	// its first URI, DNS, email or IP SAN, or else its fingerprint; a
	// name holding what a tokens file refuses in a name, such as a
	// zero-width or bidirectional format character, gives the
	// fingerprint too, though inner spaces are fine).
	TLS *tls.Config

	// DrainGrace is how long Shutdown keeps silent sessions after the
	// drain begins; then each session waiting for its next request is
	// sent its signed dump in a ShutdownDump (as that request would have
	// been answered) and closed.
	DrainGrace time.Duration
	// ReadHeaderTimeout bounds reading a request's headers (an upgrade's
	// too) and, with TLS, the handshake before them; reading the rest of
	// a plain HTTP request and writing its response are each bounded by
	// ReadHeaderTimeout + 10 s.
	ReadHeaderTimeout time.Duration
	// MaxHeaderBytes caps the size of a request's request line and header
	// lines (an upgrade's too), counted as net/http counts them (it reads
	// up to 4 KiB past the cap before refusing); a request over it is
	// answered 431 and its connection closed (0: 64 KiB).
	MaxHeaderBytes int
	// MaxFrameLen caps frames in both directions (0: 256 MiB).
	MaxFrameLen int

	// Worker configures the worker processes (binary, stderr). Their
	// stderr lines share one log bound, the internal pool's (see
	// worker.Config.StderrLogLimiter), however often workers are replaced.
	Worker worker.Config
	// Prewarm is how many idle workers the internal pool keeps ready
	// (0: 2, never more than MaxSessions).
	Prewarm int
	// MaxRestarts is how many worker failures (a start that fails, a
	// worker that dies while idle, also by a signal from outside) the
	// internal pool tolerates within RestartWindow; one more trips its
	// restart cap: it starts no worker, and /readyz and upgrades answer
	// 503 (reason unhealthy) until RestartWindow has passed (0:
	// pool.DefaultMaxRestarts; < 0: no cap).
	MaxRestarts int
	// RestartWindow is the window of MaxRestarts and how long a tripped
	// cap lasts (0: pool.DefaultRestartWindow; a negative one is refused
	// by New).
	RestartWindow time.Duration

	// Version is reported by /info; empty means "dev".
	Version string
	// Logger receives the server's logs (one record per connection event,
	// with its connection id; never code or values); nil means
	// slog.Default().
	Logger *slog.Logger

	// now, when set, is the clock of the authentication limiter (tests).
	now func() time.Time
	// pool, when set, adjusts the internal pool's Config before New
	// starts it (tests: a small restart cap, an event hook).
	pool func(*pool.Config)
	// handOverBound, when set, replaces drainDumpBound (tests).
	handOverBound time.Duration
}

// ConfigError reports a Config that New (or NewSigner) refuses; Field
// names the Config field ("DumpKey", "DumpKeyPrevious", "TLS").
type ConfigError struct {
	// Field is the name of the Config field refused.
	Field string
	// Reason says what is wrong with it.
	Reason string
}

// Error returns "server: Config.FIELD: REASON".
func (e *ConfigError) Error() string { return "server: Config." + e.Field + ": " + e.Reason }

func (c Config) withDefaults() Config {
	def := func(p *time.Duration, d time.Duration) {
		if *p <= 0 {
			*p = d
		}
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MaxSessionsPerClient == 0 {
		c.MaxSessionsPerClient = DefaultMaxSessionsPerClient
	}
	if c.MaxConnections == 0 {
		c.MaxConnections = DefaultMaxConnections
		if c.MaxSessions > 0 {
			c.MaxConnections = max(c.MaxConnections, c.MaxSessions+256)
		}
	}
	if c.MaxConnectionsPerClient == 0 {
		c.MaxConnectionsPerClient = DefaultMaxConnectionsPerClient
		if c.MaxSessionsPerClient > 0 {
			c.MaxConnectionsPerClient = max(c.MaxConnectionsPerClient, c.MaxSessionsPerClient+32)
		}
		if c.TrustForwardedFor {
			c.MaxConnectionsPerClient = -1
		}
	}
	if c.MaxAuthFailures == 0 {
		c.MaxAuthFailures = DefaultMaxAuthFailures
	}
	def(&c.TurnTimeout, DefaultTurnTimeout)
	def(&c.IdleTimeout, DefaultIdleTimeout)
	def(&c.SessionTimeout, DefaultSessionTimeout)
	def(&c.MaxDuration, DefaultMaxDuration)
	def(&c.DrainGrace, DefaultDrainGrace)
	def(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	if c.MaxHeaderBytes <= 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.MaxMemory == 0 {
		c.MaxMemory = DefaultMaxMemory
	}
	if c.MaxRecursionDepth == 0 {
		c.MaxRecursionDepth = DefaultMaxRecursionDepth
	}
	if c.MaxSuspensions == 0 {
		c.MaxSuspensions = DefaultMaxSuspensions
	}
	if c.MaxFrameLen <= 0 || c.MaxFrameLen > DefaultMaxFrameLen {
		c.MaxFrameLen = DefaultMaxFrameLen
	}
	if c.Prewarm <= 0 {
		c.Prewarm = DefaultPrewarm
	}
	if c.MaxSessions > 0 && c.Prewarm > c.MaxSessions {
		c.Prewarm = c.MaxSessions
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

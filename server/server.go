package server

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/child/relay"
	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/safetext"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// Server serves Monty sessions over WebSockets: each connection at "/" is
// one session on a worker from an internal prewarmed pool, behind the
// server's policy (authentication, admission, ceilings, refusals, signed
// dumps, timeouts, drain).
//
// A Server is safe for concurrent use.
type Server struct {
	cfg    Config
	log    *slog.Logger
	signer *Signer
	// ceilings are the limits no session may exceed, also through a Load.
	ceilings DumpLimits
	tokens   atomic.Pointer[Tokens]
	authLim  *authLimiter // nil: no limit
	adm      *admission
	pool     *pool.Pool
	m        *metrics
	mux      *http.ServeMux

	killCtx context.Context
	kill    context.CancelCauseFunc
	// abortCtx ends when everything must end at once (Close, or
	// Shutdown's ctx once the drain's grace is over): it cuts short the
	// handovers of the idle sessions' dumps at the end of the grace.
	abortCtx context.Context
	abort    context.CancelFunc

	// authenticated, when set (by tests), runs after a request has
	// authenticated and before it asks for a place under the caps.
	authenticated func()

	// conns is the listener's connection limiter, once Serve has one.
	conns atomic.Pointer[connLimiter]

	mu   sync.Mutex
	http *http.Server
}

// New starts the worker pool (negotiating the workers' protocol version
// and prewarming Prewarm workers) and returns a server ready to Serve.
// A Config it refuses (a missing or short DumpKey, a TLS configuration
// without a certificate, ...) is reported by a *ConfigError naming the
// field, before any worker starts.
func New(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	signer, err := NewSigner(cfg.DumpKey, cfg.DumpKeyPrevious)
	if err != nil {
		return nil, err
	}
	if err := checkTLS(cfg.TLS); err != nil {
		return nil, err
	}
	if cfg.RestartWindow < 0 {
		return nil, &ConfigError{Field: "RestartWindow", Reason: fmt.Sprintf("negative (%v)", cfg.RestartWindow)}
	}
	pc := pool.Config{
		MinWorkers:    cfg.Prewarm,
		MaxWorkers:    poolMax(cfg),
		Worker:        cfg.Worker,
		Logger:        cfg.Logger,
		MaxRestarts:   cfg.MaxRestarts,
		RestartWindow: cfg.RestartWindow,
	}
	if cfg.pool != nil {
		cfg.pool(&pc)
	}
	p, err := pool.New(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("server: worker pool: %w", err)
	}
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		signer:  signer,
		adm:     newAdmission(cfg.MaxSessions, cfg.MaxSessionsPerClient),
		authLim: newAuthLimiter(cfg.MaxAuthFailures, cfg.now),
		pool:    p,
	}
	c := clampLimits(nil, &cfg)
	s.ceilings = DumpLimits{MaxDurationMicros: *c.MaxDurationMicros, MaxMemoryBytes: *c.MaxMemoryBytes, MaxRecursionDepth: *c.MaxRecursionDepth}
	s.tokens.Store(cfg.Tokens)
	s.m = newMetrics(p)
	s.killCtx, s.kill = context.WithCancelCause(context.Background())
	s.abortCtx, s.abort = context.WithCancel(context.Background())
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("GET /health", s.readyz) // upstream's name
	s.mux.HandleFunc("GET /info", s.info)
	s.mux.Handle("GET /metrics", s.metricsAuth(promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{})))
	s.mux.HandleFunc("/", s.root)
	return s, nil
}

// metricsAuth wants a valid bearer token in front of h while tokens are
// set, unless the Config opens the metrics (see Config.OpenMetrics).
func (s *Server) metricsAuth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.cfg.OpenMetrics && s.tokens.Load() != nil {
			if _, ok := s.authenticate(w, r); !ok {
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// poolMax is the worker pool's cap: one worker per session the server
// admits, and none when sessions are not capped (a cap below the
// sessions' would leave a session admitted but waiting for a worker until
// its turn timed out).
func poolMax(cfg Config) int {
	if cfg.MaxSessions < 0 {
		return math.MaxInt
	}
	return max(cfg.MaxSessions, cfg.Prewarm)
}

// SetTokens replaces the bearer tokens (nil turns authentication off);
// sessions already open keep running.
func (s *Server) SetTokens(t *Tokens) { s.tokens.Store(t) }

// Handler returns the server's HTTP handler: the WebSocket endpoint at
// "/" and the /healthz, /readyz, /metrics and /info endpoints. With
// tokens, "/" (the WebSocket) and /metrics (unless Config.OpenMetrics)
// want a valid bearer token; the others are open. With no
// authentication (no tokens, no verified client certificates), a request
// received on a loopback address must name a loopback host (localhost,
// *.localhost, a loopback IP): anything else is refused with 403, so that
// a web page whose DNS name was rebound to 127.0.0.1 cannot use the
// server (its WebSocket Origin would match its own Host).
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	over := inOverflow(r)
	if over {
		// A connection over the caps gets one answer, whichever it is.
		w.Header().Set("Connection", "close")
	}
	if s.open() && arrivedOnLoopback(r) && !LoopbackHost(r.Host) {
		s.refuse(w, http.StatusForbidden, ReasonHostRejected, 0)
		return
	}
	if over && !isProbe(r) {
		s.refuse(w, http.StatusServiceUnavailable, ReasonTooManyConnections, time.Second)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// open reports whether the server authenticates nobody.
func (s *Server) open() bool {
	return s.tokens.Load() == nil && (s.cfg.TLS == nil || s.cfg.TLS.ClientAuth != tls.RequireAndVerifyClientCert)
}

// arrivedOnLoopback reports whether r came in on a loopback address.
func arrivedOnLoopback(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoopbackHost reports whether h, a Host header or a listen address's
// host (either with or without a port; an IPv6 address with or without
// brackets), names this machine's loopback: localhost or a name under it
// (RFC 6761), in any case and with or without a trailing dot, or a
// loopback IP. It looks nothing up: a name under localhost may still
// resolve elsewhere through DNS, so a listener must also check the
// address it bound.
func LoopbackHost(h string) bool {
	host := h
	if hh, _, err := net.SplitHostPort(h); err == nil {
		host = hh
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve accepts connections on l until Shutdown or Close, speaking TLS
// when the Config has a TLS configuration. It returns http.ErrServerClosed
// after Shutdown or Close.
func (s *Server) Serve(l net.Listener) error {
	// The read and write timeouts bound the plain HTTP requests (and an
	// upgrade until it is accepted; net/http clears both deadlines when
	// the connection is hijacked). Without the write timeout, a client
	// that pipelines requests and never reads the responses would hold
	// the connection and its goroutine forever once the socket filled.
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadHeaderTimeout + 10*time.Second,
		WriteTimeout:      s.cfg.ReadHeaderTimeout + 10*time.Second,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	if cl := newConnLimiter(l, s.cfg.MaxConnections, s.cfg.MaxConnectionsPerClient, s.cfg.TLS == nil,
		func() { s.m.refusals.WithLabelValues(ReasonTooManyConnections).Inc() }); cl != nil {
		l = cl
		hs.ConnContext = connContext
		s.conns.Store(cl)
	}
	if s.cfg.TLS != nil {
		l = tls.NewListener(l, s.cfg.TLS)
	}
	s.mu.Lock()
	if s.killCtx.Err() != nil {
		s.mu.Unlock()
		l.Close()
		return http.ErrServerClosed
	}
	if s.http != nil {
		s.mu.Unlock()
		return errors.New("server: Serve called twice")
	}
	s.http = hs
	s.mu.Unlock()
	return hs.Serve(l)
}

// Drain starts a drain: /readyz answers 503, new upgrades are refused with
// 503, and each open session's next request is answered with a
// ShutdownDump carrying a signed dump. Running turns finish.
func (s *Server) Drain() {
	if !s.adm.isDraining() {
		s.log.Info("draining")
	}
	s.adm.drain()
}

// Shutdown drains (see Drain), waits until the last session has ended or
// the drain grace has passed (then ends the remaining sessions: one
// waiting for its next request is first sent its signed dump in a
// ShutdownDump, as that request would have been answered), and
// stops the HTTP server and the pool. A done ctx ends everything at once
// (a second SIGTERM); as with http.Server.Shutdown, the error then
// matches ctx's, joined with any of Close's.
func (s *Server) Shutdown(ctx context.Context) error {
	s.Drain()
	grace := time.NewTimer(s.cfg.DrainGrace)
	defer grace.Stop()
	select {
	case <-s.adm.drain():
	case <-grace.C:
		s.log.Info("drain grace over; closing remaining sessions")
		// A session still waiting for its next request is handed its
		// signed dump before it is closed (see gate.drainIdle); a done
		// ctx cuts those handovers short.
		stop := context.AfterFunc(ctx, s.abort)
		defer stop()
		err := s.close(errDrainOver)
		if ctx.Err() != nil {
			return errors.Join(ctx.Err(), err)
		}
		return err
	case <-ctx.Done():
		return errors.Join(ctx.Err(), s.Close())
	}
	return s.Close()
}

// Close ends every session at once (close code 1001), then stops the HTTP
// server and the pool.
func (s *Server) Close() error {
	s.abort()
	return s.close(errKilled)
}

// close is Close, ending the sessions' contexts with cause (errKilled, or
// errDrainOver at the end of a drain's grace).
func (s *Server) close(cause error) error {
	done := s.adm.drain()
	s.mu.Lock()
	s.kill(cause)
	hs := s.http
	s.mu.Unlock()
	var err error
	if hs != nil {
		err = hs.Close()
	}
	<-done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(err, s.pool.Close(ctx))
}

// checkTLS refuses a TLS configuration the server cannot serve with (no
// certificate: every handshake would fail, and the failures are only
// logged at Debug) or one that verifies client certificates against the
// system roots (ClientCAs nil): the common name of any certificate a
// public CA issued would then be a client identity.
func checkTLS(c *tls.Config) error {
	if c == nil || c.GetConfigForClient != nil {
		return nil
	}
	if len(c.Certificates) == 0 && c.GetCertificate == nil {
		return &ConfigError{Field: "TLS", Reason: "no certificate (set Certificates or GetCertificate)"}
	}
	if c.ClientAuth >= tls.VerifyClientCertIfGiven && c.ClientCAs == nil {
		return &ConfigError{Field: "TLS", Reason: "verifies client certificates without ClientCAs, which would trust every public CA"}
	}
	return nil
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if s.adm.isDraining() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "draining")
		return
	}
	if retry, ok := s.unhealthy(); ok {
		w.Header().Set("Retry-After", retryAfter(retry))
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "worker pool unhealthy")
		return
	}
	fmt.Fprintln(w, "ready")
}

// unhealthy reports whether the worker pool's restart cap is tripped (it
// then starts no worker and refuses every checkout), and how long until
// it tries again. /readyz and the admission of upgrades both ask it, so
// an upgrade is refused exactly while the probe says 503.
func (s *Server) unhealthy() (time.Duration, bool) {
	err := s.pool.Health()
	if err == nil {
		return 0, false
	}
	var ue *pool.UnhealthyError
	if errors.As(err, &ue) {
		return max(time.Until(ue.Until), time.Second), true
	}
	// Closed: the server is shutting down (a drain answers first).
	return time.Second, true
}

// retryAfter renders d as a Retry-After value: whole seconds, rounded up.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(int((d + time.Second - 1) / time.Second))
}

// Info is the JSON document served at /info: what a client may want to
// know before it connects. It is plain data. The JSON names are fixed (a
// field may be added, never renamed); a count that is not capped is
// reported as -1, and durations are in seconds.
type Info struct {
	// Version is the server's version (Config.Version).
	Version string `json:"version"`
	// ProtocolVersions are the protocol versions a client may configure.
	ProtocolVersions []uint32 `json:"protocol_versions"`
	// WorkerProtocol is the version the server's workers speak.
	WorkerProtocol uint32 `json:"worker_protocol"`
	// Ceilings are the most a session's limits may be (Config.MaxDuration,
	// MaxMemory, MaxRecursionDepth, MaxSuspensions); a client asking for
	// more, or for nothing, gets them.
	Ceilings struct {
		MaxDurationSeconds float64 `json:"max_duration_seconds"`
		MaxMemoryBytes     uint64  `json:"max_memory_bytes"`
		MaxRecursionDepth  uint64  `json:"max_recursion_depth"`
		MaxSuspensions     uint64  `json:"max_suspensions"`
	} `json:"ceilings"`
	// MaxSessions and MaxSessionsPerClient cap open sessions, server-wide
	// and per client identity (an upgrade past them gets 503 capacity or
	// 429 client_quota).
	MaxSessions          int `json:"max_sessions"`
	MaxSessionsPerClient int `json:"max_sessions_per_client"`
	// MaxConnections and MaxConnectionsPerClient cap open TCP connections,
	// upgraded or not, server-wide and per peer address (503
	// too_many_connections past them).
	MaxConnections          int `json:"max_connections"`
	MaxConnectionsPerClient int `json:"max_connections_per_client"`
	// MaxHeaderBytes caps a request's request line and headers (431 past
	// it); ReadHeaderTimeoutSeconds bounds reading them (and the TLS
	// handshake).
	MaxHeaderBytes           int     `json:"max_header_bytes"`
	ReadHeaderTimeoutSeconds float64 `json:"read_header_timeout_seconds"`
	// MaxAuthFailures is how many failed authentications one address may
	// make in a burst before it is answered 429 auth_throttled.
	MaxAuthFailures int `json:"max_auth_failures"`
	// TurnTimeoutSeconds, IdleTimeoutSeconds and SessionTimeoutSeconds
	// bound a turn, the wait for the next request and a session's life.
	TurnTimeoutSeconds    float64 `json:"turn_timeout_seconds"`
	IdleTimeoutSeconds    float64 `json:"idle_timeout_seconds"`
	SessionTimeoutSeconds float64 `json:"session_timeout_seconds"`
	// DrainGraceSeconds is how long a drain keeps silent sessions before
	// handing them their dumps.
	DrainGraceSeconds float64 `json:"drain_grace_seconds"`
	// MaxFrameBytes caps a frame in either direction.
	MaxFrameBytes int `json:"max_frame_bytes"`
	// Auth is how clients authenticate: "none", "bearer" or "mtls".
	Auth string `json:"auth"`
	// Draining reports a drain under way (upgrades are refused).
	Draining bool `json:"draining"`
	// ActiveSessions is the number of open sessions.
	ActiveSessions int `json:"active_sessions"`
}

// Info returns what /info serves.
func (s *Server) Info() Info {
	var in Info
	in.Version = s.cfg.Version
	in.ProtocolVersions = slices.Clone(child.DefaultVersions)
	in.WorkerProtocol = s.pool.Version()
	in.Ceilings.MaxDurationSeconds = s.cfg.MaxDuration.Seconds()
	in.Ceilings.MaxMemoryBytes = s.cfg.MaxMemory
	in.Ceilings.MaxRecursionDepth = s.cfg.MaxRecursionDepth
	in.Ceilings.MaxSuspensions = s.cfg.MaxSuspensions
	uncapped := func(n int) int { return max(n, -1) }
	in.MaxSessions = uncapped(s.cfg.MaxSessions)
	in.MaxSessionsPerClient = uncapped(s.cfg.MaxSessionsPerClient)
	in.MaxConnections = uncapped(s.cfg.MaxConnections)
	in.MaxConnectionsPerClient = uncapped(s.cfg.MaxConnectionsPerClient)
	in.MaxHeaderBytes = s.cfg.MaxHeaderBytes
	in.ReadHeaderTimeoutSeconds = s.cfg.ReadHeaderTimeout.Seconds()
	in.MaxAuthFailures = uncapped(s.cfg.MaxAuthFailures)
	in.DrainGraceSeconds = s.cfg.DrainGrace.Seconds()
	in.TurnTimeoutSeconds = s.cfg.TurnTimeout.Seconds()
	in.IdleTimeoutSeconds = s.cfg.IdleTimeout.Seconds()
	in.SessionTimeoutSeconds = s.cfg.SessionTimeout.Seconds()
	in.MaxFrameBytes = s.cfg.MaxFrameLen
	in.Auth = "none"
	if s.tokens.Load() != nil {
		in.Auth = "bearer"
	} else if s.cfg.TLS != nil && s.cfg.TLS.ClientAuth == tls.RequireAndVerifyClientCert {
		in.Auth = "mtls"
	}
	in.Draining = s.adm.isDraining()
	in.ActiveSessions, _ = s.adm.count()
	return in
}

func (s *Server) info(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(s.Info())
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// identity authenticates r and returns the client identity.
func (s *Server) identity(r *http.Request) (string, bool) {
	if t := s.tokens.Load(); t != nil {
		tok, ok := bearer(r)
		if !ok {
			return "", false
		}
		return t.Lookup(tok)
	}
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		return certIdentity(r.TLS.VerifiedChains[0][0]), true
	}
	return s.addressKey(r), true
}

// certIdentity names the client of a verified certificate: "cn:" and its
// common name; without one (SPIFFE and many other PKIs name the subject
// only in its SANs), its first URI, DNS, email or IP SAN ("uri:…",
// "dns:…", "email:…", "ip:…"); without any, "sha256:" and the
// certificate's fingerprint, so that certificates with no name are not
// all one client. A name that could show in logs as another name (see
// certName) is not used: the certificate is then named by its
// fingerprint too.
func certIdentity(c *x509.Certificate) string {
	kind, name := "", ""
	switch {
	case c.Subject.CommonName != "":
		kind, name = "cn:", c.Subject.CommonName
	case len(c.URIs) > 0:
		kind, name = "uri:", c.URIs[0].String()
	case len(c.DNSNames) > 0:
		kind, name = "dns:", c.DNSNames[0]
	case len(c.EmailAddresses) > 0:
		kind, name = "email:", c.EmailAddresses[0]
	case len(c.IPAddresses) > 0:
		kind, name = "ip:", c.IPAddresses[0].String()
	}
	if name != "" && certName(name) {
		return kind + name
	}
	sum := sha256.Sum256(c.Raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// certName reports whether a certificate's name can name its client: as
// for a tokens file's names (see ParseTokens), UTF-8 of printable
// characters, without format characters (zero-width, bidirectional
// overrides, byte order marks), control, private-use or unassigned code
// points. Unlike a tokens file's, an inner ASCII space is fine (a common
// name such as "Build Agent 1" is ordinary, and cannot hide another
// name), but not one that starts or ends the name.
func certName(s string) bool {
	return printable(s) && !strings.HasPrefix(s, " ") && !strings.HasSuffix(s, " ")
}

// addressKey is the client key of an unauthenticated request: its
// address (the peer's, or the forwarding proxy's last X-Forwarded-For
// address), by clientKey.
func (s *Server) addressKey(r *http.Request) string {
	if s.cfg.TrustForwardedFor {
		if ip := forwardedFor(r.Header); ip != "" {
			return clientKey(ip)
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return clientKey(host)
}

// clientKey names the client at address host: an IPv4 address (also one
// mapped into IPv6) as itself, an IPv6 address by its /64 ("2001:db8::/64"):
// one subscriber or LAN holds a whole /64, so keying its addresses apart
// would give it as many identities as it likes. The IPv6 loopback stays
// itself, and anything that is not an IP address is kept as it is.
func clientKey(host string) string {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.WithZone("").Unmap()
	if a.Is4() || a.IsLoopback() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// authenticate returns r's client identity, or refuses r: 429 with
// Retry-After when its address is past MaxAuthFailures (its token is not
// looked at), 401 when it presents no valid token (counted against its
// address). identity always succeeds without tokens (an mTLS handshake
// already checked the certificate).
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	if s.tokens.Load() == nil {
		return s.identity(r)
	}
	addr := s.addressKey(r)
	taken, retry, ok := s.authLim.take(addr)
	if !ok {
		s.refuse(w, http.StatusTooManyRequests, ReasonAuthThrottled, retry)
		return "", false
	}
	client, ok := s.identity(r)
	if !ok {
		s.refuse(w, http.StatusUnauthorized, ReasonUnauthorized, 0)
		return "", false
	}
	s.authLim.refund(taken)
	return client, true
}

// forwardedFor returns the last X-Forwarded-For address (over every line
// of the header): the one the proxy in front of the server appended, the
// address it received the request from. The addresses before it are the
// client's to choose, so they name nobody. The address may carry a port
// ("192.0.2.1:4711", "[2001:db8::1]:4711"); "" when the last entry is not
// an address.
func forwardedFor(h http.Header) string {
	lines := h.Values("X-Forwarded-For")
	if len(lines) == 0 {
		return ""
	}
	last := lines[len(lines)-1]
	if i := strings.LastIndexByte(last, ','); i >= 0 {
		last = last[i+1:]
	}
	last = strings.TrimSpace(last)
	if ap, err := netip.ParseAddrPort(last); err == nil {
		// "ip:port" or "[ipv6]:port", as some proxies append it.
		return ap.Addr().String()
	}
	if ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(last, "["), "]")); ip != nil {
		return ip.String()
	}
	return ""
}

func (s *Server) refuse(w http.ResponseWriter, status int, reason string, retry time.Duration) {
	s.m.refusals.WithLabelValues(reason).Inc()
	if retry > 0 {
		w.Header().Set("Retry-After", retryAfter(retry))
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="monty"`)
	}
	http.Error(w, reason, status)
}

// root serves the WebSocket endpoint (and /info for plain requests).
func (s *Server) root(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	if !isUpgrade(r) {
		s.info(w, r)
		return
	}
	if s.adm.isDraining() {
		s.refuse(w, http.StatusServiceUnavailable, ReasonDraining, s.cfg.DrainGrace)
		return
	}
	if retry, bad := s.unhealthy(); bad {
		// The pool would refuse the session's checkout at its Configure:
		// say so now, with when to come back, rather than take the
		// connection and end it with 1011 after the handshake.
		s.refuse(w, http.StatusServiceUnavailable, ReasonUnhealthy, retry)
		return
	}
	client, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	if s.authenticated != nil {
		s.authenticated()
	}
	sl, reason := s.adm.acquire(client)
	switch reason {
	case ReasonDraining:
		// The drain began after the check above: the same answer.
		s.refuse(w, http.StatusServiceUnavailable, reason, s.cfg.DrainGrace)
		return
	case ReasonCapacity:
		s.refuse(w, http.StatusServiceUnavailable, reason, time.Second)
		return
	case ReasonClientQuota:
		s.refuse(w, http.StatusTooManyRequests, reason, time.Second)
		return
	}
	wc, err := ws.Accept(w, r, ws.AcceptOptions{MaxFrameLen: s.cfg.MaxFrameLen})
	if err != nil {
		sl.done()
		s.m.refusals.WithLabelValues(ReasonUpgradeRejected).Inc()
		return
	}
	s.run(wc, client, r.RemoteAddr, sl)
}

// run serves one session on the WebSocket. The session's place under the
// caps is freed once the session is over and before its Close frame goes
// out, so a client that redials when it sees the Close (a protocol
// downgrade does) finds its quota free.
func (s *Server) run(wc *ws.Conn, client, remote string, sl *slot) {
	defer sl.done()
	id := uuid.NewString()
	log := s.log.With(slog.String("conn", id), slog.String("client", client))
	ctx, cancel := context.WithCancelCause(s.killCtx)
	defer cancel(nil)
	ctx, stop := context.WithTimeoutCause(ctx, s.cfg.SessionTimeout, errSessionTimeout)
	defer stop()
	c := &conn{srv: s, id: id, ws: wc, log: log, ctx: ctx, cancel: cancel}
	c.codec, _ = codec.ForVersion(protocol.Version)
	c.eng = relay.New(relay.Config{
		Logger: log,
		Start: func(ctx context.Context, sc session.Config) (relay.Inner, error) {
			ps, err := s.pool.Checkout(ctx, sc)
			if err != nil {
				return nil, err
			}
			return ps, nil
		},
	})
	s.m.active.Inc()
	start := time.Now()
	log.Info("session open", slog.String("remote", remote))
	// A client that leaves (a Close frame, a reset connection) ends the
	// session at once, even while a turn runs and nobody reads the
	// WebSocket: the turn is interrupted and its worker freed, rather than
	// held until the turn ends or times out.
	unwatch, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-wc.Done():
			gate{c}.readFailed(wc.Err())
		case <-unwatch:
		}
	}()
	err := child.Serve(ctx, gate{c}, policy{c}, child.Options{
		Limits: codec.Limits{MaxFrameLen: s.cfg.MaxFrameLen},
		Logger: log,
	})
	close(unwatch)
	<-watched
	sl.free()
	outcome := c.ended()
	if outcome == "" {
		var ee *child.ExitError
		var uv *protocol.UnsupportedVersionError
		switch {
		case err == nil:
			outcome = OutcomeOK
			c.end(CloseNormal, "", outcome)
		case errors.As(err, &uv):
			// The client asked for a version this server does not speak
			// (its FatalError says which it does); no worker was involved.
			outcome = OutcomeVersionRefused
			c.end(CloseProtocol, "unsupported protocol version", outcome)
		case errors.As(err, &ee) && ee.Code == protocol.ExitProtocol:
			outcome = OutcomeProtocol
			c.end(CloseProtocol, safetext.Prefix(ee.Message, 120), outcome)
		default:
			outcome = OutcomeWorkerFailed
			c.end(CloseWorkerFailed, "session failed", outcome)
		}
	}
	s.m.active.Dec()
	s.m.ended.WithLabelValues(outcome).Inc()
	log.Info("session end", slog.String("outcome", outcome), slog.Duration("duration", time.Since(start)))
}

//go:build unix

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/worker"
)

// secondsFlag is a duration flag that also takes a plain number of
// seconds (upstream's form): "300", "300s" and "5m" are all accepted. The
// duration must be positive: server.Config reads zero as "the default", so
// a 0 (or a value that rounds to 0 ns) would silently become, say, a 30 s
// --drain-grace.
type secondsFlag struct{ d *time.Duration }

func (f secondsFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f secondsFlag) Set(s string) error {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if !inSecondsRange(v) {
			return fmt.Errorf("%s seconds is out of range", s)
		}
		d := time.Duration(v * float64(time.Second))
		if d <= 0 {
			return fmt.Errorf("%s seconds is not a positive duration", s)
		}
		*f.d = d
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration (seconds, as 90, or a Go duration, as 1m30s)", s)
	}
	if d < 0 {
		return fmt.Errorf("%q is negative", s)
	}
	if d == 0 {
		return fmt.Errorf("%q is not a positive duration", s)
	}
	*f.d = d
	return nil
}

// durationUsage ends the help of every secondsFlag, naming its argument.
const durationUsage = " (`DURATION`: seconds, as 90, or a Go duration, as 1m30s)"

// envName is the environment twin of a flag: MONTY_SERVER_<UPPER_SNAKE>.
func envName(flagName string) string {
	return "MONTY_SERVER_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// serveCmd is `montygo serve`: the Monty server. The first SIGTERM or
// Ctrl-C drains, a second one ends at once; SIGHUP reloads --tokens and
// the TLS files.
func serveCmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	// SIGHUP is caught from the start: its default action ends the
	// process, so a reload sent while the files are read (a `systemctl
	// reload` just after the start) would kill it. The serving loop
	// applies it.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP)
	defer signal.Stop(sigs)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := server.Config{
		MaxSessions: server.DefaultMaxSessions, MaxSessionsPerClient: server.DefaultMaxSessionsPerClient,
		TurnTimeout: server.DefaultTurnTimeout, IdleTimeout: server.DefaultIdleTimeout,
		SessionTimeout: server.DefaultSessionTimeout, MaxDuration: server.DefaultMaxDuration,
		DrainGrace: server.DefaultDrainGrace, ReadHeaderTimeout: server.DefaultReadHeaderTimeout,
		RestartWindow: pool.DefaultRestartWindow,
	}
	listen := fs.String("listen", "127.0.0.1:8000", "listen `ADDR` (host:port; port 0 picks one); the bound URL is the only stdout line")
	host := fs.String("host", "", "listen `HOST` (a name or an IP address, an IPv6 one with or without brackets), instead of --listen (upstream's flag; the port is then --port's, or 8000)")
	port := fs.String("port", "", "listen `PORT`, instead of --listen; 0 picks one (upstream's flag; the host is then --host's, or 127.0.0.1)")
	fs.IntVar(&cfg.MaxSessions, "max-sessions", cfg.MaxSessions, "open sessions server-wide (0 disables the cap)")
	fs.IntVar(&cfg.MaxSessionsPerClient, "max-sessions-per-client", cfg.MaxSessionsPerClient, "open sessions per client identity (0 disables the cap)")
	fs.IntVar(&cfg.MaxConnections, "max-connections", server.DefaultMaxConnections, "open TCP connections, upgraded or not, server-wide (at least --max-sessions + 256 unless given); one more is answered 503 too_many_connections, a health probe aside (0 disables the cap)")
	fs.IntVar(&cfg.MaxConnectionsPerClient, "max-connections-per-client", server.DefaultMaxConnectionsPerClient, "open TCP connections per peer address, IPv6 by its /64 (at least --max-sessions-per-client + 32 unless given; none with --trust-forwarded-for unless given) (0 disables the cap)")
	fs.Var(secondsFlag{&cfg.TurnTimeout}, "turn-timeout", "bound on one turn"+durationUsage)
	fs.Var(secondsFlag{&cfg.IdleTimeout}, "idle-timeout", "bound on the wait for a client's next request"+durationUsage)
	fs.Var(secondsFlag{&cfg.SessionTimeout}, "session-timeout", "bound on a session's life"+durationUsage)
	fs.Var(secondsFlag{&cfg.MaxDuration}, "max-duration", "ceiling of a session's max_duration"+durationUsage)
	memMiB := fs.Uint64("max-memory-mib", server.DefaultMaxMemory>>20, "ceiling of a session's memory limit (MiB)")
	frameMiB := fs.Int("max-frame-mib", server.DefaultMaxFrameLen>>20, "cap of a frame in either direction (MiB, 1 to 256); the server may hold three frames of a session at once")
	fs.Uint64Var(&cfg.MaxRecursionDepth, "max-recursion-depth", server.DefaultMaxRecursionDepth, "ceiling of a session's recursion depth (at least 1)")
	fs.Uint64Var(&cfg.MaxSuspensions, "max-suspensions", server.DefaultMaxSuspensions, "ceiling of a session's max_suspensions, the host round trips one feed may make before the server aborts it (at least 1)")
	fs.Var(secondsFlag{&cfg.DrainGrace}, "drain-grace", "after SIGTERM, how long silent sessions are kept"+durationUsage)
	dumpKey := fs.String("dump-key", "", "`FILE` holding the key that signs dumps (required, at least 16 bytes; the same on every replica)")
	dumpPrev := fs.String("dump-key-previous", "", "`FILE` holding the previous dump key, still accepted on Load (rotation)")
	fs.BoolVar(&cfg.TrustForwardedFor, "trust-forwarded-for", false, "take an unauthenticated client's identity from the last X-Forwarded-For address (the one the proxy in front appended)")
	workerPath := fs.String("worker", "", "`PATH` of the monty worker binary (default: $MONTY_BIN, .monty/bin/monty, PATH)")
	tokens := fs.String("tokens", "", "`FILE` of NAME:TOKEN lines; clients send Authorization: Bearer TOKEN (reloaded on SIGHUP)")
	fs.IntVar(&cfg.MaxAuthFailures, "max-auth-failures", server.DefaultMaxAuthFailures, "failed token logins one client address may make in a burst, one more every 6 s; past it 429 (0 disables the limit)")
	fs.BoolVar(&cfg.OpenMetrics, "metrics-no-auth", false, "serve /metrics without a token even with --tokens (for a scraper on a trusted network)")
	insecure := fs.Bool("insecure-no-auth", false, "allow listening on a non-loopback address without --tokens or --client-ca")
	tlsCert := fs.String("tls-cert", "", "TLS certificate `FILE` (PEM); with --tls-key the server speaks wss:// (the TLS files are reloaded on SIGHUP)")
	tlsKey := fs.String("tls-key", "", "TLS private key `FILE` (PEM)")
	clientCA := fs.String("client-ca", "", "CA bundle `FILE`: require client certificates signed by it (mutual TLS)")
	fs.IntVar(&cfg.Prewarm, "prewarm", server.DefaultPrewarm, "idle workers kept ready (at least 1, at most --max-sessions)")
	fs.IntVar(&cfg.MaxRestarts, "max-restarts", pool.DefaultMaxRestarts, "worker failures (failed starts, workers dead while idle, killed from outside too) tolerated within --restart-window; one more makes the server unhealthy (/readyz and upgrades 503) for --restart-window (0 disables the cap)")
	fs.Var(secondsFlag{&cfg.RestartWindow}, "restart-window", "window of --max-restarts, and how long the server stays unhealthy once it trips"+durationUsage)
	fs.Var(secondsFlag{&cfg.ReadHeaderTimeout}, "read-header-timeout", "bound on a TLS handshake and on reading a request's headers (an upgrade's too)"+durationUsage)
	headerKiB := fs.Int("max-header-kib", server.DefaultMaxHeaderBytes>>10, "cap of a request's header lines (KiB, 1 to 1024); a request over it is answered 431")
	logLevel := fs.String("log-level", "info", "log `LEVEL`: debug, info, warn, error")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: montygo serve --dump-key FILE [flags]")
		fmt.Fprintln(fs.Output(), "Every flag has an environment twin MONTY_SERVER_<NAME> (for example MONTY_SERVER_MAX_SESSIONS); a flag beats its variable.")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), serveExitStatusHelp)
	}
	if err := parseArgs(fs, stdout, stderr, func() error { return fs.Parse(args) }); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "montygo serve: unexpected argument %q\n", fs.Arg(0))
		return exitError{code: 2}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fromEnv := map[string]bool{}
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := os.LookupEnv(envName(f.Name)); ok && !set[f.Name] && envErr == nil {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s: %w", envName(f.Name), err)
			}
			fromEnv[f.Name] = true
		}
	})
	fail := func(err error) error {
		fmt.Fprintf(stderr, "montygo serve: %v\n", err)
		return exitError{code: 2}
	}
	if envErr != nil {
		return fail(envErr)
	}
	// A file, host or port flag given empty (`--tls-cert "$CERT"` with
	// the variable unset) is a mistake, not the flag left out: an empty
	// --tls-cert and --tls-key served plain ws://.
	for _, name := range []string{"dump-key", "dump-key-previous", "worker", "tokens", "tls-cert", "tls-key", "client-ca", "host", "port"} {
		if set[name] && fs.Lookup(name).Value.String() == "" {
			return fail(fmt.Errorf("--%s \"\": an empty value (leave the flag out for its default)", name))
		}
	}
	// given names a flag as the user gave it (the flag, or its variable),
	// "" when it keeps its default.
	given := func(name string) string {
		switch {
		case set[name]:
			return "--" + name
		case fromEnv[name]:
			return envName(name)
		}
		return ""
	}
	if l := given("listen"); l != "" {
		// Two ways of giving one address: --host and --port used to
		// replace --listen's parts without a word, so the server listened
		// on an address neither named.
		for _, other := range []string{"host", "port"} {
			if o := given(other); o != "" {
				return fail(fmt.Errorf("%s and %s both set the listen address; give --listen HOST:PORT, or --host and --port without it", l, o))
			}
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fail(fmt.Errorf("--log-level %q: want debug, info, warn or error", *logLevel))
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg.Logger = log
	cfg.Version = moduleVersion()
	// server.Config reads 0 as its default and a negative as "no cap";
	// here 0 is "no cap" (as the help says) and a negative is refused,
	// so that no value means something other than it says.
	// The connection caps, when not given, are server.Config's defaults,
	// which make room for the session caps (and leave a proxy's
	// connections alone).
	for name, v := range map[string]*int{"max-connections": &cfg.MaxConnections, "max-connections-per-client": &cfg.MaxConnectionsPerClient} {
		if given(name) == "" {
			*v = 0
		} else if *v == 0 {
			*v = -1
		} else if *v < 0 {
			return fail(fmt.Errorf("--%s must be 0 (no cap) or more, not %d", name, *v))
		}
	}
	for _, c := range []struct {
		name string
		v    *int
	}{{"max-sessions", &cfg.MaxSessions}, {"max-sessions-per-client", &cfg.MaxSessionsPerClient}, {"max-auth-failures", &cfg.MaxAuthFailures},
		{"max-restarts", &cfg.MaxRestarts}} {
		if *c.v < 0 {
			return fail(fmt.Errorf("--%s must be 0 (no cap) or more, not %d", c.name, *c.v))
		}
		if *c.v == 0 {
			*c.v = -1
		}
	}
	if cfg.MaxRecursionDepth == 0 {
		// server.Config reads 0 as its default of 1000.
		return fail(errors.New("--max-recursion-depth must be at least 1"))
	}
	if cfg.MaxSuspensions == 0 {
		// server.Config reads 0 as its default of 1000.
		return fail(errors.New("--max-suspensions must be at least 1"))
	}
	if cfg.Prewarm < 1 {
		// server.Config reads 0 (and less) as its default of 2.
		return fail(fmt.Errorf("--prewarm must be at least 1, not %d", cfg.Prewarm))
	}
	if mc := given("max-connections"); mc != "" && cfg.MaxConnections > 0 && cfg.MaxSessions > 0 && cfg.MaxConnections < cfg.MaxSessions {
		// Each session holds a connection: the session cap could never
		// be reached.
		ms, def := given("max-sessions"), ""
		if ms == "" {
			ms, def = "--max-sessions", " (its default)"
		}
		return fail(fmt.Errorf("%s %d is less than %s %d%s: each session holds a connection", mc, cfg.MaxConnections, ms, cfg.MaxSessions, def))
	}
	if pw := given("prewarm"); pw != "" && cfg.MaxSessions > 0 && cfg.Prewarm > cfg.MaxSessions {
		// server.Config cuts it down to the cap without a word; the
		// default --prewarm may follow a low --max-sessions down.
		ms, def := given("max-sessions"), ""
		if ms == "" {
			ms, def = "--max-sessions", " (its default)"
		}
		return fail(fmt.Errorf("%s %d is more than %s %d%s: idle workers past the cap on open sessions would never be used", pw, cfg.Prewarm, ms, cfg.MaxSessions, def))
	}
	if *memMiB == 0 || *memMiB > 1<<40 {
		return fail(errors.New("--max-memory-mib must be between 1 and 2^40"))
	}
	cfg.MaxMemory = *memMiB << 20
	if *frameMiB < 1 || *frameMiB > server.DefaultMaxFrameLen>>20 {
		return fail(fmt.Errorf("--max-frame-mib must be between 1 and %d", server.DefaultMaxFrameLen>>20))
	}
	cfg.MaxFrameLen = *frameMiB << 20
	if *headerKiB < 1 || *headerKiB > 1024 {
		return fail(errors.New("--max-header-kib must be between 1 and 1024"))
	}
	cfg.MaxHeaderBytes = *headerKiB << 10
	if *dumpKey == "" {
		return fail(fmt.Errorf("--dump-key FILE is required (or $%s=FILE): a file of at least %d random bytes; %s", envName("dump-key"), server.MinKeyLen, dumpKeyAdvice))
	}
	var err error
	if cfg.DumpKey, err = readKey(*dumpKey); err != nil {
		return fail(&flagFileError{"--dump-key", *dumpKey, err})
	}
	if *dumpPrev != "" {
		if cfg.DumpKeyPrevious, err = readKey(*dumpPrev); err != nil {
			return fail(&flagFileError{"--dump-key-previous", *dumpPrev, err})
		}
	}
	if *tokens != "" {
		if cfg.Tokens, err = tokensAtStart(*tokens); err != nil {
			return fail(&flagFileError{"--tokens", *tokens, err})
		}
	}
	lhost, lport, err := net.SplitHostPort(*listen)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			err = errors.New(ae.Err) // without net's "address ADDR: "
		}
		return fail(fmt.Errorf("--listen %q: %w", *listen, err))
	}
	if *port == "" && !portNumber(lport) {
		// Checked as --port is: net.Listen's own words name no flag
		// ("listen tcp: address 99999: invalid port").
		return fail(fmt.Errorf("--listen %q: port %q is not a port number", *listen, lport))
	}
	if *host != "" {
		if lhost, err = listenHost(*host); err != nil {
			return fail(err)
		}
	}
	if *port != "" {
		if !portNumber(*port) {
			return fail(fmt.Errorf("--port %q is not a port number", *port))
		}
		lport = *port
	}
	*listen = net.JoinHostPort(lhost, lport)
	// Tokens and verified client certificates (--client-ca) are each
	// authentication; without either, only the loopback is served.
	openLoopback := *tokens == "" && *clientCA == "" && !*insecure
	if openLoopback && !server.LoopbackHost(lhost) {
		return fail(fmt.Errorf("refusing to listen on %q without --tokens or --client-ca (pass --insecure-no-auth to allow it)", *listen))
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return fail(errors.New("--tls-cert and --tls-key go together"))
	}
	if *clientCA != "" && *tlsCert == "" {
		return fail(errors.New("--client-ca needs --tls-cert and --tls-key"))
	}
	var tlsf *tlsFiles
	if *tlsCert != "" {
		tlsf = &tlsFiles{cert: *tlsCert, key: *tlsKey, ca: *clientCA}
		if err := tlsf.load(false); err != nil {
			return fail(err)
		}
		cfg.TLS = tlsf.config()
	}
	if *workerPath != "" {
		bin, err := worker.ResolveBinary(*workerPath)
		if err != nil {
			// No worker: the sandbox cannot start, as for run (exit 3).
			fmt.Fprintf(stderr, "montygo serve: %s\n", cliText(workerNotFound(err, "--worker")))
			return exitError{code: exitSandboxFailed}
		}
		cfg.Worker.Binary = bin
	}
	cfg.Worker.Logger = log

	// The server owns its signals: the first SIGTERM (or Ctrl-C) drains,
	// which takes up to --drain-grace, and the second ends at once. main's
	// handler (cancel, then exit with 128+N after a 0.5 s grace) would cut
	// every drain short, so it is detached here: signal.Reset undoes every
	// earlier Notify for these signals, and only sigs receives them.
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)

	l, err := net.Listen("tcp", *listen)
	if err != nil {
		var sys *os.SyscallError
		if errors.As(err, &sys) {
			// The address is well formed but the system refused it (in
			// use, not ours to bind): serving failed, not the usage.
			fmt.Fprintf(stderr, "montygo serve: cannot listen on %s: %v\n", *listen, sys.Err)
			return exitError{code: 1}
		}
		// A host name that does not resolve, in net's words without its
		// "listen tcp: " and the resolver's address.
		var dns *net.DNSError
		var op *net.OpError
		switch {
		case errors.As(err, &dns):
			err = fmt.Errorf("lookup %s: %s", dns.Name, dns.Err)
		case errors.As(err, &op) && op.Err != nil:
			err = op.Err
		}
		return fail(fmt.Errorf("cannot listen on %s: %w", *listen, err))
	}
	if openLoopback && !boundLoopback(l.Addr()) {
		// A name under localhost passes LoopbackHost but is looked up
		// like any other; what was bound decides.
		l.Close()
		return fail(fmt.Errorf("refusing to listen on %q (bound %s, not a loopback address) without --tokens or --client-ca (pass --insecure-no-auth to allow it)", *listen, l.Addr()))
	}
	// Starting the pool can take a while (a worker that does not answer
	// is only given up at its start timeout): a SIGTERM, a Ctrl-C or the
	// caller's cancellation meanwhile stops the start there (nothing was
	// served, so nothing drains); a SIGHUP is kept for after it.
	srv, reload, err := startServer(ctx, cfg, sigs)
	if err != nil {
		l.Close()
		if errors.Is(err, errStopped) {
			log.Info("stopped while starting")
			return nil
		}
		var ce *server.ConfigError
		if errors.As(err, &ce) {
			return fail(err) // checked above; a usage mistake all the same
		}
		// The server's only other failure to start is its pool's: the
		// first worker did not start, which is the sandbox's failure
		// (exit 3, as run's). It is told without the server's and the
		// pool's layers of context ("server: worker pool: monty pool:
		// first worker: ...").
		if cause := workerStartCause(err); cause != nil {
			err = cause
		}
		err = workerNotFound(err, "--worker")
		if bin, rerr := worker.ResolveBinary(*workerPath); rerr == nil {
			err = notAWorker(err, bin)
		}
		fmt.Fprintf(stderr, "montygo serve: the worker pool did not start: %s\n", cliText(err))
		return exitError{code: exitSandboxFailed}
	}
	if reload {
		reloadTokens(srv, *tokens, log)
		tlsf.reload(log)
	}
	scheme := "ws"
	if cfg.TLS != nil {
		scheme = "wss"
	}
	fmt.Fprintf(stdout, "%s://%s/\n", scheme, l.Addr())
	log.Info("listening", slog.String("addr", l.Addr().String()), slog.Bool("tls", cfg.TLS != nil),
		slog.Bool("auth", cfg.Tokens != nil))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	now, cancelNow := context.WithCancel(context.Background())
	defer cancelNow()
	shut := make(chan error, 1)
	draining := false
	drain := func() {
		if !draining {
			draining = true
			go func() { shut <- srv.Shutdown(now) }()
		}
	}
	signals := 0
	ctxDone := ctx.Done()
	for {
		select {
		case err := <-served:
			served = nil
			if !draining {
				srv.Close()
				fmt.Fprintf(stderr, "montygo serve: %s\n", cliText(err))
				return exitError{code: 1}
			}
		case <-ctxDone: // the caller's cancellation: a drain, as the first signal
			ctxDone = nil
			drain()
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				reloadTokens(srv, *tokens, log)
				tlsf.reload(log)
				continue
			}
			if signals++; signals >= 2 {
				log.Info("second signal: ending now")
				cancelNow()
			}
			drain()
		case err := <-shut:
			// A second signal cut the drain short on purpose.
			if err != nil && !errors.Is(err, context.Canceled) {
				log.Warn("shutdown", slog.Any("error", err))
			}
			log.Info("stopped")
			return nil
		}
	}
}

// errStopped is startServer's error for a stop asked for while starting.
var errStopped = errors.New("stopped while starting")

// startServer runs server.New until it returns or a signal other than
// SIGHUP (or ctx) stops it (errStopped). reload reports a SIGHUP
// received meanwhile.
func startServer(ctx context.Context, cfg server.Config, sigs <-chan os.Signal) (srv *server.Server, reload bool, err error) {
	nctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type made struct {
		srv *server.Server
		err error
	}
	done := make(chan made, 1)
	go func() {
		s, err := server.New(nctx, cfg)
		done <- made{s, err}
	}()
	stopped := false
	ctxDone := ctx.Done()
	for {
		select {
		case m := <-done:
			if stopped || ctx.Err() != nil {
				if m.srv != nil {
					m.srv.Close()
				}
				return nil, false, errStopped
			}
			return m.srv, reload, m.err
		case <-ctxDone:
			ctxDone = nil
			cancel()
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				reload = true
				continue
			}
			stopped = true
			cancel()
		}
	}
}

// tokensAtStart reads --tokens as the server starts: a regular file as
// server.LoadTokens does, or a pipe (`--tokens <(vault kv get ...)`, a
// FIFO), read once to its end, within the same size cap. A reload
// (SIGHUP) reads regular files only: a pipe read again would wait for a
// writer that may never come, holding the signal loop.
//
// A pipe is told by its mode before it is opened, and opened once: a
// FIFO's writer may open, write and close in any window where the pipe
// has a reader, and what it wrote is gone once both ends are closed.
func tokensAtStart(path string) (*server.Tokens, error) {
	if fi, err := os.Stat(path); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		return server.LoadTokens(path) // a regular file, or its error
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := server.ParseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func reloadTokens(srv *server.Server, path string, log *slog.Logger) {
	if path == "" {
		return
	}
	t, err := server.LoadTokens(path)
	if err != nil {
		log.Warn("tokens not reloaded; keeping the previous set", slog.Any("error", err))
		return
	}
	srv.SetTokens(t)
	log.Info("tokens reloaded", slog.Int("count", t.Len()))
}

// tlsFiles is the TLS configuration of --tls-cert, --tls-key and
// --client-ca, read again on SIGHUP: a certificate renewed in place (a
// mounted Secret, certbot) is served from the next handshake on.
type tlsFiles struct {
	cert, key, ca string
	cur           atomic.Pointer[tls.Config]
}

// load reads the files; on an error the previous configuration stays.
// With regular (a reload), only regular files are read.
func (t *tlsFiles) load(regular bool) error {
	c, err := tlsConfig(t.cert, t.key, t.ca, regular)
	if err != nil {
		return err
	}
	t.cur.Store(c)
	return nil
}

// config returns the server's TLS configuration: every handshake takes
// the configuration last loaded. ClientAuth is set on it too, since the
// server reads it to know whether client certificates authenticate.
func (t *tlsFiles) config() *tls.Config {
	c := t.cur.Load()
	return &tls.Config{
		MinVersion:   c.MinVersion,
		Certificates: c.Certificates,
		ClientAuth:   c.ClientAuth,
		ClientCAs:    c.ClientCAs,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return t.cur.Load(), nil
		},
	}
}

// reload reads the files again on SIGHUP (nothing without TLS files).
func (t *tlsFiles) reload(log *slog.Logger) {
	if t == nil {
		return
	}
	if err := t.load(true); err != nil {
		log.Warn("TLS files not reloaded; keeping the previous ones", slog.Any("error", err))
		return
	}
	log.Info("TLS files reloaded")
}

// maxPEMFile bounds what is read of a --tls-cert, --tls-key or
// --client-ca file (a CA bundle of every public root is about 250 KiB).
const maxPEMFile = 16 << 20

// readBounded reads the file at path, failing with errFileTooLarge once it
// has more than limit bytes: a flag naming /dev/zero or a pipe that never
// ends fails instead of growing memory without end. With regular, only a
// regular file is read (a reload on SIGHUP: a FIFO would hold the signal
// loop until a writer came); a FIFO is then refused without waiting.
func readBounded(path string, limit int64, regular bool) ([]byte, error) {
	flag := os.O_RDONLY
	if regular {
		flag |= syscall.O_NONBLOCK
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if regular {
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: %w", path, server.ErrNotRegular)
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errFileTooLarge
	}
	return b, nil
}

// errFileTooLarge is readBounded's error for a file over its bound.
var errFileTooLarge = errors.New("file over its size bound")

// dumpKeyAdvice says what a dump key is and how to make one, after an
// error about a missing or short one.
const dumpKeyAdvice = "it signs the dumps the server hands out and checks them on Load, the same on every replica; " +
	"make one with: head -c 32 /dev/urandom > FILE"

func readKey(path string) ([]byte, error) {
	b, err := readBounded(path, 1<<16, false)
	if errors.Is(err, errFileTooLarge) {
		return nil, fmt.Errorf("%s: a dump key file is at most 64 KiB", path)
	}
	if err != nil {
		return nil, err
	}
	if len(b) < server.MinKeyLen {
		return nil, fmt.Errorf("%s: a dump key needs at least %d bytes, the file has %d; %s", path, server.MinKeyLen, len(b), dumpKeyAdvice)
	}
	return b, nil
}

// portNumber reports whether p is a TCP port number, 0 to 65535, in
// decimal.
func portNumber(p string) bool {
	_, err := strconv.ParseUint(p, 10, 16)
	return err == nil
}

// flagFileError is a failure to use the file a flag names, said after
// the flag and the file ("--dump-key /etc/key: no such file or
// directory"), without what that says already: os's "open FILE: ", a
// leading "FILE: ", a library's package tag (server's, crypto/tls's).
type flagFileError struct {
	flag, path string
	err        error
}

func (e *flagFileError) Error() string {
	s := e.err.Error()
	var pe *os.PathError
	if errors.As(e.err, &pe) && pe.Path == e.path && s == pe.Error() {
		s = pe.Err.Error()
	}
	for _, tag := range []string{"server: ", "tls: ", e.path + ": "} {
		s = strings.TrimPrefix(s, tag)
	}
	return e.flag + " " + e.path + ": " + s
}

func (e *flagFileError) Unwrap() error { return e.err }

// listenHost checks a --host value: a host name or an IP address, an IPv6
// address with or without the brackets of a URL ("[::1]" is "::1"), and
// no port (that is --port's).
func listenHost(h string) (string, error) {
	if in, ok := strings.CutPrefix(h, "["); ok {
		if in, ok = strings.CutSuffix(in, "]"); ok && strings.Contains(in, ":") {
			if _, err := netip.ParseAddr(in); err == nil {
				return in, nil
			}
		}
		return "", fmt.Errorf("--host %q: brackets go around an IPv6 address only, and the port goes in --port", h)
	}
	if strings.ContainsAny(h, "[]") {
		return "", fmt.Errorf("--host %q is not a host name or IP address", h)
	}
	if strings.Contains(h, ":") {
		if _, err := netip.ParseAddr(h); err != nil {
			return "", fmt.Errorf("--host %q is not a host name or IP address (the port goes in --port)", h)
		}
	}
	return h, nil
}

// boundLoopback reports whether a listener's address is a loopback one.
func boundLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// tlsConfig reads the TLS files (only regular files with regular).
func tlsConfig(certFile, keyFile, caFile string, regular bool) (*tls.Config, error) {
	var pems [2][]byte
	for i, flag := range []string{"--tls-cert", "--tls-key"} {
		path := []string{certFile, keyFile}[i]
		b, err := readPEM(path, regular)
		if err != nil {
			return nil, &flagFileError{flag, path, err}
		}
		pems[i] = b
	}
	cert, err := tls.X509KeyPair(pems[0], pems[1])
	if err != nil {
		return nil, &flagFileError{"--tls-cert " + certFile + " and --tls-key", keyFile, err}
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := readPEM(caFile, regular)
		if err != nil {
			return nil, &flagFileError{"--client-ca", caFile, err}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--client-ca %s: no PEM certificate", caFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// readPEM reads a PEM file of a TLS flag with readBounded's bound (only a
// regular file with regular).
func readPEM(path string, regular bool) ([]byte, error) {
	b, err := readBounded(path, maxPEMFile, regular)
	if errors.Is(err, errFileTooLarge) {
		return nil, fmt.Errorf("%s: larger than %d MiB, which no certificate or key file needs", path, maxPEMFile>>20)
	}
	return b, err
}

package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomonty/monty/internal/redact"
	"github.com/gomonty/monty/internal/safetext"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
	"go.opentelemetry.io/otel/trace"
)

// Sentinels of remote sessions, matched through errors.Is.
var (
	// ErrDisconnected is matched by every *DisconnectedError.
	ErrDisconnected = errors.New("monty session: remote worker disconnected")
	// ErrShutdown is matched by every *ShutdownError.
	ErrShutdown = errors.New("monty session: remote server is shutting down")
	// ErrSingleUse: a remote session is one connection; it is never Reset
	// nor handed back to serve another session.
	ErrSingleUse error = &usageError{"monty session: a remote session is single-use (no Reset, no Detach)"}
	// ErrNoReplica: a resume's RemoteLauncher.Pick had no replica left to
	// redial (it returned ""); a *ShutdownError's Resume matches it.
	ErrNoReplica = errors.New("monty session: no replica to resume on")
)

// DisconnectedError reports a remote connection that ended without a
// turn-ending event. The parent cannot tell a crash from a policy drop (a
// memory-limit exit of the remote worker also arrives this way, with close
// code 4003, and then matches worker.ErrMemoryLimit; a worker the server
// killed for running too long, codes 4002 and 4004, matches ErrTimeout),
// and the request may have run, so it is never retried automatically.
//
// A DisconnectedError is plain data, safe to share.
type DisconnectedError struct {
	// URL is the endpoint of the connection.
	URL string
	// Code and Reason come from the server's Close frame; Code is -1 when
	// the connection dropped without one.
	Code   int
	Reason string
	// Op is what the parent was doing.
	Op transport.Op
	// Err is the I/O error that revealed the drop.
	Err error
}

// Error describes the drop.
func (e *DisconnectedError) Error() string {
	s := "monty session: remote worker at " + redact.URL(e.URL) + " disconnected"
	if e.Op != "" {
		s += " while " + string(e.Op)
	}
	switch {
	case e.Code >= 0 && e.Reason != "":
		s += fmt.Sprintf(" (close code %d: %s)", e.Code, e.Reason)
	case e.Code >= 0:
		s += fmt.Sprintf(" (close code %d)", e.Code)
	default:
		s += " (no close frame)"
	}
	return s
}

// Close codes of a server that ended the connection for one of the
// limits a local session enforces itself: closeMemoryLimit is upstream's
// (its worker exceeded its memory limit); closeTurnTimeout and
// closeDurationBackstop are `montygo serve`'s (it killed its worker for
// running a turn past --turn-timeout, or past max_duration and the
// watchdog's grace).
const (
	closeTurnTimeout      = 4002
	closeMemoryLimit      = 4003
	closeDurationBackstop = 4004
)

// Is matches ErrDisconnected; worker.ErrMemoryLimit when the server
// closed with code 4003 (its worker exceeded its memory limit); and
// ErrTimeout when it closed with 4002 or 4004 (it killed its worker for
// running too long, as the local watchdog does), so that one check
// covers local and remote workers. It never matches a context's error.
func (e *DisconnectedError) Is(target error) bool {
	switch target {
	case ErrDisconnected:
		return true
	case worker.ErrMemoryLimit:
		return e.Code == closeMemoryLimit
	case ErrTimeout:
		return e.Code == closeTurnTimeout || e.Code == closeDurationBackstop
	}
	return false
}

// Unwrap returns the I/O error.
func (e *DisconnectedError) Unwrap() error { return e.Err }

// SessionSurvives reports false.
func (e *DisconnectedError) SessionSurvives() bool { return false }

// RemoteCrashError reports a remote worker (or the server in front of it)
// that announced a fatal error, for example a refused protocol version.
//
// A RemoteCrashError is plain data, safe to share.
type RemoteCrashError struct {
	URL string
	// Message is the announced reason, as the server sent it. The server
	// may be hostile, so quote it with care; Error quotes at most its
	// first KiB (cut at a character boundary, "…" after a cut) on one
	// line, line breaks and tabs as spaces, invalid UTF-8 and other
	// control characters as U+FFFD, as worker.CrashError does for a local
	// worker's.
	Message string
}

// Error renders the announced reason.
func (e *RemoteCrashError) Error() string {
	return "monty session: remote worker at " + redact.URL(e.URL) + " failed: " + safetext.Bound(e.Message, safetext.MaxFatal)
}

// SessionSurvives reports false.
func (e *RemoteCrashError) SessionSurvives() bool { return false }

// Unwrap returns the announced crash as a *worker.CrashError, so that
// version refusals and errors.As checks treat remote and local workers
// alike.
func (e *RemoteCrashError) Unwrap() error {
	return &worker.CrashError{Reason: worker.Announced, Message: e.Message}
}

// ShutdownError reports a request answered with ShutdownDump: the server
// is draining and did not run the request, so running it again on a fresh
// session is safe. Dump is the signed session state the server handed
// out (nil when it sent none), loadable on another replica of the same
// Monty version.
//
// A ShutdownError is plain data, safe to share.
type ShutdownError struct {
	URL  string
	Dump []byte
	// Resume, when not nil, is why automatic resumption failed.
	Resume error
}

// Error says the request did not run.
func (e *ShutdownError) Error() string {
	s := "monty session: remote server at " + redact.URL(e.URL) + " is shutting down; the request did not run"
	if e.Resume != nil {
		s += " (resume failed: " + e.Resume.Error() + ")"
	}
	return s
}

// Is matches ErrShutdown.
func (e *ShutdownError) Is(target error) bool { return target == ErrShutdown }

// Unwrap returns the resume failure, if any.
func (e *ShutdownError) Unwrap() error { return e.Resume }

// SessionSurvives reports false.
func (e *ShutdownError) SessionSurvives() bool { return false }

// RemoteLauncher starts remote sessions: each Launch dials URL over a
// WebSocket (ws:// or wss://, exactly as given) with Dial's options. The
// W3C traceparent of the span in the launch context is sent unless
// Dial.TraceHeaders is set. Remote sessions are single-use: never Reset,
// never handed back. Unless NoResume is set, a session whose request is
// answered with a ShutdownDump carrying a dump redials (Redial, else
// Pick, else URL), configures the same way, loads the dump and re-sends
// the request. A Load interrupted before the session started is the
// exception: the new connection is configured and the Load re-sent, the
// dump left unloaded, since restoring it would start the session and the
// worker takes a Load only into one that has not started. Start's own
// Configure is resumed too, by the redial alone: the session has nothing
// to restore yet (the server sends no dump), and the Configure sent again
// configures the new connection. A later Configure (through Do) is
// resumed like any request. The redials, the Configure and the Load
// together are bounded by Config.StartTimeout and by the context of the
// interrupted request. A request answered with a ShutdownDump again on
// every replica it resumes on is resumed at most 8 times; the next
// ShutdownDump ends the session (or fails Start) with its *ShutdownError
// (Resume says why).
//
// Dial options belong to the URL they are used for: they may carry that
// endpoint's credentials (an Authorization header, a TLS client
// certificate, the RootCAs and ServerName its certificate is checked
// against). Dial is used for URL, and for every URL Pick names, so give
// Pick only replicas that may all see Dial's credentials. Replicas with
// credentials of their own (run by other parties, or given tokens of
// their own) need Redial, which names each URL together with the options
// to dial it with; Dial is then never sent to the URLs Redial names.
// After a resume the session's frame cap is the new connection's (the
// MaxFrameLen of the options it was dialled with).
//
// The protocol version negotiated with an endpoint is cached per URL (as
// it is per binary for processes), so only the first session of an
// unpinned launcher pays for a refused version with a second dial. The
// version is the one of the replica that answered: a start that resumed
// on another replica during its Configure, and that the other replica
// refuses for its protocol version, is dialled again at that replica's
// URL with its options (those Redial named with it), never at URL, and
// what it settles on is cached under that replica's URL.
//
// A RemoteLauncher is plain data, safe for concurrent use.
type RemoteLauncher struct {
	// URL is the endpoint dialled.
	URL string
	// Dial configures the WebSocket dial (headers, TLS, frame cap, close
	// wait).
	Dial ws.DialOptions
	// NoResume turns automatic resumption after a ShutdownDump off.
	NoResume bool
	// Pick, when set, returns the URL to redial when resuming (another
	// replica); nil redials URL. It is called once per redial attempt;
	// returning "" gives the resume up at once (no replica left), with an
	// error matching ErrNoReplica that wraps the last dial's error, if any.
	// Every URL it returns is dialled with Dial, credentials included:
	// for replicas with options of their own, use Redial.
	Pick func() string
	// Redial, when set, takes Pick's place: it returns the URL to redial
	// when resuming and the options to dial that URL with, which are its
	// own (its token, TLS configuration, frame cap), not Dial. As for
	// Dial, the W3C traceparent of the span is sent unless the returned
	// options set TraceHeaders. It is called once per redial attempt,
	// like Pick; returning "" gives the resume up the same way. A pool of
	// endpoints returns the chosen endpoint's URL with that endpoint's
	// options, so that no endpoint is sent another's credentials.
	Redial func() (url string, dial ws.DialOptions)
	// OnDial, when set, is called after every dial the launcher makes
	// (the launch itself and each redial of a resume) with the URL and
	// the dial's error (nil on success), from the goroutine dialling;
	// not for a redial that failed because the session was closed. A
	// pool uses it to account for endpoints; it must be fast and safe for
	// concurrent use.
	OnDial func(url string, err error)
	// OnResume, when set, is called after each resume a ShutdownDump
	// started (NoResume unset), from the session's goroutine, with the URL
	// the session redialled (the last one tried) and nil, or the error
	// that ended the resume (and the session). A pool uses it to count
	// resumes per endpoint; it must be fast.
	OnResume func(url string, err error)
}

// Binary returns "" (a remote worker has no local binary).
func (l RemoteLauncher) Binary() string { return "" }

// versionKey keys the negotiation cache by URL.
func (l RemoteLauncher) versionKey() (cacheKey, bool) {
	return cacheKey{path: l.URL, size: -1}, l.URL != ""
}

// Launch dials one connection.
func (l RemoteLauncher) Launch(ctx context.Context) (Peer, error) {
	p := &remotePeer{l: l}
	p.l.Dial = withTraceHeaders(p.l.Dial)
	c, err := p.dial(ctx, l.URL, p.l.Dial)
	if err != nil {
		return nil, err
	}
	p.c, p.url, p.opts = c, l.URL, p.l.Dial
	return p, nil
}

// withTraceHeaders returns o sending the W3C traceparent and tracestate
// of the span in the dial's context, unless o says otherwise
// (TraceHeaders set).
func withTraceHeaders(o ws.DialOptions) ws.DialOptions {
	if o.TraceHeaders == nil {
		o.TraceHeaders = spanTraceHeaders
	}
	return o
}

// spanTraceHeaders is the default ws.DialOptions.TraceHeaders: the
// traceparent and tracestate of the span in ctx, "" for none.
func spanTraceHeaders(ctx context.Context) (string, string) {
	sc := trace.SpanContextFromContext(ctx)
	tp, _ := traceParent(sc)
	if tp == "" {
		return "", ""
	}
	return tp, sc.TraceState().String()
}

// remotePeer is a Peer over a WebSocket. Its connection can be replaced by
// a resume (under mu) without the session seeing a new Peer, so Kill and
// Close from other goroutines always reach the current socket.
type remotePeer struct {
	l RemoteLauncher

	mu  sync.Mutex
	c   *ws.Conn
	url string
	// opts are the options c was dialled with: those that belong to url
	// (a Redial's own, else the launcher's Dial).
	opts   ws.DialOptions
	killed bool
	// stopDial cancels the redial in progress, if any: Kill and Close
	// must not leave a resume dialling (or pausing between dials) until
	// StartTimeout after the session was closed.
	stopDial context.CancelFunc
}

func (p *remotePeer) cur() *ws.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.c
}

func (p *remotePeer) Conn() transport.Conn { return remoteConn{p} }

// Kill closes the connection at once with a going-away Close frame (the
// wait for the peer's is bounded by the close wait).
func (p *remotePeer) Kill() error {
	return p.end().CloseWith(1001, "parent abandoned the session")
}

// Close closes the connection with a normal Close frame. It returns nil:
// the socket is dropped whatever the close handshake's outcome, and a
// server that dropped its end first (or never answers the Close frame)
// leaves nothing running on this side, so its error would be noise.
func (p *remotePeer) Close(context.Context) error {
	p.end().Close()
	return nil
}

// end marks the peer killed, stops a redial in progress and returns the
// current connection for closing.
func (p *remotePeer) end() *ws.Conn {
	p.mu.Lock()
	p.killed = true
	c, stop := p.c, p.stopDial
	p.mu.Unlock()
	if stop != nil {
		stop()
	}
	return c
}

// Lost classifies the end of the connection.
func (p *remotePeer) Lost(l transport.Loss) error {
	p.mu.Lock()
	url := p.url
	p.mu.Unlock()
	if l.Announced {
		return &RemoteCrashError{URL: url, Message: l.Message}
	}
	d := &DisconnectedError{URL: url, Code: -1, Op: l.Op, Err: l.Err}
	var ce *ws.CloseError
	if errors.As(l.Err, &ce) {
		d.Code, d.Reason = ce.Code, ce.Reason
	}
	return d
}

// refusedPauses are the pauses between the redials of a protocol downgrade
// that a server refused with 429 or 503: the connection it has just ended
// may still hold our slot (a per-client cap of 1 shows it) until its
// handler returns. About 0.7 s in all.
var refusedPauses = []time.Duration{
	5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond,
	80 * time.Millisecond, 160 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond,
}

// refusedForCapacity reports an upgrade refused with 429 or 503 for
// capacity (ws.DialError.Overloaded), which the slot our own ending
// connection still holds may explain: not a 429 for failed logins
// (auth_throttled), nor a 503 from a draining server or one whose worker
// pool is unhealthy (a montygo server's reasons draining and unhealthy,
// with a Retry-After of the drain grace or the restart window): no short
// pause ends those.
func refusedForCapacity(err error) bool {
	var de *ws.DialError
	return errors.As(err, &de) && de.Overloaded() && de.Reason != "draining" && de.Reason != "unhealthy"
}

// redialDowngrade opens the session of a protocol downgrade. On a remote
// launcher it retries, with short pauses, while the server refuses the
// upgrade for capacity, and reports such a refusal to OnDial only if it
// is the last outcome: a refusal our own ending connection caused is not
// the endpoint's fault. Other launchers are opened once.
func redialDowngrade(ctx context.Context, l Launcher, open func(Launcher) (*Session, error)) (*Session, error) {
	rl, ok := l.(RemoteLauncher)
	if !ok {
		return open(l)
	}
	report := rl.OnDial
	var holding atomic.Bool
	holding.Store(true)
	defer holding.Store(false) // the session keeps rl for its resumes
	rl.OnDial = func(url string, err error) {
		if holding.Load() && refusedForCapacity(err) {
			return
		}
		if report != nil {
			report(url, err)
		}
	}
	s, err := open(rl)
	for _, d := range refusedPauses {
		if err == nil || !refusedForCapacity(err) {
			return s, err
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		if ctx.Err() != nil {
			break
		}
		s, err = open(rl)
	}
	if err != nil && refusedForCapacity(err) && report != nil {
		report(rl.URL, err)
	}
	return s, err
}

// redialAttempts bounds the dials of one resume: Pick may name a replica
// that is itself draining (503) or restarting.
const redialAttempts = 5

// redial replaces the connection with a new one to the URL Redial or
// Pick names (else the launcher's), asking again after a failed dial,
// with a short doubling pause. Each URL is dialled with its own options:
// those Redial returned with it, else the launcher's Dial. The old
// connection is closed with a Close frame.
func (p *remotePeer) redial(ctx context.Context) error {
	var (
		c    *ws.Conn
		url  string
		opts ws.DialOptions
		err  error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p.mu.Lock()
	if p.killed {
		p.mu.Unlock()
		return net.ErrClosed
	}
	p.stopDial = cancel
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.stopDial = nil
		p.mu.Unlock()
	}()
	wait := 20 * time.Millisecond
	for i := range redialAttempts {
		url, opts = p.l.URL, p.l.Dial
		switch {
		case p.l.Redial != nil:
			url, opts = p.l.Redial()
			opts = withTraceHeaders(opts)
		case p.l.Pick != nil:
			url = p.l.Pick()
		}
		if url == "" {
			// No replica left: redialling one that has just refused
			// (or that Pick's owner backed off) is no use.
			if err != nil {
				return fmt.Errorf("%w: %w", ErrNoReplica, err)
			}
			return ErrNoReplica
		}
		if c, err = p.dial(ctx, url, opts); err == nil {
			break
		}
		var he *ws.HeaderError
		switch {
		case p.ended():
			return net.ErrClosed
		case errors.As(err, &he) || i == redialAttempts-1:
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			if p.ended() {
				return net.ErrClosed
			}
			return context.Cause(ctx)
		case <-t.C:
		}
		wait *= 2
	}
	p.mu.Lock()
	old, killed := p.c, p.killed
	if !killed {
		p.c, p.url, p.opts = c, url, opts
	}
	p.mu.Unlock()
	old.Close()
	if killed {
		c.Close()
		return net.ErrClosed
	}
	return nil
}

// dial dials url with opts, the options that belong to url, and reports
// the outcome to OnDial. A header refusal (no I/O happened) is reported
// too; a dial cut short by Kill or Close is not (it says nothing of the
// endpoint).
func (p *remotePeer) dial(ctx context.Context, url string, opts ws.DialOptions) (*ws.Conn, error) {
	c, err := ws.Dial(ctx, url, opts)
	if p.l.OnDial != nil && (err == nil || !p.ended()) {
		p.l.OnDial(url, err)
	}
	return c, err
}

// at returns the URL of the current connection and the options it was
// dialled with (after a resume, those of the replica it moved to).
func (p *remotePeer) at() (string, ws.DialOptions) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.url, p.opts
}

// ended reports whether Kill or Close was called.
func (p *remotePeer) ended() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killed
}

// remoteConn is the transport.Conn of a remotePeer: the current socket.
type remoteConn struct{ p *remotePeer }

func (c remoteConn) ReadFrame() ([]byte, error)   { return c.p.cur().ReadFrame() }
func (c remoteConn) WriteFrame(body []byte) error { return c.p.cur().WriteFrame(body) }
func (c remoteConn) Pending() bool                { return c.p.cur().Pending() }
func (c remoteConn) MaxFrameLen() int             { return c.p.cur().MaxFrameLen() }
func (c remoteConn) Close() error                 { return c.p.cur().Close() }

// isRemote reports whether the session runs over a remote connection.
func (s *Session) isRemote() bool {
	_, ok := s.peer.(*remotePeer)
	return ok
}

// shutdownDump handles a ShutdownDump answering req: the session resumes
// on a new connection when it can, else it is closed with a
// *ShutdownError.
func (s *Session) shutdownDump(ctx context.Context, req message.Request, b *message.ShutdownDump) (*message.ChildEvent, error) {
	rp, ok := s.peer.(*remotePeer)
	if !ok {
		return nil, s.fail(&ProtocolError{Msg: "subprocess worker sent a ShutdownDump"})
	}
	rp.mu.Lock()
	shut := &ShutdownError{URL: rp.url}
	rp.mu.Unlock()
	if b.Dump != nil {
		shut.Dump = *b.Dump
	}
	// What the new connection needs before req is sent again: the
	// session's Configure and its dump, as a rule. A session that has
	// not been configured yet (Start's own Configure was drained) has no
	// state to lose, and the server sends it no dump: the redial is all,
	// and the re-sent Configure configures the new replica. A Configure
	// on a configured session (one sent through Do) is resumed like any
	// request, so that the new replica answers it as the old one would
	// have (the montygo server refuses it, and the session lives on).
	kind := resumeAll
	switch {
	case rp.l.NoResume:
		return nil, s.die(shut, true)
	case req.RequestKind() == message.KindConfigure && !s.configured:
		kind = resumeDial
	case b.Dump == nil:
		return nil, s.die(shut, true)
	case req.RequestKind() == message.KindLoad && !s.started:
		// A Load needs a session that has not started (the worker
		// refuses it once a feed, a Dump or a Load has built the
		// interpreter). The server dumped this unstarted session's
		// interpreter, building it, so restoring that dump would start
		// the new one and get the re-sent Load refused: configured
		// anew, the new replica is where the old one was. A Load on a
		// started session is refused wherever it goes; the usual resume
		// keeps that refusal (and the session's state).
		kind = resumeConfigure
	}
	if s.turnResumes >= maxResumesPerTurn {
		// Every replica drains the request again (or a hostile endpoint
		// does): give up rather than resume one stack frame deeper for
		// as long as the context allows.
		shut.Resume = fmt.Errorf("monty session: the request was interrupted by %d ShutdownDumps in a row; not resuming again", s.turnResumes+1)
		return nil, s.die(shut, true)
	}
	err := s.resumeBounded(ctx, rp, shut.Dump, kind)
	if rp.l.OnResume != nil {
		rp.mu.Lock()
		url := rp.url
		rp.mu.Unlock()
		rp.l.OnResume(url, err)
	}
	if err != nil {
		shut.Resume = err
		return nil, s.die(shut, true)
	}
	s.resumed++
	// The restored worker is where the old one was: send the request
	// again, as if for the first time. It is the same turn (exchange,
	// which records it, is already under way), so it goes out under the
	// same span and is not recorded a second time.
	s.turnResumes++
	defer func() { s.turnResumes-- }()
	return s.roundTrip(ctx, req, s.currentSpanContext(ctx))
}

// maxResumesPerTurn bounds the automatic resumes of one request (see
// RemoteLauncher).
const maxResumesPerTurn = 8

// resumeKind is what a resume rebuilds on the new connection before the
// interrupted request is sent again.
type resumeKind int

const (
	// resumeAll configures the new connection and loads the dump.
	resumeAll resumeKind = iota
	// resumeConfigure only configures it (a Load before the session
	// started: the dump is not loaded).
	resumeConfigure
	// resumeDial only redials (Start's own Configure: the re-sent
	// request is the Configure).
	resumeDial
)

// resumeBounded is resumeRemote within Config.StartTimeout (and ctx): a
// replica that accepts the upgrade and never answers, or a dial that
// hangs, ends the resume with a *StartTimeoutError instead of holding the
// request forever.
func (s *Session) resumeBounded(ctx context.Context, rp *remotePeer, dump []byte, kind resumeKind) error {
	tctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	err := s.resumeRemote(tctx, rp, dump, kind)
	if err != nil && tctx.Err() != nil && ctx.Err() == nil {
		return &StartTimeoutError{Timeout: s.cfg.StartTimeout, Err: err}
	}
	return err
}

// resumeRemote redials, configures, loads dump and checks that a
// suspended session comes back at the same call. Prints during the Load
// are delivered. For resumeConfigure it stops after the Configure: the
// new replica holds a configured session that has not started, and dump
// is not loaded; for resumeDial, after the redial.
func (s *Session) resumeRemote(ctx context.Context, rp *remotePeer, dump []byte, kind resumeKind) error {
	if err := rp.redial(ctx); err != nil {
		return err
	}
	// The new connection's frame cap is that of its own options, which
	// may differ from the old one's: requests are sized, and events
	// decoded, against it from now on.
	s.lim = s.cfg.codecLimits(s.conn.MaxFrameLen())
	if kind == resumeDial {
		return nil
	}
	// Configured as the old replica was: with the session's Config, or
	// the Configure sent through Do that the old worker accepted after it.
	cfg := s.doConfigure
	if cfg == nil {
		cfg = s.cfg.configure(s.codec.Version())
	}
	ev, err := s.rawTurn(ctx, cfg)
	if err != nil {
		return err
	}
	if k := ev.Body.EventKind(); k != message.KindOk {
		return fmt.Errorf("the new connection answered Configure with %s", k)
	}
	if kind == resumeConfigure {
		return nil
	}
	ev, err = s.rawTurn(ctx, &message.Load{State: dump})
	if err != nil {
		return err
	}
	k := ev.Body.EventKind()
	if s.cur() != StateSuspended {
		if k != message.KindOk {
			return fmt.Errorf("the new connection answered Load with %s", k)
		}
		s.snapshotBytes(len(dump), false)
		return nil
	}
	if !sameCall(s.susp, ev) {
		return fmt.Errorf("the restored worker announced %s, not the interrupted suspension", k)
	}
	s.snapshotBytes(len(dump), false)
	return nil
}

// sameCall reports whether two suspensions are the same call: the same
// call id and function name, or the same name and object id for a lookup,
// or the same pending futures (in any order) for a ResolveFutures.
func sameCall(a, b *message.ChildEvent) bool {
	if a == nil || b == nil {
		return false
	}
	switch x := a.Body.(type) {
	case *message.FunctionCall:
		y, ok := b.Body.(*message.FunctionCall)
		return ok && x.CallID == y.CallID && x.FunctionName == y.FunctionName && sameID(x.ObjectID, y.ObjectID)
	case *message.OsCall:
		y, ok := b.Body.(*message.OsCall)
		return ok && x.CallID == y.CallID && x.Op == y.Op
	case *message.NameLookup:
		y, ok := b.Body.(*message.NameLookup)
		return ok && x.Name == y.Name && sameID(x.ObjectID, y.ObjectID)
	case *message.ResolveFutures:
		// The same futures, in any order: the worker lists a set, in no
		// stable order.
		y, ok := b.Body.(*message.ResolveFutures)
		if !ok || len(x.PendingCallIDs) != len(y.PendingCallIDs) {
			return false
		}
		return slices.Equal(slices.Sorted(slices.Values(x.PendingCallIDs)), slices.Sorted(slices.Values(y.PendingCallIDs)))
	}
	return false
}

// rawTurn sends req on the current connection and returns the turn-ending
// event without touching the session's state (prints are delivered, and
// the frames counted in the wire metric), with the current span's
// traceparent. The context ending closes the
// connection.
func (s *Session) rawTurn(ctx context.Context, req message.Request) (*message.ChildEvent, error) {
	preq := message.ParentRequest{Body: req}
	// Part of the turn being resumed: it carries that turn's traceparent.
	if tp, ok := traceParent(s.currentSpanContext(ctx)); ok {
		preq.TraceParent = &tp
	}
	buf, err := s.codec.AppendRequest(nil, &preq)
	if err != nil {
		return nil, err
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { s.peer.Kill() })
		defer stop()
	}
	if err := s.conn.WriteFrame(buf); err != nil {
		return nil, err
	}
	s.frameBytes(len(buf), true)
	for {
		body, err := s.conn.ReadFrame()
		if err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return nil, err
		}
		s.frameBytes(len(body), false)
		ev, err := s.codec.DecodeEvent(body, s.lim)
		if err != nil {
			return nil, err
		}
		switch b := ev.Body.(type) {
		case *message.Print:
			s.deliver(b)
			continue
		case nil:
			return nil, errors.New("event with no kind")
		case *message.FatalError:
			return nil, &RemoteCrashError{URL: s.peer.(*remotePeer).url, Message: b.Message}
		}
		s.noteSessionID(ev)
		return ev, nil
	}
}

// Resumed returns how many times the session resumed on a new connection
// after a ShutdownDump (remote sessions only).
func (s *Session) Resumed() int { return s.resumed }

func sameID(a, b *value.UUID) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

package pool

// This file is the remote side of the pool: endpoints (remote Monty
// servers) beside or instead of the local workers, the choice of where a
// checkout goes, single-use remote sessions, and the backoff of endpoints
// that refuse or cannot be reached.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/redact"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// LocalEndpoint is the endpoint name of the pool's local workers: the
// value of Event.Endpoint, Session.Endpoint and the AttrEndpoint metric
// attribute for checkouts served by a local process.
const LocalEndpoint = "local"

// Endpoint is one remote Monty server (`montygo serve`, or any server of
// the remote protocol) that a [Pool] may hand sessions from, beside or
// instead of its local workers.
//
// An Endpoint is plain data, safe to share.
type Endpoint struct {
	// Name identifies the endpoint in Stats, Events, Session.Endpoint and
	// the AttrEndpoint metric attribute, so it must come from a small
	// closed set and never carry a secret. "" means "remote-<i>", i being
	// the endpoint's index in Config.Endpoints. Names must be unique and
	// differ from LocalEndpoint.
	Name string
	// URL is the ws:// or wss:// address, dialled exactly as given (New
	// refuses one CheckEndpointURL refuses). It is never used as a metric
	// attribute, and errors, logs and Stats show it with any password and
	// query values masked.
	URL string
	// Dial configures the WebSocket dials (static headers or a header
	// function for refreshable tokens, TLS, frame cap, close wait). New
	// refuses static headers that cannot be sent (ws.CheckHeader); a
	// header function's are checked at each dial, and one that cannot be
	// sent fails the checkout with its *ws.HeaderError, charged to no
	// endpoint. A header function that fails (its token service is down)
	// fails the dial: a dial failure, backed off (EndpointBackoff).
	// These options, and the credentials they carry (headers, a TLS
	// client certificate, the roots the server is checked against), are
	// used for this endpoint's URL only: a session that resumes here
	// after another endpoint drained is dialled with this Dial, and one
	// that leaves for another endpoint with that one's.
	Dial ws.DialOptions
}

// EndpointStat is the state of one endpoint of a [Pool], in Stats.
//
// An EndpointStat is plain data, safe to share.
type EndpointStat struct {
	// Name and URL are the endpoint's: Name defaulted as in Endpoint, URL
	// with its password and query values masked ("xxxxx"), since stats
	// are shown and logged and a URL may carry a token.
	Name, URL string
	// Outstanding counts checked-out sessions on the endpoint not yet
	// closed (a session resumed elsewhere after a drain counts where it
	// runs now), plus starts in progress.
	Outstanding int
	// Checkouts counts sessions checked out there: a start that another
	// endpoint drained during its Configure and that resumed here counts
	// here (where the session runs), not on the endpoint that drained it.
	Checkouts int64
	// DialFailures counts dials that failed without an HTTP answer
	// (refused connection, TLS, timeout, a failing ws.DialOptions.HeaderFunc) or with a status other than 503
	// and 429, and 429s for failed logins (reason auth_throttled: an
	// authentication failure, like a 401); Refusals counts the other 503
	// and 429 answers (a draining, full or unhealthy server,
	// ws.DialError.Overloaded).
	// A dial its caller gave up on (a cancel or a deadline of the
	// Checkout's context, not StartTimeout or CheckoutTimeout) or Close
	// cut short counts as neither.
	DialFailures, Refusals int64
	// StartFailures counts starts that dialled but failed afterwards (no
	// Configure answer within StartTimeout, a drop, a version mismatch, a
	// refused Configure); a start its caller gave up on (as for a dial),
	// whose session.Config could not be encoded, or whose HeaderFunc
	// returned a header that cannot be sent (a *ws.HeaderError), counts as
	// none.
	//
	// A start its caller gave up on before the endpoint answered is
	// blameless, but it is not the end of it: unless a start there got
	// through within the last StartTimeout, the pool then checks the
	// endpoint with a start of its own (one at a time per endpoint, with
	// the pool's handshake Config, bounded by StartTimeout alone and cut
	// short only by Close; a session it gets is closed at once). That
	// check is charged as any start: a dial or upgrade not answered within
	// StartTimeout counts in DialFailures, a Configure not answered in
	// StartFailures, each with its EventEndpointFailed and a backoff
	// (EndpointBackoff), so an endpoint that never answers is backed off
	// however short its callers' deadlines, while one that is only slower
	// than a caller's deadline is not charged. A check is no checkout: it
	// is not counted in Checkouts or Outstanding.
	StartFailures int64
	// Resumes counts sessions that moved here (their dial succeeded)
	// after another endpoint drained.
	Resumes int64
	// Drops counts sessions that started here and were then lost by the
	// endpoint's fault (a connection reset or closed without a Close
	// frame, a server failing or going away under them; not their code's
	// crash or limits: see the package documentation, "Sessions an
	// endpoint drops"). Three in a row back the endpoint off.
	Drops int64
	// Backoff is the current backoff step (0 after a successful start,
	// unless the endpoint's last sessions were dropped) and BackedOffUntil
	// when the endpoint is tried again (zero, or in the past: now).
	Backoff        time.Duration
	BackedOffUntil time.Time
}

// ErrNoEndpoint is returned by Checkout on a pool without local workers
// (Config.NoLocal) when every endpoint failed or is backed off; the
// error returned wraps it and the last failure, if there was one, in one
// line ("...; the last failure: ..."), and matches both.
var ErrNoEndpoint = errors.New("monty pool: no remote endpoint available")

// endpoint is one configured endpoint. Every field but the configuration
// is guarded by Pool.mu.
type endpoint struct {
	Endpoint
	idx int

	outstanding                    int
	checkouts, dialFails, refusals int64
	startFails, resumes            int64
	wait                           time.Duration
	until                          time.Time
	// drops counts the sessions the endpoint dropped (droppedByEndpoint)
	// and streak those since a session last ended clean there.
	drops  int64
	streak int
	// answered is when a start there last got through (a checkout's, a
	// resume's or a check's); checking says a check runs (see check).
	answered time.Time
	checking bool
}

// remoteRef is where a remote Session currently runs; guarded by Pool.mu.
type remoteRef struct {
	ep       *endpoint
	moving   bool // resumeTo chose ep and its dial has not succeeded yet
	released bool // releaseRemote gave up ep's slot: the session no longer moves
}

// ErrEndpointURL is matched by the error of CheckEndpointURL (and of New
// for an Endpoint whose URL it refuses).
var ErrEndpointURL = errors.New("URL must be ws:// or wss:// with a host")

// CheckEndpointURL reports whether rawURL can be an Endpoint's URL: a
// ws:// or wss:// URL with a host. Its error matches ErrEndpointURL and
// names the URL with any password and query values masked.
func CheckEndpointURL(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return fmt.Errorf("%q: %w", redact.URL(rawURL), ErrEndpointURL)
	}
	return nil
}

// endpointsOf validates cfg's endpoints and builds their records.
func endpointsOf(cfg []Endpoint) ([]*endpoint, error) {
	names := map[string]bool{LocalEndpoint: true}
	var eps []*endpoint
	for i, e := range cfg {
		if e.Name == "" {
			e.Name = "remote-" + strconv.Itoa(i)
		}
		if names[e.Name] {
			return nil, fmt.Errorf("monty pool: endpoint %d: name %q is taken", i, e.Name)
		}
		names[e.Name] = true
		if err := CheckEndpointURL(e.URL); err != nil {
			return nil, fmt.Errorf("monty pool: endpoint %q: %w", e.Name, err)
		}
		if err := ws.CheckHeader(e.Dial.Header); err != nil {
			// Refused on every dial: a mistake of the configuration, not
			// a failure of the endpoint to charge at each checkout.
			return nil, fmt.Errorf("monty pool: endpoint %q: static header: %w", e.Name, err)
		}
		eps = append(eps, &endpoint{Endpoint: e, idx: i})
	}
	return eps, nil
}

// choose decides where a checkout goes: the local workers or the
// endpoint with the fewest outstanding sessions among those not backed
// off and not yet tried by this checkout. The local workers count as one
// more endpoint whose load is their checked-out sessions plus the
// checkouts already bound for them (waiting for a worker, or chosen and
// not yet there); they are eligible while a worker is idle or one more
// may start beyond those claims (not while a failed start's backoff
// runs), and win ties (no network in the way).
// When no endpoint is eligible the local workers are chosen anyway (the
// checkout waits for one, as in a local-only pool); without local workers
// choose returns nil, false. A chosen endpoint's outstanding count is
// raised for the start; a local choice is counted in chosen until the
// checkout reaches acquire.
func (p *Pool) choose(tried []bool) (*endpoint, bool, error) {
	var a after
	defer p.finish(&a)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing.Load() {
		return nil, false, ErrClosed
	}
	now := time.Now()
	local, load := false, 0
	if !p.cfg.NoLocal {
		p.recoverLocked(now, &a)
		claimed := p.chosen + len(p.waiters)
		startable := max(p.cfg.MaxWorkers-p.liveLocked()-p.spawning, 0)
		if !p.gate.next(now).IsZero() {
			// A failed start's backoff runs (or the cap tripped): no
			// worker may start before it ends.
			startable = 0
		}
		free := len(p.idle) + startable - claimed
		if p.gate.healthy() && free > 0 {
			local, load = true, len(p.busy)+claimed
		}
	}
	var best *endpoint
	for _, e := range p.eps {
		if tried[e.idx] || now.Before(e.until) {
			continue
		}
		if (best == nil || e.outstanding < best.outstanding) && (!local || e.outstanding < load) {
			best = e
		}
	}
	if best == nil {
		if p.cfg.NoLocal {
			return nil, false, nil
		}
		p.chosen++ // until the checkout reaches acquire
		return nil, true, nil
	}
	best.outstanding++
	p.starts.Add(1) // checkoutRemote's; Close waits for it
	return best, false, nil
}

// checkoutRemote starts a session on e (its slot already taken by
// choose, and counted in starts), within StartTimeout. The slot is
// released on failure. Close cuts the start short: the checkout then
// fails with ErrClosed, charged to no endpoint. caller is the Checkout's
// own context (ctx adds CheckoutTimeout to it): a start it ends, by a
// cancel or a deadline, is charged to no endpoint either, unless the
// server had refused the upgrade; the endpoint may then be checked
// (checkSilent).
func (p *Pool) checkoutRemote(ctx, caller context.Context, e *endpoint, cfg session.Config) (*Session, error) {
	defer p.starts.Done()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(p.closed, func() { cancel(ErrClosed) })()
	ref := &remoteRef{ep: e}
	var starting atomic.Bool // the dials are the start's, not a resume's
	starting.Store(true)
	l := session.RemoteLauncher{
		URL:      e.URL,
		Dial:     e.Dial,
		NoResume: p.cfg.NoResume,
		// Each redial carries the options of the endpoint it goes to:
		// an endpoint's credentials are never sent to another.
		Redial: func() (string, ws.DialOptions) { return p.resumeTo(ref) },
		OnDial: func(_ string, err error) {
			if err != nil && starting.Load() && caller.Err() != nil && !refused(err) {
				return // the caller gave up; the endpoint may be fine
			}
			p.dialed(ref, err)
		},
		OnResume: func(_ string, err error) { p.resumed(ref, err) },
	}
	start := time.Now()
	s, err := withinStartTimeout(p, ctx, func(ctx context.Context) (*session.Session, error) {
		return session.Start(ctx, session.Launch{Launcher: l, ProtocolVersion: p.cfg.ProtocolVersion}, cfg)
	})
	starting.Store(false)
	if err != nil {
		canceled := (errors.Is(ctx.Err(), context.Canceled) || caller.Err() != nil) && !refused(err)
		if closing := p.closing.Load(); closing || canceled || callersFault(err) || headerFault(err) {
			p.startFailed(e, ref, err, time.Since(start), true)
			if closing {
				return nil, ErrClosed
			}
			if canceled && !callersFault(err) && !headerFault(err) {
				// The caller gave up before the endpoint answered: not
				// the endpoint's fault as far as that says, but an
				// endpoint that never answers would go unnoticed so.
				p.checkSilent(e)
			}
			return nil, err
		}
		p.startFailed(e, ref, err, time.Since(start), false)
		return nil, err
	}
	ps := &Session{s: s, pool: p, ref: ref, start: time.Now()}
	p.mu.Lock()
	// The checkout is reported where the session runs: on the endpoint a
	// start drained by e resumed on (ref.ep), not on e, which serves
	// nothing. Its Checkouts count, its EventCheckout and the wait metric
	// recorded from that event all name that endpoint, as Session.Endpoint
	// does.
	at := ref.ep
	at.checkouts++
	// A start that got through (after a refusal its negotiation redial
	// waited out, say) ends any backoff, unless the endpoint's sessions
	// drop: it starts them fine and then loses them. One that e drained
	// and that resumed elsewhere did not get through on e (its resume
	// ended the backoff of the endpoint it moved to: resumed).
	if ref.ep == e {
		e.clearBackoffLocked()
		e.answered = time.Now()
	}
	closing := p.closing.Load()
	if !closing {
		p.remote[ps] = struct{}{}
	}
	p.mu.Unlock()
	if closing {
		ps.released.Store(true)
		s.Close()
		p.mu.Lock()
		ref.ep.outstanding-- // where the start left it (it may have resumed)
		p.mu.Unlock()
		return nil, ErrClosed
	}
	p.checkouts.Add(1)
	p.emit(Event{Kind: EventCheckout, Endpoint: at.Name, Duration: time.Since(start)})
	return ps, nil
}

// refused reports whether a failed remote start was refused by the
// server: its upgrade was answered with an HTTP status other than 101.
// That is the endpoint's answer, whatever ended the dial afterwards (the
// caller's cancel while the refusal's body was read is wrapped in the
// same error).
func refused(err error) bool {
	var de *ws.DialError
	return errors.As(err, &de) && de.StatusCode != 0
}

// retryElsewhere reports whether a failed remote start should be tried
// on another endpoint: not when the caller is surely at fault (its
// headers, its Configure unencodable) or its context ended. A Configure
// refused with an Error is tried elsewhere: the Config may be at fault,
// or the endpoint (see configFault).
func retryElsewhere(ctx context.Context, err error) bool {
	return ctx.Err() == nil && !headerFault(err) && !callersFault(err)
}

// configFault reports whether a failed remote start may have failed on
// the checkout's Config rather than the endpoint: the server refused the
// Configure with an Error, or closed on it with 1008 or 1009. Neither
// backs the endpoint off (backsOff) unless another endpoint, or a local
// worker, then serves the same Config (servedElsewhere).
func configFault(err error) bool {
	var (
		py *session.PythonError
		de *session.DisconnectedError
	)
	if errors.As(err, &py) {
		return true
	}
	return errors.As(err, &de) && (de.Code == closeProtocol || de.Code == closeTooLarge)
}

// servedElsewhere backs off the endpoints that turned away a Config
// that was then served elsewhere: it was not the Config's fault.
func (p *Pool) servedElsewhere(turnedAway []*endpoint) {
	if len(turnedAway) == 0 {
		return
	}
	p.mu.Lock()
	for _, e := range turnedAway {
		p.backOffLocked(e, 0)
	}
	p.mu.Unlock()
}

// callersFault reports whether a failed remote start failed on the
// caller's session.Config alone: a Configure that cannot be encoded
// (session.Config.Validate), found before it is sent. That says nothing
// of the endpoint, as for a local checkout, which refuses such a Config
// before taking a worker.
func callersFault(err error) bool {
	var ire *session.InvalidRequestError
	return errors.As(err, &ire)
}

// headerFault reports whether a failed remote start failed on an upgrade
// header that cannot be sent (from the endpoint's HeaderFunc; New refuses
// static ones): found before any I/O, it says nothing of the server.
func headerFault(err error) bool {
	var he *ws.HeaderError
	return errors.As(err, &he)
}

// backsOff reports whether a failed start should back its endpoint off (a
// failed dial, with or without an HTTP answer, is OnDial's): a start that
// timed out, a server that answered Configure with a ShutdownDump, that
// dropped the connection or announced a fatal error before answering it,
// or that broke the protocol. Each would fail the next start there too.
// A failure that may be the Configure's own fault does not: a close with
// 1009 (over the server's frame cap) or 1008 (a request it could not
// parse), or a Configure the server refused with an Error (a
// *session.PythonError: the session.Config may be at fault, and another
// caller's may be fine); servedElsewhere backs such an endpoint off once
// another has served the same Config.
func backsOff(err error) bool {
	var (
		st *session.StartTimeoutError
		pe *session.ProtocolError
		rc *session.RemoteCrashError
		de *session.DisconnectedError
		py *session.PythonError
	)
	if errors.As(err, &py) {
		return false
	}
	if errors.As(err, &de) {
		return de.Code != closeProtocol && de.Code != closeTooLarge
	}
	return errors.As(err, &st) || errors.Is(err, session.ErrShutdown) || errors.As(err, &pe) || errors.As(err, &rc)
}

// WebSocket close codes a server may end a start with for the Configure's
// sake rather than its own (see server.CloseProtocol, server.CloseTooLarge).
const (
	closeProtocol = 1008
	closeTooLarge = 1009
)

// dialed accounts for one dial of a session whose current endpoint is
// ref.ep (the start's, or the one resumeTo just chose).
func (p *Pool) dialed(ref *remoteRef, err error) {
	if err == nil {
		p.mu.Lock()
		if ref.moving && !ref.released {
			ref.moving = false
			ref.ep.resumes++
		}
		p.mu.Unlock()
		return
	}
	var de *ws.DialError
	if !errors.As(err, &de) || (de.StatusCode == 0 && errors.Is(err, context.Canceled)) || p.closing.Load() {
		// A header refusal (no I/O), or a dial its caller or Close gave
		// up on before the server answered: neither says anything of
		// the endpoint. A refusal the server sent is its answer even
		// when the caller gave up while its body was read.
		return
	}
	p.mu.Lock()
	e := ref.ep
	if de.Overloaded() {
		e.refusals++
	} else {
		e.dialFails++
	}
	// Any refused upgrade backs off, not only 503 and 429: a 502 or 504
	// from a balancer with no healthy backend (which may come only at
	// its timeout), a 401, a 429 auth_throttled (for the Retry-After it
	// names) or a redirect fails every checkout alike.
	p.backOffLocked(e, de.RetryAfter)
	p.mu.Unlock()
}

// resumed records a resume of the session at ref (on the endpoint it
// resumed on). A resume that got through ends that endpoint's backoff, as
// a start that got through does.
func (p *Pool) resumed(ref *remoteRef, err error) {
	p.mu.Lock()
	ep := ref.ep.Name
	if err == nil {
		ref.ep.clearBackoffLocked()
		ref.ep.answered = time.Now()
	}
	p.mu.Unlock()
	p.tel.resumeDone(ep, err)
}

// backOffLocked skips e for its next backoff step (at least retryAfter).
func (p *Pool) backOffLocked(e *endpoint, retryAfter time.Duration) {
	b := p.cfg.EndpointBackoff
	if e.wait == 0 {
		e.wait = b.Initial
	} else {
		e.wait = min(2*e.wait, b.Max)
	}
	// A server's Retry-After is its say, not the last word: a broken or
	// hostile one must not take itself out of rotation for good.
	retryAfter = min(retryAfter, max(b.Max, maxRetryAfter))
	e.until = time.Now().Add(max(e.wait, retryAfter))
}

// maxRetryAfter bounds the Retry-After a pool honours, unless
// EndpointBackoff.Max is longer.
const maxRetryAfter = 5 * time.Minute

// clearBackoffLocked ends e's backoff after a start or a resume that got
// through, unless e's last dropsToBackOff sessions or more were dropped:
// an endpoint that flaps starts sessions fine and then loses them, so a
// start says nothing of it. Its backoff then runs its course (a start
// there was chosen before it began), and its step stays, so that the next
// drop backs it off twice as long; a session that ends clean resets the
// streak, and the next start the step.
func (e *endpoint) clearBackoffLocked() {
	if e.streak < dropsToBackOff {
		e.wait, e.until = 0, time.Time{}
	}
}

// dropsToBackOff is how many sessions in a row an endpoint may drop
// (droppedByEndpoint) before it is backed off; every further drop before
// a session ends clean there backs it off again. One drop may be chance
// (a restart of the server, a blip of the network); three in a row, with
// no session ending clean between them, is an endpoint that fails the
// sessions placed on it.
const dropsToBackOff = 3

// droppedByEndpoint reports whether cause, the error that ended a remote
// session after its start, is the endpoint's fault rather than that of
// the code the session ran or of its caller (the package documentation,
// "Sessions an endpoint drops", has the full list):
//
//   - the connection ended without a Close frame (code -1: a reset, an
//     EOF, a TLS or network failure; what RFC 6455 calls 1006), or with
//     a Close frame that names no failure of the session's (1000 or 1005:
//     the server ended a session its client had not ended), 1001 (going
//     away: a server shutting down under a turn; a drain that hands the
//     session its dump is a *session.ShutdownError instead, which
//     resumes), 1002 (a WebSocket protocol error), 1011 for anything but
//     its worker (see workerFailed), 1012 (restarting), 1013 (try again
//     later: the server's worker pool is unhealthy) or 1014 (a bad
//     gateway in front of it);
//   - the server broke the protocol (a *session.ProtocolError: a frame
//     that cannot be decoded, a second answer to one request), unless
//     the frame was only too big (over this side's frame cap or decode
//     budget, which the session's code may have caused).
//
// Not the endpoint's: the worker's own end (4003, its memory limit; 1011
// with a "worker failed" reason, a crash while it ran the session's code;
// a FatalError it announced, *session.RemoteCrashError), the session's
// limits and timeouts (4000 to 4004), a request the server could not take
// (1003, 1007, 1008, 1009, 1010), codes this package does not know (the
// 3000 and other 4000 ranges) and everything the caller did (a cancel, a
// deadline, Kill, Close).
func droppedByEndpoint(cause error) bool {
	var (
		sd *session.ShutdownError
		de *session.DisconnectedError
		pe *session.ProtocolError
	)
	switch {
	case errors.As(cause, &sd):
		// A drain; a resume that failed is wrapped in it and accounted
		// for by OnDial and OnResume.
		return false
	case errors.As(cause, &de):
		switch de.Code {
		case -1, 1000, 1001, 1002, 1005, 1012, 1013, 1014:
			return true
		case 1011:
			return !workerFailed(de.Reason)
		}
		return false
	case errors.As(cause, &pe):
		// Not a frame over this side's cap or decode budget: the session's
		// code may have made a value that big, and this side's limits may
		// be tighter than the server's.
		return !errors.Is(pe, frame.ErrTooLarge) && !errors.Is(pe, codec.ErrBudget)
	}
	return false
}

// workerFailed reports whether the reason of a 1011 Close names the
// server's worker as what failed: `montygo serve` closes with "worker
// failed: ..." when the worker behind a session crashed, was killed at its
// reply bound or could not be started, and with other reasons for its own
// failures. A worker that crashes while it runs the session's code is no
// sign of a failing endpoint: the code may have crashed it, as it would a
// local worker (whose crashes while running code the pool does not count
// against its restart cap either).
func workerFailed(reason string) bool {
	return strings.HasPrefix(reason, "worker failed")
}

// chargeDrop accounts for the loss of the remote session s, whose cause
// is cause, once: when it is the endpoint's fault (droppedByEndpoint) the
// endpoint's drop count and streak go up, and the streak's
// dropsToBackOff-th drop, and every one after it, backs the endpoint off.
// The caller sees the drop as before (it is the error of its turn). A
// session the pool is closing is not charged: Close ends it.
func (p *Pool) chargeDrop(s *Session, cause error) {
	if cause == nil || p.closing.Load() || !droppedByEndpoint(cause) || !s.dropped.CompareAndSwap(false, true) {
		return
	}
	var backoff time.Duration
	p.mu.Lock()
	e := s.ref.ep
	e.drops++
	e.streak++
	if e.streak >= dropsToBackOff {
		p.backOffLocked(e, 0)
		backoff = e.wait
	}
	p.mu.Unlock()
	p.emit(Event{Kind: EventEndpointDropped, Endpoint: e.Name, Duration: backoff, Err: cause})
}

// turnEnded charges the endpoint of a remote session whose turn failed
// with the drop, if the connection was lost (chargeDrop), as soon as the
// turn returns rather than at Close: the checkouts meanwhile already
// avoid the endpoint. A session released meanwhile is left to
// releaseRemote, which looked at its cause before closing it (the close
// itself fails the turn).
func (s *Session) turnEnded(err error) {
	if err == nil || s.ref == nil || s.released.Load() {
		return
	}
	s.pool.chargeDrop(s, s.s.Cause())
}

// startFailed releases the slot of a failed start on e and accounts for
// it, unless blameless: the caller gave up on it (a cancel or its
// deadline, not StartTimeout or CheckoutTimeout), its Config could not be
// encoded, an upgrade header could not be sent, or Close cut it short.
// That says nothing of the endpoint, which is neither charged a start
// failure nor reported failed. The slot is released where ref holds it
// now: a start whose Configure e drained has resumed (resumeTo moved the
// slot) before it failed. The failure is charged to e, where the start
// was sent.
func (p *Pool) startFailed(e *endpoint, ref *remoteRef, err error, took time.Duration, blameless bool) {
	p.mu.Lock()
	ref.ep.outstanding--
	if !blameless {
		p.chargeStartLocked(e, err)
	}
	p.mu.Unlock()
	if !blameless {
		p.emit(Event{Kind: EventEndpointFailed, Endpoint: e.Name, Duration: took, Err: err})
	}
}

// chargeStartLocked charges e with a failed start: a start failure (a
// failed dial is OnDial's to count) and a backoff when backsOff says so.
// The caller emits its EventEndpointFailed once the lock is released.
func (p *Pool) chargeStartLocked(e *endpoint, err error) {
	var de *ws.DialError
	if !errors.As(err, &de) {
		e.startFails++
		if backsOff(err) {
			p.backOffLocked(e, 0)
		}
	}
}

// checkSilent looks into e after a checkout gave up on a start there
// before the endpoint answered (the caller's cancel or deadline, which
// charges the endpoint nothing): unless a start there got through within
// the last StartTimeout, or a check runs already, it starts a check (see
// check), so that an endpoint that never answers the upgrade or the
// Configure is charged and backed off however short its callers'
// deadlines. Close waits for the check (counted in starts).
func (p *Pool) checkSilent(e *endpoint) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing.Load() || e.checking || time.Since(e.answered) < p.cfg.StartTimeout {
		return
	}
	e.checking = true
	p.starts.Add(1)
	go p.check(e)
}

// check starts a session on e as a checkout would, with the pool's
// handshake Config, bounded by StartTimeout alone (no caller's context:
// only Close cuts it short), and closes it at once if it gets through.
// It stands for the start the caller gave up on, judged as if the caller
// had waited: a dial or a Configure that StartTimeout cuts short, a
// refused upgrade or a drop is charged as any start's (OnDial,
// chargeStartLocked) and backs the endpoint off; a start that gets
// through ends its backoff, as any start does. It is no checkout: not in
// Checkouts, Outstanding or the checkout metrics.
func (p *Pool) check(e *endpoint) {
	defer p.starts.Done()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	defer context.AfterFunc(p.closed, func() { cancel(ErrClosed) })()
	ref := &remoteRef{ep: e}
	l := session.RemoteLauncher{
		URL:      e.URL,
		Dial:     e.Dial,
		NoResume: true,
		OnDial:   func(_ string, err error) { p.dialed(ref, err) },
	}
	start := time.Now()
	s, err := withinStartTimeout(p, ctx, func(ctx context.Context) (*session.Session, error) {
		return session.Start(ctx, session.Launch{Launcher: l, ProtocolVersion: p.cfg.ProtocolVersion}, p.handshakeConfig())
	})
	if err == nil {
		s.Close()
	}
	charge := err != nil && !p.closing.Load() && !headerFault(err) && !callersFault(err)
	p.mu.Lock()
	e.checking = false
	switch {
	case err == nil:
		e.clearBackoffLocked()
		e.answered = time.Now()
	case charge:
		p.chargeStartLocked(e, err)
	}
	p.mu.Unlock()
	if charge {
		p.emit(Event{Kind: EventEndpointFailed, Endpoint: e.Name, Duration: time.Since(start), Err: err})
	}
}

// resumeTo is where the session at ref goes after a ShutdownDump: the
// least-loaded other endpoint that is not backed off (ref's own is
// draining), else its own unless it is backed off too (its redial was
// refused): then "", which ends the resume with session.ErrNoReplica.
// It returns the endpoint's URL with that endpoint's own dial options
// (its credentials go to it alone). The session's slot moves with it,
// unless the session was released meanwhile (a Destroy racing with the
// resume, whose dial Kill cuts short): its slot is gone already.
func (p *Pool) resumeTo(ref *remoteRef) (string, ws.DialOptions) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	cur := ref.ep
	if ref.released {
		return cur.URL, cur.Dial
	}
	var best *endpoint
	for _, e := range p.eps {
		if e == cur || now.Before(e.until) {
			continue
		}
		if best == nil || e.outstanding < best.outstanding {
			best = e
		}
	}
	if best == nil {
		if now.Before(cur.until) {
			// Its own endpoint refused the redial (or failed otherwise)
			// and nothing else is up: give the resume up rather than
			// redial a draining server until the attempts run out.
			return "", ws.DialOptions{}
		}
		return cur.URL, cur.Dial
	}
	cur.outstanding--
	best.outstanding++
	ref.ep, ref.moving = best, true
	return best.URL, best.Dial
}

// releaseRemote ends a remote checkout: the connection is closed (a
// going-away Close frame when destroyed, a normal one otherwise) and its
// endpoint slot released. Remote sessions are never reused. destroyed is
// why the pool or the caller destroys it (DestroyRequested for Destroy,
// DestroyClosing at Close's deadline), "" for Close.
func (p *Pool) releaseRemote(s *Session, destroyed Reason) {
	if !s.released.CompareAndSwap(false, true) {
		return
	}
	destroy := destroyed != ""
	var reason Reason
	cause := s.s.Cause()
	switch {
	case cause != nil:
		// What ended the session (a drop, a drain), even when the caller
		// destroys it afterwards, as for a local worker.
		reason = DestroyRequested
		if r, ok := crashReason(cause); ok {
			reason = r
		}
		// A drop no turn reported (the caller did not look, or the turn
		// that saw it raced with this release).
		p.chargeDrop(s, cause)
	case destroy:
		reason = destroyed
	case s.s.State() == session.StateClosed:
		reason = DestroyRequested // Session.Kill
	default:
		// A turn in flight, a suspended feed or one its context aborted,
		// as for a local worker; ErrSingleUse (an idle, clean session)
		// leaves the reason empty.
		if err := s.s.Reusable(); err != nil && !errors.Is(err, session.ErrSingleUse) {
			reason = destroyReason(err)
		}
	}
	if destroy {
		s.s.Kill()
	}
	s.s.Close()
	p.mu.Lock()
	e := s.ref.ep
	e.outstanding--
	if reason == "" {
		// A session that ended clean: the endpoint serves.
		e.streak = 0
	}
	s.ref.released = true
	delete(p.remote, s)
	p.drainedLocked()
	p.mu.Unlock()
	p.tel.sessionDone(s, reason == "", reason)
	p.emit(Event{Kind: EventEndpointClosed, Endpoint: e.Name, Reason: reason, Err: s.s.Cause()})
}

// endpointStatsLocked reports every endpoint, in configuration order.
func (p *Pool) endpointStatsLocked() []EndpointStat {
	if len(p.eps) == 0 {
		return nil
	}
	out := make([]EndpointStat, len(p.eps))
	for i, e := range p.eps {
		out[i] = EndpointStat{
			Name: e.Name, URL: redact.URL(e.URL), Outstanding: e.outstanding, Checkouts: e.checkouts,
			DialFailures: e.dialFails, Refusals: e.refusals, StartFailures: e.startFails,
			Resumes: e.resumes, Drops: e.drops, Backoff: e.wait, BackedOffUntil: e.until,
		}
	}
	return out
}

package pool

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

// Endpoint is one remote Monty server for a [Remote] pool.
//
// An Endpoint is plain data, safe to share.
type Endpoint struct {
	// URL is the ws:// or wss:// address, dialled exactly as given.
	URL string
	// Dial configures the WebSocket dials (headers, header function, TLS,
	// frame cap).
	Dial ws.DialOptions
}

// RemoteConfig describes a [Remote] pool. The zero value has no endpoints
// and refuses every checkout.
//
// A RemoteConfig is plain data; NewRemote copies it.
type RemoteConfig struct {
	// Endpoints are the servers checkouts are spread across.
	Endpoints []Endpoint
	// ProtocolVersion pins the protocol version; 0 means 4, what today's
	// servers speak.
	ProtocolVersion uint32
	// Backoff is how long an endpoint that refused (503, 429) or failed
	// to dial is skipped: Initial after the first failure, doubling up to
	// Max; a Retry-After hint from the server is honoured when longer.
	Backoff Backoff
	// NoResume turns automatic resumption after a ShutdownDump off.
	NoResume bool
}

// EndpointStat is the state of one endpoint of a [Remote] pool.
//
// An EndpointStat is plain data, safe to share.
type EndpointStat struct {
	URL string
	// Outstanding counts checked-out sessions not yet closed.
	Outstanding int
	// Checkouts and Failures count successful and failed session starts.
	Checkouts, Failures uint64
	// BackedOffUntil is when the endpoint is tried again (zero: now).
	BackedOffUntil time.Time
}

// ErrNoEndpoint is returned by Remote.Checkout when every endpoint failed
// or is backed off.
var ErrNoEndpoint = errors.New("monty pool: no remote endpoint available")

// Remote spreads sessions across remote servers: each checkout dials the
// endpoint with the fewest outstanding sessions among those not backed
// off, trying the next on a refusal or a failed dial. Remote sessions are
// single-use connections: never prewarmed, never returned, never Reset.
// A session resumed after a ShutdownDump redials another endpoint.
//
// A Remote is safe for concurrent use.
type Remote struct {
	cfg RemoteConfig
	mu  sync.Mutex
	eps []*remoteEP
	now func() time.Time
}

type remoteEP struct {
	Endpoint
	outstanding int
	checkouts   uint64
	failures    uint64
	until       time.Time
	wait        time.Duration
}

// NewRemote builds a Remote pool over cfg's endpoints.
func NewRemote(cfg RemoteConfig) *Remote {
	r := &Remote{cfg: cfg, now: time.Now}
	if r.cfg.ProtocolVersion == 0 {
		r.cfg.ProtocolVersion = 4
	}
	if r.cfg.Backoff.Initial <= 0 {
		r.cfg.Backoff.Initial = DefaultBackoffInitial
	}
	if r.cfg.Backoff.Max <= 0 {
		r.cfg.Backoff.Max = DefaultBackoffMax
	}
	for _, e := range cfg.Endpoints {
		r.eps = append(r.eps, &remoteEP{Endpoint: e})
	}
	return r
}

// RemoteSession is a session checked out of a [Remote] pool. Close (or
// Kill) ends it and releases its endpoint slot.
//
// Like a session.Session, it runs one turn at a time; Close and Kill are
// safe from any goroutine.
type RemoteSession struct {
	*session.Session
	ep      string
	release func()
	once    sync.Once
}

// Kill drops the connection at once (with a Close frame) and releases the
// endpoint slot.
func (s *RemoteSession) Kill() {
	s.Session.Kill()
	s.once.Do(s.release)
}

// Close closes the connection and releases the endpoint slot.
func (s *RemoteSession) Close() error {
	err := s.Session.Close()
	s.once.Do(s.release)
	return err
}

// Endpoint returns the URL the session was checked out from.
func (s *RemoteSession) Endpoint() string { return s.ep }

// pick returns the least-loaded endpoint that is not backed off and not in
// tried, or nil.
func (r *Remote) pick(tried map[*remoteEP]bool) *remoteEP {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	var best *remoteEP
	for _, e := range r.eps {
		if tried[e] || now.Before(e.until) {
			continue
		}
		if best == nil || e.outstanding < best.outstanding {
			best = e
		}
	}
	if best != nil {
		best.outstanding++
	}
	return best
}

// Checkout starts a session with cfg on the best endpoint.
func (r *Remote) Checkout(ctx context.Context, cfg session.Config) (*RemoteSession, error) {
	tried := map[*remoteEP]bool{}
	var last error
	for {
		e := r.pick(tried)
		if e == nil {
			if last != nil {
				return nil, errors.Join(ErrNoEndpoint, last)
			}
			return nil, ErrNoEndpoint
		}
		tried[e] = true
		l := session.RemoteLauncher{URL: e.URL, Dial: e.Dial, NoResume: r.cfg.NoResume,
			Pick: func() string { return r.resumeURL(e) }}
		s, err := session.Start(ctx, session.Launch{Launcher: l, ProtocolVersion: r.cfg.ProtocolVersion}, cfg)
		if err != nil {
			r.failed(e, err)
			last = err
			if ctx.Err() != nil {
				return nil, err
			}
			continue
		}
		r.mu.Lock()
		e.checkouts++
		e.wait = 0
		r.mu.Unlock()
		return &RemoteSession{Session: s, ep: e.URL, release: func() {
			r.mu.Lock()
			e.outstanding--
			r.mu.Unlock()
		}}, nil
	}
}

// failed releases e's slot and backs it off after a refusal (503, 429) or
// a failed dial; other errors (a refused Configure) count but do not
// back off.
func (r *Remote) failed(e *remoteEP, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.outstanding--
	e.failures++
	var de *ws.DialError
	if !errors.As(err, &de) {
		return
	}
	if de.StatusCode != 0 && de.StatusCode != http.StatusServiceUnavailable && de.StatusCode != http.StatusTooManyRequests {
		return
	}
	if e.wait == 0 {
		e.wait = r.cfg.Backoff.Initial
	} else {
		e.wait = min(2*e.wait, r.cfg.Backoff.Max)
	}
	e.until = r.now().Add(max(e.wait, de.RetryAfter))
}

// resumeURL is where a session from e goes after a ShutdownDump: the
// least-loaded other endpoint that is not backed off (e itself is
// draining), else e.
func (r *Remote) resumeURL(e *remoteEP) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	var best *remoteEP
	for _, o := range r.eps {
		if o == e || now.Before(o.until) {
			continue
		}
		if best == nil || o.outstanding < best.outstanding {
			best = o
		}
	}
	if best == nil {
		return e.URL
	}
	return best.URL
}

// Stat reports every endpoint, in configuration order.
func (r *Remote) Stat() []EndpointStat {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]EndpointStat, len(r.eps))
	for i, e := range r.eps {
		out[i] = EndpointStat{URL: e.URL, Outstanding: e.outstanding, Checkouts: e.checkouts, Failures: e.failures, BackedOffUntil: e.until}
	}
	return out
}

package server

import "sync"

// Refusal reasons (the "reason" label of monty_server_refusals_total).
const (
	ReasonUnauthorized   = "unauthorized"
	ReasonCapacity       = "capacity"
	ReasonDraining       = "draining"
	ReasonClientQuota    = "client_quota"
	ReasonRequestRefused = "request_refused"
	ReasonLoadUnsigned   = "load_unsigned"
	// ReasonLoadAboveCeilings: a Load of a signed dump whose limits exceed
	// the server's ceilings.
	ReasonLoadAboveCeilings = "load_above_ceilings"
	ReasonUpgradeRejected   = "upgrade_rejected"
	// ReasonHostRejected: a request to a server with no authentication,
	// received on a loopback address, whose Host is not a loopback name
	// (a DNS-rebinding page addresses the server by its own name).
	ReasonHostRejected = "host_rejected"
	// ReasonAuthThrottled: an upgrade (or a /metrics request) from a
	// client address that made Config.MaxAuthFailures failed
	// authentications in a burst, refused with 429 before its token is
	// looked at.
	ReasonAuthThrottled = "auth_throttled"
	// ReasonUnhealthy: an upgrade while the worker pool's restart cap is
	// tripped (workers failed to start, or died while idle, too often
	// within its window; /readyz answers 503 meanwhile), refused with 503
	// and a Retry-After of the time until the pool starts workers again.
	ReasonUnhealthy = "unhealthy"
)

// admission counts sessions server-wide and per client, and the handlers
// still running. It is safe for concurrent use.
type admission struct {
	mu        sync.Mutex
	max       int // < 0: no cap
	perClient int // < 0: no cap
	active    int // sessions counted against the caps
	live      int // handlers holding a slot that have not returned
	byClient  map[string]int
	draining  bool
	empty     chan struct{} // closed once draining with no handler left
}

func newAdmission(max, perClient int) *admission {
	return &admission{max: max, perClient: perClient, byClient: map[string]int{}, empty: make(chan struct{})}
}

// slot is one admitted session. free gives its place under the caps back
// (the session is over, its connection may still be closing); done, called
// when its handler returns, implies free and lets a drain finish. Both may
// be called more than once.
type slot struct {
	a              *admission
	client         string
	freeOnce, once sync.Once
}

func (s *slot) free() {
	s.freeOnce.Do(func() {
		a := s.a
		a.mu.Lock()
		defer a.mu.Unlock()
		a.active--
		if a.byClient[s.client]--; a.byClient[s.client] <= 0 {
			delete(a.byClient, s.client)
		}
	})
}

func (s *slot) done() {
	s.free()
	s.once.Do(func() {
		a := s.a
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.live--; a.draining && a.live == 0 {
			close(a.empty)
		}
	})
}

// acquire takes a slot for client, or returns the refusal reason.
func (a *admission) acquire(client string) (*slot, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.draining:
		return nil, ReasonDraining
	case a.max >= 0 && a.active >= a.max:
		return nil, ReasonCapacity
	case a.perClient >= 0 && a.byClient[client] >= a.perClient:
		return nil, ReasonClientQuota
	}
	a.active++
	a.live++
	a.byClient[client]++
	return &slot{a: a, client: client}, ""
}

// drain refuses every later acquire; done is closed once no handler is
// left.
func (a *admission) drain() (done <-chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.draining {
		a.draining = true
		if a.live == 0 {
			close(a.empty)
		}
	}
	return a.empty
}

func (a *admission) isDraining() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.draining
}

func (a *admission) count() (active int, clients int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.active, len(a.byClient)
}

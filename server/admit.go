package server

import "sync"

// Refusal reasons (the "reason" label of monty_server_refusals_total).
const (
	ReasonUnauthorized    = "unauthorized"
	ReasonCapacity        = "capacity"
	ReasonDraining        = "draining"
	ReasonClientQuota     = "client_quota"
	ReasonRequestRefused  = "request_refused"
	ReasonLoadUnsigned    = "load_unsigned"
	ReasonUpgradeRejected = "upgrade_rejected"
)

// admission counts sessions server-wide and per client. It is safe for
// concurrent use.
type admission struct {
	mu        sync.Mutex
	max       int // < 0: no cap
	perClient int // < 0: no cap
	active    int
	byClient  map[string]int
	draining  bool
	empty     chan struct{} // closed once draining with no session left
}

func newAdmission(max, perClient int) *admission {
	return &admission{max: max, perClient: perClient, byClient: map[string]int{}, empty: make(chan struct{})}
}

// acquire takes a slot for client, or returns the refusal reason.
func (a *admission) acquire(client string) (release func(), reason string) {
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
	a.byClient[client]++
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.active--
			if a.byClient[client]--; a.byClient[client] <= 0 {
				delete(a.byClient, client)
			}
			if a.draining && a.active == 0 {
				close(a.empty)
			}
		})
	}, ""
}

// drain refuses every later acquire; done is closed once no session is
// left.
func (a *admission) drain() (done <-chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.draining {
		a.draining = true
		if a.active == 0 {
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

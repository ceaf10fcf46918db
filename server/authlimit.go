package server

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of the failed-authentication limiter.
const (
	// DefaultMaxAuthFailures is how many failed authentications a client
	// address may make in a burst (Config.MaxAuthFailures).
	DefaultMaxAuthFailures = 10
	// authFailureRefill is how often a client address gets one more
	// failed authentication back, up to its burst.
	authFailureRefill = 6 * time.Second
	// maxAuthClients bounds the addresses the limiter remembers.
	maxAuthClients = 10000
)

// authLimiter limits failed authentications per client address: each
// address has a rate.Limiter of burst failures that refills by one every
// refill; an address with none left is refused before its token is
// looked at. It remembers at most max addresses: a full limiter is the
// same as none and is forgotten first; past that arbitrary addresses are
// forgotten (a pool of more addresses than that gets a fresh burst for
// some of them, which no per-address limit of bounded memory can avoid).
// It is safe for concurrent use.
type authLimiter struct {
	mu     sync.Mutex
	now    func() time.Time
	burst  int
	refill time.Duration
	max    int
	m      map[string]*rate.Limiter
}

// authTaken is a failure take spent, for refund.
type authTaken struct {
	r  *rate.Reservation
	at time.Time
}

// newAuthLimiter returns a limiter, or nil (no limit) for burst < 0.
func newAuthLimiter(burst int, now func() time.Time) *authLimiter {
	if burst < 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &authLimiter{now: now, burst: burst, refill: authFailureRefill, max: maxAuthClients, m: map[string]*rate.Limiter{}}
}

// take spends one of key's failures before its token is looked at, or
// reports how long until it has one: taking before the lookup means that
// guesses sent at once are no more than guesses sent one by one. A right
// token gives it back (refund).
func (l *authLimiter) take(key string) (taken authTaken, retry time.Duration, ok bool) {
	if l == nil {
		return authTaken{}, 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.now()
	lim := l.m[key]
	if lim == nil {
		if l.burst < 1 {
			return authTaken{}, l.refill, false
		}
		if len(l.m) >= l.max {
			l.forget(t)
		}
		lim = rate.NewLimiter(rate.Every(l.refill), l.burst)
		l.m[key] = lim
	}
	// A refusal reserves nothing: a reservation cancelled at once still
	// moves the limiter's last event into the future, and the refund of a
	// right token whose lookup it overlapped would then give back less.
	// (Takes hold l.mu, so none comes between the look and the take.)
	if left := lim.TokensAt(t); left < 1 {
		return authTaken{}, time.Duration((1 - left) * float64(l.refill)), false
	}
	return authTaken{r: lim.ReserveN(t, 1), at: t}, 0, true
}

// refund gives back what take spent, for a token that was right. It
// cancels the reservation at the time it was made: CancelAt gives nothing
// back at a later time (a reservation whose time has come is spent), and
// the lookup between take and refund takes time. When other takes of the
// address came during the lookup, CancelAt may give back up to their
// overlap's refill less than one (a lookup's microseconds), never more
// (TestAuthLimiterMatchesTheBucket).
func (l *authLimiter) refund(taken authTaken) {
	if taken.r != nil {
		taken.r.CancelAt(taken.at)
	}
}

// forget makes room for more addresses: every full limiter goes, and if
// that leaves the table over nine tenths full, arbitrary addresses go
// until it is not, so that a pool of addresses arriving one after another
// costs one sweep per tenth of max, not one per address.
func (l *authLimiter) forget(t time.Time) {
	for k, lim := range l.m {
		if lim.TokensAt(t) >= float64(l.burst) {
			delete(l.m, k)
		}
	}
	for k := range l.m {
		if len(l.m) <= l.max-max(1, l.max/10) {
			break
		}
		delete(l.m, k)
	}
}

// size returns how many addresses the limiter remembers.
func (l *authLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}

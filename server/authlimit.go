package server

import (
	"sync"
	"time"
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
// address has a bucket of burst failures that refills by one every
// refill; an address with an empty bucket is refused before its token is
// looked at. It remembers at most max addresses: a full bucket is the
// same as none and is forgotten first; past that arbitrary addresses are
// forgotten (a pool of more addresses than that gets a fresh burst for
// some of them, which no per-address limit of bounded memory can avoid).
// It is safe for concurrent use.
type authLimiter struct {
	mu     sync.Mutex
	now    func() time.Time
	burst  float64
	refill time.Duration
	max    int
	m      map[string]*authBucket
}

type authBucket struct {
	left float64 // failures left
	at   time.Time
}

// newAuthLimiter returns a limiter, or nil (no limit) for burst < 0.
func newAuthLimiter(burst int, now func() time.Time) *authLimiter {
	if burst < 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &authLimiter{now: now, burst: float64(burst), refill: authFailureRefill, max: maxAuthClients, m: map[string]*authBucket{}}
}

// refilled returns b's failures left at t.
func (l *authLimiter) refilled(b *authBucket, t time.Time) float64 {
	if d := t.Sub(b.at); d > 0 {
		return min(l.burst, b.left+float64(d)/float64(l.refill))
	}
	return b.left
}

// take spends one of key's failures before its token is looked at, or
// reports how long until it has one: taking before the lookup means that
// guesses sent at once are no more than guesses sent one by one. A right
// token gives it back (refund).
func (l *authLimiter) take(key string) (retry time.Duration, ok bool) {
	if l == nil {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.now()
	b := l.m[key]
	if b == nil {
		if l.burst < 1 {
			return l.refill, false
		}
		if len(l.m) >= l.max {
			l.forget(t)
		}
		b = &authBucket{left: l.burst, at: t}
		l.m[key] = b
	}
	left := l.refilled(b, t)
	if left < 1 {
		return time.Duration((1 - left) * float64(l.refill)), false
	}
	b.left, b.at = left-1, t
	return 0, true
}

// refund gives back what take spent, for a token that was right.
func (l *authLimiter) refund(key string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.m[key]; b != nil {
		t := l.now()
		b.left, b.at = min(l.burst, l.refilled(b, t)+1), t
	}
}

// forget makes room for more addresses: every full bucket goes, and if
// that leaves the limiter over nine tenths full, arbitrary addresses go
// until it is not, so that a pool of addresses arriving one after another
// costs one sweep per tenth of max, not one per address.
func (l *authLimiter) forget(t time.Time) {
	for k, b := range l.m {
		if l.refilled(b, t) >= l.burst {
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

package server

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// refBucket is the failed-login bucket as plain arithmetic (the limiter's
// arithmetic before it used x/time/rate): burst failures, one back every
// refill, a refund gives one back.
type refBucket struct {
	left  float64
	at    time.Time
	burst float64
}

func (b *refBucket) refill(t time.Time) {
	if d := t.Sub(b.at); d > 0 {
		b.left = min(b.burst, b.left+float64(d)/float64(authFailureRefill))
	}
	b.at = t
}

// TestAuthLimiterMatchesTheBucket drives the limiter and the plain bucket
// with the same random takes, refunds (each within a lookup's time of its
// take, while other takes from the address come and go) and pauses: every
// take must get the same answer, and a refused one about the same
// Retry-After. The limiter may be stricter by a little: a refund
// overlapped by other takes of the address during its lookup gives back
// up to that overlap's refill less (Reservation.CancelAt's accounting),
// never more.
func TestAuthLimiterMatchesTheBucket(t *testing.T) {
	const slack = 0.01 // failures, 60 ms of refill
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 42))
		clk := newFakeClock()
		burst := 1 + rng.IntN(5)
		l := newAuthLimiter(burst, clk.now)
		ref := &refBucket{left: float64(burst), at: clk.now(), burst: float64(burst)}
		var pending []authTaken
		for step := range 2000 {
			switch op := rng.IntN(10); {
			case op < 4: // a login: take
				ref.refill(clk.now())
				taken, retry, ok := l.take("a")
				want := ref.left >= 1
				switch {
				case math.Abs(ref.left-1) < 1e-9:
					want = ok // a tie: either answer is right
				case !ok && want && ref.left-1 < slack:
					want = false // a refund overlapped by other takes gave back a little less
				}
				if ok != want {
					t.Fatalf("seed %d step %d: take %v, the bucket says %v (%.6f left)", seed, step, ok, want, ref.left)
				}
				if ok {
					ref.left--
					if rng.IntN(2) == 0 {
						pending = append(pending, taken) // a right token, being looked up
					}
				} else if wantRetry := time.Duration((1 - max(0, ref.left)) * float64(authFailureRefill)); retry < wantRetry-time.Microsecond || retry > wantRetry+time.Duration(slack*float64(authFailureRefill)) {
					t.Fatalf("seed %d step %d: retry %v, the bucket says %v", seed, step, retry, wantRetry)
				}
			case op < 7 && len(pending) > 0: // a lookup ends with a right token
				i := rng.IntN(len(pending))
				l.refund(pending[i])
				pending = append(pending[:i], pending[i+1:]...)
				ref.refill(clk.now())
				ref.left = min(ref.burst, ref.left+1)
			case op < 9: // a lookup's time
				clk.advance(time.Duration(1+rng.IntN(1000)) * time.Microsecond)
			default: // a pause, once no lookup is under way
				if len(pending) == 0 {
					clk.advance(time.Duration(rng.IntN(int(2 * authFailureRefill))))
				}
			}
		}
	}
}

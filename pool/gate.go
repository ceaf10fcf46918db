package pool

import "time"

// restartGate decides when the pool may start workers: the backoff
// between failed starts and the restart cap. It reads no clock and holds
// no lock: the pool passes the current time, under its lock, so the rules
// are plain functions of time (tested under testing/synctest).
type restartGate struct {
	maxRestarts int // a negative value disables the cap
	window      time.Duration
	initial     time.Duration
	maxBackoff  time.Duration

	failures []time.Time     // within window, oldest first
	tripped  *UnhealthyError // nil while healthy
	backoff  time.Duration   // the current wait after a failed start
	startAt  time.Time       // no start before this
}

func newRestartGate(cfg Config) restartGate {
	return restartGate{maxRestarts: cfg.MaxRestarts, window: cfg.RestartWindow,
		initial: cfg.RestartBackoff.Initial, maxBackoff: cfg.RestartBackoff.Max}
}

// healthy reports whether the restart cap is not tripped.
func (g *restartGate) healthy() bool { return g.tripped == nil }

// fail counts a failure (a failed start, a worker dead while idle) at now.
// It returns the UnhealthyError when this failure trips the cap: more than
// maxRestarts failures within window. Failures while tripped are not
// counted.
func (g *restartGate) fail(now time.Time, err error) *UnhealthyError {
	if g.maxRestarts < 0 || g.tripped != nil {
		return nil
	}
	cut := now.Add(-g.window)
	i := 0
	for i < len(g.failures) && g.failures[i].Before(cut) {
		i++
	}
	g.failures = append(g.failures[:0], g.failures[i:]...)
	g.failures = append(g.failures, now)
	if len(g.failures) <= g.maxRestarts {
		return nil
	}
	g.tripped = &UnhealthyError{Failures: len(g.failures), Window: g.window, Until: now.Add(g.window), Last: err}
	return g.tripped
}

// recover ends the tripped state once its window has passed, and reports
// whether it did. Failures and backoff start afresh.
func (g *restartGate) recover(now time.Time) bool {
	if g.tripped == nil || now.Before(g.tripped.Until) {
		return false
	}
	g.tripped = nil
	g.failures = g.failures[:0]
	g.backoff, g.startAt = 0, time.Time{}
	return true
}

// startFailed doubles the backoff (from initial, up to maxBackoff) after a
// start that failed at now, and returns the wait before the next start.
func (g *restartGate) startFailed(now time.Time) time.Duration {
	g.backoff = min(max(2*g.backoff, g.initial), g.maxBackoff)
	g.startAt = now.Add(g.backoff)
	return g.backoff
}

// started resets the backoff after a start that succeeded.
func (g *restartGate) started() { g.backoff, g.startAt = 0, time.Time{} }

// next returns when the pool may start a worker: the zero time (now)
// unless a backoff is running or the cap is tripped.
func (g *restartGate) next(now time.Time) time.Time {
	switch {
	case g.tripped != nil:
		return g.tripped.Until
	case now.Before(g.startAt):
		return g.startAt
	}
	return time.Time{}
}

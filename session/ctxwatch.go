package session

import (
	"context"
	"sync"
)

// ctxWatch makes the cancellation of a turn's context kill the worker
// while that turn runs. It keeps one context.AfterFunc registration from
// turn to turn for as long as the turns come with contexts that are done
// together — the same Done channel: the same context, or values derived
// from it (a run's span context, say) — where registering and stopping
// one per turn cost each round trip a lock and a map insert and delete in
// the context's children. Contexts are told apart by Done, never with ==,
// which panics on a context of an uncomparable type.
//
// A registration outlives its turns: its callback kills only through
// kill, which acts only while a turn runs (interrupt irNone), and only if
// it is still the current registration (gen), checked under mu, which a
// turn with another context takes to retire it before the turn begins. So
// a context done between turns, or one from an earlier turn, never kills
// a later turn; a context already done when its turn begins is seen by
// the turn itself (roundTrip).
type ctxWatch struct {
	mu   sync.Mutex
	done <-chan struct{} // the watched context's Done, nil for none
	stop func() bool
	gen  uint64
}

// watchCtx makes ctx the watched context, the previous one's registration
// retired. Called by roundTrip before its turn begins.
func (s *Session) watchCtx(ctx context.Context) {
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	done := ctx.Done()
	if done == w.done {
		return
	}
	w.retireLocked()
	if done == nil || s.closed.Load() {
		// Never canceled: nothing to watch. Closed: Close retires the
		// watch after marking the session closed, so a watch registered
		// after that would keep the session reachable from ctx.
		return
	}
	gen := w.gen
	w.done = done
	w.stop = context.AfterFunc(ctx, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.gen == gen {
			s.kill(irContext)
		}
	})
}

// unwatchCtx retires the registration, so that a long-lived context does
// not keep a closed session reachable.
func (s *Session) unwatchCtx() {
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	w.retireLocked()
}

func (w *ctxWatch) retireLocked() {
	if w.stop != nil {
		w.stop()
	}
	w.gen++
	w.done, w.stop = nil, nil
}

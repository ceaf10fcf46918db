package session

import (
	"context"
	"sync"
)

// ctxWatch makes the cancellation of a turn's context kill the worker
// while that turn runs. It keeps one context.AfterFunc registration from
// turn to turn for as long as the turns come with the same context (the
// context of one request that runs code with host calls, typically),
// where registering and stopping one per turn cost each round trip a
// lock and a map insert and delete in the context's children.
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
	ctx  context.Context // the watched context, nil for none
	stop func() bool
	gen  uint64
}

// watchCtx makes ctx the watched context, the previous one's registration
// retired. Called by roundTrip before its turn begins.
func (s *Session) watchCtx(ctx context.Context) {
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if ctx == w.ctx {
		return
	}
	w.retireLocked()
	if ctx.Done() == nil || s.closed.Load() {
		// Never canceled: nothing to watch. Closed: Close retires the
		// watch after marking the session closed, so a watch registered
		// after that would keep the session reachable from ctx.
		return
	}
	gen := w.gen
	w.ctx = ctx
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
	w.ctx, w.stop = nil, nil
}

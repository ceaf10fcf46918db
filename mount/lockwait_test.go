package mount

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
)

// cancelOnFirstLook is a context that is live at its first Err call and
// canceled right after it: HandleOS passes its entry check, then finds
// the context done while it waits.
type cancelOnFirstLook struct {
	context.Context
	once   sync.Once
	cancel context.CancelFunc
}

func (c *cancelOnFirstLook) Err() error {
	first := false
	c.once.Do(func() { first = true })
	if first {
		defer c.cancel()
		return nil
	}
	return c.Context.Err()
}

// TestOverlayLockWaitHonoursContext shows an overlay call that waits for
// the mount's lock (held here, as by another session's slow host read)
// returning a context error as soon as its context ends, with nothing
// done. Before, it waited for the lock whatever its context said.
func TestOverlayLockWaitHonoursContext(t *testing.T) {
	for _, call := range []*message.OsCall{
		opCall(message.OpReadText, "/data/x.txt"),
		textCall(message.OpWriteText, "/data/new.txt", "N"),
		renameCall("/data/x.txt", "/data/y.txt"),
	} {
		t.Run(call.Op.String(), func(t *testing.T) {
			f := newFixture(t, Overlay)
			o := f.tbl.mounts[0].ov
			o.lock(context.Background()) // held by someone else
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := f.tbl.HandleOS(&cancelOnFirstLook{Context: ctx, cancel: cancel}, call)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				o.unlock()
				t.Fatalf("%s still waiting for the lock after its context ended", call.Op)
			}
			o.unlock()
			var ce *canceledError
			if !errors.Is(err, context.Canceled) || !errors.As(err, &ce) || !ce.notStarted {
				t.Fatalf("%s: err %v, want a not-started canceledError wrapping context.Canceled", call.Op, err)
			}
			// Nothing happened: the overlay still answers as before.
			if got := f.do(opCall(message.OpExists, "/data/new.txt")); rootOf(t, got).Bool() {
				t.Fatal("the canceled write happened")
			}
			if got := f.do(opCall(message.OpExists, "/data/x.txt")); !rootOf(t, got).Bool() {
				t.Fatal("the canceled rename happened")
			}
		})
	}
}

package pool

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func testGate() restartGate {
	cfg, _ := Config{MaxRestarts: 3, RestartWindow: time.Minute,
		RestartBackoff: Backoff{Initial: 50 * time.Millisecond, Max: 400 * time.Millisecond}}.withDefaults()
	return newRestartGate(cfg)
}

// The cap trips on the failure after MaxRestarts within the window, stays
// tripped for the window, then recovers with a clean slate.
func TestRestartGateTripsAndRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := testGate()
		boom := errors.New("boom")
		for i := range 3 {
			if u := g.fail(time.Now(), boom); u != nil {
				t.Fatalf("failure %d tripped: %v", i+1, u)
			}
			time.Sleep(time.Second)
		}
		u := g.fail(time.Now(), boom)
		if u == nil || u.Failures != 4 || !errors.Is(u, ErrUnhealthy) || !errors.Is(u, boom) {
			t.Fatalf("fourth failure: %v", u)
		}
		if g.healthy() || !g.next(time.Now()).Equal(u.Until) {
			t.Fatalf("tripped gate: healthy %v next %v", g.healthy(), g.next(time.Now()))
		}
		if g.fail(time.Now(), boom) != nil || len(g.failures) != 4 {
			t.Fatal("a failure while tripped was counted")
		}
		time.Sleep(time.Minute - time.Nanosecond)
		if g.recover(time.Now()) {
			t.Fatal("recovered before the window passed")
		}
		time.Sleep(time.Nanosecond)
		if !g.recover(time.Now()) || !g.healthy() || len(g.failures) != 0 || !g.next(time.Now()).IsZero() {
			t.Fatalf("after the window: %+v", g)
		}
	})
}

// Failures older than the window no longer count toward the cap.
func TestRestartGateWindowSlides(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := testGate()
		for range 3 {
			g.fail(time.Now(), nil)
		}
		time.Sleep(time.Minute + time.Second)
		for i := range 3 {
			if u := g.fail(time.Now(), nil); u != nil {
				t.Fatalf("failure %d after the window tripped: %v", i+1, u)
			}
		}
		if len(g.failures) != 3 {
			t.Fatalf("%d failures kept", len(g.failures))
		}
	})
}

// The backoff doubles from Initial up to Max, holds starts back until it
// has passed, and resets after a start succeeds.
func TestRestartGateBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := testGate()
		if !g.next(time.Now()).IsZero() {
			t.Fatal("a fresh gate holds starts back")
		}
		want := []time.Duration{50, 100, 200, 400, 400}
		for i, w := range want {
			w *= time.Millisecond
			start := time.Now()
			if got := g.startFailed(start); got != w {
				t.Fatalf("failure %d: backoff %v, want %v", i+1, got, w)
			}
			if next := g.next(time.Now()); !next.Equal(start.Add(w)) {
				t.Fatalf("failure %d: next start at %v, want %v", i+1, next, start.Add(w))
			}
			time.Sleep(w)
			if !g.next(time.Now()).IsZero() {
				t.Fatalf("failure %d: still held back after %v", i+1, w)
			}
		}
		g.started()
		if got := g.startFailed(time.Now()); got != 50*time.Millisecond {
			t.Fatalf("after a success the backoff is %v", got)
		}
	})
}

// A negative MaxRestarts disables the cap.
func TestRestartGateDisabled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, _ := Config{MaxRestarts: -1}.withDefaults()
		g := newRestartGate(cfg)
		for range 1000 {
			if g.fail(time.Now(), nil) != nil {
				t.Fatal("tripped with the cap disabled")
			}
		}
	})
}

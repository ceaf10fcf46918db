package spawn

import (
	"runtime"
	"sync"
)

// spawner is the goroutine whose locked thread forks every child.
var spawner struct {
	mu   sync.Mutex
	reqs chan func() // nil while no spawner runs
	live int         // children forked (or being forked) on it, not yet reaped
}

// Start runs start (which forks the child, such as an exec.Cmd's Start)
// on the spawner's thread and returns its error. When it succeeds, Done
// must be called once the child has been reaped.
func Start(start func() error) error {
	spawner.mu.Lock()
	if spawner.reqs == nil {
		spawner.reqs = make(chan func())
		go loop(spawner.reqs)
	}
	spawner.live++
	reqs := spawner.reqs
	spawner.mu.Unlock()
	errc := make(chan error, 1)
	reqs <- func() { errc <- start() }
	err := <-errc
	if err != nil {
		Done()
	}
	return err
}

// Done releases the spawner's thread from a reaped child (one that Start
// forked); the spawner ends when no child of its thread is left.
func Done() {
	spawner.mu.Lock()
	defer spawner.mu.Unlock()
	if spawner.live--; spawner.live == 0 {
		close(spawner.reqs)
		spawner.reqs = nil
	}
}

// loop is the spawner: it runs the forks sent on reqs on its locked
// thread until reqs is closed.
func loop(reqs <-chan func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for f := range reqs {
		f()
	}
}

//go:build unix

package session

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/gomonty/monty/worker"
)

// Kill alone leaves nothing behind: the worker is reaped (the process's
// reaper waits for it) and its pipes are released once it is gone, without
// Kill waiting for either. Before, Kill without Close left the three pipe
// ends open until the garbage collector found them, and the worker's share
// of the enlarged-pipe budget (worker.growPipe) was never given back, so a
// program that killed and dropped sixteen sessions left every later
// worker with the kernel's smallest pipes.
func TestKillAloneReleasesTheWorker(t *testing.T) {
	s := realSession(t, Config{})
	p, ok := s.peer.(*worker.Process)
	if !ok {
		t.Skip("not a local worker")
	}
	s.Kill()
	<-p.Exited()
	// Released: the stdin pipe is closed (before, writing to it reported
	// the dead reader, EPIPE). Bounded polling: the release runs in the
	// background and there is nothing to wait on.
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := p.Conn().WriteFrame(nil)
		if errors.Is(err, os.ErrClosed) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed worker's pipes were not released: writing to its stdin gives %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

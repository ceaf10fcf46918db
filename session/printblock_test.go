//go:build unix

package session

import (
	"context"
	"errors"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/worker"
)

// A print function that blocks holds the turn (Go cannot interrupt it),
// but not the worker: the context ending mid-print kills the worker at
// once, and the turn fails with the killed *CanceledError as soon as the
// print function returns (Config.Print's doc says so).
func TestContextEndKillsTheWorkerWhilePrintBlocks(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	first := true
	s := realSession(t, Config{LineBufferedPrint: true, Print: func(message.PrintStream, string) {
		if first {
			first = false
			close(entered)
			<-release
		}
	}})
	p, ok := s.peer.(*worker.Process)
	if !ok {
		t.Skip("not a local worker")
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.Feed(ctx, "print('x')\nwhile True:\n    pass")
		errc <- err
	}()
	<-entered
	cancel()
	<-p.Exited() // killed while the print function still blocks
	close(release)
	err := <-errc
	var ce *CanceledError
	if !errors.As(err, &ce) || !ce.Killed {
		t.Fatalf("Feed: %v, want a killed *CanceledError", err)
	}
	if s.State() != StateClosed {
		t.Fatalf("state %v, want closed", s.State())
	}
}

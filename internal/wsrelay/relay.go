// Package wsrelay is test tooling: a WebSocket endpoint that bridges each
// connection to a fresh local `monty subprocess` worker, frame for frame.
// It stands in for a Monty server in the remote-transport tests and records
// how every connection ended, so tests can check that the client sent a
// Close frame on each teardown path.
//
// A Relay is safe for concurrent use.
package wsrelay

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
)

// End records how one relayed connection ended on the client's side.
type End struct {
	// Code and Reason are from the client's Close frame; Code is -1 when
	// the client dropped the connection without one, 0 when the relay ended
	// it first (the worker exited).
	Code   int
	Reason string
	// Frames counts the frames relayed from the client.
	Frames int
}

// Relay bridges WebSocket connections to local workers.
type Relay struct {
	// Worker configures each spawned worker.
	Worker worker.Config
	// MaxFrameLen caps frames; 0 means the protocol maximum.
	MaxFrameLen int

	mu   sync.Mutex
	ends []End
	wg   sync.WaitGroup
}

// Ends returns the recorded ends of finished connections, oldest first.
func (r *Relay) Ends() []End {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]End(nil), r.ends...)
}

// Wait blocks until every relayed connection has finished.
func (r *Relay) Wait() { r.wg.Wait() }

// ServeHTTP upgrades the request and relays it until either side ends.
func (r *Relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.wg.Add(1)
	defer r.wg.Done()
	c, err := ws.Accept(w, req, ws.AcceptOptions{MaxFrameLen: r.MaxFrameLen})
	if err != nil {
		return
	}
	cfg := r.Worker
	cfg.MaxFrameLen = r.MaxFrameLen
	p, err := worker.Start(context.Background(), cfg)
	if err != nil {
		c.CloseWith(1011, "worker failed to start")
		return
	}
	end := relay(c, p)
	r.mu.Lock()
	r.ends = append(r.ends, end)
	r.mu.Unlock()
}

func relay(c *ws.Conn, p *worker.Process) End {
	var end End
	workerDone := make(chan struct{})
	// worker → client
	go func() {
		defer close(workerDone)
		for {
			b, err := p.ReadFrame()
			if err != nil {
				return
			}
			if err := c.WriteFrame(b); err != nil {
				return
			}
		}
	}()
	// client → worker, on this goroutine
	clientDone := make(chan struct{})
	go func() {
		defer close(clientDone)
		for {
			b, err := c.ReadFrame()
			if err != nil {
				var ce *ws.CloseError
				if errors.As(err, &ce) {
					end.Code, end.Reason = ce.Code, ce.Reason
				}
				return
			}
			end.Frames++
			if err := p.WriteFrame(b); err != nil {
				return
			}
		}
	}()
	select {
	case <-clientDone:
		p.Close(context.Background())
		<-workerDone
		c.Close()
	case <-workerDone:
		c.CloseWith(1011, "worker exited")
		<-clientDone
		p.Close(context.Background())
	}
	return end
}

//go:build unix

package relay

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/worker"
)

// The relay's own work without the outer process hop: the parent session
// and child.Serve with the relay engine in this process, joined by
// in-memory pipes, the real worker behind. Its CPU and allocation
// profiles are montygo's per relayed turn (plus the parent's, which
// BenchmarkHostCalls/direct shows alone).
//
//	go test -run '^$' -bench InProcess -benchmem -cpuprofile cpu.out -memprofile mem.out ./child/relay/

// inprocPeer is the parent's end of an in-process child.
type inprocPeer struct {
	conn   *transport.Stream
	closer func()
	done   chan error
}

func (p *inprocPeer) Conn() transport.Conn { return p.conn }
func (p *inprocPeer) Kill() error          { p.closer(); return nil }
func (p *inprocPeer) Close(context.Context) error {
	p.closer()
	<-p.done
	p.done <- nil
	return nil
}
func (p *inprocPeer) Lost(l transport.Loss) error {
	return errors.New("in-process child lost: " + string(l.Op))
}

func inprocSession(b *testing.B, version uint32) *session.Session {
	bin := testenv.Worker(b)
	reqR, reqW := io.Pipe()
	evR, evW := io.Pipe()
	p := &inprocPeer{conn: transport.NewStream(evR, reqW, 0), done: make(chan error, 1)}
	p.closer = func() { reqW.Close(); evR.Close() }
	eng := New(Config{Worker: worker.Config{Binary: bin, Logger: quiet, SpinWait: 0}, Logger: quiet})
	go func() {
		conn := transport.NewStream(reqR, evW, 0)
		p.done <- child.Serve(context.Background(), conn, eng, child.Options{Logger: quiet})
		conn.Close()
	}()
	s, err := session.Attach(context.Background(), p, version, session.Config{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkInProcessHostCalls: 1,000 relayed host calls in one feed.
func BenchmarkInProcessHostCalls(b *testing.B) {
	for _, v := range []uint32{4, 2} {
		b.Run(map[uint32]string{4: "v4", 2: "v2"}[v], func(b *testing.B) {
			s := inprocSession(b, v)
			ctx := context.Background()
			opt := session.WithFunctions(session.NewRegistry().MustRegister("f", func(i int) int { return i }))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Run(ctx, "for i in range(1000): f(i)", opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

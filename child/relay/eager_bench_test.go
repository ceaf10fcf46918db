//go:build unix

package relay

import (
	"context"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// The eager-await emulation's cost per host call, through `montygo
// subprocess --protocol 4` relaying to the released worker: one feed with
// one call per op, answered with a plain value (no await in the session:
// no probe), answered eagerly (`await f()`: probe kept), and answered with
// a plain value in a session whose source holds await (probe, then a
// restore).
//
//	go test -run '^$' -bench EagerProbe -benchmem ./child/relay/
func BenchmarkEagerProbe(b *testing.B) {
	cases := []struct {
		name, setup, code string
		eager             bool
	}{
		{"no-await", "", "x = f()", false},
		{"awaited", "", "x = await f()", true},
		{"plain-in-await-session", "async def g():\n    return await f()", "x = f()", false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			s, err := session.Start(ctx, session.Launch{
				Launcher:        session.ProcessLauncher{Worker: worker.Config{Binary: montygo(b), Args: []string{"subprocess", "--protocol", "4"}, Logger: quiet}},
				ProtocolVersion: 4,
			}, session.Config{Logger: quiet, PassSuspensions: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			if c.setup != "" {
				if _, err := s.Do(ctx, &message.Feed{Code: c.setup}); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				ev, err := s.Do(ctx, &message.Feed{Code: c.code})
				if err != nil {
					b.Fatal(err)
				}
				fc, ok := ev.Body.(*message.FunctionCall)
				if !ok || fc.AllowEagerAwait != c.eager {
					b.Fatalf("%s: %+v", c.name, ev.Body)
				}
				var req message.Request
				if c.eager {
					r := &message.ResumeFutures{}
					r.Results = []message.FutureResult{{CallID: fc.CallID, Result: &message.ExtResult{Kind: message.ResultReturn, Value: r.Values.Add(value.Int(1))}}}
					req = r
				} else {
					r := &message.ResumeCall{CallID: fc.CallID, Result: &message.ExtResult{Kind: message.ResultReturn}}
					r.Result.Value = r.Values.Add(value.Int(1))
					req = r
				}
				if ev, err = s.Do(ctx, req); err != nil {
					b.Fatal(err)
				}
				if _, ok := ev.Body.(*message.Complete); !ok {
					b.Fatalf("%s: answer: %+v", c.name, ev.Body)
				}
			}
		})
	}
}

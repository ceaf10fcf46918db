//go:build unix

package relay

import (
	"context"
	"errors"
	"testing"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// Config.Start replaces session.Start: the engine runs on the session it
// hands out (with the Configure's limits and the relay's print sink and
// suspension pass-through), and Close calls its release instead of
// stopping the worker.
func TestConfigStartProvidesTheInnerSession(t *testing.T) {
	bin := testenv.Worker(t)
	var got session.Config
	released := 0
	eng := New(Config{Logger: quiet, Start: func(ctx context.Context, cfg session.Config) (Inner, error) {
		got = cfg
		s, err := session.Start(ctx, session.Launch{Launcher: session.ProcessLauncher{Worker: worker.Config{Binary: bin, Logger: quiet}}}, cfg)
		if err != nil {
			return nil, err
		}
		return releaseCounter{s, &released}, nil
	}})
	ctx := context.Background()
	mem := uint64(32 << 20)
	if err := eng.Configure(ctx, &message.Configure{ProtocolVersion: 4, ScriptName: "x.py",
		Limits: &message.ResourceLimits{MaxMemoryBytes: &mem}}); err != nil {
		t.Fatal(err)
	}
	if got.Limits.MaxMemory != mem || !got.PassSuspensions || got.Print == nil || got.ScriptName != "x.py" {
		t.Fatalf("Start received %+v", got)
	}
	ev, err := eng.Feed(ctx, &message.Feed{Code: "20 + 22"}, nil)
	if c, ok := ev.(*message.Complete); err != nil || !ok || c.Values.Repr(c.Value) != "42" {
		t.Fatalf("feed: %v %v", ev, err)
	}
	if err := eng.Close(); err != nil || released != 1 {
		t.Fatalf("Close: %v, released %d times", err, released)
	}

	// A failing Start ends the child as any failed worker start does.
	boom := errors.New("no worker for you")
	eng = New(Config{Logger: quiet, Start: func(context.Context, session.Config) (Inner, error) {
		return nil, boom
	}})
	if err := eng.Configure(ctx, &message.Configure{ProtocolVersion: 4}); !errors.Is(err, boom) {
		t.Fatalf("Configure with a failing Start: %v", err)
	}
	eng.Close()
}

// releaseCounter counts the Close calls that end the inner session.
type releaseCounter struct {
	*session.Session
	n *int
}

func (r releaseCounter) Close() error { *r.n++; return r.Session.Close() }

//go:build unix

package relay

import (
	"testing"

	"github.com/gomonty/monty/message"
)

// The relay stands in for a worker, which has no duration limit unless
// its Configure sets one: a Configure without max_duration_micros leaves
// the inner worker without one, although a session's zero Limits now means
// DefaultMaxDuration. Before, the inner session sent 60 s and the worker
// stamped it.
func TestRelayConfigureWithoutDurationSendsNone(t *testing.T) {
	mem := uint64(64 << 20)
	for _, lim := range []*message.ResourceLimits{nil, {MaxMemoryBytes: &mem}} {
		s := serve(t)
		ev, _ := s.do(t, &message.Configure{ProtocolVersion: 4, ScriptName: "main.py", Limits: lim})
		if _, ok := ev.Body.(*message.Ok); !ok {
			t.Fatalf("Configure: %+v", ev.Body)
		}
		ev, _ = s.do(t, &message.Feed{Code: "1"})
		if _, ok := ev.Body.(*message.Complete); !ok {
			t.Fatalf("feed: %s", describe(ev.Body))
		}
		if ev.MaxDurationMicros != nil {
			t.Errorf("%+v: stamped max_duration_micros %v, want none", lim, ptr(ev.MaxDurationMicros))
		}
	}
}

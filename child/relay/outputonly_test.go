//go:build unix

package relay

import (
	"strings"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
)

// A name lookup answered with an output-only value (repr, cycle): the
// ResumeNameLookup converts off the wire, so it is no protocol violation
// ("invalid result: …" is for an answer that does not, contract §8); the
// sandbox refuses the value when it binds it (contract §5, the VM's
// conversion error) and raises a RuntimeError at the lookup, which the
// code may catch. The released worker does that at protocol 2 and the
// relay passes it on at 4 and 5 unchanged: this pins it.
func TestOutputOnlyLookupAnswerRaisesAtTheLookup(t *testing.T) {
	values := map[string]func(g *value.Graph) value.NodeID{
		"repr":  func(g *value.Graph) value.NodeID { return g.Add(value.Repr("<thing>")) },
		"cycle": func(g *value.Graph) value.NodeID { return g.Add(value.List(g.Add(value.Cycle("[...]")))) },
	}
	s := serve(t)
	s.do(t, &message.Configure{ProtocolVersion: protocol.Version})
	do4 := func(r message.Request) *message.ChildEvent { ev, _ := s.do(t, r); return ev }
	do5 := serve5(t)
	if _, ok := do5(configure5(nil, nil)).Body.(*message.Ok); !ok {
		t.Fatal("Configure at 5")
	}
	for version, do := range map[int]func(message.Request) *message.ChildEvent{4: do4, 5: do5} {
		for kind, mk := range values {
			answer := func(code string) *message.ChildEvent {
				t.Helper()
				if ev := do(&message.Feed{Code: code}); ev.Body.EventKind() != message.KindNameLookup {
					t.Fatalf("%d %s: Feed: %s", version, kind, describe(ev.Body))
				}
				r := &message.ResumeNameLookup{Kind: message.LookupValue}
				r.Value = mk(&r.Values)
				return do(r)
			}
			// Caught at the lookup: the feed goes on.
			ev := answer("try:\n    v = missing_" + kind + "\nexcept RuntimeError as e:\n    v = 'caught: ' + str(e)\nv")
			c, ok := ev.Body.(*message.Complete)
			if !ok {
				t.Fatalf("%d %s: %s, want the RuntimeError caught", version, kind, describe(ev.Body))
			}
			if got := c.Values.Repr(c.Value); !strings.Contains(got, "caught: invalid name lookup result: ") || !strings.Contains(got, "is not a valid input value") {
				t.Errorf("%d %s: %s", version, kind, got)
			}
			// Uncaught: the feed ends with it, and no feed is left suspended.
			ev = answer("missing_" + kind + "_2")
			e, ok := ev.Body.(*message.Error)
			if !ok || e.Exception.Type != "RuntimeError" || strings.HasPrefix(e.Exception.Msg(), "protocol violation") ||
				!strings.Contains(e.Exception.Msg(), "is not a valid input value") {
				t.Fatalf("%d %s: %s, want the sandbox's RuntimeError", version, kind, describe(ev.Body))
			}
			if ev := do(&message.AbortFeed{Exception: message.NewException("RuntimeError", "abort")}); !strings.Contains(describe(ev.Body), "AbortFeed without a suspended feed") {
				t.Errorf("%d %s: AbortFeed after the error: %s", version, kind, describe(ev.Body))
			}
		}
	}
}

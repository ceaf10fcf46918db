//go:build unix

package server

import (
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/value"
)

// A suspended session is where a hostile client has the most to try: a
// worker waits for its answer. Every request the contract forbids there,
// sent over the socket (a flood of Feeds among them), is refused with the
// session left suspended and its suspension count untouched, so
// max_suspensions still aborts the feed at its limit; a client that then
// drops the connection while suspended gives its worker back, and the
// next session on that worker sees nothing of the last one.
func TestHostileWhileSuspended(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxSessions = 1; c.Prewarm = 1 })
	c := dial(t, ts.URL, 4, ws.DialOptions{})
	configure(t, c, 4, &message.ResourceLimits{MaxSuspensions: value.Ptr[uint64](2)})
	repr(t, c, "secret = 42")
	code := "from pathlib import Path\n[Path('/a').exists(), Path('/b').exists(), Path('/c').exists()]"
	oc, ok := do(t, c, &message.Feed{Code: code}).Event.Body.(*message.OsCall)
	if !ok {
		t.Fatal("the feed did not suspend")
	}
	refused := []struct {
		req  message.Request
		want string
	}{
		{&message.Feed{Code: "secret"}, "Feed without a session ready for input"},
		{&message.Configure{ProtocolVersion: 4}, "Configure while a session already exists"},
		{&message.Load{State: []byte("MONTY\x00")}, "Load requires a session that has not started"},
		{&message.Reset{}, "Reset is refused"},
		{&message.Shutdown{}, "Shutdown is refused"},
		{resumeBool(oc.CallID+1, true), "ResumeCall call_id"},
		{&message.ResumeNameLookup{}, "ResumeNameLookup without a suspended name lookup"},
		{&message.ResumeFutures{}, "ResumeFutures without suspended futures"},
	}
	for _, r := range refused {
		wantPrefix(t, describe(do(t, c, r.req).Event), "Error RuntimeError: protocol violation: "+r.want)
	}
	for range 200 {
		wantPrefix(t, describe(do(t, c, &message.Feed{Code: "1"}).Event), "Error RuntimeError: protocol violation: Feed without")
	}
	// Still suspended at the same call, with one suspension counted: the
	// second passes, the third is over the limit.
	oc2, ok := do(t, c, resumeBool(oc.CallID, true)).Event.Body.(*message.OsCall)
	if !ok || oc2.Path != "/b" {
		t.Fatalf("the refusals disturbed the suspension: %v", oc2)
	}
	if got := describe(do(t, c, resumeBool(oc2.CallID, true)).Event); got != "Error RuntimeError: suspension limit 2 exceeded" {
		t.Fatalf("after 200 refused requests the third suspension gave %s", got)
	}
	// Suspended again, then gone without a Close frame.
	if _, ok := do(t, c, &message.Feed{Code: "from pathlib import Path\nPath('/a').exists()"}).Event.Body.(*message.OsCall); !ok {
		t.Fatal("the feed did not suspend")
	}
	c.Conn.CloseWith(4999, "gone")
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="client_dropped"} 1`)
	waitMetric(t, ts, "monty_server_sessions_active 0")
	waitMetric(t, ts, "monty_server_workers_busy 0")
	// The one worker serves the next session, with nothing of the last.
	d := dialConfigured(t, ts.URL, 4)
	ev := do(t, d, &message.Feed{Code: "secret"}).Event
	if nl, ok := ev.Body.(*message.NameLookup); !ok || nl.Name != "secret" {
		t.Fatalf("the next session's 'secret': %s", describe(ev))
	}
}

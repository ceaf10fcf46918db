//go:build unix

package session_test

import (
	"context"
	"sync"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/value"
)

// A Configure sent through Do that the worker accepts (here after a Reset,
// as a relay reconfiguring its inner session does) is what a resume
// configures the new replica with, not the session's Config: the replica
// is where the old one was. Before, the resume sent Config's Configure,
// and the restored session ran under the limits the caller had replaced.
// The endpoints are scripted: the montygo server refuses every Configure
// after the first (TestRemoteConfigureThroughDoUnderDrain), so it never
// accepts one through Do.
func TestRemoteResumeKeepsConfigureSentThroughDo(t *testing.T) {
	depth, susp := uint64(77), uint64(12)
	want := &message.Configure{ScriptName: "relayed.py", ProtocolVersion: 4,
		Limits: &message.ResourceLimits{MaxRecursionDepth: &depth, MaxSuspensions: &susp}}
	dump := []byte("the old replica's dump")
	// A accepts everything, then drains at the first Feed.
	a := newScripted(t, func(req message.Request) []message.Event {
		if _, ok := req.(*message.Feed); ok {
			d := dump
			return []message.Event{&message.ShutdownDump{Dump: &d}}
		}
		return []message.Event{&message.Ok{}}
	})
	// B records the Configure it is sent, loads the dump and completes
	// the Feed sent again.
	var mu sync.Mutex
	var got []*message.Configure
	b := newScripted(t, func(req message.Request) []message.Event {
		switch r := req.(type) {
		case *message.Configure:
			mu.Lock()
			got = append(got, r)
			mu.Unlock()
		case *message.Feed:
			c := &message.Complete{}
			c.Value = c.Values.Add(value.Int(1))
			return []message.Event{c}
		}
		return []message.Event{&message.Ok{}}
	})
	ctx := context.Background()
	for _, through := range []bool{false, true} {
		mu.Lock()
		got = nil
		mu.Unlock()
		s := startRemote(t, session.RemoteLauncher{URL: a.url, Pick: func() string { return b.url }}, session.Config{ScriptName: "own.py"})
		if through {
			for _, req := range []message.Request{&message.Reset{}, want} {
				if ev, err := s.Do(ctx, req); err != nil || ev.Body.EventKind() != message.KindOk {
					t.Fatalf("Do(%s): %v, %v", req.RequestKind(), ev, err)
				}
			}
			// The caller may reuse its message: the session keeps its own copy.
			want.ScriptName = "reused.py"
		}
		if _, err := s.Run(ctx, "1"); err != nil {
			t.Fatalf("through Do %v: Run: %v", through, err)
		}
		if s.Resumed() != 1 {
			t.Fatalf("through Do %v: %d resumes, want 1", through, s.Resumed())
		}
		mu.Lock()
		if len(got) != 1 {
			t.Fatalf("through Do %v: B was sent %d Configures, want 1", through, len(got))
		}
		c := got[0]
		mu.Unlock()
		if !through {
			if c.ScriptName != "own.py" {
				t.Errorf("without a Configure through Do, the resume configured script %q, want the Config's own.py", c.ScriptName)
			}
			continue
		}
		if c.ScriptName != "relayed.py" || c.Limits == nil || c.Limits.MaxRecursionDepth == nil || *c.Limits.MaxRecursionDepth != depth ||
			c.Limits.MaxSuspensions == nil || *c.Limits.MaxSuspensions != susp {
			t.Errorf("the resume configured %+v (limits %+v), want the Configure sent through Do (script relayed.py, recursion depth %d, suspensions %d)",
				c, c.Limits, depth, susp)
		}
	}
}

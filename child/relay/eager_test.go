//go:build unix

package relay

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

func call(t *testing.T, ev *message.ChildEvent, what string) *message.FunctionCall {
	t.Helper()
	fc, ok := ev.Body.(*message.FunctionCall)
	if !ok {
		t.Fatalf("%s: expected a FunctionCall, got %s", what, describe(ev.Body))
	}
	return fc
}

func eagerReturn(id uint32, v int64) *message.ResumeFutures {
	r := &message.ResumeFutures{}
	r.Results = []message.FutureResult{{CallID: id, Result: &message.ExtResult{Kind: message.ResultReturn, Value: r.Values.Add(value.Int(v))}}}
	return r
}

func returns(id uint32, v int64) *message.ResumeCall {
	r := &message.ResumeCall{CallID: id, Result: &message.ExtResult{Kind: message.ResultReturn}}
	r.Result.Value = r.Values.Add(value.Int(v))
	return r
}

func completes(t *testing.T, ev *message.ChildEvent, what, want string) {
	t.Helper()
	c, ok := ev.Body.(*message.Complete)
	if !ok || c.Values.Repr(c.Value) != want {
		t.Fatalf("%s: expected Complete(%s), got %s", what, want, describe(ev.Body))
	}
}

func violates(t *testing.T, ev *message.ChildEvent, what, want string) {
	t.Helper()
	e, ok := ev.Body.(*message.Error)
	if !ok || e.Exception.Msg() != "protocol violation: "+want {
		t.Fatalf("%s: expected the violation %q, got %s", what, want, describe(ev.Body))
	}
}

// At protocol 4 over the protocol-2 worker the relay flags a call awaited
// straight away, takes the one-entry eager answer, keeps the suspension
// through every rejected reply and a Dump, and restores it for a plain
// answer.
func TestEagerAwaitEmulated(t *testing.T) {
	s := serve(t)
	s.do(t, &message.Configure{ProtocolVersion: 4})
	fc := call(t, first(s.do(t, &message.Feed{Code: "a = await f()\nb = await f()\na + b"})), "Feed two awaits")
	if !fc.AllowEagerAwait {
		t.Fatal("`a = await f()` not flagged")
	}
	fc2 := call(t, first(s.do(t, eagerReturn(fc.CallID, 10))), "eager answer 10")
	if !fc2.AllowEagerAwait || fc2.CallID <= fc.CallID {
		t.Fatalf("second await: %s", describe(fc2))
	}
	// Rejected eager replies (Serve's checks) leave the held suspension.
	two := eagerReturn(fc2.CallID, 1)
	two.Results = append(two.Results, two.Results[0])
	for _, bad := range []struct {
		req  *message.ResumeFutures
		want string
	}{
		{&message.ResumeFutures{}, "eager ResumeFutures must contain exactly the suspended call id"},
		{eagerReturn(fc2.CallID+5, 1), "eager ResumeFutures must contain exactly the suspended call id"},
		{two, "eager ResumeFutures must contain exactly the suspended call id"},
		{&message.ResumeFutures{Results: []message.FutureResult{{CallID: fc2.CallID}}}, "invalid results: missing required field FutureResult.result"},
		{&message.ResumeFutures{Results: []message.FutureResult{{CallID: fc2.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: fc2.CallID}}}}, "eager coroutine must resolve to a value or exception"},
		{&message.ResumeFutures{Results: []message.FutureResult{{CallID: fc2.CallID, Result: &message.ExtResult{Kind: message.ResultNotFound, Name: "f"}}}}, "eager coroutine must resolve to a value or exception"},
	} {
		violates(t, first(s.do(t, bad.req)), "bad eager reply", bad.want)
	}
	// A Dump while held is the dump of the FunctionCall: loaded in
	// another child (pinned to 4, Load first) it re-announces the same
	// call, flagged again.
	ev, _ := s.do(t, &message.Dump{})
	dr, ok := ev.Body.(*message.DumpResult)
	if !ok {
		t.Fatalf("Dump: %s", describe(ev.Body))
	}
	o := serveWith(t, child.Options{Versions: []uint32{4}})
	lc := call(t, first(o.do(t, &message.Load{State: dr.State})), "Load of the held dump")
	if lc.CallID != fc2.CallID || !lc.AllowEagerAwait {
		t.Fatalf("Load re-announced %s, want call %d flagged", describe(lc), fc2.CallID)
	}
	completes(t, first(o.do(t, eagerReturn(lc.CallID, 5))), "eager answer after Load", "15")
	// The held child: an ordinary ResumeCall restores the call first; its
	// error is raised at the call.
	raise := &message.ResumeCall{CallID: fc2.CallID, Result: &message.ExtResult{Kind: message.ResultError, Error: message.NewException("ValueError", "no")}}
	ev, _ = s.do(t, raise)
	if e, ok := ev.Body.(*message.Error); !ok || e.Exception.Type != "ValueError" || e.Exception.Msg() != "no" {
		t.Fatalf("ResumeCall with an error on a held call: %s", describe(ev.Body))
	}
	completes(t, first(s.do(t, &message.Feed{Code: "a"})), "a afterwards", "10")
	if s.eng.eg.probes != 2 || o.eng.eg.probes != 1 {
		t.Fatalf("probes %d and %d, want 2 and 1", s.eng.eg.probes, o.eng.eg.probes)
	}
}

// A call that is not awaited straight away goes out unflagged, and the
// code the probe ran ahead runs once for the parent: its print comes
// exactly once, after the parent's answer.
func TestEagerNotAwaitedRestored(t *testing.T) {
	s := serve(t)
	ms := uint32(0) // line buffering: the restore replays this Configure
	s.do(t, &message.Configure{ProtocolVersion: 4, PrintFlushIntervalMs: &ms})
	fc := call(t, first(s.do(t, &message.Feed{Code: "y = f()\nprint('between')\nz = await y\nz"})), "Feed")
	if fc.AllowEagerAwait {
		t.Fatal("a call with a print before its await was flagged")
	}
	violates(t, first(s.do(t, eagerReturn(fc.CallID, 1))), "eager reply to an unflagged call", "ResumeFutures without suspended futures")
	ev, prints := s.do(t, &message.ResumeCall{CallID: fc.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: fc.CallID}})
	if rf, ok := ev.Body.(*message.ResolveFutures); !ok || !slices.Equal(rf.PendingCallIDs, []uint32{fc.CallID}) {
		t.Fatalf("after a future: %s", describe(ev.Body))
	}
	if strings.Join(prints, "") != "between\n" {
		t.Fatalf("prints %q, want the one line once", prints)
	}
	completes(t, first(s.do(t, &message.ResumeFutures{Results: eagerReturn(fc.CallID, 7).Results, Values: eagerReturn(fc.CallID, 7).Values})), "ResumeFutures", "7")

	// Two calls before the await: neither is awaited straight away.
	fc = call(t, first(s.do(t, &message.Feed{Code: "import asyncio\nr = await asyncio.gather(g(), g())\nr"})), "gather")
	if fc.AllowEagerAwait {
		t.Fatal("a gathered call was flagged")
	}
}

// Code with no await is never probed, and neither is any session at
// protocol 2.
func TestEagerNoAwaitNoProbe(t *testing.T) {
	s := serve(t)
	s.do(t, &message.Configure{ProtocolVersion: 4})
	fc := call(t, first(s.do(t, &message.Feed{Code: "x = f()\nx"})), "Feed")
	if fc.AllowEagerAwait {
		t.Fatal("plain call flagged")
	}
	completes(t, first(s.do(t, returns(fc.CallID, 3))), "ResumeCall", "3")
	if s.eng.eg.probes != 0 {
		t.Fatalf("%d probes for code without await", s.eng.eg.probes)
	}
	e := New(Config{})
	e.eagerConfigure(&message.Configure{ProtocolVersion: 2})
	e.eagerScan("await f()")
	if e.emulatesEager() {
		t.Fatal("emulation on for a protocol-2 parent")
	}
}

// A probe that outruns its budget kills the inner worker; a fresh one
// takes the dump, and the session goes on exactly where it was.
func TestEagerProbePastBudget(t *testing.T) {
	old := probeBudget
	probeBudget = time.Millisecond
	t.Cleanup(func() { probeBudget = old })
	s := serve(t)
	s.do(t, &message.Configure{ProtocolVersion: 4, ScriptName: "budget.py"})
	s.do(t, &message.Feed{Code: "async def h():\n    return await g()\nk = 2"})
	pid := s.eng.Pid()
	fc := call(t, first(s.do(t, &message.Feed{Code: "y = f()\nn = 0\nfor i in range(3000000):\n    n += 1\ny + n * k"})), "Feed")
	if fc.AllowEagerAwait {
		t.Fatal("flagged after a probe past its budget")
	}
	if s.eng.Pid() == pid {
		t.Fatal("the inner worker was not replaced")
	}
	completes(t, first(s.do(t, returns(fc.CallID, 0))), "ResumeCall", "6000000")
	completes(t, first(s.do(t, &message.Feed{Code: "k"})), "the session's globals", "2")
}

// The released worker's refusal of an older dump is worded as the
// contract words it; a newer dump keeps the worker's own text.
func TestLoadRefusalWorded(t *testing.T) {
	s := serve(t)
	s.do(t, &message.Configure{ProtocolVersion: 4})
	s.do(t, &message.Feed{Code: "x = 1"})
	ev, _ := s.do(t, &message.Dump{})
	st := ev.Body.(*message.DumpResult).State
	v, ok := dumpVersion(st)
	if !ok || v == 0 {
		t.Fatalf("dump header %q", st[:min(8, len(st))])
	}
	patched := func(to uint16) []byte {
		b := slices.Clone(st)
		binary.LittleEndian.PutUint16(b[6:8], to)
		return b
	}
	o := serveWith(t, child.Options{Versions: []uint32{4}})
	violates(t, first(o.do(t, &message.Load{State: patched(v - 1)})), "older dump",
		"failed to load session: dump format version "+itoa(v-1)+" is older than "+itoa(v)+", the oldest this build reads")
	ev, _ = o.do(t, &message.Load{State: patched(v + 1)})
	if e, ok := ev.Body.(*message.Error); !ok || strings.Contains(e.Exception.Msg(), "older") ||
		!strings.HasPrefix(e.Exception.Msg(), "protocol violation: failed to load session: dump format version "+itoa(v+1)) {
		t.Fatalf("newer dump: %s", describe(ev.Body))
	}
	if _, ok := first(o.do(t, &message.Load{State: st})).Body.(*message.Ok); !ok {
		t.Fatal("the real dump does not load after the refusals")
	}
	// Only the worker's own wording for the version in the header is
	// rewritten.
	other := &message.Error{Exception: message.NewException("RuntimeError", loadRefusalPrefix+"3, this build reads 8")}
	if rewordLoadRefusal(patched(4), other) != other {
		t.Fatal("rewrote a refusal naming another version than the header")
	}
}

func first(ev *message.ChildEvent, _ []string) *message.ChildEvent { return ev }

func itoa(v uint16) string { return strconv.Itoa(int(v)) }

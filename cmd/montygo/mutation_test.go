//go:build unix

package main

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	codecv2 "github.com/gomonty/monty/codec/codecv2"
	"github.com/gomonty/monty/internal/codectest"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The Go child must answer a malformed request as the worker does: the
// same protocol-2 requests with one byte changed, nudged, inserted or
// deleted, or with fields duplicated, dropped, moved or emptied
// (codectest.Mutate),
// sent to `montygo subprocess --protocol 2` and to the released worker,
// get the same events (a Feed holding values of many shapes, and answers
// to a host call, to a name lookup and to futures holding them, and a Feed
// before any other).
func TestSubprocessMatchesTheWorkerOnMutatedRequests(t *testing.T) {
	real := testenv.Worker(t)
	relay := relayBinary(t)
	var g value.Graph
	d := g.Add(value.DateNode(value.Date{Year: 2024, Month: 12, Day: 25}))
	s := g.Add(value.Str("héllo"))
	i := g.Add(value.Int(-300))
	nt := g.Add(value.NamedTupleNode("P", []string{"a", "b"}, s, i))
	dict := g.Add(value.Dict(value.Pair{Key: s, Value: d}, value.Pair{Key: i, Value: nt}))
	root := g.Add(value.List(dict, g.Add(value.Float(1.5)), g.Add(value.Bytes([]byte{1, 2}))))
	msg := "bad"
	scenarios := []struct {
		name, setup string // setup: code fed first, suspending; "-" for none at all
		frames      int
		req         func(ids []uint32) message.Request
	}{
		{"configured", "-", 200, func([]uint32) message.Request {
			return &message.Feed{Code: "v", Values: g, Inputs: []message.NamedRef{{Name: "v", Value: root}}}
		}},
		{"futures", "import asyncio\nasync def main():\n    return await asyncio.gather(f(), g())\nawait main()", 300, func(ids []uint32) message.Request {
			r := &message.ResumeFutures{Values: g}
			r.Results = []message.FutureResult{{CallID: ids[0], Result: &message.ExtResult{Kind: message.ResultReturn, Value: root}},
				{CallID: ids[1], Result: &message.ExtResult{Kind: message.ResultError, Error: message.NewException("ValueError", msg)}}}
			return r
		}},
		{"feed", "", 400, func([]uint32) message.Request {
			return &message.Feed{Code: "v", Values: g, Inputs: []message.NamedRef{{Name: "v", Value: root}}}
		}},
		{"resume", "f(1)", 300, func(ids []uint32) message.Request {
			return &message.ResumeCall{CallID: ids[0], Values: g, Result: &message.ExtResult{Kind: message.ResultReturn, Value: root}}
		}},
		{"resume error", "f(1)", 200, func(ids []uint32) message.Request {
			return &message.ResumeCall{CallID: ids[0], Result: &message.ExtResult{Kind: message.ResultError,
				Error: &message.RaisedException{Type: "ValueError", Message: &msg, Traceback: []message.StackFrame{{Filename: "h.py", Start: message.CodeLoc{Line: 1, Column: 1}, End: message.CodeLoc{Line: 1, Column: 2}}}}}}
		}},
		{"lookup", "x", 200, func([]uint32) message.Request {
			return &message.ResumeNameLookup{Kind: message.LookupValue, Values: g, Value: root}
		}},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var sides [2]*wireSession
			var base []byte
			ready := func() {
				var ids []uint32
				for k, args := range [][]string{{"--protocol", "2"}, nil} {
					bin := relay
					if args == nil {
						bin = real
					}
					w := startWire(t, bin, args...)
					w.turn(t, &message.Configure{ProtocolVersion: 2, ScriptName: "main.py"})
					if sc.setup != "-" {
						code := sc.setup
						if code == "" {
							code = "0"
						}
						evs := w.turn(t, &message.Feed{Code: code})
						ids = ids[:0]
						// Answer host calls with futures until the feed
						// suspends otherwise (the gather scenario).
						for c, ok := evs[len(evs)-1].Body.(*message.FunctionCall); ok; c, ok = evs[len(evs)-1].Body.(*message.FunctionCall) {
							ids = append(ids, c.CallID)
							if sc.name != "futures" {
								break
							}
							evs = w.turn(t, &message.ResumeCall{CallID: c.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: c.CallID}})
						}
					}
					sides[k] = w
				}
				ids = append(ids, 0, 0)
				var err error
				if base, err = codecv2.AppendRequest(nil, &message.ParentRequest{Body: sc.req(ids)}); err != nil {
					t.Fatal(err)
				}
			}
			ready()
			for range sc.frames {
				f := codectest.Mutate(rng, base)
				var evs [2][]*message.ChildEvent
				for k, w := range sides {
					evs[k] = w.turnRaw(t, f)
					if d, ok := evs[k][len(evs[k])-1].Body.(*message.DumpResult); ok {
						d.State = nil // a dump holds the run's measured time
					}
				}
				if !sameEvents(evs[0], evs[1]) && !sameIDSet(evs[0], evs[1]) {
					t.Fatalf("% x:\nmontygo %s\nworker  %s", f, render(evs[0]), render(evs[1]))
				}
				if e, ok := evs[1][len(evs[1])-1].Body.(*message.Error); !ok || !strings.Contains(e.Exception.Msg(), "malformed request") {
					for _, w := range sides { // the request may have moved the session on
						_ = w.cmd.Process.Kill()
						_ = w.cmd.Wait()
					}
					ready()
				}
			}
		})
	}
}

// sameIDSet reports two turns that differ only in the order of the call
// ids a worker lists, in an Error ("unknown call_id 9, expected one of:
// [0, 1]") or a ResolveFutures: the worker lists them in its hash set's
// order, which varies from process to process.
func sameIDSet(child, worker []*message.ChildEvent) bool {
	if c, ok := child[len(child)-1].Body.(*message.ResolveFutures); ok {
		w, ok := worker[len(worker)-1].Body.(*message.ResolveFutures)
		if !ok || len(child) != len(worker) {
			return false
		}
		a, b := slices.Clone(c.PendingCallIDs), slices.Clone(w.PendingCallIDs)
		slices.Sort(a)
		slices.Sort(b)
		return slices.Equal(a, b)
	}
	c, ok1 := child[len(child)-1].Body.(*message.Error)
	w, ok2 := worker[len(worker)-1].Body.(*message.Error)
	if !ok1 || !ok2 {
		return false
	}
	ids := func(m string) (string, []string) {
		head, list, ok := strings.Cut(m, "expected one of: [")
		if !ok {
			return m, nil
		}
		s := strings.Split(strings.TrimSuffix(list, "]"), ", ")
		slices.Sort(s)
		return head, s
	}
	ch, cs := ids(c.Exception.Msg())
	wh, ws := ids(w.Exception.Msg())
	return cs != nil && ch == wh && slices.Equal(cs, ws)
}

package codecv2

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/codectest"
	"github.com/gomonty/monty/message"
)

// TestLiveMutatedRequests sends the worker requests, each a frame with one
// byte changed, inserted, deleted or nudged, or with one to three fields
// duplicated, dropped, moved, emptied or set to a boundary value
// (codectest.Mutate), and requires our decoder's verdict on
// each to be the worker's: the same decode error text; a conversion error
// where the worker reports one that is not a malformed request (the texts
// of those are the session's business); or no error where the worker
// decodes the request. The frames: a Configure with limits, a Feed holding
// a value of every shape; on a worker suspended in a host call, a
// ResumeCall returning one, a ResumeCall raising an exception with a
// traceback and unicode data, and an AbortFeed; on one suspended in a name
// lookup, the answer with a value of every shape. This is how the worker's MontyObject merge semantics
// (mergeCases) were found.
func TestLiveMutatedRequests(t *testing.T) {
	g, root := codectest.EveryShape()
	msg, preview := "bad", "f(1)"
	exc := &message.RaisedException{Type: "UnicodeDecodeError", Message: &msg,
		Traceback: []message.StackFrame{{Filename: "host.py", Start: message.CodeLoc{Line: 1, Column: 1}, End: message.CodeLoc{Line: 1, Column: 5}, FrameName: &msg, PreviewLine: &preview}},
		Data:      &message.UnicodeErrorData{Encoding: "utf-8", ObjectBytes: []byte{0x61, 0xff}, Start: 1, End: 2, Reason: "invalid start byte"}}
	scenarios := []struct {
		name   string
		frames int
		state  string // "" configured and idle, "call" suspended in f(1), "lookup" in a name lookup, "fresh" not configured
		req    func(callID uint32) message.Request
	}{
		{"configure", 300, "fresh", func(uint32) message.Request {
			ms, lim := uint32(7), uint64(5)
			return &message.Configure{ScriptName: "main.py", ProtocolVersion: 2, TypeCheckStubs: &msg, PrintFlushIntervalMs: &ms,
				Limits: &message.ResourceLimits{MaxDurationMicros: &lim, MaxMemoryBytes: &lim, MaxRecursionDepth: &lim}}
		}},
		{"lookup answer", 600, "lookup", func(uint32) message.Request {
			return &message.ResumeNameLookup{Kind: message.LookupValue, Values: g, Value: root}
		}},
		{"feed", 3000, "", func(uint32) message.Request {
			return &message.Feed{Code: "v", Values: g, Inputs: []message.NamedRef{{Name: "v", Value: root}}}
		}},
		{"resume with a value", 1000, "call", func(id uint32) message.Request {
			return &message.ResumeCall{CallID: id, Values: g, Result: &message.ExtResult{Kind: message.ResultReturn, Value: root}}
		}},
		{"resume with an exception", 600, "call", func(id uint32) message.Request {
			return &message.ResumeCall{CallID: id, Result: &message.ExtResult{Kind: message.ResultError, Error: exc}}
		}},
		{"abort", 400, "call", func(uint32) message.Request { return &message.AbortFeed{Exception: exc} }},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var w *worker
			var base []byte
			// ready starts a worker in the scenario's state.
			ready := func() {
				var id uint32
				switch sc.state {
				case "fresh":
					w = startUnconfigured(t)
				case "call":
					w = startWorker(t)
					c, ok := last(w.turn(&message.ParentRequest{Body: &message.Feed{Code: "f(1)"}})).(*message.FunctionCall)
					if !ok {
						t.Fatal("f(1) did not suspend in a host call")
					}
					id = c.CallID
				case "lookup":
					w = startWorker(t)
					if _, ok := last(w.turn(&message.ParentRequest{Body: &message.Feed{Code: "x"}})).(*message.NameLookup); !ok {
						t.Fatal("x did not suspend in a name lookup")
					}
				default:
					w = startWorker(t)
				}
				var err error
				if base, err = AppendRequest(nil, &message.ParentRequest{Body: sc.req(id)}); err != nil {
					t.Fatal(err)
				}
			}
			ready()
			bad := 0
			for range sc.frames {
				f := codectest.Mutate(rng, base)
				_, err := DecodeRequest(f, codec.Limits{})
				ev := last(w.turnRaw(f))
				got := errText(ev)
				if _, ok := ev.(*message.FatalError); ok {
					w.fatal = true // a protocol_version changed: exit 4
				}
				var de *codec.DecodeError
				ok := true
				var ie *codec.InputError
				switch {
				case err == nil:
					ok = !strings.Contains(got, "malformed request") && !strings.Contains(got, `protocol violation: invalid input "`) &&
						!strings.Contains(got, "has no value")
				case errors.As(err, &ie): // a Feed input's failure, in the worker's words
					ok = got == "RuntimeError: protocol violation: "+err.Error()
				case errors.As(err, &de) && de.Structural:
					ok = strings.HasPrefix(got, "RuntimeError: ") && !strings.Contains(got, "malformed request")
				default:
					ok = got == "RuntimeError: protocol violation: malformed request: "+err.Error()
				}
				if !ok {
					if bad++; bad <= 10 {
						t.Errorf("% x\n  worker %s\n  ours   %v", f, got, err)
					}
				}
				// A malformed request leaves the worker as it was; anything
				// else may have moved it on (a changed code byte can even
				// name something the sandbox looks up): start afresh.
				if !strings.Contains(got, "malformed request") {
					w.stop()
					ready()
				}
			}
		})
	}
}

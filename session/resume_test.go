package session

import (
	"testing"

	"github.com/gomonty/monty/message"
)

// TestResumeAnswers checks which request each Answer becomes for each kind
// of suspension, and that an answer that does not fit sends nothing.
func TestResumeAnswers(t *testing.T) {
	lookup := stamp(ev(&message.NameLookup{Name: "x"}), 1000)
	osCall := stamp(ev(&message.OsCall{CallID: 3, Op: message.OpExists, Path: "/x"}), 1000)
	eager := funcCall("f", 4)
	eager.Body.(*message.FunctionCall).AllowEagerAwait = true
	exc := message.NewException("ValueError", "no")
	notUTF8 := "caf\xe9"
	cases := []struct {
		name  string
		susp  *message.ChildEvent
		a     Answer
		check func(t *testing.T, req message.Request) // nil: ErrNotSuspended
	}{
		{"call/return", funcCall("f", 1), Return(5), func(t *testing.T, req message.Request) {
			r := req.(*message.ResumeCall)
			if r.CallID != 1 || r.Result.Kind != message.ResultReturn || r.Values.Node(r.Result.Value).Int() != 5 {
				t.Fatalf("%+v", r.Result)
			}
		}},
		{"call/raise", funcCall("f", 1), Raise(exc), func(t *testing.T, req message.Request) {
			if r := req.(*message.ResumeCall); r.Result.Kind != message.ResultError || r.Result.Error.Type != "ValueError" {
				t.Fatalf("%+v", r.Result)
			}
		}},
		// An exception the worker would refuse (a type it does not know,
		// a message that is not UTF-8) is raised as a host function's
		// error is: a RuntimeError naming the type, the text repaired.
		// Before, the worker answered with a protocol-violation Error and
		// stayed suspended, or nothing could be sent.
		{"call/raise-unknown-type", funcCall("f", 1), Raise(message.NewException("NotAType", "x")), func(t *testing.T, req message.Request) {
			if r := req.(*message.ResumeCall); r.Result.Kind != message.ResultError || r.Result.Error.Type != "RuntimeError" || r.Result.Error.Msg() != "NotAType: x" {
				t.Fatalf("%+v", r.Result.Error)
			}
		}},
		{"call/raise-not-utf8", funcCall("f", 1), Raise(&message.RaisedException{Type: "ValueError", Message: &notUTF8}), func(t *testing.T, req message.Request) {
			if r := req.(*message.ResumeCall); r.Result.Kind != message.ResultError || r.Result.Error.Type != "ValueError" || r.Result.Error.Msg() != "caf\uFFFD" {
				t.Fatalf("%+v", r.Result.Error)
			}
		}},
		{"call/undefined", funcCall("f", 1), Undefined(), func(t *testing.T, req message.Request) {
			if r := req.(*message.ResumeCall); r.Result.Kind != message.ResultNotFound || r.Result.Name != "f" {
				t.Fatalf("%+v", r.Result)
			}
		}},
		{"call/future", funcCall("f", 2), AsFuture(), func(t *testing.T, req message.Request) {
			if r := req.(*message.ResumeCall); r.Result.Kind != message.ResultFuture || r.Result.Future != 2 {
				t.Fatalf("%+v", r.Result)
			}
		}},
		{"call/not-handled", funcCall("f", 1), NotHandled(), nil},
		{"call/resolve-not-eager", funcCall("f", 1), Resolve(FutureOutcome{CallID: 1}), nil},
		{"call/resolve-eager", eager, Resolve(FutureOutcome{CallID: 4, Value: 7}), func(t *testing.T, req message.Request) {
			r := req.(*message.ResumeFutures)
			if len(r.Results) != 1 || r.Results[0].CallID != 4 || r.Values.Node(r.Results[0].Result.Value).Int() != 7 {
				t.Fatalf("%+v", r.Results)
			}
		}},
		{"call/resolve-eager-wrong-id", eager, Resolve(FutureOutcome{CallID: 5}), nil},
		{"os/not-handled", osCall, NotHandled(), func(t *testing.T, req message.Request) {
			if r := req.(*message.ResumeCall); r.CallID != 3 || r.Result.Kind != message.ResultNotHandled {
				t.Fatalf("%+v", r)
			}
		}},
		{"os/undefined", osCall, Undefined(), nil},
		{"os/future", osCall, AsFuture(), nil},
		{"lookup/return", lookup, Return("v"), func(t *testing.T, req message.Request) {
			if r := req.(*message.ResumeNameLookup); r.Kind != message.LookupValue || r.Values.Node(r.Value).Text() != "v" {
				t.Fatalf("%+v", r)
			}
		}},
		{"lookup/undefined", lookup, Undefined(), func(t *testing.T, req message.Request) {
			if r := req.(*message.ResumeNameLookup); r.Kind != message.LookupUndefined {
				t.Fatalf("%+v", r)
			}
		}},
		{"lookup/raise", lookup, Raise(exc), func(t *testing.T, req message.Request) {
			if r := req.(*message.ResumeNameLookup); r.Kind != message.LookupError || r.Error.Type != "ValueError" {
				t.Fatalf("%+v", r)
			}
		}},
		{"lookup/raise-unknown-type", lookup, Raise(message.NewException("NotAType", "x")), func(t *testing.T, req message.Request) {
			if r := req.(*message.ResumeNameLookup); r.Kind != message.LookupError || r.Error.Type != "RuntimeError" || r.Error.Msg() != "NotAType: x" {
				t.Fatalf("%+v", r.Error)
			}
		}},
		{"lookup/future", lookup, AsFuture(), nil},
		{"lookup/not-handled", lookup, NotHandled(), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := fakeOpts{}
			if fc, ok := c.susp.Body.(*message.FunctionCall); ok && fc.AllowEagerAwait {
				o.version = 4 // protocol 2 has no eager await
			}
			s, f := startFakeOpts(t, o, Config{}, func(req *message.ParentRequest) fakeReply {
				if _, ok := req.Body.(*message.Feed); ok {
					return reply(c.susp)
				}
				return reply(completeInt(0))
			})
			if _, err := s.Feed(bg, "x"); err != nil {
				t.Fatal(err)
			}
			sent := len(f.requests())
			_, err := s.Resume(bg, c.a)
			if c.check == nil {
				if err != ErrNotSuspended || len(f.requests()) != sent || s.State() != StateSuspended {
					t.Fatalf("got %v, %d requests sent, state %v", err, len(f.requests())-sent, s.State())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			reqs := f.requests()
			c.check(t, reqs[len(reqs)-1].Body)
		})
	}
}

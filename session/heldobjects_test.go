//go:build unix

package session

import (
	"errors"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// reprBox is a host class whose method Both returns a new box beside a
// repr, a value the sandbox does not take back.
type reprBox struct{ N int }

// reprBoxClass is the class Both wraps its new box with.
var reprBoxClass = MustClassOf[reprBox]("Box", Policy{Eager: []string{"N"}, Methods: []string{"both"}})

func (b *reprBox) Both() []any {
	return []any{Object(reprBoxClass, &reprBox{N: b.N + 1}), value.ReprValue("<module 'sys'>")}
}

// A host answer that holds both a host object and a value the sandbox does
// not take back (a repr) becomes a TypeError the code can catch, and
// registers nothing: before, the object entered the session's store
// anyway, where it stayed (its id burned) for as long as the session
// lived. Each kind of answer is checked: a host function's result, an
// Async function's future, a method's result, a host value looked up, a
// Feed's inputs; and, as a control, an answer without the repr does
// register its object.
func TestRefusedHostAnswerRegistersNoObject(t *testing.T) {
	cls := reprBoxClass
	repr := value.ReprValue("<module 'sys'>")
	both := func() any { return []any{Object(cls, &reprBox{N: 1}), repr} }
	reg := NewRegistry().MustRegisterClass("Box", cls)
	reg.MustRegister("both", func() any { return both() })
	reg.MustRegister("both_async", func() any { return both() }, Async())
	reg.MustRegister("one", func() any { return Object(cls, &reprBox{N: 2}) })
	reg.SetValue("both_value", both())
	reg.SetValue("host", &reprBox{N: 3})

	var s *Session
	storeLen := func() int { return s.objects().len() }
	wantTypeError := func(t *testing.T, res *message.ExtResult, what string) {
		t.Helper()
		if res == nil || res.Kind != message.ResultError || res.Error.Type != "TypeError" {
			t.Fatalf("%s: answered %+v, want a TypeError", what, res)
		}
		if n := storeLen(); n != 0 {
			t.Fatalf("%s: the store holds %d objects after the refused answer, want 0", what, n)
		}
	}
	s, _ = startFake(t, Config{}, scripted(
		func(*message.ParentRequest) *message.ChildEvent { return funcCall("both", 1) },
		func(req *message.ParentRequest) *message.ChildEvent {
			wantTypeError(t, callAnswer(t, req).Result, "a function's result")
			return funcCall("both_async", 2)
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			if rc := callAnswer(t, req); rc.Result.Kind != message.ResultFuture {
				t.Fatalf("Async call answered %+v, want a future", rc.Result)
			}
			return suspend(&message.ResolveFutures{PendingCallIDs: []uint32{2}})
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			rf, ok := req.Body.(*message.ResumeFutures)
			if !ok || len(rf.Results) != 1 {
				t.Fatalf("expected one future's result, got %#v", req.Body)
			}
			wantTypeError(t, rf.Results[0].Result, "a future's result")
			return suspend(&message.NameLookup{Name: "both_value"})
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			nl, ok := req.Body.(*message.ResumeNameLookup)
			if !ok || nl.Kind != message.LookupError || nl.Error.Type != "TypeError" {
				t.Fatalf("lookup of both_value answered %#v, want a TypeError", req.Body)
			}
			if n := storeLen(); n != 0 {
				t.Fatalf("a looked-up value: the store holds %d objects, want 0", n)
			}
			return suspend(&message.NameLookup{Name: "host"})
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			nl, ok := req.Body.(*message.ResumeNameLookup)
			if !ok || nl.Kind != message.LookupValue {
				t.Fatalf("lookup of host answered %#v, want its value", req.Body)
			}
			ci, ok := nl.Values.Node(nl.Value).Ext().(*value.ClassInstance)
			if !ok {
				t.Fatalf("host answered as %s, not an instance", nl.Values.Node(nl.Value).Kind)
			}
			if n := storeLen(); n != 1 {
				t.Fatalf("the store holds %d objects after one was sent, want 1", n)
			}
			return objectCall("both", 3, ci.InstanceID)
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			res := callAnswer(t, req).Result
			if res.Kind != message.ResultError || res.Error.Type != "TypeError" {
				t.Fatalf("a method's result: answered %+v, want a TypeError", res)
			}
			if n := storeLen(); n != 1 {
				t.Fatalf("a method's result: the store holds %d objects, want the 1 sent before", n)
			}
			return funcCall("one", 4)
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			if rc := callAnswer(t, req); rc.Result.Kind != message.ResultReturn {
				t.Fatalf("one() answered %+v, want its value", rc.Result)
			}
			if n := storeLen(); n != 2 {
				t.Fatalf("the store holds %d objects after a second was sent, want 2", n)
			}
			return completeInt(0)
		},
	))
	if _, err := s.Run(bg, "x", WithFunctions(reg)); err != nil {
		t.Fatal(err)
	}
	// A Feed refused for its second input registers the first's object
	// neither.
	_, err := s.Run(bg, "x", WithFunctions(reg), WithInputs(Input{"a", Object(cls, &reprBox{})}, Input{"b", repr}))
	var ire *InvalidRequestError
	if !errors.As(err, &ire) {
		t.Fatalf("Run with a repr input: %v, want an *InvalidRequestError", err)
	}
	if n := storeLen(); n != 2 {
		t.Fatalf("the store holds %d objects after a refused Feed, want the 2 sent before", n)
	}
}

// One Go object given as two inputs of a Feed is one instance id, as in
// one value: the inputs' new objects are held together until the Feed is
// built, and registered once.
func TestHeldInputsShareOneID(t *testing.T) {
	cls := reprBoxClass
	box := &reprBox{N: 7}
	var s *Session
	s, _ = startFake(t, Config{}, scripted(
		func(req *message.ParentRequest) *message.ChildEvent {
			f, ok := req.Body.(*message.Feed)
			if !ok || len(f.Inputs) != 2 {
				t.Fatalf("expected a Feed with two inputs, got %#v", req.Body)
			}
			a := f.Values.Node(f.Inputs[0].Value).Ext().(*value.ClassInstance)
			b := f.Values.Node(f.Inputs[1].Value).Ext().(*value.ClassInstance)
			if a.InstanceID != b.InstanceID {
				t.Errorf("one object sent as two inputs has two ids")
			}
			if n := s.objects().len(); n != 1 {
				t.Errorf("the store holds %d objects, want 1", n)
			}
			return completeInt(0)
		},
	))
	reg := NewRegistry().MustRegisterClass("Box", cls)
	if _, err := s.Run(bg, "x", WithFunctions(reg), WithInputs(Input{"a", Object(cls, box)}, Input{"b", box})); err != nil {
		t.Fatal(err)
	}
}

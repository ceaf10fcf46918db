//go:build unix

package session

import (
	"errors"
	"strings"
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

// bigBox is a host answer that holds a new host object and does not fit
// the 1024-byte frame cap of the fake below: the encoder refuses it, and
// the sandbox is sent a ValueError in its place.
func bigBox(n int) any {
	return []any{Object(reprBoxClass, &reprBox{N: n}), strings.Repeat("x", 2048)}
}

// An answer the encoder refuses after it was built (over the frame cap)
// registers none of its host objects, as one refused while it is built
// does: the sandbox is sent a ValueError instead, and never learns the
// objects' ids. Before, they entered the store as the answer was built and
// stayed for as long as the session lived. Each kind of answer is checked:
// a host function's result, an Async function's future, a host value
// looked up, a Feed's inputs; and, as a control, an answer that fits does
// register its object.
func TestEncoderRefusedAnswerRegistersNoObject(t *testing.T) {
	reg := NewRegistry().MustRegisterClass("Box", reprBoxClass)
	reg.MustRegister("big", func() any { return bigBox(1) })
	reg.MustRegister("big_async", func() any { return bigBox(2) }, Async())
	reg.MustRegister("one", func() any { return Object(reprBoxClass, &reprBox{N: 3}) })
	reg.SetValue("big_value", bigBox(4))

	var s *Session
	storeLen := func() int { return s.objects().len() }
	wantValueError := func(t *testing.T, res *message.ExtResult, what string) {
		t.Helper()
		if res == nil || res.Kind != message.ResultError || res.Error.Type != "ValueError" {
			t.Fatalf("%s: answered %+v, want a ValueError", what, res)
		}
		if n := storeLen(); n != 0 {
			t.Fatalf("%s: the store holds %d objects after the unsent answer, want 0", what, n)
		}
	}
	s, _ = startFakeOpts(t, fakeOpts{maxFrameLen: 1024}, Config{}, scripted(
		func(*message.ParentRequest) *message.ChildEvent { return funcCall("big", 1) },
		func(req *message.ParentRequest) *message.ChildEvent {
			wantValueError(t, callAnswer(t, req).Result, "a function's result")
			return funcCall("big_async", 2)
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
			wantValueError(t, rf.Results[0].Result, "a future's result")
			return suspend(&message.NameLookup{Name: "big_value"})
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			nl, ok := req.Body.(*message.ResumeNameLookup)
			if !ok || nl.Kind != message.LookupError || nl.Error.Type != "ValueError" {
				t.Fatalf("lookup of big_value answered %#v, want a ValueError", req.Body)
			}
			if n := storeLen(); n != 0 {
				t.Fatalf("a looked-up value: the store holds %d objects, want 0", n)
			}
			return funcCall("one", 3)
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			if rc := callAnswer(t, req); rc.Result.Kind != message.ResultReturn {
				t.Fatalf("one() answered %+v, want its value", rc.Result)
			}
			if n := storeLen(); n != 1 {
				t.Fatalf("the store holds %d objects after one was sent, want 1", n)
			}
			return completeInt(0)
		},
	))
	if _, err := s.Run(bg, "x", WithFunctions(reg)); err != nil {
		t.Fatal(err)
	}
	// A Feed over the frame cap is not sent: its inputs' objects are not
	// registered either.
	_, err := s.Run(bg, "x", WithFunctions(reg), WithInputs(Input{"a", Object(reprBoxClass, &reprBox{})},
		Input{"b", strings.Repeat("y", 2048)}))
	var tl *RequestTooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("Run with an input over the frame cap: %v, want a *RequestTooLargeError", err)
	}
	if n := storeLen(); n != 1 {
		t.Fatalf("the store holds %d objects after a Feed that was not sent, want the 1 sent before", n)
	}
	if n := s.objects().heldCount(); n != 0 {
		t.Fatalf("%d objects still held after the runs, want 0", n)
	}
}

// The objects of an Async function's result enter the store when the
// result goes to the worker (a ResumeFutures), and only then: a future the
// worker never collects (the feed ends first) registers nothing, while a
// result the worker received stays registered, awaited by the sandbox or
// not (the worker holds it now). Results split over several ResumeFutures
// (each fits the frame alone, not together) all register theirs.
func TestUncollectedFutureRegistersNoObject(t *testing.T) {
	mid := strings.Repeat("m", 400)
	reg := NewRegistry().MustRegisterClass("Box", reprBoxClass)
	started := make(chan struct{}, 3)
	for i, name := range []string{"a", "b", "c"} {
		reg.MustRegister(name, func() any {
			started <- struct{}{}
			return []any{Object(reprBoxClass, &reprBox{N: i}), mid}
		}, Async())
	}
	var s *Session
	storeLen := func() int { return s.objects().len() }

	// Never collected: the feed completes with the future pending.
	s, _ = startFakeOpts(t, fakeOpts{maxFrameLen: 1024}, Config{}, scripted(
		func(*message.ParentRequest) *message.ChildEvent { return funcCall("a", 1) },
		func(req *message.ParentRequest) *message.ChildEvent {
			if rc := callAnswer(t, req); rc.Result.Kind != message.ResultFuture {
				t.Fatalf("Async call answered %+v, want a future", rc.Result)
			}
			<-started // the function has run; its result may be converted already
			return completeInt(0)
		},
		// Collected: b and c finish, the worker asks for both, and gets
		// them (together or one at a time: 2 × 400 bytes do not fit 1024
		// with their objects, so at least one is sent on its own).
		func(*message.ParentRequest) *message.ChildEvent { return funcCall("b", 2) },
		func(*message.ParentRequest) *message.ChildEvent { return funcCall("c", 3) },
		func(*message.ParentRequest) *message.ChildEvent {
			<-started
			<-started
			return suspend(&message.ResolveFutures{PendingCallIDs: []uint32{2, 3}})
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			rf, ok := req.Body.(*message.ResumeFutures)
			if !ok || len(rf.Results) == 0 {
				t.Fatalf("expected futures' results, got %#v", req.Body)
			}
			if len(rf.Results) == 2 {
				return completeInt(0)
			}
			left := uint32(5) - rf.Results[0].CallID
			return suspend(&message.ResolveFutures{PendingCallIDs: []uint32{left}})
		},
		func(req *message.ParentRequest) *message.ChildEvent {
			if rf, ok := req.Body.(*message.ResumeFutures); !ok || len(rf.Results) != 1 {
				t.Fatalf("expected the other future's result, got %#v", req.Body)
			}
			return completeInt(0)
		},
	))
	if _, err := s.Run(bg, "x", WithFunctions(reg)); err != nil {
		t.Fatal(err)
	}
	if n := storeLen(); n != 0 {
		t.Fatalf("the store holds %d objects after a future the worker never collected, want 0", n)
	}
	if _, err := s.Run(bg, "x", WithFunctions(reg)); err != nil {
		t.Fatal(err)
	}
	if n := storeLen(); n != 2 {
		t.Fatalf("the store holds %d objects after two futures' results were sent, want 2", n)
	}
	if n := s.objects().heldCount(); n != 0 {
		t.Fatalf("%d objects still held after the runs, want 0", n)
	}
}

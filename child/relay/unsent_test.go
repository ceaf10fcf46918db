//go:build unix

package relay

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// deepValue adds to g a list nested n deep around 1: the arena of
// protocols 4 and 5 carries it, protocol 2's tree is refused past 48.
func deepValue(g *value.Graph, n int) value.NodeID {
	id := g.Add(value.Int(1))
	for range n {
		id = g.Add(value.List(id))
	}
	return id
}

// sharedValue adds to g a list holding n references to one string of
// size bytes: the arena holds the string once, protocol 2's tree n times.
func sharedValue(g *value.Graph, n, size int) value.NodeID {
	s := g.Add(value.Str(strings.Repeat("x", size)))
	return g.Add(value.List(slices.Repeat([]value.NodeID{s}, n)...))
}

func returning(id uint32, build func(*value.Graph) value.NodeID) *message.ResumeCall {
	r := &message.ResumeCall{CallID: id, Result: &message.ExtResult{Kind: message.ResultReturn}}
	r.Result.Value = build(&r.Values)
	return r
}

func deep300(g *value.Graph) value.NodeID { return deepValue(g, 300) }

// over2Cap is a value whose protocol-2 tree (300 MiB) is over the frame
// cap while its arena is 1 MiB.
func over2Cap(g *value.Graph) value.NodeID { return sharedValue(g, 300, 1<<20) }

// caught reads the text a feed completed with: the str(e) the code's
// except clause caught.
func caught(t *testing.T, ev *message.ChildEvent, what string) string {
	t.Helper()
	c, ok := ev.Body.(*message.Complete)
	if !ok || c.Values.Node(c.Value).Kind != value.KindStr {
		t.Fatalf("%s: expected Complete with the caught text, got %s", what, describe(ev.Body))
	}
	return c.Values.Node(c.Value).Text()
}

func wantCaught(t *testing.T, got, what, prefix, reason string) {
	t.Helper()
	if !strings.HasPrefix(got, prefix) || !strings.Contains(got[len(prefix):], reason) {
		t.Fatalf("%s: caught %q, want %q… naming %q", what, got, prefix, reason)
	}
}

// sender relays one request at a protocol version and returns the turn's
// event.
type sender func(message.Request) *message.ChildEvent

func senders(t *testing.T) map[uint32]func() sender {
	return map[uint32]func() sender{
		4: func() sender {
			s := serve(t)
			return func(r message.Request) *message.ChildEvent { return first(s.do(t, r)) }
		},
		5: func() sender { return serve5(t) },
	}
}

const (
	tooDeep  = "the protocol-2 worker's decoder stops at 100"
	tooLarge = "exceeds the maximum of 268435456 bytes"
)

// A parent at 4 or 5 answers a call, a name lookup and an OS call with a
// value the protocol-2 worker cannot take (nested too deep, or a tree over
// the frame cap): the relay answers the inner suspension with the
// ValueError package session raises at protocol 2, naming the function,
// value or op and the reason; the code catches it and the run goes on.
// Before, each was a protocol violation that Python could not catch.
func TestUnsendableAnswersRaiseValueError(t *testing.T) {
	const try = "try:\n    r = %s\nexcept ValueError as e:\n    r = str(e)\nr"
	for v, start := range senders(t) {
		send := start()
		cfg := &message.Configure{ProtocolVersion: v}
		if _, ok := send(cfg).Body.(*message.Ok); !ok {
			t.Fatalf("v%d: Configure refused", v)
		}

		fc := call(t, send(&message.Feed{Code: strings.ReplaceAll(try, "%s", "f()")}), "Feed f()")
		wantCaught(t, caught(t, send(returning(fc.CallID, deep300)), "deep result"), "deep result",
			"host function f returned a value that cannot be sent to the sandbox: ", tooDeep)

		fc = call(t, send(&message.Feed{Code: strings.ReplaceAll(try, "%s", "g(1)")}), "Feed g(1)")
		wantCaught(t, caught(t, send(returning(fc.CallID, over2Cap)), "shared result"), "shared result",
			"host function g returned a value that cannot be sent to the sandbox: ", tooLarge)

		ev := send(&message.Feed{Code: strings.ReplaceAll(try, "%s", "x")})
		if nl, ok := ev.Body.(*message.NameLookup); !ok || nl.Name != "x" {
			t.Fatalf("v%d: Feed x: %s", v, describe(ev.Body))
		}
		lv := &message.ResumeNameLookup{Kind: message.LookupValue}
		lv.Value = deep300(&lv.Values)
		wantCaught(t, caught(t, send(lv), "deep lookup"), "deep lookup",
			"host value x cannot be sent to the sandbox: ", tooDeep)

		ev = send(&message.Feed{Code: "from pathlib import Path\n" + strings.ReplaceAll(try, "%s", "Path('/data').read_text()")})
		oc, ok := ev.Body.(*message.OsCall)
		if !ok || oc.Op != message.OpReadText {
			t.Fatalf("v%d: Feed read_text: %s", v, describe(ev.Body))
		}
		wantCaught(t, caught(t, send(returning(oc.CallID, deep300)), "deep OS result"), "deep OS result",
			"the OS handler for read_text returned a value that cannot be sent to the sandbox: ", tooDeep)

		completes(t, send(&message.Feed{Code: "len(r) > 0"}), "a feed after", "True")
	}
}

// Futures: the parent answers two calls with futures and then resolves
// both at once (the worker's ResolveFutures lists both at the first
// await), one of them with a value the protocol-2 worker
// cannot take. The relay keeps the other result and replaces that one
// alone with the ValueError naming its function. A parent at 4 answering a
// call awaited straight away (the relay's eager await), eagerly or with a
// plain ResumeCall, gets the same.
func TestUnsendableFutureResultRaisesValueError(t *testing.T) {
	const code = `a = f()
b = g()
x = await a
try:
    y = await b
except ValueError as e:
    y = str(e)
[x, y]`
	for v, start := range senders(t) {
		send := start()
		send(&message.Configure{ProtocolVersion: v})
		fa := call(t, send(&message.Feed{Code: code}), "Feed")
		fb := call(t, send(&message.ResumeCall{CallID: fa.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: fa.CallID}}), "f's future")
		ev := send(&message.ResumeCall{CallID: fb.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: fb.CallID}})
		rf, ok := ev.Body.(*message.ResolveFutures)
		if !ok || len(rf.PendingCallIDs) != 2 {
			t.Fatalf("v%d: after both futures: %s", v, describe(ev.Body))
		}
		r := &message.ResumeFutures{}
		seven := r.Values.Add(value.Int(7))
		r.Results = []message.FutureResult{
			{CallID: fa.CallID, Result: &message.ExtResult{Kind: message.ResultReturn, Value: seven}},
			{CallID: fb.CallID, Result: &message.ExtResult{Kind: message.ResultReturn, Value: deep300(&r.Values)}},
		}
		ev = send(r)
		c, ok := ev.Body.(*message.Complete)
		if !ok {
			t.Fatalf("v%d: awaits: %s", v, describe(ev.Body))
		}
		items := c.Values.Node(c.Value).Refs()
		if len(items) != 2 || c.Values.Repr(items[0]) != "7" || c.Values.Node(items[1]).Kind != value.KindStr {
			t.Fatalf("v%d: awaits gave %s", v, c.Values.Repr(c.Value))
		}
		wantCaught(t, c.Values.Node(items[1]).Text(), "second future", "host function g returned a value that cannot be sent to the sandbox: ", tooDeep)
	}

	s := serve(t)
	s.do(t, &message.Configure{ProtocolVersion: protocol.Version})
	fc := call(t, first(s.do(t, &message.Feed{Code: "try:\n    r = await h()\nexcept ValueError as e:\n    r = str(e)\nr"})), "Feed await h()")
	if !fc.AllowEagerAwait {
		t.Fatal("`await h()` not flagged")
	}
	r := &message.ResumeFutures{}
	r.Results = []message.FutureResult{{CallID: fc.CallID, Result: &message.ExtResult{Kind: message.ResultReturn, Value: deep300(&r.Values)}}}
	wantCaught(t, caught(t, first(s.do(t, r)), "eager answer"), "eager answer",
		"host function h returned a value that cannot be sent to the sandbox: ", tooDeep)
	// A plain answer to a call held for an eager one restores the call
	// first, then raises the same.
	fc = call(t, first(s.do(t, &message.Feed{Code: "try:\n    r = await k()\nexcept ValueError as e:\n    r = str(e)\nr"})), "Feed await k()")
	if !fc.AllowEagerAwait {
		t.Fatal("`await k()` not flagged")
	}
	wantCaught(t, caught(t, first(s.do(t, returning(fc.CallID, deep300))), "plain answer to a held call"), "plain answer to a held call",
		"host function k returned a value that cannot be sent to the sandbox: ", tooDeep)
}

// Results that the inner worker takes one by one but not together (here
// over a frame cap of 1 MiB on the inner connection) are all replaced.
func TestUnsendableFutureResultsTogether(t *testing.T) {
	s := serveWorker(t, child.Options{}, worker.Config{MaxFrameLen: 1 << 20})
	s.do(t, &message.Configure{ProtocolVersion: protocol.Version})
	const code = `a = f()
b = f()
r = []
for c in [a, b]:
    try:
        r.append(len(await c))
    except ValueError as e:
        r.append(str(e))
r`
	fa := call(t, first(s.do(t, &message.Feed{Code: code})), "Feed")
	fb := call(t, first(s.do(t, &message.ResumeCall{CallID: fa.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: fa.CallID}})), "first future")
	first(s.do(t, &message.ResumeCall{CallID: fb.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: fb.CallID}}))
	r := &message.ResumeFutures{}
	half := r.Values.Add(value.Str(strings.Repeat("y", 600<<10)))
	r.Results = []message.FutureResult{
		{CallID: fa.CallID, Result: &message.ExtResult{Kind: message.ResultReturn, Value: half}},
		{CallID: fb.CallID, Result: &message.ExtResult{Kind: message.ResultReturn, Value: half}},
	}
	ev, _ := s.do(t, r)
	c, ok := ev.Body.(*message.Complete)
	if !ok {
		t.Fatalf("awaits: %s", describe(ev.Body))
	}
	items := c.Values.Node(c.Value).Refs()
	if len(items) != 2 {
		t.Fatalf("awaits gave %s", c.Values.Repr(c.Value))
	}
	for _, id := range items {
		wantCaught(t, c.Values.Node(id).Text(), "result", "host function f returned a value that cannot be sent to the sandbox: ",
			"exceeds the maximum of 1048576 bytes")
	}
}

// What the protocol cannot answer with an exception stays a protocol
// violation that leaves the session as it was: a Feed's inputs.
func TestUnsendableInputStaysViolation(t *testing.T) {
	s := serve(t)
	s.do(t, &message.Configure{ProtocolVersion: protocol.Version})
	f := &message.Feed{Code: "x"}
	f.Inputs = []message.NamedRef{{Name: "x", Value: deep300(&f.Values)}}
	ev, _ := s.do(t, f)
	if e, ok := ev.Body.(*message.Error); !ok || !strings.HasPrefix(e.Exception.Msg(), "protocol violation: invalid inputs: ") ||
		!strings.Contains(e.Exception.Msg(), tooDeep) {
		t.Fatalf("deep input: %s", describe(ev.Body))
	}
	completes(t, first(s.do(t, &message.Feed{Code: "2 + 2"})), "after", "4")
}

// Host objects' methods and attributes: the worker names a method call by
// the method alone ("m", with the receiver's object id) and an attribute
// lookup by the attribute ("attr"), so the relay's ValueError said "host
// function m" and "host value attr" where package session, for the same
// failure, says "host function C.m" and "host value C.attr". The relay
// learns the classes of the host objects its parent sends and names them
// as the session does: a method (called on the object or through the
// bound method value the session hands out), a lazy attribute, a class
// attribute, a construction (the class called).
func TestUnsendableAnswersNameHostClasses(t *testing.T) {
	for v, start := range senders(t) {
		send := start()
		send(&message.Configure{ProtocolVersion: v})
		const try = "try:\n    r = %s\nexcept ValueError as e:\n    r = str(e)\nr"
		feed := func(expr string) *message.ChildEvent {
			f := &message.Feed{Code: strings.ReplaceAll(try, "%s", expr)}
			cls := f.Values.Add(value.TypeNode(value.Type{Name: "Cart", ID: value.NewUUID(), Origin: value.OriginHost}))
			inst := f.Values.Add(value.ClassInstanceNode(value.ClassInstance{Class: cls, InstanceID: value.NewUUID()}))
			f.Inputs = []message.NamedRef{{Name: "cart", Value: inst}, {Name: "Cart", Value: cls}}
			return send(f)
		}

		fc := call(t, feed("cart.total(1)"), "method")
		wantCaught(t, caught(t, send(returning(fc.CallID, deep300)), "method"), "method",
			"host function Cart.total returned a value that cannot be sent to the sandbox: ", tooDeep)

		fc = call(t, feed("Cart()"), "construction")
		wantCaught(t, caught(t, send(returning(fc.CallID, deep300)), "construction"), "construction",
			"host function Cart returned a value that cannot be sent to the sandbox: ", tooDeep)

		for _, expr := range []string{"cart.items", "Cart.tax"} {
			nl, ok := feed(expr).Body.(*message.NameLookup)
			if !ok || nl.ObjectID == nil {
				t.Fatalf("v%d: %s: no lookup on the object", v, expr)
			}
			lv := &message.ResumeNameLookup{Kind: message.LookupValue}
			lv.Value = deep300(&lv.Values)
			wantCaught(t, caught(t, send(lv), expr), expr,
				"host value Cart."+nl.Name+" cannot be sent to the sandbox: ", tooDeep)
		}

		// The bound method value session hands out for cart.total.
		nl, ok := feed("[cart.total][0](2)").Body.(*message.NameLookup)
		if !ok || nl.Name != "total" {
			t.Fatalf("v%d: bound method: no lookup", v)
		}
		lv := &message.ResumeNameLookup{Kind: message.LookupValue}
		lv.Value = lv.Values.Add(value.FunctionNode(value.Function{Name: "Cart.total@1f2e3d4c5b6a"}))
		fc = call(t, send(lv), "bound method")
		wantCaught(t, caught(t, send(returning(fc.CallID, deep300)), "bound method"), "bound method",
			"host function Cart.total returned a value that cannot be sent to the sandbox: ", tooDeep)
	}
}

// The classes the relay learns are bounded (a sandbox handed a great
// many host objects keeps the worker's names for those past the bound)
// and go with the session.
func TestHostObjectNamesBounded(t *testing.T) {
	s := serve(t)
	s.do(t, &message.Configure{ProtocolVersion: protocol.Version})
	f := &message.Feed{Code: "len(xs)"}
	cls := f.Values.Add(value.TypeNode(value.Type{Name: "Cart", ID: value.NewUUID(), Origin: value.OriginHost}))
	items := make([]value.NodeID, maxHostObjects+10)
	for i := range items {
		items[i] = f.Values.Add(value.ClassInstanceNode(value.ClassInstance{Class: cls, InstanceID: value.NewUUID()}))
	}
	f.Inputs = []message.NamedRef{{Name: "xs", Value: f.Values.Add(value.List(items...))}}
	completes(t, first(s.do(t, f)), "Feed", strconv.Itoa(len(items)))
	if n := len(s.eng.hosts); n != maxHostObjects {
		t.Fatalf("%d host objects named, want the bound %d", n, maxHostObjects)
	}
	s.do(t, &message.Reset{})
	if n := len(s.eng.hosts); n != 0 {
		t.Fatalf("%d host objects named after Reset", n)
	}
}

package relay

import (
	"context"
	"errors"
	"strings"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/unsent"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/value"
)

// Answers the inner worker cannot take.
//
// The parent's codec may accept an answer that the inner worker's cannot
// carry: at protocol 4 or 5 a host result nested deeper than protocol 2's
// decoder reads, or one whose protocol-2 tree (which repeats every shared
// node) is over the frame cap. The inner session refuses to send it and
// nothing reaches the worker. Where the protocol lets the answer be an
// exception (a call's or a future's value or exception, a looked-up
// value), the relay sends the ValueError that package session raises for
// its own host functions at protocol 2, in the same words (package
// internal/unsent), so the sandbox's code can catch it and the run goes
// on. Other refusals (a Feed's inputs, an AbortFeed) stay protocol
// violations that leave the session as it was.

// asked is what the suspension passed to the parent last asks for, kept
// to name it when the parent's answer cannot be sent on.
type asked struct {
	kind message.EventKind // FunctionCall, OsCall, NameLookup; 0 for none
	id   uint32            // a call's id
	name string            // the function's or the looked-up name
	op   message.OsOp
}

// subject names the answer to a: the function, the value, the OS op.
func (a asked) subject() unsent.Subject {
	switch a.kind {
	case message.KindFunctionCall:
		return unsent.Function(a.name)
	case message.KindOsCall:
		return unsent.OS(a.op)
	case message.KindNameLookup:
		return unsent.Value(a.name)
	}
	return unsent.Subject{}
}

// asking records what the event passed to the parent asks for; a refusal
// leaves the suspension, and what it asks, as it was.
func (e *Engine) asking(ev message.Event, err error) (message.Event, error) {
	if err != nil || isViolationEvent(ev) {
		return ev, err
	}
	switch b := ev.(type) {
	case *message.FunctionCall:
		e.asked = asked{kind: message.KindFunctionCall, id: b.CallID, name: e.functionName(b)}
	case *message.OsCall:
		e.asked = asked{kind: message.KindOsCall, id: b.CallID, op: b.Op}
	case *message.NameLookup:
		name := b.Name
		if h, ok := e.hostObject(b.ObjectID); ok {
			name = h.class + "." + name
		}
		e.asked = asked{kind: message.KindNameLookup, name: name}
	case *message.Complete, *message.Error:
		// The run is over, and with it its futures: the worker forgets
		// them (a later feed cannot await them), so a sandbox making
		// futures it never awaits does not grow the map feed by feed.
		e.forgetAsked()
	default:
		e.asked = asked{}
	}
	return ev, nil
}

// Host objects' names.
//
// The worker names a method call on a host object by the method alone,
// with the receiver's object id, and a lookup of an object's attribute
// by the attribute; package session names both by the object's class as
// well (host function Cart.total, host value Cart.items). The relay
// learns the class of each host object from the values its parent sends
// (a host class's type, an instance of one), so that its ValueError names
// what the session's would; an object it never saw (one restored by Load,
// or past maxHostObjects) keeps the worker's name.

// maxHostObjects bounds the host objects whose class the relay keeps; a
// session that sends more keeps the worker's names for the rest.
const maxHostObjects = 4096

// hostObject is what the relay knows of a host object: its class's name,
// and whether it is the class itself.
type hostObject struct {
	class   string
	isClass bool
}

// learn notes the host classes and instances that req's values carry.
func (e *Engine) learn(req message.Request) {
	var g *value.Graph
	switch q := req.(type) {
	case *message.Feed:
		g = &q.Values
	case *message.ResumeCall:
		g = &q.Values
	case *message.ResumeNameLookup:
		g = &q.Values
	case *message.ResumeFutures:
		g = &q.Values
	default:
		return
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Kind != value.KindType && n.Kind != value.KindClassInstance {
			continue
		}
		if len(e.hosts) >= maxHostObjects {
			return
		}
		if e.hosts == nil {
			e.hosts = make(map[value.UUID]hostObject)
		}
		switch x := n.Ext().(type) {
		case *value.Type:
			if x.Origin == value.OriginHost {
				e.hosts[x.ID] = hostObject{class: x.Name, isClass: true}
			}
		case *value.ClassInstance:
			if int(x.Class) < g.Len() {
				if t, _ := g.Node(x.Class).Ext().(*value.Type); t != nil && t.Origin == value.OriginHost {
					e.hosts[x.InstanceID] = hostObject{class: t.Name}
				}
			}
		}
	}
}

// hostObject returns what the relay knows of the object with id.
func (e *Engine) hostObject(id *value.UUID) (hostObject, bool) {
	if id == nil {
		return hostObject{}, false
	}
	h, ok := e.hosts[*id]
	return h, ok
}

// functionName names the function fc calls as package session does: a
// method of a known host object by its class (a known class called is
// its construction, named by the class), and the bound method value
// session hands out ("Cart.total@" and 12 hex digits) by its method.
func (e *Engine) functionName(fc *message.FunctionCall) string {
	name := fc.FunctionName
	if h, ok := e.hostObject(fc.ObjectID); ok {
		if h.isClass && name == "__call__" {
			return h.class
		}
		return h.class + "." + name
	}
	if head, token, ok := strings.Cut(name, "@"); ok && fc.ObjectID == nil && strings.Contains(head, ".") && isHex(token, 12) {
		return head
	}
	return name
}

// isHex reports whether s is n lowercase hex digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// forgetAsked drops what the relay knows of the run's suspensions and
// futures (at the end of a run).
func (e *Engine) forgetAsked() {
	e.asked = asked{}
	clear(e.futures)
}

// forgetSession drops all the relay knows of the session, its host
// objects included (Configure, Reset, Load).
func (e *Engine) forgetSession() {
	e.forgetAsked()
	clear(e.hosts)
}

// answering notes, before req is relayed, the function whose call the
// parent answers with a future, to name that future's result later.
func (e *Engine) answering(req message.Request) {
	rc, ok := req.(*message.ResumeCall)
	if !ok || rc.Result == nil || rc.Result.Kind != message.ResultFuture ||
		e.asked.kind != message.KindFunctionCall || e.asked.id != rc.CallID {
		return
	}
	if e.futures == nil {
		e.futures = make(map[uint32]string)
	}
	e.futures[rc.CallID] = e.asked.name
}

// answered forgets the futures a ResumeFutures the inner worker took
// settled.
func (e *Engine) answered(req message.Request, ev message.Event, err error) {
	rf, ok := req.(*message.ResumeFutures)
	if !ok || err != nil || isViolationEvent(ev) {
		return
	}
	for _, r := range rf.Results {
		delete(e.futures, r.CallID)
	}
}

// futureSubject names the result of the future of call id: the function
// the parent answered with it, or the call held for an eager answer.
func (e *Engine) futureSubject(id uint32) unsent.Subject {
	if name, ok := e.futures[id]; ok {
		return unsent.Function(name)
	}
	if e.asked.kind == message.KindFunctionCall && e.asked.id == id {
		return unsent.Function(e.asked.name)
	}
	return unsent.Subject{}
}

// send relays one request to the inner worker.
func (e *Engine) send(ctx context.Context, req message.Request) (*message.ChildEvent, error) {
	if e.v5.on {
		return e.do5(ctx, req)
	}
	return e.s.Do(ctx, req)
}

// sendOrStandIn relays req and, when the inner session refuses to send
// it, the stand-in that raises a catchable ValueError in its place; when
// there is none, or it is refused too, the outcome is req's.
func (e *Engine) sendOrStandIn(ctx context.Context, req message.Request) (*message.ChildEvent, error) {
	ev, err := e.send(ctx, req)
	if err == nil {
		return ev, nil
	}
	why, refused := notSent(err)
	// The second pass replaces every result of a ResumeFutures: its
	// results fit one by one but not together.
	for pass := 0; refused && pass < 2; pass++ {
		alt := e.standIn(req, why, pass == 1)
		if alt == nil {
			continue
		}
		aev, aerr := e.send(ctx, alt)
		w, again := notSent(aerr)
		if !again {
			return aev, aerr
		}
		why = w
	}
	return ev, err
}

// notSent returns why the inner session refused to send a request
// (nothing reached the worker), in the words session uses at protocol 2.
func notSent(err error) (string, bool) {
	var ie *session.InvalidRequestError
	var tl *session.RequestTooLargeError
	switch {
	case errors.As(err, &ie):
		return ie.Err.Error(), true
	case errors.As(err, &tl):
		return tl.Error(), true
	}
	return "", false
}

// standIn returns the request that answers req's suspension with the
// ValueError naming what could not be sent (why), or nil when req is no
// answer that may be an exception. Of a ResumeFutures holding several
// results it replaces those the inner worker cannot take, each checked
// alone (nil when each fits, or when the checks stop: those that fit are
// over the frame cap together, or checking them would cost more than
// checkWork; see aloneCheck), or with all every value and exception (all
// is nil for any other request: it has one stand-in, without all).
func (e *Engine) standIn(req message.Request, why string, all bool) message.Request {
	switch q := req.(type) {
	case *message.ResumeCall, *message.ResumeNameLookup:
		if all {
			return nil
		}
		return e.asked.subject().StandIn(req, why)
	case *message.ResumeFutures:
		out := &message.ResumeFutures{Results: make([]message.FutureResult, len(q.Results))}
		copy(out.Results, q.Results)
		replaced, kept := 0, false
		var alone aloneCheck
		for i, fr := range q.Results {
			if fr.Result == nil || !unsent.Replaceable(fr.Result.Kind) {
				continue
			}
			w := why
			if len(q.Results) > 1 && !all {
				one := &message.ResumeFutures{Results: q.Results[i : i+1], Values: q.Values}
				var bad, over bool
				if w, bad, over = alone.check(e.s.Version(), one); over {
					// The results kept cannot go together, or checking
					// them would cost more than the bound: the second
					// pass replaces them all.
					return nil
				}
				if !bad {
					kept = kept || fr.Result.Kind == message.ResultReturn
					continue
				}
			}
			out.Results[i].Result = e.futureSubject(fr.CallID).Result(fr.Result.Kind, w)
			replaced++
		}
		if replaced == 0 {
			return nil
		}
		if kept {
			// The values of the results kept; those replaced stay in the
			// graph unreferenced, which protocol 2 does not write.
			out.Values = q.Values
		}
		return out
	}
	return nil
}

// checkWork bounds the nodes that the checks of a ResumeFutures' results,
// each alone, walk in all: each check walks the request's whole graph,
// which a hostile parent shares between thousands of results.
const checkWork = 1 << 22

// aloneCheck checks the results of one ResumeFutures one at a time (see
// standIn), within bounds: a parent's frame of a few kilobytes can hold
// thousands of results over one large graph, or sharing one value whose
// protocol-2 tree (which repeats every shared node) is near the frame cap,
// and checking each alone repeated that work for every result.
type aloneCheck struct {
	work int    // graph nodes walked so far
	kept int    // bytes of the results that fit alone
	buf  []byte // the encoding of the last one, reused
}

// check reports why one (a ResumeFutures holding one result) cannot be
// sent at version v, if it cannot; over reports that the checks are to
// stop: the results that fit alone are over the frame cap together (each
// is a tree of its own at protocol 2, so their sizes add up and the first
// pass cannot fit), or the work bound is spent.
func (c *aloneCheck) check(v uint32, one *message.ResumeFutures) (why string, bad, over bool) {
	c.work += one.Values.Len() + 1
	if c.work > checkWork {
		return "", false, true
	}
	cd, ok := codec.ForVersion(v)
	if !ok {
		why, bad = notSent(session.CheckRequest(v, one))
		return why, bad, false
	}
	buf, err := cd.AppendRequest(c.buf[:0], &message.ParentRequest{Body: one})
	if err == nil && len(buf) <= protocol.MaxFrameLen {
		c.buf = buf
		if c.kept += len(buf); c.kept > protocol.MaxFrameLen {
			return "", false, true
		}
		return "", false, false
	}
	// The words session uses, from a check that walks the graph again
	// but fails before it encodes.
	c.work += one.Values.Len()
	why, bad = notSent(session.CheckRequest(v, one))
	return why, bad, false
}

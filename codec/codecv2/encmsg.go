package codecv2

import (
	"reflect"
	"slices"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/core"
	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
)

// The messages around the values are written by the shared message layer
// (core.Enc, with protocol 2's tags, core.Dialect2); the value encoder
// (venc) is its core.Values, writing each value field as the MontyObject
// it holds. Before that layer measures anything, core's check walk
// (CheckRequest, CheckEvent) goes over the message in field order with chk
// as its Checker, which fails on the first thing the worker would refuse
// or protocol 2 cannot say: text that is not UTF-8, a value root out of
// range or too deep for the worker's decoder, a field of a later version.

// chk is protocol 2's core.Checker: the first failure in field order
// is the message's, in err.
type chk struct {
	ve  *venc
	err error
}

func (c *chk) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// BadText implements core.Checker.
func (c *chk) BadText(field string) { c.fail(encErr("%s is not valid UTF-8", field)) }

// Root implements core.Checker: the root in range and within the
// worker's depth.
func (c *chk) Root(id value.NodeID, lvl int, field, sub string) {
	switch {
	case int(id) >= len(c.ve.pl):
		c.fail(encErr("%s: value root %d is out of range for a graph of %d nodes", field+sub, id, len(c.ve.pl)))
	case lvl+int(c.ve.dep[id]) > MaxDepth:
		c.fail(depthErr(field+sub, lvl+int(c.ve.dep[id])))
	}
}

func depthErr(field string, d int) error {
	return encErr("%s: the value reaches %d protobuf message levels below the frame's top message; "+
		"the protocol-2 worker's decoder stops at %d (an int in 48 nested lists is the deepest list input)",
		field, d, MaxDepth)
}

// Bad implements core.Checker.
func (c *chk) Bad(p core.Problem, field string, arg any) {
	switch p {
	case core.BadResultKind:
		c.fail(encErr("%s: unknown result kind %d", field, arg))
	case core.BadLookupKind:
		c.fail(encErr("ResumeNameLookup: unknown kind %d", arg))
	case core.NilResultError:
		c.fail(encErr("%s: error result with a nil exception", field))
	case core.NilLookupError:
		c.fail(encErr("ResumeNameLookup.error: nil exception"))
	case core.BothObjects:
		c.fail(encErr("UnicodeErrorData: both object_bytes and object_str are set"))
	case core.NoCwd:
		c.fail(encErr("Feed.cwd: protocol 2 has no working-directory field (got %q)", arg))
	case core.NoEager:
		c.fail(encErr("FunctionCall.allow_eager_await: protocol 2 has no eager await"))
	case core.Segments:
		c.fail(encErr("Print: protocol 2 carries exactly one segment per event, got %d", arg))
	case core.NoBody:
		c.fail(encErr("protocol 2 has no %s of type %T", field, arg))
	case core.BadOsOp:
		if arg == message.OpUrandom {
			c.fail(encErr("OsCall.urandom: protocol 2 has no urandom call (OsCall arms stop at 24)"))
		} else {
			c.fail(encErr("OsCall: unknown op %d", arg))
		}
	}
}

// RefSize implements core.Values: a value field holds the MontyObject.
func (e *venc) RefSize(num protowire.Number, id value.NodeID, _ bool) int {
	b := e.body(id)
	return int(int64(protowire.SizeTag(num)) + sizeVarint(uint64(b)) + b)
}

// AppendRef implements core.Values.
func (e *venc) AppendRef(b []byte, num protowire.Number, id value.NodeID, _ bool) []byte {
	return e.appendField(b, num, id)
}

// RefsSize implements core.Values: one MontyObject field per root.
func (e *venc) RefsSize(num protowire.Number, ids []value.NodeID) int {
	n := 0
	for _, id := range ids {
		n += e.RefSize(num, id, true)
	}
	return n
}

// AppendRefs implements core.Values.
func (e *venc) AppendRefs(b []byte, num protowire.Number, ids []value.NodeID) []byte {
	for _, id := range ids {
		b = e.appendField(b, num, id)
	}
	return b
}

// ArenaSize implements core.Values; protocol 2 has no arena (Dialect2 has
// no arena fields, so this is never called).
func (e *venc) ArenaSize(protowire.Number, *value.Graph) int { return 0 }

// AppendArena implements core.Values.
func (e *venc) AppendArena(b []byte, _ protowire.Number, _ *value.Graph) []byte { return b }

// noValues is the value encoder of a message without values. Only prepare
// writes to a venc, so this one is shared, read-only.
var noValues = &venc{g: &value.Graph{}}

// encoder is the state of one frame's encode. It is pooled, so that
// encoding a frame with a small graph (a call's arguments, a result)
// allocates nothing but the caller's buffer; it is zeroed before it goes
// back, so the pool keeps neither a graph nor a buffer alive.
type encoder struct {
	c  chk
	ve venc
}

var encoders = sync.Pool{New: func() any { return new(encoder) }}

// begin takes an encoder from the pool, its values prepared from g.
func begin(g *value.Graph, lim codec.Limits) (*encoder, error) {
	st := encoders.Get().(*encoder)
	st.c.ve = noValues
	if g != nil && len(g.Nodes) > 0 {
		st.c.ve = &st.ve
		if err := st.ve.prepare(g, lim.FrameLen()); err != nil {
			st.release()
			return nil, err
		}
	}
	return st, nil
}

func (st *encoder) release() {
	*st = encoder{}
	encoders.Put(st)
}

func isNil(x any) bool {
	if x == nil {
		return true
	}
	v := reflect.ValueOf(x)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// ---------------------------------------------------------------------------
// Requests

func appendRequest(dst []byte, r *message.ParentRequest, lim codec.Limits) ([]byte, error) {
	if r == nil {
		return dst, encErr("nil ParentRequest")
	}
	if r.Body != nil && isNil(r.Body) {
		return dst, encErr("nil %T request body", r.Body)
	}
	if err := codec.CheckRequestFields(protocol.Version2, r); err != nil {
		return dst, err
	}
	st, err := begin(core.RequestGraph(r.Body), lim)
	if err != nil {
		return dst, err
	}
	defer st.release()
	if core.CheckRequest(core.Dialect2, r, r.Body, &st.c); st.c.err != nil {
		return dst, st.c.err
	}
	enc := core.Enc{V: core.Dialect2, Vals: st.c.ve}
	size, n := enc.RequestSize(r, r.Body)
	if size > lim.FrameLen() {
		return dst, capErr("the encoded frame would exceed the frame cap of %d bytes", lim.FrameLen())
	}
	return enc.AppendRequest(slices.Grow(dst, size), r, r.Body, n), nil
}

// ---------------------------------------------------------------------------
// Events

func appendEvent(dst []byte, e *message.ChildEvent, lim codec.Limits) ([]byte, error) {
	if e == nil {
		return dst, encErr("nil ChildEvent")
	}
	if e.Body != nil && isNil(e.Body) {
		return dst, encErr("nil %T event body", e.Body)
	}
	if err := codec.CheckEventFields(protocol.Version2, e); err != nil {
		return dst, err
	}
	st, err := begin(core.EventGraph(e.Body), lim)
	if err != nil {
		return dst, err
	}
	defer st.release()
	if core.CheckEvent(core.Dialect2, e, e.Body, &st.c); st.c.err != nil {
		return dst, st.c.err
	}
	enc := core.Enc{V: core.Dialect2, Vals: st.c.ve}
	size, n := enc.EventSize(e, e.Body)
	if size > lim.FrameLen() {
		return dst, capErr("the encoded frame would exceed the frame cap of %d bytes", lim.FrameLen())
	}
	return enc.AppendEvent(slices.Grow(dst, size), e, e.Body, n), nil
}

// OsCall implements core.Checker: an open's mode, and the text of the
// arm's own message.
func (c *chk) OsCall(x *message.OsCall) {
	switch x.Op {
	case message.OpGetenv:
		core.Text(c, x.Key, "Getenv.key")
	case message.OpOpen:
		if _, err := value.NormalizeFileMode(x.Mode); err != nil {
			c.fail(&codec.EncodeError{Msg: "codecv2: OsCall.open", Err: err})
		}
	}
	if f, ok := leaf.OsArgFields(protowire.Number(x.Op), x); ok {
		core.Fields(c, f)
	} else if x.Op >= message.OpExists && x.Op <= message.OpRmdir {
		core.Text(c, x.Path, "OsCall."+x.Op.String())
	} else if x.Op == message.OpDateTimeNow && x.TZ != nil {
		core.Fields(c, leaf.TimeZoneFields(x.TZ))
	}
}

// appendValue encodes root of g as a bare MontyObject.
func appendValue(dst []byte, g *value.Graph, root value.NodeID, lim codec.Limits) ([]byte, error) {
	if g == nil || int(root) >= len(g.Nodes) {
		n := 0
		if g != nil {
			n = len(g.Nodes)
		}
		return dst, encErr("value root %d is out of range for a graph of %d nodes", root, n)
	}
	var e venc
	if err := e.prepare(g, lim.FrameLen()); err != nil {
		return dst, err
	}
	if d := int(e.dep[root]) - 1; d > MaxDepth {
		return dst, depthErr("MontyObject", d)
	}
	size := e.body(root)
	if size > int64(lim.FrameLen()) {
		return dst, capErr("the encoded value would exceed the frame cap of %d bytes", lim.FrameLen())
	}
	dst = slices.Grow(dst, int(size))
	return e.appendObject(dst, root), nil
}

package codecv2

import (
	"reflect"
	"slices"
	"sync"
	"unicode/utf8"

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
// it holds. Before that layer measures anything, chk walks the message in
// field order and fails on the first thing the worker would refuse or
// protocol 2 cannot say: text that is not UTF-8, a value root out of
// range or too deep for the worker's decoder, a field of a later version.

// chk is the check pass over one message; err is its first failure.
type chk struct {
	ve  *venc
	err error
}

func (c *chk) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// text fails on a string field that is not valid UTF-8.
func (c *chk) text(s, field string) {
	if !utf8.ValidString(s) {
		c.fail(encErr("%s is not valid UTF-8", field))
	}
}

func (c *chk) optText(s *string, field string) {
	if s != nil {
		c.text(*s, field)
	}
}

// fields fails on the first string field of f that is not valid UTF-8.
func (c *chk) fields(f leaf.Fields) {
	if name, bad := f.BadText(); bad {
		c.fail(encErr("%s is not valid UTF-8", name))
	}
}

// value checks root id, written as field at message level lvl (the frame's
// top message is 0), its error path being field+sub.
func (c *chk) value(id value.NodeID, lvl int, field, sub string) {
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

// raised checks an exception's text and data.
func (c *chk) raised(e *message.RaisedException) {
	if name, bad := leaf.ExcBadText(e); bad {
		c.fail(encErr("%s is not valid UTF-8", name))
	}
	if u, ok := e.Data.(*message.UnicodeErrorData); ok && u != nil && u.ObjectBytes != nil && u.ObjectStr != nil {
		c.fail(encErr("UnicodeErrorData: both object_bytes and object_str are set"))
	}
}

// ext checks an ExtFunctionResult at level lvl.
func (c *chk) ext(r *message.ExtResult, lvl int, field string) {
	switch r.Kind {
	case 0:
		// No arm: a protocol violation the worker reports itself.
	case message.ResultReturn:
		c.value(r.Value, lvl, field, ".return_value")
	case message.ResultError:
		if r.Error == nil {
			c.fail(encErr("%s: error result with a nil exception", field))
			return
		}
		c.raised(r.Error)
	case message.ResultFuture, message.ResultNotHandled:
	case message.ResultNotFound:
		c.text(r.Name, field+".not_found")
	default:
		c.fail(encErr("%s: unknown result kind %d", field, r.Kind))
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

func requestGraph(b message.Request) *value.Graph {
	switch x := b.(type) {
	case *message.Feed:
		return &x.Values
	case *message.ResumeCall:
		return &x.Values
	case *message.ResumeNameLookup:
		return &x.Values
	case *message.ResumeFutures:
		return &x.Values
	}
	return nil
}

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
	st, err := begin(requestGraph(r.Body), lim)
	if err != nil {
		return dst, err
	}
	defer st.release()
	if st.c.request(r); st.c.err != nil {
		return dst, st.c.err
	}
	enc := core.Enc{V: core.Dialect2, Vals: st.c.ve}
	size, n := enc.RequestSize(r, r.Body)
	if size > lim.FrameLen() {
		return dst, capErr("the encoded frame would exceed the frame cap of %d bytes", lim.FrameLen())
	}
	return enc.AppendRequest(slices.Grow(dst, size), r, r.Body, n), nil
}

func (c *chk) request(r *message.ParentRequest) {
	switch x := r.Body.(type) {
	case nil, *message.Dump, *message.Load, *message.Reset, *message.Shutdown:
	case *message.Configure:
		c.fields(leaf.ConfigureFields(x))
	case *message.InstallDependencies:
		for _, s := range x.Requirements {
			c.text(s, "InstallDependencies.requirements")
		}
	case *message.Feed:
		if x.Cwd != "" {
			c.fail(encErr("Feed.cwd: protocol 2 has no working-directory field (got %q)", x.Cwd))
		}
		c.text(x.Code, "Feed.code")
		for i := range x.Inputs {
			c.text(x.Inputs[i].Name, "NamedValue.name")
			c.value(x.Inputs[i].Value, 2, "NamedValue.value", "")
		}
	case *message.ResumeCall:
		if x.Result != nil {
			c.ext(x.Result, 2, "ResumeCall.result")
		}
	case *message.ResumeNameLookup:
		switch x.Kind {
		case 0, message.LookupUndefined:
		case message.LookupValue:
			c.value(x.Value, 1, "ResumeNameLookup.value", "")
		case message.LookupError:
			if x.Error == nil {
				c.fail(encErr("ResumeNameLookup.error: nil exception"))
				return
			}
			c.raised(x.Error)
		default:
			c.fail(encErr("ResumeNameLookup: unknown kind %d", x.Kind))
		}
	case *message.ResumeFutures:
		for i := range x.Results {
			if r := x.Results[i].Result; r != nil {
				c.ext(r, 3, "FutureResult.result")
			}
		}
	case *message.AbortFeed:
		if x.Exception != nil {
			c.raised(x.Exception)
		}
	default:
		c.fail(encErr("protocol 2 has no request of type %T", x))
	}
	c.optText(r.TraceParent, "ParentRequest.trace_parent")
}

// ---------------------------------------------------------------------------
// Events

func eventGraph(b message.Event) *value.Graph {
	switch x := b.(type) {
	case *message.FunctionCall:
		return &x.Values
	case *message.OsCall:
		return &x.Values
	case *message.Complete:
		return &x.Values
	}
	return nil
}

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
	st, err := begin(eventGraph(e.Body), lim)
	if err != nil {
		return dst, err
	}
	defer st.release()
	if st.c.event(e); st.c.err != nil {
		return dst, st.c.err
	}
	enc := core.Enc{V: core.Dialect2, Vals: st.c.ve}
	size, n := enc.EventSize(e, e.Body)
	if size > lim.FrameLen() {
		return dst, capErr("the encoded frame would exceed the frame cap of %d bytes", lim.FrameLen())
	}
	return enc.AppendEvent(slices.Grow(dst, size), e, e.Body, n), nil
}

func (c *chk) event(e *message.ChildEvent) {
	switch x := e.Body.(type) {
	case nil, *message.ResolveFutures, *message.DumpResult, *message.Ok, *message.ShutdownDump:
	case *message.Print:
		if len(x.Segments) != 1 {
			c.fail(encErr("Print: protocol 2 carries exactly one segment per event, got %d", len(x.Segments)))
			return
		}
		c.text(x.Segments[0].Text, "Print.text")
	case *message.FunctionCall:
		if x.AllowEagerAwait {
			c.fail(encErr("FunctionCall.allow_eager_await: protocol 2 has no eager await"))
		}
		c.text(x.FunctionName, "FunctionCall.function_name")
		for _, a := range x.Args {
			c.value(a, 1, "FunctionCall.args", "")
		}
		for _, p := range x.Kwargs {
			c.value(p.Key, 2, "Pair.key", "")
			c.value(p.Value, 2, "Pair.value", "")
		}
	case *message.OsCall:
		c.osCall(x)
	case *message.NameLookup:
		c.text(x.Name, "NameLookup.name")
	case *message.Complete:
		c.value(x.Value, 1, "Complete.value", "")
	case *message.Error:
		if x.Exception != nil {
			c.raised(x.Exception)
		}
	case *message.TypingError:
		c.text(x.Diagnostics, "TypingError.diagnostics")
	case *message.FatalError:
		c.text(x.Message, "FatalError.message")
	default:
		c.fail(encErr("protocol 2 has no event of type %T", x))
	}
	c.optText(e.RestoredScriptName, "ChildEvent.restored_script_name")
}

func (c *chk) osCall(x *message.OsCall) {
	switch {
	case x.Op == 0:
		// No arm: a protocol violation.
	case x.Op == message.OpGetenv:
		c.text(x.Key, "Getenv.key")
		c.value(x.Default, 2, "Getenv.default", "")
	case x.Op == message.OpUrandom:
		c.fail(encErr("OsCall.urandom: protocol 2 has no urandom call (OsCall arms stop at 24)"))
	case x.Op < message.OpExists || x.Op > message.OpDateTimeNow:
		c.fail(encErr("OsCall: unknown op %d", x.Op))
	default:
		if x.Op == message.OpOpen {
			if _, err := value.NormalizeFileMode(x.Mode); err != nil {
				c.fail(&codec.EncodeError{Msg: "codecv2: OsCall.open", Err: err})
			}
		}
		if f, ok := leaf.OsArgFields(protowire.Number(x.Op), x); ok {
			c.fields(f)
		} else if x.Op <= message.OpRmdir {
			c.text(x.Path, "OsCall."+x.Op.String())
		} else if x.Op == message.OpDateTimeNow && x.TZ != nil {
			c.fields(leaf.TimeZoneFields(x.TZ))
		}
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

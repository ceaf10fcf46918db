package codecv2

import (
	"reflect"
	"slices"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
)

// wr writes one frame in two passes over the same code: a sizing pass that
// validates everything and counts bytes, then (only if that succeeded and
// the frame fits) a writing pass. A nested message's length is obtained by
// running its body in sizing mode first; protocol messages are shallow and
// values have precomputed lengths, so this stays linear in practice.
//
// Fields are written in strictly ascending field-number order, with
// implicit-presence zero values omitted and oneof arms always written,
// which is the byte layout the worker produces.
type wr struct {
	b      []byte
	n      int64
	sizing bool
	depth  int // message level of the body being written; the top message is 0
	ve     *venc
	err    error
}

func (w *wr) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

func (w *wr) key(num protowire.Number, t protowire.Type) {
	if w.sizing {
		w.n += int64(protowire.SizeTag(num))
		return
	}
	w.b = protowire.AppendTag(w.b, num, t)
}

func (w *wr) varint(num protowire.Number, v uint64) {
	w.key(num, protowire.VarintType)
	if w.sizing {
		w.n += sizeVarint(v)
		return
	}
	w.b = protowire.AppendVarint(w.b, v)
}

func (w *wr) u64(num protowire.Number, v uint64) {
	if v != 0 {
		w.varint(num, v)
	}
}

func (w *wr) optU64(num protowire.Number, v *uint64) {
	if v != nil {
		w.varint(num, *v)
	}
}

func (w *wr) u32(num protowire.Number, v uint32) { w.u64(num, uint64(v)) }

// i32 writes an int32 field; negative values are sign-extended.
func (w *wr) i32(num protowire.Number, v int32) { w.u64(num, uint64(int64(v))) }

func (w *wr) boolean(num protowire.Number, v bool) {
	if v {
		w.varint(num, 1)
	}
}

func (w *wr) raw(num protowire.Number, b []byte) {
	w.key(num, protowire.BytesType)
	if w.sizing {
		w.n += sizeVarint(uint64(len(b))) + int64(len(b))
		return
	}
	w.b = protowire.AppendVarint(w.b, uint64(len(b)))
	w.b = append(w.b, b...)
}

func (w *wr) strAlways(num protowire.Number, s, field string) {
	if w.sizing && !utf8.ValidString(s) {
		w.fail(encErr("%s is not valid UTF-8", field))
	}
	w.key(num, protowire.BytesType)
	if w.sizing {
		w.n += sizeVarint(uint64(len(s))) + int64(len(s))
		return
	}
	w.b = protowire.AppendVarint(w.b, uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *wr) str(num protowire.Number, s, field string) {
	if s != "" {
		w.strAlways(num, s, field)
	}
}

func (w *wr) optStr(num protowire.Number, s *string, field string) {
	if s != nil {
		w.strAlways(num, *s, field)
	}
}

func (w *wr) bytes(num protowire.Number, b []byte) {
	if len(b) != 0 {
		w.raw(num, b)
	}
}

func (w *wr) unit(num protowire.Number) { w.msg(num, func() {}) }

// sub writes field num holding a message of an n-byte payload that app
// appends: one of the leaf encoders protocol 4 shares.
func (w *wr) sub(num protowire.Number, n int, app func([]byte) []byte) {
	if w.sizing {
		w.n += int64(leaf.SizeM(num, n))
		return
	}
	w.b = app(leaf.AppendM(w.b, num, n))
}

// text fails the frame (in the sizing pass) when a string field of f is
// not valid UTF-8.
func (w *wr) text(f leaf.Fields) {
	if !w.sizing {
		return
	}
	if name, bad := f.BadText(); bad {
		w.fail(encErr("%s is not valid UTF-8", name))
	}
}

// msg writes a nested message whose fields f writes.
func (w *wr) msg(num protowire.Number, f func()) {
	if w.sizing {
		start := w.n
		w.depth++
		f()
		w.depth--
		l := w.n - start
		w.n += int64(protowire.SizeTag(num)) + sizeVarint(uint64(l))
		return
	}
	saved := w.n
	w.sizing, w.n = true, 0
	w.depth++
	f()
	l := w.n
	w.sizing, w.n = false, saved
	w.b = protowire.AppendTag(w.b, num, protowire.BytesType)
	w.b = protowire.AppendVarint(w.b, uint64(l))
	f()
	w.depth--
}

// value writes root id of the message's graph as MontyObject field num.
func (w *wr) value(num protowire.Number, id value.NodeID, field string) {
	w.valueIn(num, id, field, "")
}

// valueIn is value for a field whose error path is field+sub; the two are
// joined only when an error is reported, so encoding allocates no path.
func (w *wr) valueIn(num protowire.Number, id value.NodeID, field, sub string) {
	if w.ve == nil || int(id) >= len(w.ve.pl) || (w.sizing && w.depth+int(w.ve.dep[id]) > MaxDepth) {
		w.valueErr(id, field+sub)
		return
	}
	if w.sizing {
		b := w.ve.body(id)
		w.n += int64(protowire.SizeTag(num)) + sizeVarint(uint64(b)) + b
		return
	}
	w.b = w.ve.appendField(w.b, num, id)
}

// valueErr reports why root id cannot be written as field.
func (w *wr) valueErr(id value.NodeID, field string) {
	if w.ve == nil || int(id) >= len(w.ve.pl) {
		n := 0
		if w.ve != nil {
			n = len(w.ve.pl)
		}
		w.fail(encErr("%s: value root %d is out of range for a graph of %d nodes", field, id, n))
		return
	}
	w.fail(depthErr(field, w.depth+int(w.ve.dep[id])))
}

func depthErr(field string, d int) error {
	return encErr("%s: the value reaches %d protobuf message levels below the frame's top message; "+
		"the protocol-2 worker's decoder stops at %d (an int in 48 nested lists is the deepest list input)",
		field, d, MaxDepth)
}

func (w *wr) uuid(num protowire.Number, id *value.UUID) {
	if w.sizing {
		w.n += leaf.UUIDFieldSize
		return
	}
	w.b = leaf.AppendUUID(w.b, num, id)
}

// noValues is the value encoder of a message without values. Only prepare
// writes to a venc, so this one is shared, read-only.
var noValues = &venc{g: &value.Graph{}}

// encoder is the state of one frame's encode. It is pooled, so that
// encoding a frame with a small graph (a call's arguments, a result)
// allocates nothing but the caller's buffer; it is zeroed before it goes
// back, so the pool keeps neither a graph nor a buffer alive.
type encoder struct {
	w  wr
	ve venc
}

var encoders = sync.Pool{New: func() any { return new(encoder) }}

// run encodes a frame: validate and size, check the cap, then write.
func run(dst []byte, g *value.Graph, lim codec.Limits, f func(w *wr)) ([]byte, error) {
	st := encoders.Get().(*encoder)
	defer func() {
		*st = encoder{}
		encoders.Put(st)
	}()
	w := &st.w
	w.sizing = true
	if g != nil && len(g.Nodes) > 0 {
		w.ve = &st.ve
		if err := w.ve.prepare(g, lim.FrameLen()); err != nil {
			return dst, err
		}
	} else {
		w.ve = noValues
	}
	f(w)
	if w.err != nil {
		return dst, w.err
	}
	if w.n > int64(lim.FrameLen()) {
		return dst, capErr("the encoded frame would exceed the frame cap of %d bytes", lim.FrameLen())
	}
	size := w.n
	w.sizing, w.n = false, 0
	w.b = slices.Grow(dst, int(size))
	f(w)
	return w.b, nil
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
	return run(dst, requestGraph(r.Body), lim, func(w *wr) { w.request(r) })
}

func (w *wr) request(r *message.ParentRequest) {
	switch x := r.Body.(type) {
	case nil:
	case *message.Configure:
		w.text(leaf.ConfigureFields(x))
		w.sub(1, leaf.ConfigureSize(x, limits), func(b []byte) []byte { return leaf.AppendConfigure(b, x, limits) })
	case *message.InstallDependencies:
		w.msg(2, func() {
			for _, s := range x.Requirements {
				w.strAlways(1, s, "InstallDependencies.requirements")
			}
		})
	case *message.Feed:
		w.msg(3, func() { w.feed(x) })
	case *message.ResumeCall:
		w.msg(4, func() {
			w.u32(1, x.CallID)
			if x.Result != nil {
				w.msg(2, func() { w.extResult(x.Result, "ResumeCall.result") })
			}
		})
	case *message.ResumeNameLookup:
		w.msg(5, func() { w.resumeNameLookup(x) })
	case *message.ResumeFutures:
		w.msg(6, func() {
			for i := range x.Results {
				fr := &x.Results[i]
				w.msg(1, func() {
					w.u32(1, fr.CallID)
					if fr.Result != nil {
						w.msg(2, func() { w.extResult(fr.Result, "FutureResult.result") })
					}
				})
			}
		})
	case *message.Dump:
		w.unit(7)
	case *message.Load:
		w.msg(8, func() { w.bytes(1, x.State) })
	case *message.Reset:
		w.unit(9)
	case *message.Shutdown:
		w.unit(10)
	case *message.AbortFeed:
		w.msg(11, func() {
			if x.Exception != nil {
				w.raised(1, x.Exception)
			}
		})
	default:
		w.fail(encErr("protocol 2 has no request of type %T", x))
	}
	w.optStr(20, r.TraceParent, "ParentRequest.trace_parent")
}

// limits are protocol 2's ResourceLimits field numbers.
var limits = leaf.LimitNums{Duration: 1}

func (w *wr) feed(x *message.Feed) {
	if x.Cwd != "" {
		w.fail(encErr("Feed.cwd: protocol 2 has no working-directory field (got %q)", x.Cwd))
	}
	w.str(1, x.Code, "Feed.code")
	for i := range x.Inputs {
		in := &x.Inputs[i]
		w.msg(2, func() {
			w.str(1, in.Name, "NamedValue.name")
			w.value(2, in.Value, "NamedValue.value")
		})
	}
	w.boolean(3, x.SkipTypeCheck)
}

func (w *wr) extResult(r *message.ExtResult, field string) {
	switch r.Kind {
	case 0:
		// No arm: a protocol violation the worker reports itself.
	case message.ResultReturn:
		w.valueIn(1, r.Value, field, ".return_value")
	case message.ResultError:
		if r.Error == nil {
			w.fail(encErr("%s: error result with a nil exception", field))
			return
		}
		w.raised(2, r.Error)
	case message.ResultFuture:
		w.varint(3, uint64(r.Future))
	case message.ResultNotFound:
		w.strAlways(4, r.Name, field+".not_found")
	case message.ResultNotHandled:
		w.unit(5)
	default:
		w.fail(encErr("%s: unknown result kind %d", field, r.Kind))
	}
}

func (w *wr) resumeNameLookup(x *message.ResumeNameLookup) {
	switch x.Kind {
	case 0:
	case message.LookupValue:
		w.value(1, x.Value, "ResumeNameLookup.value")
	case message.LookupUndefined:
		w.unit(2)
	case message.LookupError:
		if x.Error == nil {
			w.fail(encErr("ResumeNameLookup.error: nil exception"))
			return
		}
		w.raised(3, x.Error)
	default:
		w.fail(encErr("ResumeNameLookup: unknown kind %d", x.Kind))
	}
}

// raised writes exception e as field num.
func (w *wr) raised(num protowire.Number, e *message.RaisedException) {
	if w.sizing {
		if name, bad := leaf.ExcBadText(e); bad {
			w.fail(encErr("%s is not valid UTF-8", name))
		}
		if u, ok := e.Data.(*message.UnicodeErrorData); ok && u != nil && u.ObjectBytes != nil && u.ObjectStr != nil {
			w.fail(encErr("UnicodeErrorData: both object_bytes and object_str are set"))
		}
	}
	w.sub(num, leaf.ExcSize(e), func(b []byte) []byte { return leaf.AppendExc(b, e) })
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
	return run(dst, eventGraph(e.Body), lim, func(w *wr) { w.event(e) })
}

func (w *wr) event(e *message.ChildEvent) {
	switch x := e.Body.(type) {
	case nil:
	case *message.Print:
		if len(x.Segments) != 1 {
			w.fail(encErr("Print: protocol 2 carries exactly one segment per event, got %d", len(x.Segments)))
			return
		}
		seg := &x.Segments[0]
		if seg.Stream > message.StreamStderr {
			w.fail(encErr("Print.stream: unknown stream %d", seg.Stream))
		}
		w.msg(1, func() {
			w.i32(1, int32(seg.Stream))
			w.str(2, seg.Text, "Print.text")
		})
	case *message.FunctionCall:
		if x.AllowEagerAwait {
			w.fail(encErr("FunctionCall.allow_eager_await: protocol 2 has no eager await"))
		}
		w.msg(2, func() {
			w.str(1, x.FunctionName, "FunctionCall.function_name")
			for _, a := range x.Args {
				w.value(2, a, "FunctionCall.args")
			}
			for _, p := range x.Kwargs {
				w.msg(3, func() {
					w.value(1, p.Key, "Pair.key")
					w.value(2, p.Value, "Pair.value")
				})
			}
			w.u32(4, x.CallID)
			if x.ObjectID != nil {
				w.uuid(5, x.ObjectID)
			}
		})
	case *message.OsCall:
		w.msg(3, func() {
			w.u32(1, x.CallID)
			w.osCall(x)
		})
	case *message.NameLookup:
		w.msg(4, func() {
			w.str(1, x.Name, "NameLookup.name")
			if x.ObjectID != nil {
				w.uuid(2, x.ObjectID)
			}
		})
	case *message.ResolveFutures:
		ids := x.PendingCallIDs
		w.sub(5, leaf.SizePacked(1, ids), func(b []byte) []byte { return leaf.AppendPacked(b, 1, ids) })
	case *message.Complete:
		w.msg(6, func() { w.value(1, x.Value, "Complete.value") })
	case *message.Error:
		w.msg(7, func() {
			if x.Exception != nil {
				w.raised(1, x.Exception)
			}
		})
	case *message.TypingError:
		w.msg(8, func() { w.str(1, x.Diagnostics, "TypingError.diagnostics") })
	case *message.DumpResult:
		w.msg(9, func() { w.bytes(1, x.State) })
	case *message.Ok:
		w.unit(10)
	case *message.FatalError:
		w.msg(11, func() { w.str(1, x.Message, "FatalError.message") })
	case *message.ShutdownDump:
		w.msg(12, func() {
			if x.Dump != nil {
				w.raw(1, *x.Dump)
			}
		})
	default:
		w.fail(encErr("protocol 2 has no event of type %T", x))
	}
	w.u64(20, e.TotalExecutionMicros)
	w.optU64(21, e.MaxDurationMicros)
	w.optStr(22, e.RestoredScriptName, "ChildEvent.restored_script_name")
	w.optU64(23, e.MaxSuspensions)
}

func (w *wr) osCall(x *message.OsCall) {
	op := protowire.Number(x.Op)
	switch {
	case x.Op == 0:
		// No arm: a protocol violation.
	case x.Op == message.OpGetenv:
		w.msg(op, func() {
			w.str(1, x.Key, "Getenv.key")
			w.value(2, x.Default, "Getenv.default")
		})
	case x.Op == message.OpUrandom:
		w.fail(encErr("OsCall.urandom: protocol 2 has no urandom call (OsCall arms stop at 24)"))
	case x.Op < message.OpExists || x.Op > message.OpDateTimeNow:
		w.fail(encErr("OsCall: unknown op %d", x.Op))
	default:
		if x.Op == message.OpOpen {
			if _, err := value.NormalizeFileMode(x.Mode); err != nil {
				w.fail(&codec.EncodeError{Msg: "codecv2: OsCall.open", Err: err})
			}
		}
		if f, ok := leaf.OsArgFields(op, x); ok {
			w.text(f)
		} else if x.Op <= message.OpRmdir && w.sizing && !utf8.ValidString(x.Path) {
			w.fail(encErr("OsCall.%s is not valid UTF-8", x.Op))
		} else if x.Op == message.OpDateTimeNow && x.TZ != nil {
			w.text(leaf.TimeZoneFields(x.TZ))
		}
		n, _ := leaf.OsArgSize(x)
		w.sub(op, n, func(b []byte) []byte { return leaf.AppendOsArg(b, x) })
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

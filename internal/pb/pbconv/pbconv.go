// Package pbconv fills the generated protobuf-go messages of every
// protocol schema (internal/pb/montyp2v1, montyv1, montyp5v1) from domain
// messages and values, for the codecs' oracle tests. It works on the
// messages' reflection (field names and numbers), so the leaf messages the
// schemas share field for field are converted by one piece of code
// whichever schema's Go type holds them; what the schemas model apart
// (value trees against arenas, version-specific fields) stays with each
// codec's test.
//
// Presence follows the canonical encoding rules independently of the
// codecs: implicit-presence fields are set from the domain value (a zero
// value leaves them unset), optional ones only when the domain pointer is
// non-nil.
package pbconv

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// Set sets field name of m to v: a bool, an int32, int64, uint32, uint64,
// float64, string or []byte, or a pointer to one of them (an optional
// field: nil leaves it unset). A zero value of an implicit-presence field
// leaves it unset. It panics when m has no such field: a converter out of
// step with the schema is a test bug.
func Set(m protoreflect.Message, name string, v any) {
	var pv protoreflect.Value
	switch x := v.(type) {
	case *string:
		if x == nil {
			return
		}
		pv = protoreflect.ValueOfString(*x)
	case *int32:
		if x == nil {
			return
		}
		pv = protoreflect.ValueOfInt32(*x)
	case *uint32:
		if x == nil {
			return
		}
		pv = protoreflect.ValueOfUint32(*x)
	case *uint64:
		if x == nil {
			return
		}
		pv = protoreflect.ValueOfUint64(*x)
	case []byte:
		if x == nil {
			return
		}
		pv = protoreflect.ValueOfBytes(append([]byte{}, x...))
	default:
		pv = protoreflect.ValueOf(v)
	}
	m.Set(field(m, name), pv)
}

// field returns m's field called name.
func field(m protoreflect.Message, name string) protoreflect.FieldDescriptor {
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		panic(fmt.Sprintf("pbconv: %s has no field %s", m.Descriptor().FullName(), name))
	}
	return fd
}

// Sub returns message field name of m, set (empty) if it was not.
func Sub(m protoreflect.Message, name string) protoreflect.Message {
	return m.Mutable(field(m, name)).Message()
}

// Arm returns the message arm numbered num of m, set (empty) if it was
// not; a unit arm is left empty.
func Arm(m protoreflect.Message, num protoreflect.FieldNumber) protoreflect.Message {
	return m.Mutable(m.Descriptor().Fields().ByNumber(num)).Message()
}

// setArm sets scalar arm num of m to v.
func setArm(m protoreflect.Message, num protoreflect.FieldNumber, v protoreflect.Value) {
	m.Set(m.Descriptor().Fields().ByNumber(num), v)
}

// UUID fills a Uuid message.
func UUID(m protoreflect.Message, u *value.UUID) { Set(m, "data", u[:]) }

// TimeZone fills a TimeZone message.
func TimeZone(m protoreflect.Message, z *value.TimeZone) {
	Set(m, "offset_seconds", z.Offset)
	Set(m, "name", z.Name)
}

// Leaf sets the oneof arm of m, a MontyObject (protocol 2) or a MontyNode
// (protocols 4 and 5), for node n when n is of a kind every schema writes
// alike (units, scalars, text, bytes and the leaf messages: dates, times,
// time zones, exceptions, functions, file handles), and reports whether
// it was. The arm numbers are the node kinds in every schema.
func Leaf(m protoreflect.Message, n *value.Node) bool {
	num := protoreflect.FieldNumber(n.Kind)
	switch n.Kind {
	case value.KindEllipsis, value.KindNone, value.KindNotImplemented:
		Arm(m, num)
	case value.KindBool:
		setArm(m, num, protoreflect.ValueOfBool(n.Bool()))
	case value.KindInt:
		setArm(m, num, protoreflect.ValueOfInt64(n.Int()))
	case value.KindFloat:
		setArm(m, num, protoreflect.ValueOfFloat64(n.Float()))
	case value.KindStr, value.KindBuiltinFunction, value.KindPath, value.KindRepr:
		setArm(m, num, protoreflect.ValueOfString(n.Text()))
	case value.KindBytes:
		setArm(m, num, protoreflect.ValueOfBytes(append([]byte{}, n.Bytes()...)))
	case value.KindDate:
		d, x := n.Ext().(*value.Date), Arm(m, num)
		Set(x, "year", d.Year)
		Set(x, "month", d.Month)
		Set(x, "day", d.Day)
	case value.KindTime:
		t, x := n.Ext().(*value.Time), Arm(m, num)
		Set(x, "hour", t.Hour)
		Set(x, "minute", t.Minute)
		Set(x, "second", t.Second)
		Set(x, "microsecond", t.Microsecond)
		Set(x, "offset_seconds", t.Offset)
		Set(x, "timezone_name", t.TZName)
		Set(x, "fold", t.Fold)
	case value.KindDateTime:
		d, x := n.Ext().(*value.DateTime), Arm(m, num)
		Set(x, "year", d.Year)
		Set(x, "month", d.Month)
		Set(x, "day", d.Day)
		Set(x, "hour", d.Hour)
		Set(x, "minute", d.Minute)
		Set(x, "second", d.Second)
		Set(x, "microsecond", d.Microsecond)
		Set(x, "offset_seconds", d.Offset)
		Set(x, "timezone_name", d.TZName)
	case value.KindTimeDelta:
		d, x := n.Ext().(*value.TimeDelta), Arm(m, num)
		Set(x, "days", d.Days)
		Set(x, "seconds", d.Seconds)
		Set(x, "microseconds", d.Microseconds)
	case value.KindTimeZone:
		TimeZone(Arm(m, num), n.Ext().(*value.TimeZone))
	case value.KindException:
		e, x := n.Ext().(*value.Exception), Arm(m, num)
		Set(x, "exc_type", e.Type)
		Set(x, "arg", e.Arg)
	case value.KindFunction:
		f, x := n.Ext().(*value.Function), Arm(m, num)
		Set(x, "name", f.Name)
		Set(x, "docstring", f.Docstring)
	case value.KindFileHandle:
		f, x := n.Ext().(*value.FileHandle), Arm(m, num)
		mode, _ := value.NormalizeFileMode(f.Mode)
		Set(x, "path", f.Path)
		Set(x, "mode", mode)
		Set(x, "position", f.Position)
	default:
		return false
	}
	return true
}

// Node is Leaf, else a container every schema shapes alike: it sets the arm of m for node n of g
// when every schema shapes n's kind alike, and reports whether it did.
func Node(m protoreflect.Message, g *value.Graph, n *value.Node, v Values) bool {
	return Leaf(m, n) || container(m, g, n, v)
}

// container sets the oneof arm of m, a MontyObject or a MontyNode, for
// node n of g when n is a container every schema shapes alike around its
// values (list, tuple, set, frozenset, named tuple, dict: the items in a
// repeated field "items", "values" or "pairs"), converting the items
// through v, and reports whether it was.
func container(m protoreflect.Message, g *value.Graph, n *value.Node, v Values) bool {
	num := protoreflect.FieldNumber(n.Kind)
	switch n.Kind {
	case value.KindList, value.KindTuple, value.KindSet, value.KindFrozenSet:
		x := Arm(m, num)
		for _, r := range n.Refs() {
			appendValue(v, x, "items", g, r)
		}
	case value.KindNamedTuple:
		t, x := n.Ext().(*value.NamedTuple), Arm(m, num)
		Set(x, "type_name", t.TypeName)
		l := x.Mutable(field(x, "field_names")).List()
		for _, f := range t.FieldNames {
			l.Append(protoreflect.ValueOfString(f))
		}
		for _, r := range n.Refs() {
			appendValue(v, x, "values", g, r)
		}
	case value.KindDict:
		pairs(Arm(m, num), "pairs", g, n.Pairs(), v)
	default:
		return false
	}
	return true
}

// pairs appends ps to repeated field name of m (a dict's pairs, a call's
// kwargs: Pair at protocol 2, NodePair later), converting keys and values
// through v.
func pairs(m protoreflect.Message, name string, g *value.Graph, ps []value.Pair, v Values) {
	for _, p := range ps {
		x := newElem(m, name)
		setValue(v, x, "key", g, p.Key)
		setValue(v, x, "value", g, p.Value)
	}
}

// Exc fills a RaisedException message.
func Exc(m protoreflect.Message, e *message.RaisedException) {
	Set(m, "exc_type", e.Type)
	Set(m, "message", e.Message)
	tb := m.Mutable(field(m, "traceback")).List()
	for _, f := range e.Traceback {
		v := tb.NewElement()
		x := v.Message()
		Set(x, "filename", f.Filename)
		codeLoc(Sub(x, "start"), f.Start)
		codeLoc(Sub(x, "end"), f.End)
		Set(x, "frame_name", f.FrameName)
		Set(x, "preview_line", f.PreviewLine)
		Set(x, "hide_caret", f.HideCaret)
		Set(x, "hide_frame_name", f.HideFrameName)
		tb.Append(v)
	}
	switch d := e.Data.(type) {
	case *message.UnicodeErrorData:
		u := Sub(Sub(m, "data"), "unicode")
		Set(u, "encoding", d.Encoding)
		if d.ObjectBytes != nil {
			Set(u, "object_bytes", d.ObjectBytes)
		} else {
			Set(u, "object_str", d.ObjectStr)
		}
		Set(u, "start", d.Start)
		Set(u, "end", d.End)
		Set(u, "reason", d.Reason)
	case *message.JSONErrorData:
		j := Sub(Sub(m, "data"), "json")
		Set(j, "msg", d.Msg)
		Set(j, "doc", d.Doc)
		Set(j, "pos", d.Pos)
		Set(j, "lineno", d.Lineno)
		Set(j, "colno", d.Colno)
	}
}

func codeLoc(m protoreflect.Message, l message.CodeLoc) {
	Set(m, "line", l.Line)
	Set(m, "column", l.Column)
}

// Configure fills the fields of a Configure message every schema has
// (1 to 10, with the five limits of protocol 2).
func Configure(m protoreflect.Message, c *message.Configure) {
	Set(m, "script_name", c.ScriptName)
	Set(m, "type_check", c.TypeCheck)
	Set(m, "type_check_stubs", c.TypeCheckStubs)
	Set(m, "monty_version", c.MontyVersion)
	Set(m, "assert_message_annotations", c.AssertMessageAnnotations)
	Set(m, "type_check_format", protoreflect.EnumNumber(int32(c.TypeCheckFormat)))
	Set(m, "type_check_color", c.TypeCheckColor)
	Set(m, "protocol_version", c.ProtocolVersion)
	Set(m, "print_flush_interval_ms", c.PrintFlushIntervalMs)
	if l := c.Limits; l != nil {
		x := Sub(m, "limits")
		Set(x, "max_duration_micros", l.MaxDurationMicros)
		Set(x, "max_memory_bytes", l.MaxMemoryBytes)
		Set(x, "gc_interval", l.GCInterval)
		Set(x, "max_recursion_depth", l.MaxRecursionDepth)
		Set(x, "max_suspensions", l.MaxSuspensions)
	}
}

// OsArg sets the call arm of an OsCall message for the ops every schema
// numbers and shapes alike (exists to date_time_now but getenv, whose
// default is a value), and reports whether x's op was one.
func OsArg(m protoreflect.Message, x *message.OsCall) bool {
	num := protoreflect.FieldNumber(x.Op)
	switch op := x.Op; {
	case op == message.OpGetenv || op < message.OpExists || op > message.OpDateTimeNow:
		return false
	case op <= message.OpRmdir:
		setArm(m, num, protoreflect.ValueOfString(x.Path))
	case op == message.OpWriteText || op == message.OpAppendText:
		a := Arm(m, num)
		Set(a, "path", x.Path)
		Set(a, "data", x.Text)
	case op == message.OpWriteBytes || op == message.OpAppendBytes:
		a := Arm(m, num)
		Set(a, "path", x.Path)
		Set(a, "data", x.Data)
	case op == message.OpOpen:
		a := Arm(m, num)
		Set(a, "path", x.Path)
		Set(a, "mode", x.Mode)
	case op == message.OpMkdir:
		a := Arm(m, num)
		Set(a, "path", x.Path)
		Set(a, "parents", x.Parents)
		Set(a, "exist_ok", x.ExistOK)
	case op == message.OpRename:
		a := Arm(m, num)
		Set(a, "src", x.Path)
		Set(a, "dst", x.Dst)
	case op == message.OpDateTimeNow:
		a := Arm(m, num)
		if x.TZ != nil {
			TimeZone(Sub(a, "tz"), x.TZ)
		}
	default: // get_environ, date_today
		Arm(m, num)
	}
	return true
}

// Ext sets the arm of an ExtFunctionResult for the result kinds every
// schema writes alike (all but a returned value), and reports whether r's
// kind was one. An error result without an exception gets an empty one.
func Ext(m protoreflect.Message, r *message.ExtResult) bool {
	switch r.Kind {
	case message.ResultError:
		x := Sub(m, "error")
		if r.Error != nil {
			Exc(x, r.Error)
		}
	case message.ResultFuture:
		Set(m, "future", r.Future)
	case message.ResultNotFound:
		m.Set(field(m, "not_found"), protoreflect.ValueOfString(r.Name))
	case message.ResultNotHandled:
		Sub(m, "not_handled")
	default:
		return false
	}
	return true
}

// Values converts what the schemas model apart: a value (a MontyObject
// tree at protocol 2, a node id into the message's arena at 4 and 5) and
// a message's arena.
type Values interface {
	// Value is root id of g as a value of field fd (or an element of it,
	// for a repeated field).
	Value(fd protoreflect.FieldDescriptor, g *value.Graph, id value.NodeID) protoreflect.Value
	// Arena sets the arena field of m to g (a schema without one ignores
	// it).
	Arena(m protoreflect.Message, g *value.Graph)
}

// setValue sets field name of m to root id of g.
func setValue(v Values, m protoreflect.Message, name string, g *value.Graph, id value.NodeID) {
	fd := field(m, name)
	m.Set(fd, v.Value(fd, g, id))
}

// appendValue appends root id of g to repeated field name of m.
func appendValue(v Values, m protoreflect.Message, name string, g *value.Graph, id value.NodeID) {
	fd := field(m, name)
	m.Mutable(fd).List().Append(v.Value(fd, g, id))
}

// newElem appends a new message to repeated field name of m and returns
// it.
func newElem(m protoreflect.Message, name string) protoreflect.Message {
	l := m.Mutable(field(m, name)).List()
	e := l.NewElement()
	l.Append(e)
	return e.Message()
}

// setIf sets field name of m to v unless v is the zero value, so that a
// field one schema lacks is only named when the message uses it.
func setIf[T comparable](m protoreflect.Message, name string, v T) {
	var zero T
	if v != zero {
		Set(m, name, v)
	}
}

// result fills an ExtFunctionResult, its returned value through v.
func result(v Values, m protoreflect.Message, g *value.Graph, r *message.ExtResult) {
	if !Ext(m, r) && r.Kind == message.ResultReturn {
		setValue(v, m, "return_value", g, r.Value)
	}
}

// callResult fills the call id and result of a ResumeCall or a
// FutureResult.
func callResult(v Values, m protoreflect.Message, g *value.Graph, id uint32, r *message.ExtResult) {
	Set(m, "call_id", id)
	if r != nil {
		result(v, Sub(m, "result"), g, r)
	}
}

// Request fills a ParentRequest from r, its values through v.
func Request(m protoreflect.Message, r *message.ParentRequest, v Values) {
	Set(m, "trace_parent", r.TraceParent)
	switch b := r.Body.(type) {
	case *message.Configure:
		Configure(Sub(m, "configure"), b)
	case *message.InstallDependencies:
		d := Sub(m, "install_dependencies")
		l := d.Mutable(field(d, "requirements")).List()
		for _, r := range b.Requirements {
			l.Append(protoreflect.ValueOfString(r))
		}
	case *message.Feed:
		f := Sub(m, "feed")
		Set(f, "code", b.Code)
		for _, in := range b.Inputs {
			x := newElem(f, "inputs")
			Set(x, "name", in.Name)
			setValue(v, x, "value", &b.Values, in.Value)
		}
		v.Arena(f, &b.Values)
		Set(f, "skip_type_check", b.SkipTypeCheck)
		setIf(f, "cwd", b.Cwd)
	case *message.ResumeCall:
		c := Sub(m, "resume_call")
		callResult(v, c, &b.Values, b.CallID, b.Result)
		v.Arena(c, &b.Values)
	case *message.ResumeNameLookup:
		l := Sub(m, "resume_name_lookup")
		switch b.Kind {
		case message.LookupValue:
			setValue(v, l, "value", &b.Values, b.Value)
		case message.LookupUndefined:
			Sub(l, "undefined")
		case message.LookupError:
			if x := Sub(l, "error"); b.Error != nil {
				Exc(x, b.Error)
			}
		}
		v.Arena(l, &b.Values)
	case *message.ResumeFutures:
		f := Sub(m, "resume_futures")
		for _, r := range b.Results {
			callResult(v, newElem(f, "results"), &b.Values, r.CallID, r.Result)
		}
		v.Arena(f, &b.Values)
	case *message.Dump:
		Sub(m, "dump")
	case *message.Load:
		Set(Sub(m, "load"), "state", b.State)
	case *message.Reset:
		Sub(m, "reset")
	case *message.Shutdown:
		Sub(m, "shutdown")
	case *message.AbortFeed:
		if a := Sub(m, "abort_feed"); b.Exception != nil {
			Exc(Sub(a, "exception"), b.Exception)
		}
	}
}

// New is a new M filled from x by fill (Request or Event).
func New[M interface {
	*T
	proto.Message
}, T, X any](fill func(protoreflect.Message, X, Values), x X, v Values) M {
	m := M(new(T))
	fill(m.ProtoReflect(), x, v)
	return m
}

// Event fills a ChildEvent from e, its values through v. A Print is
// written as the schema models it: one segment per event at protocol 2,
// a list of segments later.
func Event(m protoreflect.Message, e *message.ChildEvent, v Values) {
	Set(m, "total_execution_micros", e.TotalExecutionMicros)
	Set(m, "max_duration_micros", e.MaxDurationMicros)
	Set(m, "restored_script_name", e.RestoredScriptName)
	Set(m, "max_suspensions", e.MaxSuspensions)
	switch b := e.Body.(type) {
	case *message.Print:
		p := Sub(m, "print")
		if p.Descriptor().Fields().ByName("segments") == nil {
			s := b.Segments[0]
			Set(p, "stream", protoreflect.EnumNumber(s.Stream))
			Set(p, "text", s.Text)
			break
		}
		for _, s := range b.Segments {
			x := newElem(p, "segments")
			Set(x, "stream", protoreflect.EnumNumber(s.Stream))
			Set(x, "text", s.Text)
		}
	case *message.FunctionCall:
		c := Sub(m, "function_call")
		Set(c, "function_name", b.FunctionName)
		for _, a := range b.Args {
			appendValue(v, c, "args", &b.Values, a)
		}
		pairs(c, "kwargs", &b.Values, b.Kwargs, v)
		Set(c, "call_id", b.CallID)
		if b.ObjectID != nil {
			UUID(Sub(c, "object_id"), b.ObjectID)
		}
		setIf(c, "allow_eager_await", b.AllowEagerAwait)
		v.Arena(c, &b.Values)
	case *message.OsCall:
		o := Sub(m, "os_call")
		Set(o, "call_id", b.CallID)
		switch {
		case OsArg(o, b):
		case b.Op == message.OpGetenv:
			g := Sub(o, "getenv")
			Set(g, "key", b.Key)
			setValue(v, g, "default", &b.Values, b.Default)
		case b.Op == message.OpUrandom:
			Set(Sub(o, "urandom"), "size", b.Size)
		}
		v.Arena(o, &b.Values)
	case *message.NameLookup:
		l := Sub(m, "name_lookup")
		Set(l, "name", b.Name)
		if b.ObjectID != nil {
			UUID(Sub(l, "object_id"), b.ObjectID)
		}
	case *message.ResolveFutures:
		l := Sub(m, "resolve_futures")
		ids := l.Mutable(field(l, "pending_call_ids")).List()
		for _, id := range b.PendingCallIDs {
			ids.Append(protoreflect.ValueOfUint32(id))
		}
	case *message.Complete:
		c := Sub(m, "complete")
		setValue(v, c, "value", &b.Values, b.Value)
		v.Arena(c, &b.Values)
	case *message.Error:
		if e := Sub(m, "error"); b.Exception != nil {
			Exc(Sub(e, "exception"), b.Exception)
		}
	case *message.TypingError:
		Set(Sub(m, "typing_error"), "diagnostics", b.Diagnostics)
	case *message.DumpResult:
		Set(Sub(m, "dump_result"), "state", b.State)
	case *message.Ok:
		Sub(m, "ok")
	case *message.FatalError:
		Set(Sub(m, "fatal_error"), "message", b.Message)
	case *message.ShutdownDump:
		if s := Sub(m, "shutdown"); b.Dump != nil {
			Set(s, "dump", append([]byte{}, *b.Dump...))
		}
	}
}

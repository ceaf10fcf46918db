package codecv4

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/core"
	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// AppendRequest appends the canonical encoding of r to dst (V4.AppendRequest).
func AppendRequest(dst []byte, r *message.ParentRequest) ([]byte, error) {
	return appendRequest(dst, r, codec.Limits{}, dialect4)
}

// AppendEvent appends the canonical encoding of e to dst (V4.AppendEvent).
func AppendEvent(dst []byte, e *message.ChildEvent) ([]byte, error) {
	return appendEvent(dst, e, codec.Limits{}, dialect4)
}

// AppendRequestLimits is AppendRequest with the frame cap of lim
// (lim.FrameLen()). Only MaxFrameLen of lim is used.
func AppendRequestLimits(dst []byte, r *message.ParentRequest, lim codec.Limits) ([]byte, error) {
	return appendRequest(dst, r, lim, dialect4)
}

func appendRequest(dst []byte, r *message.ParentRequest, lim codec.Limits, v *dialect) ([]byte, error) {
	if r == nil {
		return dst, &codec.EncodeError{Msg: v.Name + ": nil ParentRequest"}
	}
	e := newEncoder()
	defer e.release()
	body, err := requestBody(r.Body)
	if err != nil {
		return dst, named(v, err)
	}
	if err := codec.CheckRequestFields(v.Version, r); err != nil {
		return dst, err
	}
	if c, ok := body.(*message.Configure); ok && c.OsPolicy != nil {
		if err := checkPolicy(c.OsPolicy); err != nil {
			return dst, named(v, err)
		}
	}
	e.ck = checker{v: v, g: core.RequestGraph(body)}
	core.CheckRequest(v, r, body, &e.ck)
	if err := e.ck.result(); err != nil {
		return dst, err
	}
	body, e.ids = unpackRequest(body)
	enc := core.Enc{V: v, Vals: e}
	size, bodyLen := enc.RequestSize(r, body)
	if err := frame.CheckLen(size, lim.FrameLen()); err != nil {
		return dst, &codec.EncodeError{Msg: v.Name + ": ParentRequest", Err: err}
	}
	start := len(dst)
	b := enc.AppendRequest(slices.Grow(dst, size), r, body, bodyLen)
	if len(b)-start != size {
		return dst, &codec.EncodeError{Msg: fmt.Sprintf("%s: internal error: ParentRequest size %d, wrote %d", v.Name, size, len(b)-start)}
	}
	return b, nil
}

// AppendEventLimits is AppendEvent with the frame cap of lim
// (lim.FrameLen()). Only MaxFrameLen of lim is used.
func AppendEventLimits(dst []byte, ev *message.ChildEvent, lim codec.Limits) ([]byte, error) {
	return appendEvent(dst, ev, lim, dialect4)
}

func appendEvent(dst []byte, ev *message.ChildEvent, lim codec.Limits, v *dialect) ([]byte, error) {
	if ev == nil {
		return dst, &codec.EncodeError{Msg: v.Name + ": nil ChildEvent"}
	}
	e := newEncoder()
	defer e.release()
	body, err := eventBody(ev.Body)
	if err != nil {
		return dst, named(v, err)
	}
	if err := codec.CheckEventFields(v.Version, ev); err != nil {
		return dst, err
	}
	e.ck = checker{v: v, g: core.EventGraph(body)}
	core.CheckEvent(v, ev, body, &e.ck)
	if err := e.ck.result(); err != nil {
		return dst, err
	}
	body, e.ids = unpackEvent(body)
	enc := core.Enc{V: v, Vals: e}
	size, bodyLen := enc.EventSize(ev, body)
	if err := frame.CheckLen(size, lim.FrameLen()); err != nil {
		return dst, &codec.EncodeError{Msg: v.Name + ": ChildEvent", Err: err}
	}
	start := len(dst)
	b := enc.AppendEvent(slices.Grow(dst, size), ev, body, bodyLen)
	if len(b)-start != size {
		return dst, &codec.EncodeError{Msg: fmt.Sprintf("%s: internal error: ChildEvent size %d, wrote %d", v.Name, size, len(b)-start)}
	}
	return b, nil
}

// AppendArena appends the encoding of a bare Arena message holding g, after
// checking g and that every root is in range.
//
// A graph holding packed items (value.Graph.HasPacked) is refused: its
// arena would give those items nodes, and so every id above them would
// change under the caller; unpack it first (value.Graph.Unpack).
func AppendArena(dst []byte, g *value.Graph, roots ...value.NodeID) ([]byte, error) {
	if g.HasPacked() {
		return dst, &codec.EncodeError{Msg: "codecv4: Arena: the graph holds packed items; unpack it first (value.Graph.Unpack)"}
	}
	if err := checkGraph(g, len(roots), func(i int) value.NodeID { return roots[i] }); err != nil {
		return dst, named(dialect4, err)
	}
	e := newEncoder()
	defer e.release()
	size := 0
	if len(g.Nodes) > 0 {
		size = e.arenaSize(g)
	}
	if err := frame.CheckLen(size, 0); err != nil {
		return dst, &codec.EncodeError{Msg: "codecv4: Arena", Err: err}
	}
	b := slices.Grow(dst, size)
	if len(g.Nodes) > 0 {
		b = e.apArenaBody(b, g)
	}
	return b, nil
}

// ---- validation before encoding ----

func graphErr(err error) error {
	return &codec.EncodeError{Msg: "invalid value graph", Err: err}
}

// named prefixes a check's refusal (graphErr, kindErr, checkExc: errors
// made for the call) with the name of the codec it was made for, which a
// protocol-5 caller knows as codecv5.
func named(v *dialect, err error) error {
	var ee *codec.EncodeError
	if errors.As(err, &ee) {
		ee.Msg = v.Name + ": " + ee.Msg
	}
	return err
}

// checkNodes is value.Graph.Check without roots, except for class types:
// the encoder always writes a class type's id (so an all-zero id is sent
// as such, as the wire allows) and never a builtin type's, whereas
// valuecheck.CheckLeaf takes an all-zero id for a missing one.
func checkNodes(g *value.Graph) error {
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Kind == value.KindType {
			if t, ok := n.Ext().(*value.Type); ok {
				if err := valuecheck.CheckType(t, t.Origin != value.OriginBuiltin || !t.ID.IsZero(), len(t.Attrs) > 0); err != nil {
					return err
				}
				continue
			}
		}
		if err := valuecheck.CheckLeaf(*n); err != nil {
			return err
		}
		if name, bad := leaf.NodeBadText(n); bad {
			return fmt.Errorf("node %d (%s): %s is not valid UTF-8", i, n.Kind, name)
		}
	}
	return g.CheckStructure()
}

// utf8Err is the refusal of a message field that is not UTF-8, which the
// peer's decoder would refuse.
func utf8Err(v *dialect, field string) error {
	return &codec.EncodeError{Msg: v.Name + ": " + field + " is not valid UTF-8", Err: leaf.ErrUTF8}
}

// checkGraph validates g and the roots root(0..n-1).
func checkGraph(g *value.Graph, n int, root func(int) value.NodeID) error {
	if err := checkNodes(g); err != nil {
		return graphErr(err)
	}
	for i := range n {
		if err := rootInRange(g, root(i)); err != nil {
			return graphErr(err)
		}
	}
	return nil
}

var errBadKind = errors.New("unknown kind")

func kindErr(what string, v any) error {
	return &codec.EncodeError{Msg: fmt.Sprintf("cannot encode %s %v", what, v), Err: errBadKind}
}

// checker is the core.Checker of protocols 4 and 5. It keeps the first
// finding of each class, and result ranks the classes: a kind (or another
// message-level refusal), then the graph g's nodes, then a root out of
// range, then text that is not UTF-8.
type checker struct {
	v    *dialect
	g    *value.Graph
	kind error
	root error
	text string
}

func (c *checker) refuse(err error) {
	if c.kind == nil {
		c.kind = err
	}
}

// BadText implements core.Checker.
func (c *checker) BadText(field string) {
	if c.text == "" {
		c.text = field
	}
}

// Root implements core.Checker: at 4 and 5 only the range matters.
func (c *checker) Root(id value.NodeID, _ int, _, _ string) {
	if c.root == nil && int(id) >= len(c.g.Nodes) {
		c.root = rootInRange(c.g, id)
	}
}

// Bad implements core.Checker. The problems it ignores are protocol 2's:
// a nil exception is written as an empty one, and the dialects of 4 and 5
// have what the others refuse.
func (c *checker) Bad(p core.Problem, _ string, arg any) {
	switch p {
	case core.BadResultKind:
		c.refuse(kindErr("ExtResult kind", arg))
	case core.BadLookupKind:
		c.refuse(kindErr("LookupKind", arg))
	case core.BothObjects:
		c.refuse(&codec.EncodeError{Msg: "UnicodeErrorData has both object_bytes and object_str"})
	case core.BadOsOp:
		c.refuse(kindErr("OsOp", uint8(arg.(message.OsOp))))
	}
}

// OsCall implements core.Checker: a sleep's seconds, and every string.
func (c *checker) OsCall(x *message.OsCall) {
	if x.Op.IsSleep() {
		field := "Sleep.seconds"
		if x.Op == message.OpAsyncSleep || x.Op == message.OpAsyncSystemSleep {
			field = "AsyncSleep.delay"
		}
		if err := message.CheckSleepSeconds(field, x.Seconds); err != nil {
			c.refuse(&codec.EncodeError{Msg: "OsCall", Err: err})
		}
	}
	core.Text(c, x.Path, "OsCall.path")
	core.Text(c, x.Dst, "OsCall.dst")
	core.Text(c, x.Text, "OsCall.text")
	core.Text(c, x.Mode, "OsCall.mode")
	core.Text(c, x.Key, "OsCall.key")
	core.Text(c, x.Caller, "OsCall.caller")
	if x.TZ != nil && x.TZ.Name != nil {
		core.Text(c, *x.TZ.Name, "TimeZone.name")
	}
}

func (c *checker) result() error {
	if c.kind != nil {
		return named(c.v, c.kind)
	}
	if c.g != nil {
		if err := checkNodes(c.g); err != nil {
			return named(c.v, graphErr(err))
		}
	}
	if c.root != nil {
		return named(c.v, graphErr(c.root))
	}
	if c.text != "" {
		return utf8Err(c.v, c.text)
	}
	return nil
}

// requestBody resolves a typed nil body to the zero message and rejects
// body types this codec does not know.
func requestBody(r message.Request) (message.Request, error) {
	switch x := r.(type) {
	case nil:
		return nil, nil
	case *message.Configure:
		return orZero(x), nil
	case *message.InstallDependencies:
		return orZero(x), nil
	case *message.Feed:
		return orZero(x), nil
	case *message.ResumeCall:
		return orZero(x), nil
	case *message.ResumeNameLookup:
		return orZero(x), nil
	case *message.ResumeFutures:
		return orZero(x), nil
	case *message.Dump, *message.Reset, *message.Shutdown:
	case *message.Load:
		return orZero(x), nil
	case *message.AbortFeed:
		return orZero(x), nil
	default:
		return nil, kindErr("request body", fmt.Sprintf("%T", r))
	}
	return r, nil
}

// orZero is x, or a new zero T for a nil x.
func orZero[T any](x *T) *T {
	if x == nil {
		return new(T)
	}
	return x
}

// eventBody is requestBody for events.
func eventBody(ev message.Event) (message.Event, error) {
	switch x := ev.(type) {
	case nil:
		return nil, nil
	case *message.Print:
		return orZero(x), nil
	case *message.FunctionCall:
		return orZero(x), nil
	case *message.OsCall:
		return orZero(x), nil
	case *message.NameLookup:
		return orZero(x), nil
	case *message.ResolveFutures:
		return orZero(x), nil
	case *message.Complete:
		return orZero(x), nil
	case *message.Error:
		return orZero(x), nil
	case *message.TypingError:
		return orZero(x), nil
	case *message.DumpResult:
		return orZero(x), nil
	case *message.Ok:
	case *message.FatalError:
		return orZero(x), nil
	case *message.ShutdownDump:
		return orZero(x), nil
	default:
		return nil, kindErr("event body", fmt.Sprintf("%T", ev))
	}
	return ev, nil
}

// ---- values ----

// The encoder is the message layer's core.Values at 4 and 5: a value field
// holds a node id, the graph goes out once as the message's Arena.

// RefSize implements core.Values.
func (e *encoder) RefSize(num protowire.Number, id value.NodeID, always bool) int {
	if always {
		return leaf.SizeTag(num) + protowire.SizeVarint(uint64(id))
	}
	return leaf.SizeU(num, uint64(id))
}

// AppendRef implements core.Values.
func (e *encoder) AppendRef(b []byte, num protowire.Number, id value.NodeID, always bool) []byte {
	if always {
		return leaf.AppendUA(b, num, uint64(id))
	}
	return leaf.AppendU(b, num, uint64(id))
}

// RefsSize implements core.Values: the ids, packed.
func (e *encoder) RefsSize(num protowire.Number, ids []value.NodeID) int {
	return leaf.SizePacked(num, ids)
}

// AppendRefs implements core.Values.
func (e *encoder) AppendRefs(b []byte, num protowire.Number, ids []value.NodeID) []byte {
	return leaf.AppendPacked(b, num, ids)
}

// ArenaSize implements core.Values.
func (e *encoder) ArenaSize(num protowire.Number, g *value.Graph) int { return e.szArena(num, g) }

// AppendArena implements core.Values.
func (e *encoder) AppendArena(b []byte, num protowire.Number, g *value.Graph) []byte {
	return e.apArena(b, num, g)
}

package codecv4

// Test-only converters between the domain types and the generated
// protobuf-go types (the oracle). They follow the canonical encoding rules
// independently of the codec: field presence is decided here from the
// domain data.

import (
	"math/big"

	"google.golang.org/protobuf/reflect/protoreflect"

	pbv "github.com/gomonty/monty/internal/pb/montyv1"
	"github.com/gomonty/monty/internal/pb/pbconv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

func pbUUID(u value.UUID) *pbv.Uuid { return &pbv.Uuid{Data: append([]byte(nil), u[:]...)} }

func pbPairs(ps []value.Pair) *pbv.NodePairs {
	out := &pbv.NodePairs{}
	for _, p := range ps {
		out.Pairs = append(out.Pairs, &pbv.NodePair{Key: p.Key, Value: p.Value})
	}
	return out
}

func toPBNode(g *value.Graph, n *value.Node) *pbv.MontyNode {
	m := &pbv.MontyNode{}
	if pbconv.Node(m.ProtoReflect(), g, n, values{}) {
		return m
	}
	switch n.Kind {
	case value.KindBigInt:
		x := n.BigInt()
		mag := new(big.Int).Abs(x).Bytes()
		if len(mag) == 0 {
			mag = []byte{0}
		}
		m.Kind = &pbv.MontyNode_Bigint{Bigint: &pbv.BigInt{Negative: x.Sign() < 0, Magnitude: mag}}
	case value.KindType:
		t := n.Ext().(*value.Type)
		pt := &pbv.Type{Name: t.Name, Origin: pbv.TypeOrigin(t.Origin)}
		if t.Origin != value.OriginBuiltin {
			pt.Id = pbUUID(t.ID)
			pt.IsDataclass = t.IsDataclass
			if len(t.Attrs) > 0 {
				pt.Attrs = pbPairs(t.Attrs)
			}
		}
		m.Kind = &pbv.MontyNode_Type{Type: pt}
	case value.KindClassInstance:
		c := n.Ext().(*value.ClassInstance)
		m.Kind = &pbv.MontyNode_ClassInstance{ClassInstance: &pbv.ClassInstanceNode{ClassType: c.Class,
			InstanceId: pbUUID(c.InstanceID), Attrs: pbPairs(c.Attrs)}}
	case value.KindCycle:
		m.Kind = &pbv.MontyNode_Cycle{Cycle: n.Text()}
	}
	return m
}

// toPBArena returns nil for an empty graph: the canonical encoding leaves
// an empty arena out.
func toPBArena(g *value.Graph) *pbv.Arena {
	if len(g.Nodes) == 0 {
		return nil
	}
	a := &pbv.Arena{NodeCount: uint32(len(g.Nodes)), Nodes: make([]*pbv.MontyNode, len(g.Nodes))}
	for i := range g.Nodes {
		a.Nodes[i] = toPBNode(g, &g.Nodes[i])
	}
	return a
}

// values converts protocol 4's values: node ids into the message's arena.
type values struct{}

func (values) Value(_ protoreflect.FieldDescriptor, _ *value.Graph, id value.NodeID) protoreflect.Value {
	return protoreflect.ValueOfUint32(id)
}

func (values) Arena(m protoreflect.Message, g *value.Graph) {
	if a := toPBArena(g); a != nil {
		m.Set(m.Descriptor().Fields().ByName("values"), protoreflect.ValueOfMessage(a.ProtoReflect()))
	}
}

func toPBRequest(r *message.ParentRequest) *pbv.ParentRequest {
	return pbconv.New[*pbv.ParentRequest](pbconv.Request, r, values{})
}

func toPBEvent(e *message.ChildEvent) *pbv.ChildEvent {
	return pbconv.New[*pbv.ChildEvent](pbconv.Event, e, values{})
}

func toPBOsCall(x *message.OsCall) *pbv.OsCall {
	return toPBEvent(&message.ChildEvent{Body: x}).GetOsCall()
}

func toPBCall(x *message.FunctionCall) *pbv.FunctionCall {
	return toPBEvent(&message.ChildEvent{Body: x}).GetFunctionCall()
}

// ---- generated → domain, for the benchmarks' baseline ----

func fromPBArena(a *pbv.Arena) value.Graph {
	var g value.Graph
	if a == nil {
		return g
	}
	g.Nodes = make([]value.Node, len(a.Nodes))
	for i, m := range a.Nodes {
		g.Nodes[i] = fromPBNode(m)
	}
	return g
}

func fromPBPairs(p *pbv.NodePairs) []value.Pair {
	if p == nil || len(p.Pairs) == 0 {
		return nil
	}
	out := make([]value.Pair, len(p.Pairs))
	for i, x := range p.Pairs {
		out[i] = value.Pair{Key: x.Key, Value: x.Value}
	}
	return out
}

func fromPBUUID(u *pbv.Uuid) value.UUID {
	var out value.UUID
	if u != nil {
		copy(out[:], u.Data)
	}
	return out
}

func fromPBNode(m *pbv.MontyNode) value.Node {
	switch k := m.Kind.(type) {
	case *pbv.MontyNode_Ellipsis:
		return value.Ellipsis()
	case *pbv.MontyNode_None:
		return value.None()
	case *pbv.MontyNode_NotImplemented:
		return value.NotImplemented()
	case *pbv.MontyNode_Boolean:
		return value.Bool(k.Boolean)
	case *pbv.MontyNode_Int:
		return value.Int(k.Int)
	case *pbv.MontyNode_Bigint:
		z := new(big.Int).SetBytes(k.Bigint.Magnitude)
		if k.Bigint.Negative {
			z.Neg(z)
		}
		return value.Node{Kind: value.KindBigInt}.WithExt(z)
	case *pbv.MontyNode_Float:
		return value.Float(k.Float)
	case *pbv.MontyNode_Str:
		return value.Str(k.Str)
	case *pbv.MontyNode_Bytes:
		return value.Bytes(k.Bytes)
	case *pbv.MontyNode_List:
		return value.List(k.List.Items...)
	case *pbv.MontyNode_Tuple:
		return value.Tuple(k.Tuple.Items...)
	case *pbv.MontyNode_Set:
		return value.Set(k.Set.Items...)
	case *pbv.MontyNode_FrozenSet:
		return value.FrozenSet(k.FrozenSet.Items...)
	case *pbv.MontyNode_NamedTuple:
		return value.NamedTupleNode(k.NamedTuple.TypeName, k.NamedTuple.FieldNames, k.NamedTuple.Values...)
	case *pbv.MontyNode_Dict:
		refs := make([]value.NodeID, 0, 2*len(k.Dict.Pairs))
		for _, p := range k.Dict.Pairs {
			refs = append(refs, p.Key, p.Value)
		}
		return value.Node{Kind: value.KindDict}.WithRefs(refs)
	case *pbv.MontyNode_Date:
		return value.DateNode(value.Date{Year: k.Date.Year, Month: k.Date.Month, Day: k.Date.Day})
	case *pbv.MontyNode_Time:
		t := k.Time
		return value.TimeNode(value.Time{Hour: t.Hour, Minute: t.Minute, Second: t.Second, Microsecond: t.Microsecond, Offset: t.OffsetSeconds, TZName: t.TimezoneName, Fold: t.Fold})
	case *pbv.MontyNode_Datetime:
		d := k.Datetime
		return value.DateTimeNode(value.DateTime{Year: d.Year, Month: d.Month, Day: d.Day, Hour: d.Hour, Minute: d.Minute, Second: d.Second, Microsecond: d.Microsecond, Offset: d.OffsetSeconds, TZName: d.TimezoneName})
	case *pbv.MontyNode_Timedelta:
		d := k.Timedelta
		return value.TimeDeltaNode(value.TimeDelta{Days: d.Days, Seconds: d.Seconds, Microseconds: d.Microseconds})
	case *pbv.MontyNode_Timezone:
		return value.TimeZoneNode(value.TimeZone{Offset: k.Timezone.OffsetSeconds, Name: k.Timezone.Name})
	case *pbv.MontyNode_Exception:
		return value.ExceptionNode(value.Exception{Type: k.Exception.ExcType, Arg: k.Exception.Arg})
	case *pbv.MontyNode_Type:
		t := k.Type
		return value.TypeNode(value.Type{Name: t.Name, ID: fromPBUUID(t.Id), Origin: value.TypeOrigin(t.Origin), IsDataclass: t.IsDataclass, Attrs: fromPBPairs(t.Attrs)})
	case *pbv.MontyNode_ClassInstance:
		c := k.ClassInstance
		return value.ClassInstanceNode(value.ClassInstance{Class: c.ClassType, InstanceID: fromPBUUID(c.InstanceId), Attrs: fromPBPairs(c.Attrs)})
	case *pbv.MontyNode_Function:
		return value.FunctionNode(value.Function{Name: k.Function.Name, Docstring: k.Function.Docstring})
	case *pbv.MontyNode_BuiltinFunction:
		return value.BuiltinFunction(k.BuiltinFunction)
	case *pbv.MontyNode_Path:
		return value.Path(k.Path)
	case *pbv.MontyNode_FileHandle:
		f := k.FileHandle
		return value.FileHandleNode(value.FileHandle{Path: f.Path, Mode: f.Mode, Position: f.Position})
	case *pbv.MontyNode_Repr:
		return value.Repr(k.Repr)
	case *pbv.MontyNode_Cycle:
		return value.Cycle(k.Cycle)
	}
	return value.Node{}
}

// fromPBEvent converts the event kinds the benchmarks use.
func fromPBEvent(e *pbv.ChildEvent) *message.ChildEvent {
	out := &message.ChildEvent{TotalExecutionMicros: e.TotalExecutionMicros, MaxDurationMicros: e.MaxDurationMicros,
		MaxSuspensions: e.MaxSuspensions, RestoredScriptName: e.RestoredScriptName}
	switch k := e.Kind.(type) {
	case *pbv.ChildEvent_Complete:
		out.Body = &message.Complete{Value: k.Complete.Value, Values: fromPBArena(k.Complete.Values)}
	case *pbv.ChildEvent_FunctionCall:
		c := k.FunctionCall
		fc := &message.FunctionCall{FunctionName: c.FunctionName, Args: c.Args, CallID: c.CallId,
			AllowEagerAwait: c.AllowEagerAwait, Values: fromPBArena(c.Values)}
		for _, p := range c.Kwargs {
			fc.Kwargs = append(fc.Kwargs, value.Pair{Key: p.Key, Value: p.Value})
		}
		if c.ObjectId != nil {
			u := fromPBUUID(c.ObjectId)
			fc.ObjectID = &u
		}
		out.Body = fc
	case *pbv.ChildEvent_DumpResult:
		out.Body = &message.DumpResult{State: k.DumpResult.State}
	}
	return out
}

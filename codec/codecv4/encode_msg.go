package codecv4

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
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
		return dst, &codec.EncodeError{Msg: v.name + ": nil ParentRequest"}
	}
	var e encoder
	defer e.release()
	body, err := requestBody(r.Body)
	if err != nil {
		return dst, err
	}
	if err := codec.CheckRequestFields(v.version, r); err != nil {
		return dst, err
	}
	if err := checkRequest(body); err != nil {
		return dst, err
	}
	body, e.ids = unpackRequest(body)
	bodyLen := 0
	if body != nil {
		bodyLen = e.requestLen(body, v)
	}
	size := leaf.SizeOptS(20, r.TraceParent)
	if body != nil {
		size += leaf.SizeM(protowire.Number(body.RequestKind()), bodyLen)
	}
	if err := frame.CheckLen(size, lim.FrameLen()); err != nil {
		return dst, &codec.EncodeError{Msg: v.name + ": ParentRequest", Err: err}
	}
	start := len(dst)
	b := slices.Grow(dst, size)
	if body != nil {
		b = leaf.AppendM(b, protowire.Number(body.RequestKind()), bodyLen)
		b = e.apRequest(b, body, v)
	}
	b = leaf.AppendOptS(b, 20, r.TraceParent)
	if len(b)-start != size {
		return dst, &codec.EncodeError{Msg: fmt.Sprintf("%s: internal error: ParentRequest size %d, wrote %d", v.name, size, len(b)-start)}
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
		return dst, &codec.EncodeError{Msg: v.name + ": nil ChildEvent"}
	}
	var e encoder
	defer e.release()
	body, err := eventBody(ev.Body)
	if err != nil {
		return dst, err
	}
	if err := codec.CheckEventFields(v.version, ev); err != nil {
		return dst, err
	}
	if err := checkEvent(body, v); err != nil {
		return dst, err
	}
	body, e.ids = unpackEvent(body)
	bodyLen := 0
	size := leaf.SizeU(20, ev.TotalExecutionMicros) + leaf.SizeOptU(v.evDuration, ev.MaxDurationMicros) +
		leaf.SizeOptU(22, ev.MaxSuspensions) + leaf.SizeOptS(23, ev.RestoredScriptName)
	if v.version >= 5 {
		size += leaf.SizeU(v.evFeedExec, ev.FeedExecutionMicros) + leaf.SizeOptU(v.evFeedLimit, ev.MaxFeedDurationMicros) +
			leaf.SizeOptU(v.evTurnLimit, ev.MaxTurnDurationMicros) + leaf.SizeOptU(v.evSleep, ev.MaxTotalSleepMicros)
		if ev.SessionID != nil {
			size += leaf.SizeM(v.evSessionID, len(ev.SessionID))
		}
	}
	if body != nil {
		bodyLen = e.eventLen(body, v)
		size += leaf.SizeM(protowire.Number(body.EventKind()), bodyLen)
	}
	if err := frame.CheckLen(size, lim.FrameLen()); err != nil {
		return dst, &codec.EncodeError{Msg: v.name + ": ChildEvent", Err: err}
	}
	start := len(dst)
	b := slices.Grow(dst, size)
	if body != nil {
		b = leaf.AppendM(b, protowire.Number(body.EventKind()), bodyLen)
		b = e.apEvent(b, body, v)
	}
	b = leaf.AppendU(b, 20, ev.TotalExecutionMicros)
	if v.evDuration != 0 {
		b = leaf.AppendOptU(b, v.evDuration, ev.MaxDurationMicros)
	}
	b = leaf.AppendOptU(b, 22, ev.MaxSuspensions)
	b = leaf.AppendOptS(b, 23, ev.RestoredScriptName)
	if v.version >= 5 {
		b = leaf.AppendU(b, v.evFeedExec, ev.FeedExecutionMicros)
		b = leaf.AppendOptU(b, v.evFeedLimit, ev.MaxFeedDurationMicros)
		b = leaf.AppendOptU(b, v.evTurnLimit, ev.MaxTurnDurationMicros)
		b = leaf.AppendOptU(b, v.evSleep, ev.MaxTotalSleepMicros)
		if ev.SessionID != nil {
			b = leaf.AppendBytesA(b, v.evSessionID, ev.SessionID)
		}
	}
	if len(b)-start != size {
		return dst, &codec.EncodeError{Msg: fmt.Sprintf("%s: internal error: ChildEvent size %d, wrote %d", v.name, size, len(b)-start)}
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
		return dst, err
	}
	var e encoder
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
	return &codec.EncodeError{Msg: "codecv4: invalid value graph", Err: err}
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
	}
	return g.CheckStructure()
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
	return &codec.EncodeError{Msg: fmt.Sprintf("codecv4: cannot encode %s %v", what, v), Err: errBadKind}
}

func checkExt(r *message.ExtResult) error {
	if r != nil && r.Kind > message.ResultNotHandled {
		return kindErr("ExtResult kind", r.Kind)
	}
	return checkExc(extError(r))
}

func extError(r *message.ExtResult) *message.RaisedException {
	if r != nil && r.Kind == message.ResultError {
		return r.Error
	}
	return nil
}

func checkExc(e *message.RaisedException) error {
	if e == nil {
		return nil
	}
	if u, ok := e.Data.(*message.UnicodeErrorData); ok && u != nil && u.ObjectBytes != nil && u.ObjectStr != nil {
		return &codec.EncodeError{Msg: "codecv4: UnicodeErrorData has both object_bytes and object_str"}
	}
	return nil
}

func checkRequest(body message.Request) error {
	switch x := body.(type) {
	case *message.Feed:
		return checkGraph(&x.Values, len(x.Inputs), func(i int) value.NodeID { return x.Inputs[i].Value })
	case *message.ResumeCall:
		if err := checkExt(x.Result); err != nil {
			return err
		}
		n := 0
		if x.Result != nil && x.Result.Kind == message.ResultReturn {
			n = 1
		}
		return checkGraph(&x.Values, n, func(int) value.NodeID { return x.Result.Value })
	case *message.ResumeNameLookup:
		if x.Kind > message.LookupError {
			return kindErr("LookupKind", x.Kind)
		}
		n := 0
		switch x.Kind {
		case message.LookupValue:
			n = 1
		case message.LookupError:
			if err := checkExc(x.Error); err != nil {
				return err
			}
		}
		return checkGraph(&x.Values, n, func(int) value.NodeID { return x.Value })
	case *message.ResumeFutures:
		for i := range x.Results {
			if err := checkExt(x.Results[i].Result); err != nil {
				return err
			}
		}
		if err := checkNodes(&x.Values); err != nil {
			return graphErr(err)
		}
		for i := range x.Results {
			if r := x.Results[i].Result; r != nil && r.Kind == message.ResultReturn {
				if err := rootInRange(&x.Values, r.Value); err != nil {
					return graphErr(err)
				}
			}
		}
		return nil
	case *message.AbortFeed:
		return checkExc(x.Exception)
	case *message.Configure:
		if x.OsPolicy != nil {
			return checkPolicy(x.OsPolicy)
		}
	}
	return nil
}

func checkEvent(body message.Event, v *dialect) error {
	switch x := body.(type) {
	case *message.FunctionCall:
		n, root := callRoots(x)
		return checkGraph(&x.Values, n, root)
	case *message.OsCall:
		if x.Op != 0 && v.osArm(x.Op) == 0 {
			return kindErr("OsOp", uint8(x.Op))
		}
		if x.Op.IsSleep() {
			field := "Sleep.seconds"
			if x.Op == message.OpAsyncSleep || x.Op == message.OpAsyncSystemSleep {
				field = "AsyncSleep.delay"
			}
			if err := message.CheckSleepSeconds(field, x.Seconds); err != nil {
				return &codec.EncodeError{Msg: v.name + ": OsCall", Err: err}
			}
		}
		n := 0
		if x.Op == message.OpGetenv {
			n = 1
		}
		return checkGraph(&x.Values, n, func(int) value.NodeID { return x.Default })
	case *message.Complete:
		return checkGraph(&x.Values, 1, func(int) value.NodeID { return x.Value })
	case *message.Error:
		return checkExc(x.Exception)
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

// ---- requests ----

func (e *encoder) requestLen(body message.Request, v *dialect) int {
	switch x := body.(type) {
	case *message.Configure:
		n := leaf.ConfigureSize(x, v.limits())
		if v.cfgPolicy != 0 {
			if x.OsPolicy != nil {
				n += leaf.SizeM(v.cfgPolicy, policyLen(x.OsPolicy))
			}
			n += leaf.SizeU(v.cfgPersistence, uint64(int64(int32(x.Persistence)))) + leaf.SizeOptS(v.cfgProfile, x.Profile)
		}
		return n
	case *message.InstallDependencies:
		n := 0
		for _, r := range x.Requirements {
			n += leaf.SizeM(1, len(r))
		}
		return n
	case *message.Feed:
		n := leaf.SizeS(1, len(x.Code)) + e.szArena(3, &x.Values) + leaf.SizeBool(4, x.SkipTypeCheck) + leaf.SizeS(5, len(x.Cwd))
		for i := range x.Inputs {
			n += leaf.SizeM(2, namedRefLen(&x.Inputs[i]))
		}
		return n
	case *message.ResumeCall:
		n := leaf.SizeU(1, uint64(x.CallID)) + e.szArena(3, &x.Values)
		if x.Result != nil {
			n += leaf.SizeM(2, extLen(x.Result))
		}
		return n
	case *message.ResumeNameLookup:
		n := e.szArena(1, &x.Values)
		switch x.Kind {
		case message.LookupValue:
			n += 1 + protowire.SizeVarint(uint64(x.Value))
		case message.LookupUndefined:
			n += 2
		case message.LookupError:
			n += leaf.SizeM(4, leaf.ExcSize(x.Error))
		}
		return n
	case *message.ResumeFutures:
		n := e.szArena(2, &x.Values)
		for i := range x.Results {
			n += leaf.SizeM(1, futureLen(&x.Results[i]))
		}
		return n
	case *message.Load:
		return leaf.SizeS(1, len(x.State))
	case *message.AbortFeed:
		if x.Exception != nil {
			return leaf.SizeM(1, leaf.ExcSize(x.Exception))
		}
	}
	return 0
}

func (e *encoder) apRequest(b []byte, body message.Request, v *dialect) []byte {
	switch x := body.(type) {
	case *message.Configure:
		b = leaf.AppendConfigure(b, x, v.limits())
		if v.cfgPolicy != 0 {
			if x.OsPolicy != nil {
				b = leaf.AppendM(b, v.cfgPolicy, policyLen(x.OsPolicy))
				b = apPolicy(b, x.OsPolicy)
			}
			b = leaf.AppendU(b, v.cfgPersistence, uint64(int64(int32(x.Persistence))))
			b = leaf.AppendOptS(b, v.cfgProfile, x.Profile)
		}
	case *message.InstallDependencies:
		for _, r := range x.Requirements {
			b = leaf.AppendSA(b, 1, r)
		}
	case *message.Feed:
		b = leaf.AppendS(b, 1, x.Code)
		for i := range x.Inputs {
			in := &x.Inputs[i]
			b = leaf.AppendM(b, 2, namedRefLen(in))
			b = leaf.AppendS(b, 1, in.Name)
			b = leaf.AppendU(b, 2, uint64(in.Value))
		}
		b = e.apArena(b, 3, &x.Values)
		b = leaf.AppendBool(b, 4, x.SkipTypeCheck)
		b = leaf.AppendS(b, 5, x.Cwd)
	case *message.ResumeCall:
		b = leaf.AppendU(b, 1, uint64(x.CallID))
		if x.Result != nil {
			b = leaf.AppendM(b, 2, extLen(x.Result))
			b = apExt(b, x.Result)
		}
		b = e.apArena(b, 3, &x.Values)
	case *message.ResumeNameLookup:
		b = e.apArena(b, 1, &x.Values)
		switch x.Kind {
		case message.LookupValue:
			b = leaf.AppendUA(b, 2, uint64(x.Value))
		case message.LookupUndefined:
			b = append(b, 0x1a, 0)
		case message.LookupError:
			b = leaf.AppendM(b, 4, leaf.ExcSize(x.Error))
			b = leaf.AppendExc(b, x.Error)
		}
	case *message.ResumeFutures:
		for i := range x.Results {
			fr := &x.Results[i]
			b = leaf.AppendM(b, 1, futureLen(fr))
			b = leaf.AppendU(b, 1, uint64(fr.CallID))
			if fr.Result != nil {
				b = leaf.AppendM(b, 2, extLen(fr.Result))
				b = apExt(b, fr.Result)
			}
		}
		b = e.apArena(b, 2, &x.Values)
	case *message.Load:
		b = leaf.AppendBytes(b, 1, x.State)
	case *message.AbortFeed:
		if x.Exception != nil {
			b = leaf.AppendM(b, 1, leaf.ExcSize(x.Exception))
			b = leaf.AppendExc(b, x.Exception)
		}
	}
	return b
}

// limits are the dialect's ResourceLimits field numbers.
func (v *dialect) limits() leaf.LimitNums {
	return leaf.LimitNums{Duration: v.limDuration, Feed: v.limFeed, Turn: v.limTurn, Sleep: v.limSleep}
}

func namedRefLen(x *message.NamedRef) int {
	return leaf.SizeS(1, len(x.Name)) + leaf.SizeU(2, uint64(x.Value))
}

func futureLen(x *message.FutureResult) int {
	n := leaf.SizeU(1, uint64(x.CallID))
	if x.Result != nil {
		n += leaf.SizeM(2, extLen(x.Result))
	}
	return n
}

func extLen(x *message.ExtResult) int {
	switch x.Kind {
	case message.ResultReturn:
		return 1 + protowire.SizeVarint(uint64(x.Value))
	case message.ResultError:
		return leaf.SizeM(2, leaf.ExcSize(x.Error))
	case message.ResultFuture:
		return 1 + protowire.SizeVarint(uint64(x.Future))
	case message.ResultNotFound:
		return leaf.SizeM(4, len(x.Name))
	case message.ResultNotHandled:
		return 2
	}
	return 0
}

func apExt(b []byte, x *message.ExtResult) []byte {
	switch x.Kind {
	case message.ResultReturn:
		return leaf.AppendUA(b, 1, uint64(x.Value))
	case message.ResultError:
		b = leaf.AppendM(b, 2, leaf.ExcSize(x.Error))
		return leaf.AppendExc(b, x.Error)
	case message.ResultFuture:
		return leaf.AppendUA(b, 3, uint64(x.Future))
	case message.ResultNotFound:
		return leaf.AppendSA(b, 4, x.Name)
	case message.ResultNotHandled:
		return append(b, 0x2a, 0)
	}
	return b
}

// ---- events ----

func (e *encoder) eventLen(body message.Event, v *dialect) int {
	switch x := body.(type) {
	case *message.Print:
		n := 0
		for i := range x.Segments {
			n += leaf.SizeM(1, leaf.SegmentSize(&x.Segments[i]))
		}
		return n
	case *message.FunctionCall:
		n := leaf.SizeS(1, len(x.FunctionName)) + leaf.SizePacked(2, x.Args) + leaf.SizeU(4, uint64(x.CallID)) +
			leaf.SizeBool(6, x.AllowEagerAwait) + e.szArena(7, &x.Values) + szPosition(v.fcPosition, x.Position)
		for _, p := range x.Kwargs {
			n += leaf.SizeM(3, pairLen(p.Key, p.Value))
		}
		if x.ObjectID != nil {
			n += leaf.UUIDFieldSize
		}
		return n
	case *message.OsCall:
		n := leaf.SizeU(1, uint64(x.CallID)) + e.szArena(v.osValues, &x.Values) + szPosition(v.osPosition, x.Position)
		if v.osEager != 0 {
			n += leaf.SizeBool(v.osEager, x.AllowEagerAwait)
		}
		if x.Op != 0 {
			n += leaf.SizeM(v.osArm(x.Op), osArgLen(x))
		}
		return n
	case *message.NameLookup:
		n := leaf.SizeS(1, len(x.Name)) + szPosition(v.nlPosition, x.Position)
		if x.ObjectID != nil {
			n += leaf.UUIDFieldSize
		}
		return n
	case *message.ResolveFutures:
		return leaf.SizePacked(1, x.PendingCallIDs) + szPosition(v.rfPosition, x.Position)
	case *message.Complete:
		return leaf.SizeU(1, uint64(x.Value)) + e.szArena(2, &x.Values)
	case *message.Error:
		if x.Exception != nil {
			return leaf.SizeM(1, leaf.ExcSize(x.Exception))
		}
	case *message.TypingError:
		return leaf.SizeS(1, len(x.Diagnostics))
	case *message.DumpResult:
		return leaf.SizeS(1, len(x.State))
	case *message.FatalError:
		return leaf.SizeS(1, len(x.Message))
	case *message.ShutdownDump:
		if x.Dump != nil {
			return leaf.SizeM(1, len(*x.Dump))
		}
	}
	return 0
}

func (e *encoder) apEvent(b []byte, body message.Event, v *dialect) []byte {
	switch x := body.(type) {
	case *message.Print:
		for i := range x.Segments {
			s := &x.Segments[i]
			b = leaf.AppendSegment(leaf.AppendM(b, 1, leaf.SegmentSize(s)), s)
		}
	case *message.FunctionCall:
		b = leaf.AppendS(b, 1, x.FunctionName)
		b = leaf.AppendPacked(b, 2, x.Args)
		for _, p := range x.Kwargs {
			b = append(b, 0x1a)
			b = protowire.AppendVarint(b, uint64(pairLen(p.Key, p.Value)))
			b = leaf.AppendU(b, 1, uint64(p.Key))
			b = leaf.AppendU(b, 2, uint64(p.Value))
		}
		b = leaf.AppendU(b, 4, uint64(x.CallID))
		if x.ObjectID != nil {
			b = leaf.AppendUUID(b, 5, x.ObjectID)
		}
		b = leaf.AppendBool(b, 6, x.AllowEagerAwait)
		b = e.apArena(b, 7, &x.Values)
		b = apPosition(b, v.fcPosition, x.Position)
	case *message.OsCall:
		b = leaf.AppendU(b, 1, uint64(x.CallID))
		if x.Op != 0 {
			b = leaf.AppendM(b, v.osArm(x.Op), osArgLen(x))
			b = apOsArg(b, x)
		}
		b = e.apArena(b, v.osValues, &x.Values)
		if v.osEager != 0 {
			b = leaf.AppendBool(b, v.osEager, x.AllowEagerAwait)
		}
		b = apPosition(b, v.osPosition, x.Position)
	case *message.NameLookup:
		b = leaf.AppendS(b, 1, x.Name)
		if x.ObjectID != nil {
			b = leaf.AppendUUID(b, 2, x.ObjectID)
		}
		b = apPosition(b, v.nlPosition, x.Position)
	case *message.ResolveFutures:
		b = leaf.AppendPacked(b, 1, x.PendingCallIDs)
		b = apPosition(b, v.rfPosition, x.Position)
	case *message.Complete:
		b = leaf.AppendU(b, 1, uint64(x.Value))
		b = e.apArena(b, 2, &x.Values)
	case *message.Error:
		if x.Exception != nil {
			b = leaf.AppendM(b, 1, leaf.ExcSize(x.Exception))
			b = leaf.AppendExc(b, x.Exception)
		}
	case *message.TypingError:
		b = leaf.AppendS(b, 1, x.Diagnostics)
	case *message.DumpResult:
		b = leaf.AppendBytes(b, 1, x.State)
	case *message.FatalError:
		b = leaf.AppendS(b, 1, x.Message)
	case *message.ShutdownDump:
		if x.Dump != nil {
			b = leaf.AppendBytesA(b, 1, *x.Dump)
		}
	}
	return b
}

// osArgLen is the payload size of an OsCall's call arm.
func osArgLen(x *message.OsCall) int {
	switch op := x.Op; {
	case op == message.OpGetenv:
		return leaf.SizeS(1, len(x.Key)) + leaf.SizeU(2, uint64(x.Default))
	case op == message.OpUrandom:
		return leaf.SizeU(1, x.Size)
	case op >= message.OpTime:
		return osArg5Len(x)
	}
	n, _ := leaf.OsArgSize(x)
	return n
}

func apOsArg(b []byte, x *message.OsCall) []byte {
	switch op := x.Op; {
	case op == message.OpGetenv:
		return leaf.AppendU(leaf.AppendS(b, 1, x.Key), 2, uint64(x.Default))
	case op == message.OpUrandom:
		return leaf.AppendU(b, 1, x.Size)
	case op >= message.OpTime:
		return apOsArg5(b, x)
	}
	return leaf.AppendOsArg(b, x)
}

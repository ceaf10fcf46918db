package codecv4

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// AppendRequest appends the canonical encoding of r to dst. The frame cap is
// protocol.MaxFrameLen; nothing is appended when encoding fails.
func AppendRequest(dst []byte, r *message.ParentRequest) ([]byte, error) {
	return AppendRequestLimits(dst, r, codec.Limits{})
}

// AppendEvent appends the canonical encoding of e to dst. The frame cap is
// protocol.MaxFrameLen; nothing is appended when encoding fails.
func AppendEvent(dst []byte, e *message.ChildEvent) ([]byte, error) {
	return AppendEventLimits(dst, e, codec.Limits{})
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
	bodyLen := 0
	if body != nil {
		bodyLen = e.requestLen(body, v)
	}
	size := szOptS(20, r.TraceParent)
	if body != nil {
		size += szM(protowire.Number(body.RequestKind()), bodyLen)
	}
	if err := frame.CheckLen(size, lim.FrameLen()); err != nil {
		return dst, &codec.EncodeError{Msg: v.name + ": ParentRequest", Err: err}
	}
	start := len(dst)
	b := slices.Grow(dst, size)
	if body != nil {
		b = apM(b, protowire.Number(body.RequestKind()), bodyLen)
		b = e.apRequest(b, body, v)
	}
	b = apOptS(b, 20, r.TraceParent)
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
	bodyLen := 0
	size := szU(20, ev.TotalExecutionMicros) + szOptU(v.evDuration, ev.MaxDurationMicros) +
		szOptU(22, ev.MaxSuspensions) + szOptS(23, ev.RestoredScriptName)
	if v.version >= 5 {
		size += szU(v.evFeedExec, ev.FeedExecutionMicros) + szOptU(v.evFeedLimit, ev.MaxFeedDurationMicros) +
			szOptU(v.evTurnLimit, ev.MaxTurnDurationMicros) + szOptU(v.evSleep, ev.MaxTotalSleepMicros)
		if ev.SessionID != nil {
			size += szM(v.evSessionID, len(ev.SessionID))
		}
	}
	if body != nil {
		bodyLen = e.eventLen(body, v)
		size += szM(protowire.Number(body.EventKind()), bodyLen)
	}
	if err := frame.CheckLen(size, lim.FrameLen()); err != nil {
		return dst, &codec.EncodeError{Msg: v.name + ": ChildEvent", Err: err}
	}
	start := len(dst)
	b := slices.Grow(dst, size)
	if body != nil {
		b = apM(b, protowire.Number(body.EventKind()), bodyLen)
		b = e.apEvent(b, body, v)
	}
	b = apU(b, 20, ev.TotalExecutionMicros)
	if v.evDuration != 0 {
		b = apOptU(b, v.evDuration, ev.MaxDurationMicros)
	}
	b = apOptU(b, 22, ev.MaxSuspensions)
	b = apOptS(b, 23, ev.RestoredScriptName)
	if v.version >= 5 {
		b = apU(b, v.evFeedExec, ev.FeedExecutionMicros)
		b = apOptU(b, v.evFeedLimit, ev.MaxFeedDurationMicros)
		b = apOptU(b, v.evTurnLimit, ev.MaxTurnDurationMicros)
		b = apOptU(b, v.evSleep, ev.MaxTotalSleepMicros)
		if ev.SessionID != nil {
			b = apBytesA(b, v.evSessionID, ev.SessionID)
		}
	}
	if len(b)-start != size {
		return dst, &codec.EncodeError{Msg: fmt.Sprintf("%s: internal error: ChildEvent size %d, wrote %d", v.name, size, len(b)-start)}
	}
	return b, nil
}

// AppendArena appends the encoding of a bare Arena message holding g, after
// checking g and that every root is in range.
func AppendArena(dst []byte, g *value.Graph, roots ...value.NodeID) ([]byte, error) {
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
// value.CheckLeaf takes an all-zero id for a missing one.
func checkNodes(g *value.Graph) error {
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Kind == value.KindType {
			if t, ok := n.Ext().(*value.Type); ok {
				if err := value.CheckType(t, t.Origin != value.OriginBuiltin || !t.ID.IsZero(), len(t.Attrs) > 0); err != nil {
					return err
				}
				continue
			}
		}
		if err := value.CheckLeaf(n); err != nil {
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
		na := len(x.Args)
		return checkGraph(&x.Values, na+2*len(x.Kwargs), func(i int) value.NodeID {
			if i < na {
				return x.Args[i]
			}
			p := x.Kwargs[(i-na)/2]
			if (i-na)%2 == 0 {
				return p.Key
			}
			return p.Value
		})
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
		if x == nil {
			return &message.Configure{}, nil
		}
	case *message.InstallDependencies:
		if x == nil {
			return &message.InstallDependencies{}, nil
		}
	case *message.Feed:
		if x == nil {
			return &message.Feed{}, nil
		}
	case *message.ResumeCall:
		if x == nil {
			return &message.ResumeCall{}, nil
		}
	case *message.ResumeNameLookup:
		if x == nil {
			return &message.ResumeNameLookup{}, nil
		}
	case *message.ResumeFutures:
		if x == nil {
			return &message.ResumeFutures{}, nil
		}
	case *message.Dump, *message.Reset, *message.Shutdown:
	case *message.Load:
		if x == nil {
			return &message.Load{}, nil
		}
	case *message.AbortFeed:
		if x == nil {
			return &message.AbortFeed{}, nil
		}
	default:
		return nil, kindErr("request body", fmt.Sprintf("%T", r))
	}
	return r, nil
}

// eventBody is requestBody for events.
func eventBody(ev message.Event) (message.Event, error) {
	switch x := ev.(type) {
	case nil:
		return nil, nil
	case *message.Print:
		if x == nil {
			return &message.Print{}, nil
		}
	case *message.FunctionCall:
		if x == nil {
			return &message.FunctionCall{}, nil
		}
	case *message.OsCall:
		if x == nil {
			return &message.OsCall{}, nil
		}
	case *message.NameLookup:
		if x == nil {
			return &message.NameLookup{}, nil
		}
	case *message.ResolveFutures:
		if x == nil {
			return &message.ResolveFutures{}, nil
		}
	case *message.Complete:
		if x == nil {
			return &message.Complete{}, nil
		}
	case *message.Error:
		if x == nil {
			return &message.Error{}, nil
		}
	case *message.TypingError:
		if x == nil {
			return &message.TypingError{}, nil
		}
	case *message.DumpResult:
		if x == nil {
			return &message.DumpResult{}, nil
		}
	case *message.Ok:
	case *message.FatalError:
		if x == nil {
			return &message.FatalError{}, nil
		}
	case *message.ShutdownDump:
		if x == nil {
			return &message.ShutdownDump{}, nil
		}
	default:
		return nil, kindErr("event body", fmt.Sprintf("%T", ev))
	}
	return ev, nil
}

// ---- requests ----

func (e *encoder) requestLen(body message.Request, v *dialect) int {
	switch x := body.(type) {
	case *message.Configure:
		n := szS(1, len(x.ScriptName)) + szBool(3, x.TypeCheck) + szOptS(4, x.TypeCheckStubs) +
			szS(5, len(x.MontyVersion)) + szOptU32(6, x.AssertMessageAnnotations) +
			szU(7, enumBits(x.TypeCheckFormat)) + szBool(8, x.TypeCheckColor) +
			szU(9, uint64(x.ProtocolVersion)) + szOptU32(10, x.PrintFlushIntervalMs)
		if x.Limits != nil {
			n += szM(2, limitsLen(x.Limits, v))
		}
		if v.cfgPolicy != 0 {
			if x.OsPolicy != nil {
				n += szM(v.cfgPolicy, policyLen(x.OsPolicy))
			}
			n += szU(v.cfgPersistence, uint64(int64(int32(x.Persistence)))) + szOptS(v.cfgProfile, x.Profile)
		}
		return n
	case *message.InstallDependencies:
		n := 0
		for _, r := range x.Requirements {
			n += szM(1, len(r))
		}
		return n
	case *message.Feed:
		n := szS(1, len(x.Code)) + e.szArena(3, &x.Values) + szBool(4, x.SkipTypeCheck) + szS(5, len(x.Cwd))
		for i := range x.Inputs {
			n += szM(2, namedRefLen(&x.Inputs[i]))
		}
		return n
	case *message.ResumeCall:
		n := szU(1, uint64(x.CallID)) + e.szArena(3, &x.Values)
		if x.Result != nil {
			n += szM(2, extLen(x.Result))
		}
		return n
	case *message.ResumeNameLookup:
		n := e.szArena(1, &x.Values)
		switch x.Kind {
		case message.LookupValue:
			n += 1 + sizeVarint(uint64(x.Value))
		case message.LookupUndefined:
			n += 2
		case message.LookupError:
			n += szM(4, excLen(x.Error))
		}
		return n
	case *message.ResumeFutures:
		n := e.szArena(2, &x.Values)
		for i := range x.Results {
			n += szM(1, futureLen(&x.Results[i]))
		}
		return n
	case *message.Load:
		return szS(1, len(x.State))
	case *message.AbortFeed:
		if x.Exception != nil {
			return szM(1, excLen(x.Exception))
		}
	}
	return 0
}

func (e *encoder) apRequest(b []byte, body message.Request, v *dialect) []byte {
	switch x := body.(type) {
	case *message.Configure:
		b = apS(b, 1, x.ScriptName)
		if x.Limits != nil {
			b = apM(b, 2, limitsLen(x.Limits, v))
			b = apLimits(b, x.Limits, v)
		}
		b = apBool(b, 3, x.TypeCheck)
		b = apOptS(b, 4, x.TypeCheckStubs)
		b = apS(b, 5, x.MontyVersion)
		b = apOptU32(b, 6, x.AssertMessageAnnotations)
		b = apU(b, 7, enumBits(x.TypeCheckFormat))
		b = apBool(b, 8, x.TypeCheckColor)
		b = apU(b, 9, uint64(x.ProtocolVersion))
		b = apOptU32(b, 10, x.PrintFlushIntervalMs)
		if v.cfgPolicy != 0 {
			if x.OsPolicy != nil {
				b = apM(b, v.cfgPolicy, policyLen(x.OsPolicy))
				b = apPolicy(b, x.OsPolicy)
			}
			b = apU(b, v.cfgPersistence, uint64(int64(int32(x.Persistence))))
			b = apOptS(b, v.cfgProfile, x.Profile)
		}
	case *message.InstallDependencies:
		for _, r := range x.Requirements {
			b = apSA(b, 1, r)
		}
	case *message.Feed:
		b = apS(b, 1, x.Code)
		for i := range x.Inputs {
			in := &x.Inputs[i]
			b = apM(b, 2, namedRefLen(in))
			b = apS(b, 1, in.Name)
			b = apU(b, 2, uint64(in.Value))
		}
		b = e.apArena(b, 3, &x.Values)
		b = apBool(b, 4, x.SkipTypeCheck)
		b = apS(b, 5, x.Cwd)
	case *message.ResumeCall:
		b = apU(b, 1, uint64(x.CallID))
		if x.Result != nil {
			b = apM(b, 2, extLen(x.Result))
			b = apExt(b, x.Result)
		}
		b = e.apArena(b, 3, &x.Values)
	case *message.ResumeNameLookup:
		b = e.apArena(b, 1, &x.Values)
		switch x.Kind {
		case message.LookupValue:
			b = apUA(b, 2, uint64(x.Value))
		case message.LookupUndefined:
			b = append(b, 0x1a, 0)
		case message.LookupError:
			b = apM(b, 4, excLen(x.Error))
			b = apExc(b, x.Error)
		}
	case *message.ResumeFutures:
		for i := range x.Results {
			fr := &x.Results[i]
			b = apM(b, 1, futureLen(fr))
			b = apU(b, 1, uint64(fr.CallID))
			if fr.Result != nil {
				b = apM(b, 2, extLen(fr.Result))
				b = apExt(b, fr.Result)
			}
		}
		b = e.apArena(b, 2, &x.Values)
	case *message.Load:
		b = apBytes(b, 1, x.State)
	case *message.AbortFeed:
		if x.Exception != nil {
			b = apM(b, 1, excLen(x.Exception))
			b = apExc(b, x.Exception)
		}
	}
	return b
}

// enumBits is the varint form of an enum value held as uint32: enums are
// int32 on the wire, negative ones sign-extended.
func enumBits(v message.TypeCheckFormat) uint64 { return uint64(int64(int32(v))) }

// limitsLen and apLimits write the limits the dialect has a tag for;
// codec.CheckRequestFields has already refused any other that is set.
func limitsLen(x *message.ResourceLimits, v *dialect) int {
	n := szOptU(2, x.MaxMemoryBytes) + szOptU(3, x.GCInterval) +
		szOptU(4, x.MaxRecursionDepth) + szOptU(5, x.MaxSuspensions)
	if v.limDuration != 0 {
		n += szOptU(v.limDuration, x.MaxDurationMicros)
	}
	if v.limFeed != 0 {
		n += szOptU(v.limFeed, x.MaxFeedDurationMicros) + szOptU(v.limTurn, x.MaxTurnDurationMicros) +
			szOptU(v.limSleep, x.MaxTotalSleepMicros)
	}
	return n
}

func apLimits(b []byte, x *message.ResourceLimits, v *dialect) []byte {
	if v.limDuration != 0 {
		b = apOptU(b, v.limDuration, x.MaxDurationMicros)
	}
	b = apOptU(b, 2, x.MaxMemoryBytes)
	b = apOptU(b, 3, x.GCInterval)
	b = apOptU(b, 4, x.MaxRecursionDepth)
	b = apOptU(b, 5, x.MaxSuspensions)
	if v.limFeed != 0 {
		b = apOptU(b, v.limFeed, x.MaxFeedDurationMicros)
		b = apOptU(b, v.limTurn, x.MaxTurnDurationMicros)
		b = apOptU(b, v.limSleep, x.MaxTotalSleepMicros)
	}
	return b
}

func namedRefLen(x *message.NamedRef) int { return szS(1, len(x.Name)) + szU(2, uint64(x.Value)) }

func futureLen(x *message.FutureResult) int {
	n := szU(1, uint64(x.CallID))
	if x.Result != nil {
		n += szM(2, extLen(x.Result))
	}
	return n
}

func extLen(x *message.ExtResult) int {
	switch x.Kind {
	case message.ResultReturn:
		return 1 + sizeVarint(uint64(x.Value))
	case message.ResultError:
		return szM(2, excLen(x.Error))
	case message.ResultFuture:
		return 1 + sizeVarint(uint64(x.Future))
	case message.ResultNotFound:
		return szM(4, len(x.Name))
	case message.ResultNotHandled:
		return 2
	}
	return 0
}

func apExt(b []byte, x *message.ExtResult) []byte {
	switch x.Kind {
	case message.ResultReturn:
		return apUA(b, 1, uint64(x.Value))
	case message.ResultError:
		b = apM(b, 2, excLen(x.Error))
		return apExc(b, x.Error)
	case message.ResultFuture:
		return apUA(b, 3, uint64(x.Future))
	case message.ResultNotFound:
		return apSA(b, 4, x.Name)
	case message.ResultNotHandled:
		return append(b, 0x2a, 0)
	}
	return b
}

// ---- exceptions ----

func excLen(x *message.RaisedException) int {
	if x == nil {
		return 0
	}
	n := szS(1, len(x.Type)) + szOptS(2, x.Message)
	for i := range x.Traceback {
		n += szM(3, frameLen(&x.Traceback[i]))
	}
	if l, ok := excDataLen(x.Data); ok {
		n += szM(4, l)
	}
	return n
}

func apExc(b []byte, x *message.RaisedException) []byte {
	if x == nil {
		return b
	}
	b = apS(b, 1, x.Type)
	b = apOptS(b, 2, x.Message)
	for i := range x.Traceback {
		f := &x.Traceback[i]
		b = apM(b, 3, frameLen(f))
		b = apS(b, 1, f.Filename)
		b = apM(b, 2, locLen(f.Start))
		b = apU(b, 1, uint64(f.Start.Line))
		b = apU(b, 2, uint64(f.Start.Column))
		b = apM(b, 3, locLen(f.End))
		b = apU(b, 1, uint64(f.End.Line))
		b = apU(b, 2, uint64(f.End.Column))
		b = apOptS(b, 4, f.FrameName)
		b = apOptS(b, 5, f.PreviewLine)
		b = apBool(b, 6, f.HideCaret)
		b = apBool(b, 7, f.HideFrameName)
	}
	if l, ok := excDataLen(x.Data); ok {
		b = apM(b, 4, l)
		switch d := x.Data.(type) {
		case *message.UnicodeErrorData:
			b = apM(b, 1, unicodeLen(d))
			b = apS(b, 1, d.Encoding)
			if d.ObjectBytes != nil {
				b = apBytesA(b, 2, d.ObjectBytes)
			} else if d.ObjectStr != nil {
				b = apSA(b, 3, *d.ObjectStr)
			}
			b = apU(b, 4, d.Start)
			b = apU(b, 5, d.End)
			b = apS(b, 6, d.Reason)
		case *message.JSONErrorData:
			b = apM(b, 2, jsonLen(d))
			b = apS(b, 1, d.Msg)
			b = apOptS(b, 2, d.Doc)
			b = apU(b, 3, d.Pos)
			b = apU(b, 4, d.Lineno)
			b = apU(b, 5, d.Colno)
		}
	}
	return b
}

func locLen(l message.CodeLoc) int { return szU(1, uint64(l.Line)) + szU(2, uint64(l.Column)) }

func frameLen(f *message.StackFrame) int {
	return szS(1, len(f.Filename)) + szM(2, locLen(f.Start)) + szM(3, locLen(f.End)) +
		szOptS(4, f.FrameName) + szOptS(5, f.PreviewLine) + szBool(6, f.HideCaret) + szBool(7, f.HideFrameName)
}

// excDataLen is the payload size of an ExcData message, and whether one is
// written at all.
func excDataLen(d message.ExcData) (int, bool) {
	switch x := d.(type) {
	case *message.UnicodeErrorData:
		if x != nil {
			return szM(1, unicodeLen(x)), true
		}
	case *message.JSONErrorData:
		if x != nil {
			return szM(2, jsonLen(x)), true
		}
	}
	return 0, false
}

func unicodeLen(x *message.UnicodeErrorData) int {
	n := szS(1, len(x.Encoding)) + szU(4, x.Start) + szU(5, x.End) + szS(6, len(x.Reason))
	if x.ObjectBytes != nil {
		n += szM(2, len(x.ObjectBytes))
	} else if x.ObjectStr != nil {
		n += szM(3, len(*x.ObjectStr))
	}
	return n
}

func jsonLen(x *message.JSONErrorData) int {
	return szS(1, len(x.Msg)) + szOptS(2, x.Doc) + szU(3, x.Pos) + szU(4, x.Lineno) + szU(5, x.Colno)
}

// ---- events ----

func (e *encoder) eventLen(body message.Event, v *dialect) int {
	switch x := body.(type) {
	case *message.Print:
		n := 0
		for i := range x.Segments {
			n += szM(1, segmentLen(&x.Segments[i]))
		}
		return n
	case *message.FunctionCall:
		n := szS(1, len(x.FunctionName)) + szIDs(2, x.Args) + szU(4, uint64(x.CallID)) +
			szBool(6, x.AllowEagerAwait) + e.szArena(7, &x.Values) + szPosition(v.fcPosition, x.Position)
		for _, p := range x.Kwargs {
			n += szM(3, pairLen(p.Key, p.Value))
		}
		if x.ObjectID != nil {
			n += uuidFieldLen
		}
		return n
	case *message.OsCall:
		n := szU(1, uint64(x.CallID)) + e.szArena(v.osValues, &x.Values) + szPosition(v.osPosition, x.Position)
		if v.osEager != 0 {
			n += szBool(v.osEager, x.AllowEagerAwait)
		}
		if x.Op != 0 {
			n += szM(v.osArm(x.Op), osArgLen(x))
		}
		return n
	case *message.NameLookup:
		n := szS(1, len(x.Name)) + szPosition(v.nlPosition, x.Position)
		if x.ObjectID != nil {
			n += uuidFieldLen
		}
		return n
	case *message.ResolveFutures:
		return szIDs(1, x.PendingCallIDs) + szPosition(v.rfPosition, x.Position)
	case *message.Complete:
		return szU(1, uint64(x.Value)) + e.szArena(2, &x.Values)
	case *message.Error:
		if x.Exception != nil {
			return szM(1, excLen(x.Exception))
		}
	case *message.TypingError:
		return szS(1, len(x.Diagnostics))
	case *message.DumpResult:
		return szS(1, len(x.State))
	case *message.FatalError:
		return szS(1, len(x.Message))
	case *message.ShutdownDump:
		if x.Dump != nil {
			return szM(1, len(*x.Dump))
		}
	}
	return 0
}

func (e *encoder) apEvent(b []byte, body message.Event, v *dialect) []byte {
	switch x := body.(type) {
	case *message.Print:
		for i := range x.Segments {
			s := &x.Segments[i]
			b = apM(b, 1, segmentLen(s))
			b = apU(b, 1, uint64(s.Stream))
			b = apS(b, 2, s.Text)
		}
	case *message.FunctionCall:
		b = apS(b, 1, x.FunctionName)
		b = apIDs(b, 2, x.Args)
		for _, p := range x.Kwargs {
			b = append(b, 0x1a)
			b = protowire.AppendVarint(b, uint64(pairLen(p.Key, p.Value)))
			b = apU(b, 1, uint64(p.Key))
			b = apU(b, 2, uint64(p.Value))
		}
		b = apU(b, 4, uint64(x.CallID))
		if x.ObjectID != nil {
			b = apUUID(b, 5, x.ObjectID)
		}
		b = apBool(b, 6, x.AllowEagerAwait)
		b = e.apArena(b, 7, &x.Values)
		b = apPosition(b, v.fcPosition, x.Position)
	case *message.OsCall:
		b = apU(b, 1, uint64(x.CallID))
		if x.Op != 0 {
			b = apM(b, v.osArm(x.Op), osArgLen(x))
			b = apOsArg(b, x)
		}
		b = e.apArena(b, v.osValues, &x.Values)
		if v.osEager != 0 {
			b = apBool(b, v.osEager, x.AllowEagerAwait)
		}
		b = apPosition(b, v.osPosition, x.Position)
	case *message.NameLookup:
		b = apS(b, 1, x.Name)
		if x.ObjectID != nil {
			b = apUUID(b, 2, x.ObjectID)
		}
		b = apPosition(b, v.nlPosition, x.Position)
	case *message.ResolveFutures:
		b = apIDs(b, 1, x.PendingCallIDs)
		b = apPosition(b, v.rfPosition, x.Position)
	case *message.Complete:
		b = apU(b, 1, uint64(x.Value))
		b = e.apArena(b, 2, &x.Values)
	case *message.Error:
		if x.Exception != nil {
			b = apM(b, 1, excLen(x.Exception))
			b = apExc(b, x.Exception)
		}
	case *message.TypingError:
		b = apS(b, 1, x.Diagnostics)
	case *message.DumpResult:
		b = apBytes(b, 1, x.State)
	case *message.FatalError:
		b = apS(b, 1, x.Message)
	case *message.ShutdownDump:
		if x.Dump != nil {
			b = apBytesA(b, 1, *x.Dump)
		}
	}
	return b
}

func segmentLen(s *message.PrintSegment) int { return szU(1, uint64(s.Stream)) + szS(2, len(s.Text)) }

// osArgLen is the payload size of an OsCall's call arm.
func osArgLen(x *message.OsCall) int {
	switch op := x.Op; {
	case op >= message.OpTime:
		return osArg5Len(x)
	case op <= message.OpRmdir:
		return len(x.Path)
	case op == message.OpWriteText || op == message.OpAppendText:
		return szS(1, len(x.Path)) + szS(2, len(x.Text))
	case op == message.OpWriteBytes || op == message.OpAppendBytes:
		return szS(1, len(x.Path)) + szS(2, len(x.Data))
	case op == message.OpOpen:
		return szS(1, len(x.Path)) + szS(2, len(fileMode(x.Mode)))
	case op == message.OpMkdir:
		return szS(1, len(x.Path)) + szBool(2, x.Parents) + szBool(3, x.ExistOK)
	case op == message.OpRename:
		return szS(1, len(x.Path)) + szS(2, len(x.Dst))
	case op == message.OpGetenv:
		return szS(1, len(x.Key)) + szU(2, uint64(x.Default))
	case op == message.OpDateTimeNow:
		if x.TZ != nil {
			return szM(1, tzLen(x.TZ))
		}
	case op == message.OpUrandom:
		return szU(1, x.Size)
	}
	return 0
}

func apOsArg(b []byte, x *message.OsCall) []byte {
	switch op := x.Op; {
	case op >= message.OpTime:
		return apOsArg5(b, x)
	case op <= message.OpRmdir:
		return append(b, x.Path...)
	case op == message.OpWriteText || op == message.OpAppendText:
		b = apS(b, 1, x.Path)
		return apS(b, 2, x.Text)
	case op == message.OpWriteBytes || op == message.OpAppendBytes:
		b = apS(b, 1, x.Path)
		return apBytes(b, 2, x.Data)
	case op == message.OpOpen:
		b = apS(b, 1, x.Path)
		return apS(b, 2, fileMode(x.Mode))
	case op == message.OpMkdir:
		b = apS(b, 1, x.Path)
		b = apBool(b, 2, x.Parents)
		return apBool(b, 3, x.ExistOK)
	case op == message.OpRename:
		b = apS(b, 1, x.Path)
		return apS(b, 2, x.Dst)
	case op == message.OpGetenv:
		b = apS(b, 1, x.Key)
		return apU(b, 2, uint64(x.Default))
	case op == message.OpDateTimeNow:
		if x.TZ != nil {
			b = apM(b, 1, tzLen(x.TZ))
			return apTZ(b, x.TZ)
		}
	case op == message.OpUrandom:
		return apU(b, 1, x.Size)
	}
	return b
}

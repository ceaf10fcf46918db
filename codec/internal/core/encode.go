package core

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The encoder writes in two passes over the same tables: a Len function
// measures a message's payload, the matching Append writes exactly that
// many bytes into a buffer grown once. Fields go out in ascending number
// order, implicit-presence zeros left out and oneof arms always written:
// the byte form the worker and upstream's peers produce. Encoders check
// what they must (kinds, graphs, text) before measuring; this layer only
// measures and writes.

// Values writes the values of one message: what protocols 2 and 4 put in
// a value field differs, the messages around it do not.
//
// At 4 and 5 a value field holds a node id (a uint32) and the message
// carries its graph once, as an Arena field. At 2 a value field is the
// value itself, a MontyObject message, and there is no arena.
type Values interface {
	// RefSize is the size of field num holding root id. An implicit
	// field (always false) may be left out when the version writes the
	// root as a number and it is zero.
	RefSize(num protowire.Number, id value.NodeID, always bool) int
	// AppendRef writes what RefSize measures.
	AppendRef(b []byte, num protowire.Number, id value.NodeID, always bool) []byte
	// RefsSize is the size of repeated field num holding roots ids
	// (FunctionCall.args).
	RefsSize(num protowire.Number, ids []value.NodeID) int
	// AppendRefs writes what RefsSize measures.
	AppendRefs(b []byte, num protowire.Number, ids []value.NodeID) []byte
	// ArenaSize is the size of the Arena field num holding g; num is
	// never 0 (a version without arenas has no such field).
	ArenaSize(num protowire.Number, g *value.Graph) int
	// AppendArena writes what ArenaSize measures.
	AppendArena(b []byte, num protowire.Number, g *value.Graph) []byte
}

// Enc writes the messages of one frame: a version's tags and its values.
type Enc struct {
	V    *Dialect
	Vals Values
}

func (e Enc) arenaSize(num protowire.Number, g *value.Graph) int {
	if num == 0 {
		return 0
	}
	return e.Vals.ArenaSize(num, g)
}

func (e Enc) appendArena(b []byte, num protowire.Number, g *value.Graph) []byte {
	if num == 0 {
		return b
	}
	return e.Vals.AppendArena(b, num, g)
}

// RequestSize returns the size of the ParentRequest r with body (r.Body,
// a typed nil resolved by the caller) and the size of the body's payload.
func (e Enc) RequestSize(r *message.ParentRequest, body message.Request) (size, bodyLen int) {
	if body != nil {
		bodyLen = e.requestLen(body)
		size = leaf.SizeM(protowire.Number(body.RequestKind()), bodyLen)
	}
	return size + leaf.SizeOptS(20, r.TraceParent), bodyLen
}

// AppendRequest writes the request RequestSize measured.
func (e Enc) AppendRequest(b []byte, r *message.ParentRequest, body message.Request, bodyLen int) []byte {
	if body != nil {
		b = leaf.AppendM(b, protowire.Number(body.RequestKind()), bodyLen)
		b = e.appendRequest(b, body)
	}
	return leaf.AppendOptS(b, 20, r.TraceParent)
}

// EventSize is RequestSize for a ChildEvent.
func (e Enc) EventSize(ev *message.ChildEvent, body message.Event) (size, bodyLen int) {
	if body != nil {
		bodyLen = e.eventLen(body)
		size = leaf.SizeM(protowire.Number(body.EventKind()), bodyLen)
	}
	v := e.V
	size += leaf.SizeU(20, ev.TotalExecutionMicros) + leaf.SizeOptU(v.EvDuration, ev.MaxDurationMicros) +
		leaf.SizeOptU(v.EvSuspensions, ev.MaxSuspensions) + leaf.SizeOptS(v.EvScriptName, ev.RestoredScriptName)
	if v.EvFeedExec != 0 {
		size += leaf.SizeU(v.EvFeedExec, ev.FeedExecutionMicros) + leaf.SizeOptU(v.EvFeedLimit, ev.MaxFeedDurationMicros) +
			leaf.SizeOptU(v.EvTurnLimit, ev.MaxTurnDurationMicros) + leaf.SizeOptU(v.EvSleep, ev.MaxTotalSleepMicros)
		if ev.SessionID != nil {
			size += leaf.SizeM(v.EvSessionID, len(ev.SessionID))
		}
	}
	return size, bodyLen
}

// AppendEvent writes the event EventSize measured.
func (e Enc) AppendEvent(b []byte, ev *message.ChildEvent, body message.Event, bodyLen int) []byte {
	if body != nil {
		b = leaf.AppendM(b, protowire.Number(body.EventKind()), bodyLen)
		b = e.appendEvent(b, body)
	}
	v := e.V
	b = leaf.AppendU(b, 20, ev.TotalExecutionMicros)
	if v.EvDuration != 0 {
		b = leaf.AppendOptU(b, v.EvDuration, ev.MaxDurationMicros)
	}
	if v.EvScriptName < v.EvSuspensions {
		b = leaf.AppendOptS(b, v.EvScriptName, ev.RestoredScriptName)
		b = leaf.AppendOptU(b, v.EvSuspensions, ev.MaxSuspensions)
	} else {
		b = leaf.AppendOptU(b, v.EvSuspensions, ev.MaxSuspensions)
		b = leaf.AppendOptS(b, v.EvScriptName, ev.RestoredScriptName)
	}
	if v.EvFeedExec != 0 {
		b = leaf.AppendU(b, v.EvFeedExec, ev.FeedExecutionMicros)
		b = leaf.AppendOptU(b, v.EvFeedLimit, ev.MaxFeedDurationMicros)
		b = leaf.AppendOptU(b, v.EvTurnLimit, ev.MaxTurnDurationMicros)
		b = leaf.AppendOptU(b, v.EvSleep, ev.MaxTotalSleepMicros)
		if ev.SessionID != nil {
			b = leaf.AppendBytesA(b, v.EvSessionID, ev.SessionID)
		}
	}
	return b
}

// ---- requests ----

func (e Enc) requestLen(body message.Request) int {
	v := e.V
	switch x := body.(type) {
	case *message.Configure:
		n := leaf.ConfigureSize(x, v.Limits())
		if v.CfgPolicy != 0 {
			if x.OsPolicy != nil {
				n += leaf.SizeM(v.CfgPolicy, PolicyLen(x.OsPolicy))
			}
			n += leaf.SizeU(v.CfgPersistence, uint64(int64(int32(x.Persistence)))) + leaf.SizeOptS(v.CfgProfile, x.Profile)
		}
		return n
	case *message.InstallDependencies:
		n := 0
		for _, r := range x.Requirements {
			n += leaf.SizeM(1, len(r))
		}
		return n
	case *message.Feed:
		n := leaf.SizeS(1, len(x.Code)) + e.arenaSize(v.FeedValues, &x.Values) + leaf.SizeBool(v.FeedSkip, x.SkipTypeCheck)
		if v.FeedCwd != 0 {
			n += leaf.SizeS(v.FeedCwd, len(x.Cwd))
		}
		for i := range x.Inputs {
			n += leaf.SizeM(2, e.namedRefLen(&x.Inputs[i]))
		}
		return n
	case *message.ResumeCall:
		return e.callResultLen(x.CallID, x.Result) + e.arenaSize(v.CallValues, &x.Values)
	case *message.ResumeNameLookup:
		n := e.arenaSize(v.LookupValues, &x.Values)
		switch x.Kind {
		case message.LookupValue:
			n += e.Vals.RefSize(v.LookupArm, x.Value, true)
		case message.LookupUndefined:
			n += leaf.SizeM(v.LookupArm+1, 0)
		case message.LookupError:
			n += leaf.SizeM(v.LookupArm+2, leaf.ExcSize(x.Error))
		}
		return n
	case *message.ResumeFutures:
		n := e.arenaSize(v.FutureValues, &x.Values)
		for i := range x.Results {
			n += leaf.SizeM(1, e.callResultLen(x.Results[i].CallID, x.Results[i].Result))
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

func (e Enc) appendRequest(b []byte, body message.Request) []byte {
	v := e.V
	switch x := body.(type) {
	case *message.Configure:
		b = leaf.AppendConfigure(b, x, v.Limits())
		if v.CfgPolicy != 0 {
			if x.OsPolicy != nil {
				b = leaf.AppendM(b, v.CfgPolicy, PolicyLen(x.OsPolicy))
				b = AppendPolicy(b, x.OsPolicy)
			}
			b = leaf.AppendU(b, v.CfgPersistence, uint64(int64(int32(x.Persistence))))
			b = leaf.AppendOptS(b, v.CfgProfile, x.Profile)
		}
	case *message.InstallDependencies:
		for _, r := range x.Requirements {
			b = leaf.AppendSA(b, 1, r)
		}
	case *message.Feed:
		b = leaf.AppendS(b, 1, x.Code)
		for i := range x.Inputs {
			in := &x.Inputs[i]
			b = leaf.AppendM(b, 2, e.namedRefLen(in))
			b = leaf.AppendS(b, 1, in.Name)
			b = e.Vals.AppendRef(b, 2, in.Value, false)
		}
		b = e.appendArena(b, v.FeedValues, &x.Values)
		b = leaf.AppendBool(b, v.FeedSkip, x.SkipTypeCheck)
		if v.FeedCwd != 0 {
			b = leaf.AppendS(b, v.FeedCwd, x.Cwd)
		}
	case *message.ResumeCall:
		b = e.appendCallResult(b, x.CallID, x.Result)
		b = e.appendArena(b, v.CallValues, &x.Values)
	case *message.ResumeNameLookup:
		b = e.appendArena(b, v.LookupValues, &x.Values)
		switch x.Kind {
		case message.LookupValue:
			b = e.Vals.AppendRef(b, v.LookupArm, x.Value, true)
		case message.LookupUndefined:
			b = leaf.AppendM(b, v.LookupArm+1, 0)
		case message.LookupError:
			b = leaf.AppendM(b, v.LookupArm+2, leaf.ExcSize(x.Error))
			b = leaf.AppendExc(b, x.Error)
		}
	case *message.ResumeFutures:
		for i := range x.Results {
			fr := &x.Results[i]
			b = leaf.AppendM(b, 1, e.callResultLen(fr.CallID, fr.Result))
			b = e.appendCallResult(b, fr.CallID, fr.Result)
		}
		b = e.appendArena(b, v.FutureValues, &x.Values)
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

func (e Enc) namedRefLen(x *message.NamedRef) int {
	return leaf.SizeS(1, len(x.Name)) + e.Vals.RefSize(2, x.Value, false)
}

// callResultLen sizes a call id (field 1) and its optional result (field
// 2): a FutureResult, and the first fields of a ResumeCall.
func (e Enc) callResultLen(id uint32, r *message.ExtResult) int {
	n := leaf.SizeU(1, uint64(id))
	if r != nil {
		n += leaf.SizeM(2, e.extLen(r))
	}
	return n
}

// appendCallResult writes what callResultLen sizes.
func (e Enc) appendCallResult(b []byte, id uint32, r *message.ExtResult) []byte {
	b = leaf.AppendU(b, 1, uint64(id))
	if r != nil {
		b = leaf.AppendM(b, 2, e.extLen(r))
		b = e.appendExt(b, r)
	}
	return b
}

func (e Enc) extLen(x *message.ExtResult) int {
	switch x.Kind {
	case message.ResultReturn:
		return e.Vals.RefSize(1, x.Value, true)
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

func (e Enc) appendExt(b []byte, x *message.ExtResult) []byte {
	switch x.Kind {
	case message.ResultReturn:
		return e.Vals.AppendRef(b, 1, x.Value, true)
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

func (e Enc) eventLen(body message.Event) int {
	v := e.V
	switch x := body.(type) {
	case *message.Print:
		if !v.PrintSegmented {
			return leaf.SegmentSize(&x.Segments[0])
		}
		n := 0
		for i := range x.Segments {
			n += leaf.SizeM(1, leaf.SegmentSize(&x.Segments[i]))
		}
		return n
	case *message.FunctionCall:
		n := leaf.SizeS(1, len(x.FunctionName)) + e.Vals.RefsSize(2, x.Args) + leaf.SizeU(4, uint64(x.CallID)) +
			e.arenaSize(v.FcValues, &x.Values) + SizePosition(v.FcPosition, x.Position)
		if v.FcEager != 0 {
			n += leaf.SizeBool(v.FcEager, x.AllowEagerAwait)
		}
		for _, p := range x.Kwargs {
			n += leaf.SizeM(3, e.pairLen(p))
		}
		if x.ObjectID != nil {
			n += leaf.UUIDFieldSize
		}
		return n
	case *message.OsCall:
		n := leaf.SizeU(1, uint64(x.CallID)) + e.arenaSize(v.OsValues, &x.Values) + SizePosition(v.OsPosition, x.Position)
		if v.OsEager != 0 {
			n += leaf.SizeBool(v.OsEager, x.AllowEagerAwait)
		}
		if x.Op != 0 {
			n += leaf.SizeM(v.OsArm(x.Op), e.osArgLen(x))
		}
		return n
	case *message.NameLookup:
		n := leaf.SizeS(1, len(x.Name)) + SizePosition(v.NlPosition, x.Position)
		if x.ObjectID != nil {
			n += leaf.UUIDFieldSize
		}
		return n
	case *message.ResolveFutures:
		return leaf.SizePacked(1, x.PendingCallIDs) + SizePosition(v.RfPosition, x.Position)
	case *message.Complete:
		return e.Vals.RefSize(1, x.Value, false) + e.arenaSize(v.CompleteValue, &x.Values)
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

func (e Enc) appendEvent(b []byte, body message.Event) []byte {
	v := e.V
	switch x := body.(type) {
	case *message.Print:
		if !v.PrintSegmented {
			return leaf.AppendSegment(b, &x.Segments[0])
		}
		for i := range x.Segments {
			s := &x.Segments[i]
			b = leaf.AppendSegment(leaf.AppendM(b, 1, leaf.SegmentSize(s)), s)
		}
	case *message.FunctionCall:
		b = leaf.AppendS(b, 1, x.FunctionName)
		b = e.Vals.AppendRefs(b, 2, x.Args)
		for _, p := range x.Kwargs {
			b = leaf.AppendM(b, 3, e.pairLen(p))
			b = e.Vals.AppendRef(b, 1, p.Key, false)
			b = e.Vals.AppendRef(b, 2, p.Value, false)
		}
		b = leaf.AppendU(b, 4, uint64(x.CallID))
		if x.ObjectID != nil {
			b = leaf.AppendUUID(b, 5, x.ObjectID)
		}
		if v.FcEager != 0 {
			b = leaf.AppendBool(b, v.FcEager, x.AllowEagerAwait)
		}
		b = e.appendArena(b, v.FcValues, &x.Values)
		b = AppendPosition(b, v.FcPosition, x.Position)
	case *message.OsCall:
		b = leaf.AppendU(b, 1, uint64(x.CallID))
		if x.Op != 0 {
			b = leaf.AppendM(b, v.OsArm(x.Op), e.osArgLen(x))
			b = e.appendOsArg(b, x)
		}
		b = e.appendArena(b, v.OsValues, &x.Values)
		if v.OsEager != 0 {
			b = leaf.AppendBool(b, v.OsEager, x.AllowEagerAwait)
		}
		b = AppendPosition(b, v.OsPosition, x.Position)
	case *message.NameLookup:
		b = leaf.AppendS(b, 1, x.Name)
		if x.ObjectID != nil {
			b = leaf.AppendUUID(b, 2, x.ObjectID)
		}
		b = AppendPosition(b, v.NlPosition, x.Position)
	case *message.ResolveFutures:
		b = leaf.AppendPacked(b, 1, x.PendingCallIDs)
		b = AppendPosition(b, v.RfPosition, x.Position)
	case *message.Complete:
		b = e.Vals.AppendRef(b, 1, x.Value, false)
		b = e.appendArena(b, v.CompleteValue, &x.Values)
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

func (e Enc) pairLen(p value.Pair) int {
	return e.Vals.RefSize(1, p.Key, false) + e.Vals.RefSize(2, p.Value, false)
}

// osArgLen is the payload size of an OsCall's call arm.
func (e Enc) osArgLen(x *message.OsCall) int {
	switch op := x.Op; {
	case op == message.OpGetenv:
		return leaf.SizeS(1, len(x.Key)) + e.Vals.RefSize(2, x.Default, false)
	case op == message.OpUrandom:
		return leaf.SizeU(1, x.Size)
	case op >= message.OpTime:
		return osArg5Len(x)
	}
	n, _ := leaf.OsArgSize(x)
	return n
}

func (e Enc) appendOsArg(b []byte, x *message.OsCall) []byte {
	switch op := x.Op; {
	case op == message.OpGetenv:
		return e.Vals.AppendRef(leaf.AppendS(b, 1, x.Key), 2, x.Default, false)
	case op == message.OpUrandom:
		return leaf.AppendU(b, 1, x.Size)
	case op >= message.OpTime:
		return appendOsArg5(b, x)
	}
	return leaf.AppendOsArg(b, x)
}

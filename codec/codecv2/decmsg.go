package codecv2

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/codec/internal/wire"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/budget"
	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// frameTooLong is the error of a frame over the limits' cap: its cause is
// the *frame.TooLargeError a frame reader reports, as at protocol 4.
func frameTooLong(n, max int) error {
	return &codec.DecodeError{Structural: true,
		Err: &frame.TooLargeError{Len: uint64(n), Max: uint64(max)}}
}

// ---------------------------------------------------------------------------
// Requests

// reqState is the ParentRequest arm being decoded. A repeated occurrence of
// the same arm merges into it; another arm replaces it.
type reqState struct {
	arm  protowire.Number
	body message.Request
	val  pobj // the arm's singular value field (return_value, lookup value)
}

func (d *dec) newRequest(num protowire.Number) (message.Request, error) {
	if err := d.Charge(256); err != nil { // the message struct
		return nil, err
	}
	var body message.Request
	var g *value.Graph
	switch num {
	case 1:
		body = new(message.Configure)
	case 2:
		body = new(message.InstallDependencies)
	case 3:
		x := new(message.Feed)
		body, g = x, &x.Values
	case 4:
		x := new(message.ResumeCall)
		body, g = x, &x.Values
	case 5:
		x := new(message.ResumeNameLookup)
		body, g = x, &x.Values
	case 6:
		x := new(message.ResumeFutures)
		body, g = x, &x.Values
	case 7:
		body = new(message.Dump)
	case 8:
		body = new(message.Load)
	case 9:
		body = new(message.Reset)
	case 10:
		body = new(message.Shutdown)
	case 11:
		body = new(message.AbortFeed)
	}
	d.g, d.classes = g, nil
	return body, nil
}

func decodeRequest(frame []byte, lim codec.Limits) (*message.ParentRequest, error) {
	r, err := decodeRequestBody(frame, lim)
	return r, wire.AsDecodeError(err)
}

func decodeRequestBody(frame []byte, lim codec.Limits) (*message.ParentRequest, error) {
	if len(frame) > lim.FrameLen() {
		return nil, frameTooLong(len(frame), lim.FrameLen())
	}
	d, frame := newDec(frame, lim)
	r := &message.ParentRequest{}
	var rs reqState
	err := d.Walk(frame, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch {
		case num >= 1 && num <= 11:
			if rs.arm != num {
				body, err := d.newRequest(num)
				if err != nil {
					return 0, push(err, "ParentRequest.kind")
				}
				rs = reqState{arm: num, body: body}
			}
			n, err := d.requestArm(wt, b, &rs)
			return wire.Wrap(n, err, "ParentRequest.kind")
		case num == 20:
			return d.OptTextAt(wt, b, &r.TraceParent, "ParentRequest.trace_parent")
		}
		return -1, nil
	})
	if err != nil {
		return nil, err
	}
	d.convertRequest(&rs)
	if d.conv != nil {
		return nil, d.conv
	}
	r.Body = rs.body
	return r, nil
}

func (d *dec) requestArm(wt protowire.Type, b []byte, rs *reqState) (int, error) {
	switch x := rs.body.(type) {
	case *message.Configure:
		v, n, err := d.Msg(wt, b)
		if err == nil {
			err = d.Configure(v, x, leaf.LimitNums{Duration: 1}, nil)
		}
		return n, err
	case *message.InstallDependencies:
		return d.field1(wt, b, func(wt protowire.Type, b []byte) (int, error) {
			return d.fStrs(wt, b, &x.Requirements, "InstallDependencies.requirements")
		})
	case *message.Feed:
		return d.feed(wt, b, x)
	case *message.ResumeCall:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch num {
			case 1:
				return wire.IntAt(wt, b, &x.CallID, "ResumeCall.call_id")
			case 2:
				return d.extResult(wt, b, &x.Result, &rs.val, "ResumeCall.result")
			}
			return -1, nil
		})
	case *message.ResumeNameLookup:
		return d.resumeNameLookup(wt, b, x, &rs.val)
	case *message.ResumeFutures:
		return d.field1(wt, b, func(wt protowire.Type, b []byte) (int, error) {
			n, err := d.futureResult(wt, b, x)
			return wire.Wrap(n, err, "ResumeFutures.results")
		})
	case *message.Load:
		return d.FieldsMsg(wt, b, leaf.LoadFields(x), nil)
	case *message.AbortFeed:
		return d.field1(wt, b, func(wt protowire.Type, b []byte) (int, error) {
			return d.Exception(wt, b, &x.Exception, "AbortFeed.exception")
		})
	}
	// Dump, Reset, Shutdown.
	return d.skipMessage(wt, b)
}

var namedRefCost = budget.SizeOf[message.NamedRef]()

func (d *dec) feed(wt protowire.Type, b []byte, x *message.Feed) (int, error) {
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return d.TextAt(wt, b, &x.Code, "Feed.code")
		case 2:
			n, err := d.namedValue(wt, b, x)
			return wire.Wrap(n, err, "Feed.inputs")
		case 3:
			return wire.BoolAt(wt, b, &x.SkipTypeCheck, "Feed.skip_type_check")
		}
		return -1, nil
	})
}

func (d *dec) namedValue(wt protowire.Type, b []byte, x *message.Feed) (int, error) {
	var ref message.NamedRef
	var p pobj
	set := false
	n, err := d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return d.TextAt(wt, b, &ref.Name, "NamedValue.name")
		case 2:
			return d.rootField(wt, b, &p, &ref.Value, &set, "NamedValue.value")
		}
		return -1, nil
	})
	if err != nil {
		return 0, err
	}
	switch {
	case (!set || p.arm == 0) && d.conv != nil:
		return n, nil // only the first failure is reported: allocate no other
	case !set:
		d.convErr(&codec.InputError{Name: ref.Name})
		return n, nil
	case p.arm == 0:
		d.convErr(&codec.InputError{Name: ref.Name, Err: valuecheck.MissingField("MontyObject.kind")})
		return n, nil
	}
	if x.Inputs, err = grow(d, x.Inputs, namedRefCost); err != nil {
		return 0, err
	}
	x.Inputs = append(x.Inputs, ref)
	return n, nil
}

// extResult merges one occurrence of an ExtFunctionResult field (seg) into
// *p. val holds the return_value state across occurrences.
func (d *dec) extResult(wt protowire.Type, b []byte, p **message.ExtResult, val *pobj, seg string) (int, error) {
	return d.ExtResult(wt, b, p, seg, func(wt protowire.Type, b []byte, r *message.ExtResult) (n int, err error) {
		if r.Value, n, err = d.root(wt, b, val); err == nil {
			err = d.noteKindless(r, val.arm == 0)
		}
		return n, err
	}, func() { *val = pobj{} })
}

func (d *dec) resumeNameLookup(wt protowire.Type, b []byte, x *message.ResumeNameLookup, val *pobj) (int, error) {
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if num < 1 || num > 3 {
			return -1, nil
		}
		return d.LookupArm(message.LookupKind(num), wt, b, x, func(wt protowire.Type, b []byte) (n int, err error) {
			x.Value, n, err = d.root(wt, b, val)
			return n, err
		}, func() { *val = pobj{} })
	})
}

var futureResultCost = budget.SizeOf[message.FutureResult]()

func (d *dec) futureResult(wt protowire.Type, b []byte, x *message.ResumeFutures) (int, error) {
	var fr message.FutureResult
	var val pobj
	n, err := d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return wire.IntAt(wt, b, &fr.CallID, "FutureResult.call_id")
		case 2:
			return d.extResult(wt, b, &fr.Result, &val, "FutureResult.result")
		}
		return -1, nil
	})
	if err != nil {
		return 0, err
	}
	if x.Results, err = grow(d, x.Results, futureResultCost); err != nil {
		return 0, err
	}
	x.Results = append(x.Results, fr)
	return n, nil
}

const notHandledReason = "NotHandled is only valid answering a suspended OS call"

// convertRequest applies the rules the worker checks when it converts a
// decoded request: required oneofs and fields, and exception sanity.
func (d *dec) convertRequest(rs *reqState) {
	switch x := rs.body.(type) {
	case *message.ResumeCall:
		if x.Result != nil {
			d.convertResult(x.Result, false)
		}
	case *message.ResumeNameLookup:
		switch {
		case x.Kind == 0:
			d.convErr(valuecheck.MissingField("ResumeNameLookup.kind"))
		case x.Kind == message.LookupValue && rs.val.arm == 0:
			d.convErr(valuecheck.MissingField("MontyObject.kind"))
		case x.Error != nil:
			d.sanitize(x.Error)
		}
	case *message.ResumeFutures:
		for i := 0; i < len(x.Results) && d.conv == nil; i++ {
			if x.Results[i].Result == nil {
				d.convErr(valuecheck.MissingField("FutureResult.result"))
				continue
			}
			d.convertResult(x.Results[i].Result, true)
		}
	case *message.AbortFeed:
		if x.Exception != nil {
			d.sanitize(x.Exception)
		}
	}
}

func (d *dec) convertResult(r *message.ExtResult, future bool) {
	switch {
	case r.Kind == 0:
		d.convErr(valuecheck.MissingField("ExtFunctionResult.kind"))
	case r.Kind == message.ResultReturn && d.kindless[r]:
		d.convErr(valuecheck.MissingField("MontyObject.kind"))
	case r.Kind == message.ResultNotHandled && future:
		d.convErr(valuecheck.InvalidValue("ExtFunctionResult.kind", notHandledReason))
	case r.Error != nil:
		d.sanitize(r.Error)
	}
}

// kindlessCost is what noting a kindless result charges: a map entry.
const kindlessCost = 48

// noteKindless records whether result r's return value, as merged so far,
// has no kind, for convertResult (an ExtFunctionResult has no room for
// it; results whose value has no kind are rare).
func (d *dec) noteKindless(r *message.ExtResult, kindless bool) error {
	if !kindless {
		delete(d.kindless, r)
		return nil
	}
	if d.kindless[r] {
		return nil
	}
	if err := d.Charge(kindlessCost); err != nil {
		return err
	}
	if d.kindless == nil {
		d.kindless = make(map[*message.ExtResult]bool)
	}
	d.kindless[r] = true
	return nil
}

func (d *dec) sanitize(e *message.RaisedException) {
	if err := d.Missing.Sanitize(e); err != nil {
		d.convErr(err)
	}
}

// ---------------------------------------------------------------------------
// Events

type evState struct {
	arm    protowire.Number
	body   message.Event
	val    pobj // Complete.value or Getenv.default
	valSet bool
	oid    value.UUID
	oidSet bool
	oidLen int
}

func (d *dec) newEvent(num protowire.Number) (message.Event, error) {
	if err := d.Charge(256); err != nil { // the message struct
		return nil, err
	}
	var body message.Event
	var g *value.Graph
	switch num {
	case 1:
		body = &message.Print{Segments: make([]message.PrintSegment, 1)}
	case 2:
		x := new(message.FunctionCall)
		body, g = x, &x.Values
	case 3:
		x := new(message.OsCall)
		body, g = x, &x.Values
	case 4:
		body = new(message.NameLookup)
	case 5:
		body = new(message.ResolveFutures)
	case 6:
		x := new(message.Complete)
		body, g = x, &x.Values
	case 7:
		body = new(message.Error)
	case 8:
		body = new(message.TypingError)
	case 9:
		body = new(message.DumpResult)
	case 10:
		body = new(message.Ok)
	case 11:
		body = new(message.FatalError)
	case 12:
		body = new(message.ShutdownDump)
	}
	d.g, d.classes = g, nil
	return body, nil
}

func decodeEvent(frame []byte, lim codec.Limits) (*message.ChildEvent, error) {
	e, err := decodeEventBody(frame, lim)
	return e, wire.AsDecodeError(err)
}

func decodeEventBody(frame []byte, lim codec.Limits) (*message.ChildEvent, error) {
	if len(frame) > lim.FrameLen() {
		return nil, frameTooLong(len(frame), lim.FrameLen())
	}
	d, frame := newDec(frame, lim)
	ev := &message.ChildEvent{}
	var es evState
	// The envelope of every event, host calls included: read with a
	// wire.Iter, as the hot loops are (see objectBody).
	it := d.Iter(frame)
	for it.More() {
		num, wt, err := it.Next()
		if err != nil {
			return nil, err
		}
		var m int
		switch {
		case num >= 1 && num <= 12:
			if es.arm != num {
				body, err := d.newEvent(num)
				if err != nil {
					return nil, push(err, "ChildEvent.kind")
				}
				es = evState{arm: num, body: body}
			}
			m, err = d.eventArm(wt, it.B, &es)
			m, err = wire.Wrap(m, err, "ChildEvent.kind")
		case num == 20:
			m, err = wire.IntAt(wt, it.B, &ev.TotalExecutionMicros, "ChildEvent.total_execution_micros")
		case num == 21:
			m, err = wire.OptIntAt(&d.Dec, wt, it.B, &ev.MaxDurationMicros, "ChildEvent.max_duration_micros")
		case num == 22:
			m, err = d.OptTextAt(wt, it.B, &ev.RestoredScriptName, "ChildEvent.restored_script_name")
		case num == 23:
			m, err = wire.OptIntAt(&d.Dec, wt, it.B, &ev.MaxSuspensions, "ChildEvent.max_suspensions")
		default:
			err = it.Skip(num, wt, d.Level-1)
		}
		if err != nil {
			return nil, err
		}
		it.Take(m)
	}
	if err := d.End(&it); err != nil {
		return nil, err
	}
	d.convertEvent(&es)
	if d.conv != nil {
		return nil, d.conv
	}
	ev.Body = es.body
	return ev, nil
}

func (d *dec) eventArm(wt protowire.Type, b []byte, es *evState) (int, error) {
	switch x := es.body.(type) {
	case *message.Print:
		v, n, err := d.Msg(wt, b)
		if err == nil {
			err = d.PrintSegment(v, &x.Segments[0], "Print")
		}
		return n, err
	case *message.FunctionCall:
		return d.functionCall(wt, b, x, es)
	case *message.OsCall:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch {
			case num == 1:
				return wire.IntAt(wt, b, &x.CallID, "OsCall.call_id")
			case num >= 2 && num <= 24:
				if op := message.OsOp(num); x.Op != op {
					es.val, es.valSet = pobj{}, false
				}
				n, err := d.OsArgs(message.OsOp(num), wt, b, x, func(v []byte) error { return d.getenv(v, x, es) })
				return wire.Wrap(n, err, "OsCall.call")
			}
			return -1, nil
		})
	case *message.NameLookup:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch num {
			case 1:
				return d.TextAt(wt, b, &x.Name, "NameLookup.name")
			case 2:
				es.oidSet = true
				n, err := d.uuidMsg(wt, b, &es.oid, &es.oidLen)
				return wire.Wrap(n, err, "NameLookup.object_id")
			}
			return -1, nil
		})
	case *message.ResolveFutures:
		return d.field1(wt, b, func(wt protowire.Type, b []byte) (int, error) {
			n, err := d.packedU32(wt, b, &x.PendingCallIDs)
			return wire.Wrap(n, err, "ResolveFutures.pending_call_ids")
		})
	case *message.Complete:
		return d.field1(wt, b, func(wt protowire.Type, b []byte) (int, error) {
			return d.rootField(wt, b, &es.val, &x.Value, &es.valSet, "Complete.value")
		})
	case *message.Error:
		return d.field1(wt, b, func(wt protowire.Type, b []byte) (int, error) {
			return d.Exception(wt, b, &x.Exception, "Error.exception")
		})
	case *message.TypingError:
		return d.FieldsMsg(wt, b, leaf.TypingErrorFields(x), nil)
	case *message.DumpResult:
		return d.FieldsMsg(wt, b, leaf.DumpResultFields(x), nil)
	case *message.FatalError:
		return d.FieldsMsg(wt, b, leaf.FatalErrorFields(x), nil)
	case *message.ShutdownDump:
		return d.field1(wt, b, func(wt protowire.Type, b []byte) (int, error) {
			v, n, err := wire.BytesField(wt, b)
			if err == nil {
				v, err = d.Bytes(v)
			}
			if err != nil {
				return 0, push(err, "ShutdownDump.dump")
			}
			x.Dump = &v
			return n, nil
		})
	}
	// Ok.
	return d.skipMessage(wt, b)
}

// functionCall merges one FunctionCall occurrence. Upstream's parent
// decodes this message as it decodes values (checked against it:
// testdata/rustparent): it names none of the message's fields in an error
// path, so an error here reads "ChildEvent.kind: …" or starts at a nested
// value's own segments, and it checks each object_id as it ends.
func (d *dec) functionCall(wt protowire.Type, b []byte, x *message.FunctionCall, es *evState) (int, error) {
	v, n, err := d.Msg(wt, b)
	if err != nil {
		return 0, err
	}
	// The host-call hot path: read with a wire.Iter, as the value loops
	// are (see objectBody).
	it := d.Iter(v)
	for it.More() {
		num, wt, err := it.Next()
		var m int
		switch {
		case err != nil:
		case num == 1:
			x.FunctionName, m, err = d.str(wt, it.B)
		case num == 2:
			var id value.NodeID
			if id, m, err = d.item(wt, it.B); err == nil {
				x.Args, err = d.appendRef(x.Args, id)
			}
		case num == 3:
			var k, v value.NodeID
			if k, v, m, err = d.pair(wt, it.B); err == nil {
				if x.Kwargs, err = grow(d, x.Kwargs, budget.PairCost); err == nil {
					x.Kwargs = append(x.Kwargs, value.Pair{Key: k, Value: v})
				}
			}
		case num == 4:
			m, err = wire.Int(wt, it.B, &x.CallID)
		case num == 5:
			// Each occurrence is a fresh Uuid, checked as it ends: a
			// wrong length fails the decode there.
			var id value.UUID
			l := 0
			if m, err = d.uuidMsg(wt, it.B, &id, &l); err == nil && l != 16 {
				err = wire.UUIDLenErr("FunctionCall.object_id", l)
			}
			es.oid, es.oidLen, es.oidSet = id, l, true
		default:
			err = it.Skip(num, wt, d.Level-1)
		}
		if err != nil {
			return 0, err
		}
		it.Take(m)
	}
	return n, d.End(&it)
}

// getenv merges a Getenv message (OsCall.call's getenv arm), whose
// default is a MontyObject at protocol 2.
func (d *dec) getenv(b []byte, x *message.OsCall, es *evState) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return d.TextAt(wt, b, &x.Key, "Getenv.key")
		case 2:
			return d.rootField(wt, b, &es.val, &x.Default, &es.valSet, "Getenv.default")
		}
		return -1, nil
	})
}

// packedU32 decodes one occurrence of a repeated uint32 field, packed or
// not. A packed run of L bytes holds at most L ids, so room for them is
// charged and reserved before any is read.
func (d *dec) packedU32(wt protowire.Type, b []byte, dst *[]uint32) (int, error) {
	if wt != protowire.BytesType {
		v, n, err := wire.VarintField(wt, b)
		if err != nil {
			return 0, err
		}
		s, err := grow(d, *dst, 4)
		if err != nil {
			return 0, err
		}
		*dst = append(s, uint32(v))
		return n, nil
	}
	run, n, err := wire.BytesField(wt, b)
	if err != nil {
		return 0, err
	}
	s, err := budget.Reserve(&d.Bud, *dst, len(run), 4)
	if err != nil {
		return 0, err
	}
	err = wire.Packed(run, func(v uint64) error {
		s = append(s, uint32(v))
		return nil
	})
	*dst = s
	return n, err
}

func (d *dec) convertEvent(es *evState) {
	switch x := es.body.(type) {
	case *message.FunctionCall:
		x.ObjectID = d.objectID(es, "FunctionCall.object_id")
	case *message.NameLookup:
		x.ObjectID = d.objectID(es, "NameLookup.object_id")
	case *message.OsCall:
		switch x.Op {
		case 0:
			d.convErr(valuecheck.MissingField("OsCall.call"))
		case message.OpOpen:
			m, err := value.NormalizeFileMode(x.Mode)
			if err != nil {
				d.convErr(err)
			}
			x.Mode = m
		case message.OpGetenv:
			if !es.valSet {
				d.convErr(valuecheck.MissingField("Getenv.default"))
			} else if es.val.arm == 0 {
				d.convErr(valuecheck.MissingField("MontyObject.kind"))
			}
		}
	case *message.Complete:
		if !es.valSet {
			d.convErr(valuecheck.MissingField("Complete.value"))
		} else if es.val.arm == 0 {
			d.convErr(valuecheck.MissingField("MontyObject.kind"))
		}
	case *message.Error:
		if x.Exception == nil {
			d.convErr(valuecheck.MissingField("Error.exception"))
		} else {
			d.sanitize(x.Exception)
		}
	}
}

func (d *dec) objectID(es *evState, field string) *value.UUID {
	if !es.oidSet {
		return nil
	}
	if es.oidLen != 16 {
		d.convErr(wire.UUIDLenErr(field, es.oidLen))
		return nil
	}
	id := es.oid
	return &id
}

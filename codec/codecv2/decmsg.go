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
	if err := d.charge(256); err != nil { // the message struct
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
	d := newDec(frame, lim)
	r := &message.ParentRequest{}
	var rs reqState
	for d.Pos < len(d.Buf) {
		num, wt, err := d.Key()
		if err != nil {
			return nil, err
		}
		switch {
		case num >= 1 && num <= 11:
			if rs.arm != num {
				body, err := d.newRequest(num)
				if err != nil {
					return nil, push(err, "ParentRequest.kind")
				}
				rs = reqState{arm: num, body: body}
			}
			err = push(d.requestArm(wt, &rs), "ParentRequest.kind")
		case num == 20:
			err = d.fOptStr(wt, &r.TraceParent, "ParentRequest.trace_parent")
		default:
			err = d.Skip(num, wt)
		}
		if err != nil {
			return nil, err
		}
	}
	d.convertRequest(&rs)
	if d.conv != nil {
		return nil, d.conv
	}
	r.Body = rs.body
	return r, nil
}

func (d *dec) requestArm(wt protowire.Type, rs *reqState) error {
	switch x := rs.body.(type) {
	case *message.Configure:
		return d.configure(wt, x)
	case *message.InstallDependencies:
		return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
			if num == 1 {
				return d.fStrs(wt, &x.Requirements, "InstallDependencies.requirements")
			}
			return d.Skip(num, wt)
		})
	case *message.Feed:
		return d.feed(wt, x)
	case *message.ResumeCall:
		return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
			switch num {
			case 1:
				return fNum(d, wt, &x.CallID, "ResumeCall.call_id")
			case 2:
				if x.Result == nil {
					r, err := chargeNew[message.ExtResult](d)
					if err != nil {
						return push(err, "ResumeCall.result")
					}
					x.Result = r
				}
				return push(d.extResult(wt, x.Result, &rs.val), "ResumeCall.result")
			}
			return d.Skip(num, wt)
		})
	case *message.ResumeNameLookup:
		return d.resumeNameLookup(wt, x, &rs.val)
	case *message.ResumeFutures:
		return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
			if num == 1 {
				return push(d.futureResult(wt, x), "ResumeFutures.results")
			}
			return d.Skip(num, wt)
		})
	case *message.Load:
		return d.fields(wt, leaf.LoadFields(x), nil)
	case *message.AbortFeed:
		return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
			if num == 1 {
				if x.Exception == nil {
					e, err := chargeNew[message.RaisedException](d)
					if err != nil {
						return push(err, "AbortFeed.exception")
					}
					x.Exception = e
				}
				return push(d.raised(wt, x.Exception), "AbortFeed.exception")
			}
			return d.Skip(num, wt)
		})
	}
	// Dump, Reset, Shutdown.
	return d.SkipMessage(wt)
}

func (d *dec) configure(wt protowire.Type, x *message.Configure) error {
	return d.fields(wt, leaf.ConfigureFields(x), func(num protowire.Number, wt protowire.Type) error {
		if num != 2 {
			return d.Skip(num, wt)
		}
		if x.Limits == nil {
			l, err := chargeNew[message.ResourceLimits](d)
			if err != nil {
				return push(err, "Configure.limits")
			}
			x.Limits = l
		}
		return push(d.fields(wt, leaf.LimitFields(x.Limits, leaf.LimitNums{Duration: 1}), nil), "Configure.limits")
	})
}

var namedRefCost = budget.SizeOf[message.NamedRef]()

func (d *dec) feed(wt protowire.Type, x *message.Feed) error {
	return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
		switch num {
		case 1:
			return d.fStr(wt, &x.Code, "Feed.code")
		case 2:
			return push(d.namedValue(wt, x), "Feed.inputs")
		case 3:
			return d.fBool(wt, &x.SkipTypeCheck, "Feed.skip_type_check")
		}
		return d.Skip(num, wt)
	})
}

func (d *dec) namedValue(wt protowire.Type, x *message.Feed) error {
	var ref message.NamedRef
	var p pobj
	set := false
	err := d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
		switch num {
		case 1:
			return d.fStr(wt, &ref.Name, "NamedValue.name")
		case 2:
			id, err := d.root(wt, &p)
			if err != nil {
				return push(err, "NamedValue.value")
			}
			ref.Value, set = id, true
			return nil
		}
		return d.Skip(num, wt)
	})
	if err != nil {
		return err
	}
	switch {
	case (!set || p.arm == 0) && d.conv != nil:
		return nil // only the first failure is reported: allocate no other
	case !set:
		d.convErr(&codec.InputError{Name: ref.Name})
		return nil
	case p.arm == 0:
		d.convErr(&codec.InputError{Name: ref.Name, Err: valuecheck.MissingField("MontyObject.kind")})
		return nil
	}
	if x.Inputs, err = grow(d, x.Inputs, namedRefCost); err != nil {
		return err
	}
	x.Inputs = append(x.Inputs, ref)
	return nil
}

// extResult merges one ExtFunctionResult occurrence into r. val holds the
// return_value state across occurrences.
func (d *dec) extResult(wt protowire.Type, r *message.ExtResult, val *pobj) error {
	return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
		if num < 1 || num > 5 {
			return d.Skip(num, wt)
		}
		if k := message.ResultKind(num); r.Kind != k {
			*r = message.ExtResult{Kind: k}
			*val = pobj{}
		}
		var err error
		switch num {
		case 1:
			if r.Value, err = d.root(wt, val); err == nil {
				err = d.noteKindless(r, val.arm == 0)
			}
		case 2:
			if r.Error == nil {
				if r.Error, err = chargeNew[message.RaisedException](d); err != nil {
					break
				}
			}
			err = d.raised(wt, r.Error)
		case 3:
			var v uint64
			v, err = d.Uvarint(wt)
			r.Future = uint32(v)
		case 4:
			r.Name, err = d.str(wt)
		case 5:
			err = d.SkipMessage(wt)
		}
		return push(err, "ExtFunctionResult.kind")
	})
}

func (d *dec) resumeNameLookup(wt protowire.Type, x *message.ResumeNameLookup, val *pobj) error {
	return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
		if num < 1 || num > 3 {
			return d.Skip(num, wt)
		}
		if k := message.LookupKind(num); x.Kind != k {
			x.Kind, x.Value, x.Error = k, 0, nil
			*val = pobj{}
		}
		var err error
		switch num {
		case 1:
			x.Value, err = d.root(wt, val)
		case 2:
			err = d.SkipMessage(wt)
		case 3:
			if x.Error == nil {
				if x.Error, err = chargeNew[message.RaisedException](d); err != nil {
					break
				}
			}
			err = d.raised(wt, x.Error)
		}
		return push(err, "ResumeNameLookup.kind")
	})
}

var futureResultCost = budget.SizeOf[message.FutureResult]()

func (d *dec) futureResult(wt protowire.Type, x *message.ResumeFutures) error {
	var fr message.FutureResult
	var val pobj
	err := d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
		switch num {
		case 1:
			return fNum(d, wt, &fr.CallID, "FutureResult.call_id")
		case 2:
			if fr.Result == nil {
				r, err := chargeNew[message.ExtResult](d)
				if err != nil {
					return push(err, "FutureResult.result")
				}
				fr.Result = r
			}
			return push(d.extResult(wt, fr.Result, &val), "FutureResult.result")
		}
		return d.Skip(num, wt)
	})
	if err != nil {
		return err
	}
	if x.Results, err = grow(d, x.Results, futureResultCost); err != nil {
		return err
	}
	x.Results = append(x.Results, fr)
	return nil
}

var stackFrameCost = budget.SizeOf[message.StackFrame]()

func (d *dec) raised(wt protowire.Type, e *message.RaisedException) error {
	return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
		switch num {
		case 1:
			return d.fStr(wt, &e.Type, "RaisedException.exc_type")
		case 2:
			return d.fOptStr(wt, &e.Message, "RaisedException.message")
		case 3:
			return push(d.stackFrame(wt, e), "RaisedException.traceback")
		case 4:
			return push(d.excData(wt, &e.Data), "RaisedException.data")
		}
		return d.Skip(num, wt)
	})
}

func (d *dec) stackFrame(wt protowire.Type, e *message.RaisedException) error {
	// The frame is decoded in place: its field table holds pointers into
	// it, so a local would move to the heap, one allocation per frame.
	var err error
	if e.Traceback, err = grow(d, e.Traceback, stackFrameCost); err != nil {
		return err
	}
	e.Traceback = append(e.Traceback, message.StackFrame{})
	f := &e.Traceback[len(e.Traceback)-1]
	var start, end bool
	err = d.fields(wt, leaf.StackFrameFields(f), func(num protowire.Number, wt protowire.Type) error {
		switch num {
		case 2:
			start = true
			return push(d.fields(wt, leaf.CodeLocFields(&f.Start), nil), "StackFrame.start")
		case 3:
			end = true
			return push(d.fields(wt, leaf.CodeLocFields(&f.End), nil), "StackFrame.end")
		}
		return d.Skip(num, wt)
	})
	if err != nil || (start && end) {
		return err
	}
	// Checked when the exception converts (sanitize), after its type.
	return d.missing.Note(e, start, d.charge)
}

func (d *dec) excData(wt protowire.Type, dst *message.ExcData) error {
	return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
		switch num {
		case 1:
			u, ok := (*dst).(*message.UnicodeErrorData)
			if !ok {
				var err error
				if u, err = chargeNew[message.UnicodeErrorData](d); err != nil {
					return push(err, "ExcData.kind")
				}
				*dst = u
			}
			return push(d.unicodeData(wt, u), "ExcData.kind")
		case 2:
			j, ok := (*dst).(*message.JSONErrorData)
			if !ok {
				var err error
				if j, err = chargeNew[message.JSONErrorData](d); err != nil {
					return push(err, "ExcData.kind")
				}
				*dst = j
			}
			return push(d.fields(wt, leaf.JSONErrorFields(j), nil), "ExcData.kind")
		}
		return d.Skip(num, wt)
	})
}

func (d *dec) unicodeData(wt protowire.Type, u *message.UnicodeErrorData) error {
	return d.fields(wt, leaf.UnicodeErrorFields(u), func(num protowire.Number, wt protowire.Type) error {
		switch num {
		case 2:
			b, err := d.bytes(wt, true)
			if err != nil {
				return push(err, "UnicodeErrorData.object")
			}
			u.ObjectBytes, u.ObjectStr = b, nil
			return nil
		case 3:
			var s *string
			if err := d.fOptStr(wt, &s, "UnicodeErrorData.object"); err != nil {
				return err
			}
			u.ObjectBytes, u.ObjectStr = nil, s
			return nil
		}
		return d.Skip(num, wt)
	})
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
	if err := d.charge(kindlessCost); err != nil {
		return err
	}
	if d.kindless == nil {
		d.kindless = make(map[*message.ExtResult]bool)
	}
	d.kindless[r] = true
	return nil
}

func (d *dec) sanitize(e *message.RaisedException) {
	if err := d.missing.Sanitize(e); err != nil {
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
	stream int32
	oid    value.UUID
	oidSet bool
	oidLen int
}

func (d *dec) newEvent(num protowire.Number) (message.Event, error) {
	if err := d.charge(256); err != nil { // the message struct
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
	d := newDec(frame, lim)
	ev := &message.ChildEvent{}
	var es evState
	for d.Pos < len(d.Buf) {
		num, wt, err := d.Key()
		if err != nil {
			return nil, err
		}
		switch {
		case num >= 1 && num <= 12:
			if es.arm != num {
				body, err := d.newEvent(num)
				if err != nil {
					return nil, push(err, "ChildEvent.kind")
				}
				es = evState{arm: num, body: body}
			}
			err = push(d.eventArm(wt, &es), "ChildEvent.kind")
		case num == 20:
			err = fNum(d, wt, &ev.TotalExecutionMicros, "ChildEvent.total_execution_micros")
		case num == 21:
			err = fOptNum(d, wt, &ev.MaxDurationMicros, "ChildEvent.max_duration_micros")
		case num == 22:
			err = d.fOptStr(wt, &ev.RestoredScriptName, "ChildEvent.restored_script_name")
		case num == 23:
			err = fOptNum(d, wt, &ev.MaxSuspensions, "ChildEvent.max_suspensions")
		default:
			err = d.Skip(num, wt)
		}
		if err != nil {
			return nil, err
		}
	}
	d.convertEvent(&es)
	if d.conv != nil {
		return nil, d.conv
	}
	ev.Body = es.body
	return ev, nil
}

func (d *dec) eventArm(wt protowire.Type, es *evState) error {
	switch x := es.body.(type) {
	case *message.Print:
		seg := &x.Segments[0]
		return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
			switch num {
			case 1:
				return fNum(d, wt, &es.stream, "Print.stream")
			case 2:
				return d.fStr(wt, &seg.Text, "Print.text")
			}
			return d.Skip(num, wt)
		})
	case *message.FunctionCall:
		return d.functionCall(wt, x, es)
	case *message.OsCall:
		return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
			switch {
			case num == 1:
				return fNum(d, wt, &x.CallID, "OsCall.call_id")
			case num >= 2 && num <= 24:
				return push(d.osCall(num, wt, x, es), "OsCall.call")
			}
			return d.Skip(num, wt)
		})
	case *message.NameLookup:
		return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
			switch num {
			case 1:
				return d.fStr(wt, &x.Name, "NameLookup.name")
			case 2:
				es.oidSet = true
				return push(d.uuidMsg(wt, &es.oid, &es.oidLen), "NameLookup.object_id")
			}
			return d.Skip(num, wt)
		})
	case *message.ResolveFutures:
		return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
			if num == 1 {
				return push(d.packedU32(wt, &x.PendingCallIDs), "ResolveFutures.pending_call_ids")
			}
			return d.Skip(num, wt)
		})
	case *message.Complete:
		return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
			if num == 1 {
				id, err := d.root(wt, &es.val)
				if err != nil {
					return push(err, "Complete.value")
				}
				x.Value, es.valSet = id, true
				return nil
			}
			return d.Skip(num, wt)
		})
	case *message.Error:
		return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
			if num == 1 {
				if x.Exception == nil {
					e, err := chargeNew[message.RaisedException](d)
					if err != nil {
						return push(err, "Error.exception")
					}
					x.Exception = e
				}
				return push(d.raised(wt, x.Exception), "Error.exception")
			}
			return d.Skip(num, wt)
		})
	case *message.TypingError:
		return d.fields(wt, leaf.TypingErrorFields(x), nil)
	case *message.DumpResult:
		return d.fields(wt, leaf.DumpResultFields(x), nil)
	case *message.FatalError:
		return d.fields(wt, leaf.FatalErrorFields(x), nil)
	case *message.ShutdownDump:
		return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
			if num == 1 {
				b, err := d.bytes(wt, true)
				if err != nil {
					return push(err, "ShutdownDump.dump")
				}
				x.Dump = &b
				return nil
			}
			return d.Skip(num, wt)
		})
	}
	// Ok.
	return d.SkipMessage(wt)
}

// functionCall merges one FunctionCall occurrence. Upstream's parent
// decodes this message as it decodes values (checked against it:
// testdata/rustparent): it names none of the message's fields in an error
// path, so an error here reads "ChildEvent.kind: …" or starts at a nested
// value's own segments, and it checks each object_id as it ends.
func (d *dec) functionCall(wt protowire.Type, x *message.FunctionCall, es *evState) error {
	return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
		var err error
		switch num {
		case 1:
			x.FunctionName, err = d.str(wt)
		case 2:
			var id value.NodeID
			if id, err = d.item(wt); err == nil {
				x.Args, err = d.appendRef(x.Args, id)
			}
		case 3:
			var k, v value.NodeID
			if k, v, err = d.pair(wt); err == nil {
				if x.Kwargs, err = grow(d, x.Kwargs, budget.PairCost); err == nil {
					x.Kwargs = append(x.Kwargs, value.Pair{Key: k, Value: v})
				}
			}
		case 4:
			var v uint64
			v, err = d.Uvarint(wt)
			x.CallID = uint32(v)
		case 5:
			// Each occurrence is a fresh Uuid, checked as it ends: a
			// wrong length fails the decode there.
			var id value.UUID
			n := 0
			if err = d.uuidMsg(wt, &id, &n); err == nil && n != 16 {
				err = uuidLenErr("FunctionCall.object_id", n)
			}
			es.oid, es.oidLen, es.oidSet = id, n, true
		default:
			err = d.Skip(num, wt)
		}
		return err
	})
}

// osCall merges one occurrence of an OsCall.call arm.
func (d *dec) osCall(num protowire.Number, wt protowire.Type, x *message.OsCall, es *evState) error {
	if op := message.OsOp(num); x.Op != op {
		*x = message.OsCall{CallID: x.CallID, Op: op, Values: x.Values}
		es.val, es.valSet = pobj{}, false
	}
	if f, ok := leaf.OsArgFields(num, x); ok {
		return d.fields(wt, f, nil)
	}
	switch {
	case num <= 13:
		s, err := d.str(wt)
		x.Path = s
		return err
	case num == 21:
		return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
			switch num {
			case 1:
				return d.fStr(wt, &x.Key, "Getenv.key")
			case 2:
				id, err := d.root(wt, &es.val)
				if err != nil {
					return push(err, "Getenv.default")
				}
				x.Default, es.valSet = id, true
				return nil
			}
			return d.Skip(num, wt)
		})
	case num == 24:
		return d.Message(wt, func(num protowire.Number, wt protowire.Type) error {
			if num == 1 {
				if x.TZ == nil {
					tz, err := chargeNew[value.TimeZone](d)
					if err != nil {
						return push(err, "DateTimeNow.tz")
					}
					x.TZ = tz
				}
				return push(d.fields(wt, leaf.TimeZoneFields(x.TZ), nil), "DateTimeNow.tz")
			}
			return d.Skip(num, wt)
		})
	}
	// get_environ, date_today.
	return d.SkipMessage(wt)
}

// packedU32 decodes one occurrence of a repeated uint32 field, packed or
// not. A packed run of L bytes holds at most L ids, so room for them is
// charged and reserved before any is read.
func (d *dec) packedU32(wt protowire.Type, dst *[]uint32) error {
	if wt != protowire.BytesType {
		v, err := d.Uvarint(wt)
		if err != nil {
			return err
		}
		s, err := grow(d, *dst, 4)
		if err != nil {
			return err
		}
		*dst = append(s, uint32(v))
		return nil
	}
	n, err := d.Length()
	if err != nil {
		return err
	}
	s, err := budget.Reserve(&d.Bud, *dst, n, 4)
	if err != nil {
		return fail(codec.ErrBudget)
	}
	end := d.Pos + n
	for d.Pos < end {
		v, err := d.Varint()
		if err != nil {
			return err
		}
		s = append(s, uint32(v))
	}
	*dst = s
	if d.Pos != end {
		return fail(wire.ErrDelimited)
	}
	return nil
}

func (d *dec) convertEvent(es *evState) {
	switch x := es.body.(type) {
	case *message.Print:
		// Upstream's parent takes any stream that is not stderr for stdout.
		x.Segments[0].Stream = message.StreamUnspecified
		if es.stream > 0 && es.stream <= 255 {
			x.Segments[0].Stream = message.PrintStream(es.stream)
		}
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
		d.convErr(uuidLenErr(field, es.oidLen))
		return nil
	}
	id := es.oid
	return &id
}

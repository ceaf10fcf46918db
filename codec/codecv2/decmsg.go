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
	d, frame := newDec(frame, lim)
	r := &message.ParentRequest{}
	var rs reqState
	err := d.walk(frame, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
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
			return d.fOptStr(wt, b, &r.TraceParent, "ParentRequest.trace_parent")
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
		return d.configure(wt, b, x)
	case *message.InstallDependencies:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if num == 1 {
				return d.fStrs(wt, b, &x.Requirements, "InstallDependencies.requirements")
			}
			return -1, nil
		})
	case *message.Feed:
		return d.feed(wt, b, x)
	case *message.ResumeCall:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch num {
			case 1:
				return fNum(wt, b, &x.CallID, "ResumeCall.call_id")
			case 2:
				if x.Result == nil {
					r, err := chargeNew[message.ExtResult](d)
					if err != nil {
						return 0, push(err, "ResumeCall.result")
					}
					x.Result = r
				}
				n, err := d.extResult(wt, b, x.Result, &rs.val)
				return wire.Wrap(n, err, "ResumeCall.result")
			}
			return -1, nil
		})
	case *message.ResumeNameLookup:
		return d.resumeNameLookup(wt, b, x, &rs.val)
	case *message.ResumeFutures:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if num == 1 {
				n, err := d.futureResult(wt, b, x)
				return wire.Wrap(n, err, "ResumeFutures.results")
			}
			return -1, nil
		})
	case *message.Load:
		return d.fields(wt, b, leaf.LoadFields(x), nil)
	case *message.AbortFeed:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if num == 1 {
				return d.exception(wt, b, &x.Exception, "AbortFeed.exception")
			}
			return -1, nil
		})
	}
	// Dump, Reset, Shutdown.
	return d.skipMessage(wt, b)
}

func (d *dec) configure(wt protowire.Type, b []byte, x *message.Configure) (int, error) {
	return d.fields(wt, b, leaf.ConfigureFields(x), func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if num != 2 {
			return -1, nil
		}
		if x.Limits == nil {
			l, err := chargeNew[message.ResourceLimits](d)
			if err != nil {
				return 0, push(err, "Configure.limits")
			}
			x.Limits = l
		}
		n, err := d.fields(wt, b, leaf.LimitFields(x.Limits, leaf.LimitNums{Duration: 1}), nil)
		return wire.Wrap(n, err, "Configure.limits")
	})
}

var namedRefCost = budget.SizeOf[message.NamedRef]()

func (d *dec) feed(wt protowire.Type, b []byte, x *message.Feed) (int, error) {
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return d.fStr(wt, b, &x.Code, "Feed.code")
		case 2:
			n, err := d.namedValue(wt, b, x)
			return wire.Wrap(n, err, "Feed.inputs")
		case 3:
			return fBool(wt, b, &x.SkipTypeCheck, "Feed.skip_type_check")
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
			return d.fStr(wt, b, &ref.Name, "NamedValue.name")
		case 2:
			id, n, err := d.root(wt, b, &p)
			if err != nil {
				return 0, push(err, "NamedValue.value")
			}
			ref.Value, set = id, true
			return n, nil
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

// extResult merges one ExtFunctionResult occurrence into r. val holds the
// return_value state across occurrences.
func (d *dec) extResult(wt protowire.Type, b []byte, r *message.ExtResult, val *pobj) (int, error) {
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if num < 1 || num > 5 {
			return -1, nil
		}
		if k := message.ResultKind(num); r.Kind != k {
			*r = message.ExtResult{Kind: k}
			*val = pobj{}
		}
		var n int
		var err error
		switch num {
		case 1:
			if r.Value, n, err = d.root(wt, b, val); err == nil {
				err = d.noteKindless(r, val.arm == 0)
			}
		case 2:
			return d.exception(wt, b, &r.Error, "ExtFunctionResult.kind")
		case 3:
			n, err = wire.Int(wt, b, &r.Future)
		case 4:
			r.Name, n, err = d.str(wt, b)
		case 5:
			n, err = d.skipMessage(wt, b)
		}
		return wire.Wrap(n, err, "ExtFunctionResult.kind")
	})
}

func (d *dec) resumeNameLookup(wt protowire.Type, b []byte, x *message.ResumeNameLookup, val *pobj) (int, error) {
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if num < 1 || num > 3 {
			return -1, nil
		}
		if k := message.LookupKind(num); x.Kind != k {
			x.Kind, x.Value, x.Error = k, 0, nil
			*val = pobj{}
		}
		var n int
		var err error
		switch num {
		case 1:
			x.Value, n, err = d.root(wt, b, val)
		case 2:
			n, err = d.skipMessage(wt, b)
		case 3:
			return d.exception(wt, b, &x.Error, "ResumeNameLookup.kind")
		}
		return wire.Wrap(n, err, "ResumeNameLookup.kind")
	})
}

var futureResultCost = budget.SizeOf[message.FutureResult]()

func (d *dec) futureResult(wt protowire.Type, b []byte, x *message.ResumeFutures) (int, error) {
	var fr message.FutureResult
	var val pobj
	n, err := d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return fNum(wt, b, &fr.CallID, "FutureResult.call_id")
		case 2:
			if fr.Result == nil {
				r, err := chargeNew[message.ExtResult](d)
				if err != nil {
					return 0, push(err, "FutureResult.result")
				}
				fr.Result = r
			}
			n, err := d.extResult(wt, b, fr.Result, &val)
			return wire.Wrap(n, err, "FutureResult.result")
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

// exception merges one occurrence of a RaisedException field into *p,
// allocating it (charged) first when absent; seg names the field.
func (d *dec) exception(wt protowire.Type, b []byte, p **message.RaisedException, seg string) (int, error) {
	if *p == nil {
		e, err := chargeNew[message.RaisedException](d)
		if err != nil {
			return 0, push(err, seg)
		}
		*p = e
	}
	n, err := d.raised(wt, b, *p)
	return wire.Wrap(n, err, seg)
}

var stackFrameCost = budget.SizeOf[message.StackFrame]()

func (d *dec) raised(wt protowire.Type, b []byte, e *message.RaisedException) (int, error) {
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return d.fStr(wt, b, &e.Type, "RaisedException.exc_type")
		case 2:
			return d.fOptStr(wt, b, &e.Message, "RaisedException.message")
		case 3:
			n, err := d.stackFrame(wt, b, e)
			return wire.Wrap(n, err, "RaisedException.traceback")
		case 4:
			n, err := d.excData(wt, b, &e.Data)
			return wire.Wrap(n, err, "RaisedException.data")
		}
		return -1, nil
	})
}

func (d *dec) stackFrame(wt protowire.Type, b []byte, e *message.RaisedException) (int, error) {
	// The frame is decoded in place: its field table holds pointers into
	// it, so a local would move to the heap, one allocation per frame.
	var err error
	if e.Traceback, err = grow(d, e.Traceback, stackFrameCost); err != nil {
		return 0, err
	}
	e.Traceback = append(e.Traceback, message.StackFrame{})
	f := &e.Traceback[len(e.Traceback)-1]
	var start, end bool
	n, err := d.fields(wt, b, leaf.StackFrameFields(f), func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 2:
			start = true
			n, err := d.fields(wt, b, leaf.CodeLocFields(&f.Start), nil)
			return wire.Wrap(n, err, "StackFrame.start")
		case 3:
			end = true
			n, err := d.fields(wt, b, leaf.CodeLocFields(&f.End), nil)
			return wire.Wrap(n, err, "StackFrame.end")
		}
		return -1, nil
	})
	if err != nil || (start && end) {
		return n, err
	}
	// Checked when the exception converts (sanitize), after its type.
	return n, d.missing.Note(e, start, d.charge)
}

func (d *dec) excData(wt protowire.Type, b []byte, dst *message.ExcData) (int, error) {
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			u, ok := (*dst).(*message.UnicodeErrorData)
			if !ok {
				var err error
				if u, err = chargeNew[message.UnicodeErrorData](d); err != nil {
					return 0, push(err, "ExcData.kind")
				}
				*dst = u
			}
			n, err := d.unicodeData(wt, b, u)
			return wire.Wrap(n, err, "ExcData.kind")
		case 2:
			j, ok := (*dst).(*message.JSONErrorData)
			if !ok {
				var err error
				if j, err = chargeNew[message.JSONErrorData](d); err != nil {
					return 0, push(err, "ExcData.kind")
				}
				*dst = j
			}
			n, err := d.fields(wt, b, leaf.JSONErrorFields(j), nil)
			return wire.Wrap(n, err, "ExcData.kind")
		}
		return -1, nil
	})
}

func (d *dec) unicodeData(wt protowire.Type, b []byte, u *message.UnicodeErrorData) (int, error) {
	return d.fields(wt, b, leaf.UnicodeErrorFields(u), func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 2:
			v, n, err := d.bytes(wt, b, true)
			if err != nil {
				return 0, push(err, "UnicodeErrorData.object")
			}
			u.ObjectBytes, u.ObjectStr = v, nil
			return n, nil
		case 3:
			var s *string
			n, err := d.fOptStr(wt, b, &s, "UnicodeErrorData.object")
			if err != nil {
				return 0, err
			}
			u.ObjectBytes, u.ObjectStr = nil, s
			return n, nil
		}
		return -1, nil
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
	d, frame := newDec(frame, lim)
	ev := &message.ChildEvent{}
	var es evState
	err := d.walk(frame, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch {
		case num >= 1 && num <= 12:
			if es.arm != num {
				body, err := d.newEvent(num)
				if err != nil {
					return 0, push(err, "ChildEvent.kind")
				}
				es = evState{arm: num, body: body}
			}
			n, err := d.eventArm(wt, b, &es)
			return wire.Wrap(n, err, "ChildEvent.kind")
		case num == 20:
			return fNum(wt, b, &ev.TotalExecutionMicros, "ChildEvent.total_execution_micros")
		case num == 21:
			return fOptNum(d, wt, b, &ev.MaxDurationMicros, "ChildEvent.max_duration_micros")
		case num == 22:
			return d.fOptStr(wt, b, &ev.RestoredScriptName, "ChildEvent.restored_script_name")
		case num == 23:
			return fOptNum(d, wt, b, &ev.MaxSuspensions, "ChildEvent.max_suspensions")
		}
		return -1, nil
	})
	if err != nil {
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
		seg := &x.Segments[0]
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch num {
			case 1:
				return fNum(wt, b, &es.stream, "Print.stream")
			case 2:
				return d.fStr(wt, b, &seg.Text, "Print.text")
			}
			return -1, nil
		})
	case *message.FunctionCall:
		return d.functionCall(wt, b, x, es)
	case *message.OsCall:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch {
			case num == 1:
				return fNum(wt, b, &x.CallID, "OsCall.call_id")
			case num >= 2 && num <= 24:
				n, err := d.osCall(num, wt, b, x, es)
				return wire.Wrap(n, err, "OsCall.call")
			}
			return -1, nil
		})
	case *message.NameLookup:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch num {
			case 1:
				return d.fStr(wt, b, &x.Name, "NameLookup.name")
			case 2:
				es.oidSet = true
				n, err := d.uuidMsg(wt, b, &es.oid, &es.oidLen)
				return wire.Wrap(n, err, "NameLookup.object_id")
			}
			return -1, nil
		})
	case *message.ResolveFutures:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if num == 1 {
				n, err := d.packedU32(wt, b, &x.PendingCallIDs)
				return wire.Wrap(n, err, "ResolveFutures.pending_call_ids")
			}
			return -1, nil
		})
	case *message.Complete:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if num == 1 {
				id, n, err := d.root(wt, b, &es.val)
				if err != nil {
					return 0, push(err, "Complete.value")
				}
				x.Value, es.valSet = id, true
				return n, nil
			}
			return -1, nil
		})
	case *message.Error:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if num == 1 {
				return d.exception(wt, b, &x.Exception, "Error.exception")
			}
			return -1, nil
		})
	case *message.TypingError:
		return d.fields(wt, b, leaf.TypingErrorFields(x), nil)
	case *message.DumpResult:
		return d.fields(wt, b, leaf.DumpResultFields(x), nil)
	case *message.FatalError:
		return d.fields(wt, b, leaf.FatalErrorFields(x), nil)
	case *message.ShutdownDump:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if num == 1 {
				v, n, err := d.bytes(wt, b, true)
				if err != nil {
					return 0, push(err, "ShutdownDump.dump")
				}
				x.Dump = &v
				return n, nil
			}
			return -1, nil
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
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (n int, err error) {
		switch num {
		case 1:
			x.FunctionName, n, err = d.str(wt, b)
		case 2:
			var id value.NodeID
			if id, n, err = d.item(wt, b); err == nil {
				x.Args, err = d.appendRef(x.Args, id)
			}
		case 3:
			var k, v value.NodeID
			if k, v, n, err = d.pair(wt, b); err == nil {
				if x.Kwargs, err = grow(d, x.Kwargs, budget.PairCost); err == nil {
					x.Kwargs = append(x.Kwargs, value.Pair{Key: k, Value: v})
				}
			}
		case 4:
			n, err = wire.Int(wt, b, &x.CallID)
		case 5:
			// Each occurrence is a fresh Uuid, checked as it ends: a
			// wrong length fails the decode there.
			var id value.UUID
			l := 0
			if n, err = d.uuidMsg(wt, b, &id, &l); err == nil && l != 16 {
				err = uuidLenErr("FunctionCall.object_id", l)
			}
			es.oid, es.oidLen, es.oidSet = id, l, true
		default:
			return -1, nil
		}
		return n, err
	})
}

// osCall merges one occurrence of an OsCall.call arm.
func (d *dec) osCall(num protowire.Number, wt protowire.Type, b []byte, x *message.OsCall, es *evState) (int, error) {
	if op := message.OsOp(num); x.Op != op {
		*x = message.OsCall{CallID: x.CallID, Op: op, Values: x.Values}
		es.val, es.valSet = pobj{}, false
	}
	if f, ok := leaf.OsArgFields(num, x); ok {
		return d.fields(wt, b, f, nil)
	}
	switch {
	case num <= 13:
		s, n, err := d.str(wt, b)
		x.Path = s
		return n, err
	case num == 21:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch num {
			case 1:
				return d.fStr(wt, b, &x.Key, "Getenv.key")
			case 2:
				id, n, err := d.root(wt, b, &es.val)
				if err != nil {
					return 0, push(err, "Getenv.default")
				}
				x.Default, es.valSet = id, true
				return n, nil
			}
			return -1, nil
		})
	case num == 24:
		return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if num == 1 {
				if x.TZ == nil {
					tz, err := chargeNew[value.TimeZone](d)
					if err != nil {
						return 0, push(err, "DateTimeNow.tz")
					}
					x.TZ = tz
				}
				n, err := d.fields(wt, b, leaf.TimeZoneFields(x.TZ), nil)
				return wire.Wrap(n, err, "DateTimeNow.tz")
			}
			return -1, nil
		})
	}
	// get_environ, date_today.
	return d.skipMessage(wt, b)
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
	s, err := budget.Reserve(&d.bud, *dst, len(run), 4)
	if err != nil {
		return 0, fail(codec.ErrBudget)
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

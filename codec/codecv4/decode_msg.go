package codecv4

import (
	"errors"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/codec/internal/wire"
	"github.com/gomonty/monty/internal/budget"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// errUnknownArm is never returned to callers; it marks an envelope arm this
// codec does not know (it cannot happen for the numbers dispatched).
var errUnknownArm = errors.New("unknown arm")

// elemField decodes one element of a repeated message field into a new
// last element of *s, grown (and charged) before the payload is read.
func elemField[T any](d *decoder, wt protowire.Type, b []byte, s *[]T, seg string, f func([]byte, *T) error) (int, error) {
	if wt != protowire.BytesType {
		return wire.Wrap(0, &wire.TypeError{Got: wt, Want: protowire.BytesType}, seg)
	}
	var err error
	if *s, err = grow(d, *s); err != nil {
		return wire.Wrap(0, err, seg)
	}
	*s = (*s)[:len(*s)+1]
	e := &(*s)[len(*s)-1]
	return d.Sub(wt, b, seg, func(v []byte) error { return f(v, e) })
}

// ---- ParentRequest ----

// boxRequest is boxEvent for requests.
func boxRequest[B any, PB interface {
	*B
	message.Request
}](d *decoder, cur *message.ParentRequest) (*message.ParentRequest, error) {
	x, err := wire.New[envBox[message.ParentRequest, B]](&d.Dec)
	if err != nil {
		return nil, err
	}
	x.env = *cur
	x.env.Body = PB(&x.body)
	return &x.env, nil
}

func (d *decoder) parentRequest(b []byte) (*message.ParentRequest, error) {
	var local message.ParentRequest
	var box *message.ParentRequest
	var arm protowire.Number
	err := d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		r := &local
		if box != nil {
			r = box
		}
		switch {
		case num >= 1 && num <= 11:
			return d.Sub(wt, b, "ParentRequest.kind", func(v []byte) error {
				if num != arm {
					r.Body = nil
					nb, err := d.newRequest(num, r)
					if err != nil {
						return err
					}
					box, arm = nb, num
					d.resetArm()
				}
				return d.requestBody(box.Body, v)
			})
		case num == 20:
			v, n, err := wire.TextField(wt, b)
			if err == nil {
				err = d.StrPtr(&r.TraceParent, v)
			}
			return wire.Wrap(n, err, "ParentRequest.trace_parent")
		}
		return -1, nil
	})
	if err != nil {
		return nil, err
	}
	if box == nil {
		if box, err = wire.New[message.ParentRequest](&d.Dec); err != nil {
			return nil, err
		}
		*box = local
	}
	return box, nil
}

func (d *decoder) newRequest(num protowire.Number, cur *message.ParentRequest) (*message.ParentRequest, error) {
	switch num {
	case 1:
		return boxRequest[message.Configure](d, cur)
	case 2:
		return boxRequest[message.InstallDependencies](d, cur)
	case 3:
		return boxRequest[message.Feed](d, cur)
	case 4:
		return boxRequest[message.ResumeCall](d, cur)
	case 5:
		return boxRequest[message.ResumeNameLookup](d, cur)
	case 6:
		return boxRequest[message.ResumeFutures](d, cur)
	case 7:
		return boxRequest[message.Dump](d, cur)
	case 8:
		return boxRequest[message.Load](d, cur)
	case 9:
		return boxRequest[message.Reset](d, cur)
	case 10:
		return boxRequest[message.Shutdown](d, cur)
	case 11:
		return boxRequest[message.AbortFeed](d, cur)
	}
	return nil, errUnknownArm
}

func (d *decoder) requestBody(body message.Request, b []byte) error {
	switch x := body.(type) {
	case *message.Configure:
		return d.configure(b, x)
	case *message.InstallDependencies:
		return d.Field1(b, func(wt protowire.Type, b []byte) (int, error) {
			if wt != protowire.BytesType {
				return wire.Wrap(0, &wire.TypeError{Got: wt, Want: protowire.BytesType}, "InstallDependencies.requirements")
			}
			var err error
			if x.Requirements, err = grow(d, x.Requirements); err != nil {
				return wire.Wrap(0, err, "InstallDependencies.requirements")
			}
			var s string
			n, err := d.Text(wt, b, &s)
			x.Requirements = append(x.Requirements, s)
			return wire.Wrap(n, err, "InstallDependencies.requirements")
		})
	case *message.Feed:
		return d.feed(b, x)
	case *message.ResumeCall:
		return d.resumeCall(b, x)
	case *message.ResumeNameLookup:
		return d.resumeNameLookup(b, x)
	case *message.ResumeFutures:
		return d.resumeFutures(b, x)
	case *message.Load:
		return d.Fields(b, leaf.LoadFields(x), true, nil)
	case *message.AbortFeed:
		return d.Field1(b, func(wt protowire.Type, b []byte) (int, error) {
			return d.Exception(wt, b, &x.Exception, "AbortFeed.exception")
		})
	}
	// Dump, Reset, Shutdown: no fields.
	return d.SkipMessage(b)
}

func (d *decoder) configure(b []byte, x *message.Configure) error {
	return d.Configure(b, x, d.v.Limits(), func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case d.v.CfgPolicy:
			return d.Sub(wt, b, "Configure.os_policy", func(v []byte) error {
				if err := wire.NewAt(&d.Dec, &x.OsPolicy); err != nil {
					return err
				}
				return d.osPolicy(v, x.OsPolicy)
			})
		case d.v.CfgPersistence:
			var v int32
			n, err := wire.Int(wt, b, &v)
			x.Persistence = message.Persistence(uint32(v))
			return wire.Wrap(n, err, "Configure.persistence")
		case d.v.CfgProfile:
			return d.OptTextAt(wt, b, &x.Profile, "Configure.profile")
		}
		return -1, nil
	})
}

// arenaField decodes an Arena field of the envelope's arm payload.
func (d *decoder) arenaField(wt protowire.Type, b []byte, g *value.Graph, seg string) (int, error) {
	return d.Sub(wt, b, seg, func(v []byte) error {
		d.arm.arena = true
		return d.arena(v, g)
	})
}

func (d *decoder) feed(b []byte, x *message.Feed) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return d.TextAt(wt, b, &x.Code, "Feed.code")
		case 2:
			return elemField(d, wt, b, &x.Inputs, "Feed.inputs", d.namedRef)
		case 3:
			return d.arenaField(wt, b, &x.Values, "Feed.values")
		case 4:
			return wire.BoolAt(wt, b, &x.SkipTypeCheck, "Feed.skip_type_check")
		case 5:
			return d.TextAt(wt, b, &x.Cwd, "Feed.cwd")
		}
		return -1, nil
	})
}

func (d *decoder) namedRef(b []byte, x *message.NamedRef) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return d.TextAt(wt, b, &x.Name, "NamedRef.name")
		case 2:
			return wire.IntAt(wt, b, &x.Value, "NamedRef.value")
		}
		return -1, nil
	})
}

func (d *decoder) resumeCall(b []byte, x *message.ResumeCall) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return wire.IntAt(wt, b, &x.CallID, "ResumeCall.call_id")
		case 2:
			return d.extResult(wt, b, &x.Result, "ResumeCall.result")
		case 3:
			return d.arenaField(wt, b, &x.Values, "ResumeCall.values")
		}
		return -1, nil
	})
}

// extResult merges one occurrence of an ExtFunctionResult field (seg) into
// *p; its return value is a node id.
func (d *decoder) extResult(wt protowire.Type, b []byte, p **message.ExtResult, seg string) (int, error) {
	return d.ExtResult(wt, b, p, seg, func(wt protowire.Type, b []byte, r *message.ExtResult) (int, error) {
		return wire.Int(wt, b, &r.Value)
	}, nil)
}

func (d *decoder) resumeNameLookup(b []byte, x *message.ResumeNameLookup) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if num == 1 {
			return d.arenaField(wt, b, &x.Values, "ResumeNameLookup.values")
		}
		if num < 2 || num > 4 {
			return -1, nil
		}
		return d.LookupArm(message.LookupKind(num-1), wt, b, x, func(wt protowire.Type, b []byte) (int, error) {
			return wire.Int(wt, b, &x.Value)
		}, nil)
	})
}

func (d *decoder) resumeFutures(b []byte, x *message.ResumeFutures) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return elemField(d, wt, b, &x.Results, "ResumeFutures.results", d.futureResult)
		case 2:
			return d.arenaField(wt, b, &x.Values, "ResumeFutures.values")
		}
		return -1, nil
	})
}

func (d *decoder) futureResult(b []byte, x *message.FutureResult) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return wire.IntAt(wt, b, &x.CallID, "FutureResult.call_id")
		case 2:
			return d.extResult(wt, b, &x.Result, "FutureResult.result")
		}
		return -1, nil
	})
}

// ---- ChildEvent ----

// envBox holds an envelope and its arm payload in one allocation.
type envBox[E, B any] struct {
	env  E
	body B
}

// boxEvent allocates a ChildEvent together with a B body, copying the
// envelope fields decoded so far from cur.
func boxEvent[B any, PB interface {
	*B
	message.Event
}](d *decoder, cur *message.ChildEvent) (*message.ChildEvent, error) {
	x, err := wire.New[envBox[message.ChildEvent, B]](&d.Dec)
	if err != nil {
		return nil, err
	}
	x.env = *cur
	x.env.Body = PB(&x.body)
	return &x.env, nil
}

func (d *decoder) childEvent(b []byte) (*message.ChildEvent, error) {
	// The envelope is decoded into local until its arm is known, then into
	// a box allocated with the arm's payload.
	var local message.ChildEvent
	var box *message.ChildEvent
	var arm protowire.Number
	err := d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		e := &local
		if box != nil {
			e = box
		}
		switch {
		case num >= 1 && num <= 12:
			return d.Sub(wt, b, "ChildEvent.kind", func(v []byte) error {
				if num != arm {
					e.Body = nil
					nb, err := d.newEvent(num, e)
					if err != nil {
						return err
					}
					box, arm = nb, num
					d.resetArm()
				}
				return d.eventBody(box.Body, v)
			})
		case num == 20:
			return wire.IntAt(wt, b, &e.TotalExecutionMicros, "ChildEvent.total_execution_micros")
		case num == d.v.EvDuration:
			return wire.OptIntAt(&d.Dec, wt, b, &e.MaxDurationMicros, "ChildEvent.max_duration_micros")
		case num == 22:
			return wire.OptIntAt(&d.Dec, wt, b, &e.MaxSuspensions, "ChildEvent.max_suspensions")
		case num == 23:
			return d.OptTextAt(wt, b, &e.RestoredScriptName, "ChildEvent.restored_script_name")
		case num == d.v.EvFeedExec:
			return wire.IntAt(wt, b, &e.FeedExecutionMicros, "ChildEvent.feed_execution_micros")
		case num == d.v.EvFeedLimit:
			return wire.OptIntAt(&d.Dec, wt, b, &e.MaxFeedDurationMicros, "ChildEvent.max_feed_duration_micros")
		case num == d.v.EvTurnLimit:
			return wire.OptIntAt(&d.Dec, wt, b, &e.MaxTurnDurationMicros, "ChildEvent.max_turn_duration_micros")
		case num == d.v.EvSleep:
			return wire.OptIntAt(&d.Dec, wt, b, &e.MaxTotalSleepMicros, "ChildEvent.max_total_sleep_micros")
		case num == d.v.EvSessionID:
			v, n, err := wire.BytesField(wt, b)
			if err == nil {
				e.SessionID, err = d.Bytes(v)
			}
			return wire.Wrap(n, err, "ChildEvent.session_id")
		}
		return -1, nil
	})
	if err != nil {
		return nil, err
	}
	if box == nil {
		if box, err = wire.New[message.ChildEvent](&d.Dec); err != nil {
			return nil, err
		}
		*box = local
	}
	return box, nil
}

func (d *decoder) newEvent(num protowire.Number, cur *message.ChildEvent) (*message.ChildEvent, error) {
	switch num {
	case 1:
		return boxEvent[message.Print](d, cur)
	case 2:
		return boxEvent[message.FunctionCall](d, cur)
	case 3:
		return boxEvent[message.OsCall](d, cur)
	case 4:
		return boxEvent[message.NameLookup](d, cur)
	case 5:
		return boxEvent[message.ResolveFutures](d, cur)
	case 6:
		return boxEvent[message.Complete](d, cur)
	case 7:
		return boxEvent[message.Error](d, cur)
	case 8:
		return boxEvent[message.TypingError](d, cur)
	case 9:
		return boxEvent[message.DumpResult](d, cur)
	case 10:
		return boxEvent[message.Ok](d, cur)
	case 11:
		return boxEvent[message.FatalError](d, cur)
	case 12:
		return boxEvent[message.ShutdownDump](d, cur)
	}
	return nil, errUnknownArm
}

func (d *decoder) eventBody(body message.Event, b []byte) error {
	switch x := body.(type) {
	case *message.Print:
		return d.print(b, x)
	case *message.FunctionCall:
		return d.functionCall(b, x)
	case *message.OsCall:
		return d.osCall(b, x)
	case *message.NameLookup:
		return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch num {
			case 1:
				return d.TextAt(wt, b, &x.Name, "NameLookup.name")
			case 2:
				return d.objectID(wt, b, &x.ObjectID, "NameLookup.object_id")
			case d.v.NlPosition:
				return d.position(wt, b, &x.Position, "NameLookup.position")
			}
			return -1, nil
		})
	case *message.ResolveFutures:
		return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch num {
			case 1:
				n, err := d.scalarIDs(wt, b, &x.PendingCallIDs)
				return wire.Wrap(n, err, "ResolveFutures.pending_call_ids")
			case d.v.RfPosition:
				return d.position(wt, b, &x.Position, "ResolveFutures.position")
			}
			return -1, nil
		})
	case *message.Complete:
		return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch num {
			case 1:
				return wire.IntAt(wt, b, &x.Value, "Complete.value")
			case 2:
				return d.arenaField(wt, b, &x.Values, "Complete.values")
			}
			return -1, nil
		})
	case *message.Error:
		return d.Field1(b, func(wt protowire.Type, b []byte) (int, error) {
			return d.Exception(wt, b, &x.Exception, "Error.exception")
		})
	case *message.TypingError:
		return d.Fields(b, leaf.TypingErrorFields(x), true, nil)
	case *message.DumpResult:
		return d.Fields(b, leaf.DumpResultFields(x), true, nil)
	case *message.FatalError:
		return d.Fields(b, leaf.FatalErrorFields(x), true, nil)
	case *message.ShutdownDump:
		return d.Field1(b, func(wt protowire.Type, b []byte) (int, error) {
			v, n, err := wire.BytesField(wt, b)
			if err == nil {
				if err = wire.NewAt(&d.Dec, &x.Dump); err == nil {
					*x.Dump, err = d.Bytes(v)
				}
			}
			return wire.Wrap(n, err, "ShutdownDump.dump")
		})
	}
	// Ok: no fields.
	return d.SkipMessage(b)
}

// scalarIDs merges a repeated uint32 field that does not hold node ids
// (ResolveFutures.pending_call_ids): it grows element by element.
func (d *decoder) scalarIDs(wt protowire.Type, b []byte, dst *[]uint32) (int, error) {
	switch wt {
	case protowire.VarintType:
		v, n, err := wire.Varint(b)
		if err != nil {
			return 0, err
		}
		if *dst, err = grow(d, *dst); err != nil {
			return 0, err
		}
		*dst = append(*dst, uint32(v))
		return n, nil
	case protowire.BytesType:
		run, n, err := wire.BytesField(wt, b)
		if err != nil {
			return 0, err
		}
		return n, wire.Packed(run, func(v uint64) error {
			var err error
			if *dst, err = grow(d, *dst); err == nil {
				*dst = append(*dst, uint32(v))
			}
			return err
		})
	}
	return 0, &wire.TypeError{Got: wt, Want: protowire.VarintType}
}

// objectID merges one occurrence of a Uuid field (seg) into an optional
// identity. A data length other than 16 is remembered for the conversion
// checks.
func (d *decoder) objectID(wt protowire.Type, b []byte, dst **value.UUID, seg string) (int, error) {
	return d.Sub(wt, b, seg, func(b []byte) error {
		if *dst == nil {
			var err error
			if *dst, err = wire.New[value.UUID](&d.Dec); err != nil {
				return err
			}
			d.arm.objIDLen = 0
		}
		n, err := d.UUID(b, d.arm.objIDLen, *dst)
		if err != nil {
			return err
		}
		d.arm.objIDLen = n
		return nil
	})
}

func (d *decoder) print(b []byte, x *message.Print) error {
	return d.Field1(b, func(wt protowire.Type, b []byte) (int, error) {
		return elemField(d, wt, b, &x.Segments, "Print.segments", func(v []byte, s *message.PrintSegment) error {
			return d.PrintSegment(v, s, "PrintSegment")
		})
	})
}

func (d *decoder) functionCall(b []byte, x *message.FunctionCall) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return d.TextAt(wt, b, &x.FunctionName, "FunctionCall.function_name")
		case 2:
			n, err := d.argIDs(wt, b, &x.Args)
			return wire.Wrap(n, err, "FunctionCall.args")
		case 3:
			const seg = "FunctionCall.kwargs"
			if wt != protowire.BytesType {
				return wire.Wrap(0, &wire.TypeError{Got: wt, Want: protowire.BytesType}, seg)
			}
			var err error
			if x.Kwargs, err = budget.Grow(&d.Bud, x.Kwargs, budget.PairCost); err != nil {
				return wire.Wrap(0, err, seg)
			}
			v, n, err := wire.BytesField(wt, b)
			if err != nil {
				return wire.Wrap(0, err, seg)
			}
			k, val, err := nodePair(v, d.Level)
			if err != nil {
				return wire.Wrap(0, err, seg)
			}
			x.Kwargs = append(x.Kwargs, value.Pair{Key: k, Value: val})
			return n, nil
		case 4:
			return wire.IntAt(wt, b, &x.CallID, "FunctionCall.call_id")
		case 5:
			return d.objectID(wt, b, &x.ObjectID, "FunctionCall.object_id")
		case 6:
			return wire.BoolAt(wt, b, &x.AllowEagerAwait, "FunctionCall.allow_eager_await")
		case 7:
			return d.arenaField(wt, b, &x.Values, "FunctionCall.values")
		case d.v.FcPosition:
			return d.position(wt, b, &x.Position, "FunctionCall.position")
		}
		return -1, nil
	})
}

// argIDs merges one occurrence of FunctionCall.args: node ids, charged at
// the reference cost, with packed runs reserved up front.
func (d *decoder) argIDs(wt protowire.Type, b []byte, dst *[]uint32) (int, error) {
	switch wt {
	case protowire.VarintType:
		v, n, err := wire.Varint(b)
		if err != nil {
			return 0, err
		}
		if *dst, err = budget.Grow(&d.Bud, *dst, budget.RefCost); err != nil {
			return 0, err
		}
		*dst = append(*dst, uint32(v))
		return n, nil
	case protowire.BytesType:
		run, n, err := wire.BytesField(wt, b)
		if err != nil {
			return 0, err
		}
		if len(run) == 0 {
			return n, nil
		}
		if *dst, err = budget.Reserve(&d.Bud, *dst, len(run), budget.RefCost); err != nil {
			return 0, err
		}
		return n, wire.Packed(run, func(v uint64) error {
			*dst = append(*dst, uint32(v))
			return nil
		})
	}
	return 0, &wire.TypeError{Got: wt, Want: protowire.VarintType}
}

func (d *decoder) osCall(b []byte, x *message.OsCall) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch {
		case num == 1:
			return wire.IntAt(wt, b, &x.CallID, "OsCall.call_id")
		case num == d.v.OsValues:
			return d.arenaField(wt, b, &x.Values, "OsCall.values")
		case num == d.v.OsEager:
			return wire.BoolAt(wt, b, &x.AllowEagerAwait, "OsCall.allow_eager_await")
		case num == d.v.OsPosition:
			return d.position(wt, b, &x.Position, "OsCall.position")
		}
		op := d.v.OsOp(num)
		if op == 0 {
			return -1, nil
		}
		n, err := d.OsArgs(op, wt, b, x, func(v []byte) error {
			if op >= message.OpTime {
				return d.osCall5(v, x)
			}
			// Getenv, whose default is a node id at protocol 4.
			return d.OsFields(v, "Getenv", func(f protowire.Number, wt protowire.Type, b []byte) (int, error) {
				switch f {
				case 1:
					return d.Text(wt, b, &x.Key)
				case 2:
					return wire.Int(wt, b, &x.Default)
				}
				return -1, nil
			}, "key", "default")
		})
		return wire.Wrap(n, err, "OsCall.call")
	})
}

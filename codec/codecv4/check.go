package codecv4

import (
	"strconv"

	"github.com/gomonty/monty/codec/internal/wire"
	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The conversion checks run once the whole frame has decoded, on the final
// (merged) message, so that a payload displaced by a later arm is never
// validated. They are the checks upstream makes when it converts a decoded
// message into its domain form (contract §3 and §4, "Validation outside
// decode"); their errors are reported as structural.

// checkRoots validates an arena that the message's roots index: a missing
// arena when a root is needed, the post-order and class rules, and the
// range of every root (nroots roots, fetched by root(i)).
func (d *decoder) checkRoots(g *value.Graph, missing string, nroots int, root func(int) value.NodeID) error {
	if nroots > 0 && !d.arm.arena {
		return valuecheck.MissingField(missing)
	}
	if err := g.CheckStructure(); err != nil {
		return err
	}
	for i := range nroots {
		if err := rootInRange(g, root(i)); err != nil {
			return err
		}
	}
	return nil
}

func rootInRange(g *value.Graph, r value.NodeID) error {
	if int(r) < len(g.Nodes) {
		return nil
	}
	return &value.ArenaError{Reason: "value root " + strconv.FormatUint(uint64(r), 10) +
		" is out of range for an arena of " + strconv.Itoa(len(g.Nodes)) + " nodes"}
}

func noRoot(int) value.NodeID { return 0 }

func (d *decoder) checkException(e *message.RaisedException) error {
	if e == nil {
		return nil
	}
	return d.Missing.Sanitize(e)
}

func (d *decoder) checkExtResult(r *message.ExtResult, osCallAnswer bool) error {
	switch r.Kind {
	case 0:
		return valuecheck.MissingField("ExtFunctionResult.kind")
	case message.ResultError:
		return d.checkException(r.Error)
	case message.ResultNotHandled:
		if !osCallAnswer {
			return valuecheck.InvalidValue("ExtFunctionResult.kind", "NotHandled is only valid answering a suspended OS call")
		}
	}
	return nil
}

func (d *decoder) checkObjectID(field string) error {
	if n := d.arm.objIDLen; n >= 0 && n != 16 {
		return wire.UUIDLenErr(field, n)
	}
	return nil
}

func (d *decoder) checkRequest(r *message.ParentRequest) error {
	switch x := r.Body.(type) {
	case *message.Feed:
		return d.checkRoots(&x.Values, "Feed.values", len(x.Inputs), func(i int) value.NodeID { return x.Inputs[i].Value })
	case *message.ResumeCall:
		n := 0
		if x.Result != nil {
			// Whether the call being answered is an OS call is known only
			// to the session, which checks not_handled itself.
			if err := d.checkExtResult(x.Result, true); err != nil {
				return err
			}
			if x.Result.Kind == message.ResultReturn {
				n = 1
			}
		}
		return d.checkRoots(&x.Values, "values", n, func(int) value.NodeID { return x.Result.Value })
	case *message.ResumeNameLookup:
		n := 0
		switch x.Kind {
		case 0:
			return valuecheck.MissingField("ResumeNameLookup.kind")
		case message.LookupError:
			if err := d.checkException(x.Error); err != nil {
				return err
			}
		case message.LookupValue:
			n = 1
		}
		return d.checkRoots(&x.Values, "ResumeNameLookup.values", n, func(int) value.NodeID { return x.Value })
	case *message.ResumeFutures:
		returns := 0
		for i := range x.Results {
			res := x.Results[i].Result
			if res == nil {
				return valuecheck.MissingField("FutureResult.result")
			}
			if err := d.checkExtResult(res, false); err != nil {
				return err
			}
			if res.Kind == message.ResultReturn {
				returns++
			}
		}
		if returns > 0 && !d.arm.arena {
			return valuecheck.MissingField("values")
		}
		if err := x.Values.CheckStructure(); err != nil {
			return err
		}
		for i := range x.Results {
			if res := x.Results[i].Result; res.Kind == message.ResultReturn {
				if err := rootInRange(&x.Values, res.Value); err != nil {
					return err
				}
			}
		}
		return nil
	case *message.AbortFeed:
		return d.checkException(x.Exception)
	}
	return nil
}

func (d *decoder) checkEvent(e *message.ChildEvent) error {
	switch x := e.Body.(type) {
	case *message.FunctionCall:
		if err := d.checkObjectID("FunctionCall.object_id"); err != nil {
			return err
		}
		n, root := callRoots(x)
		return d.checkRoots(&x.Values, "FunctionCall.values", n, root)
	case *message.OsCall:
		switch x.Op {
		case 0:
			return valuecheck.MissingField("OsCall.call")
		case message.OpOpen:
			mode, err := value.NormalizeFileMode(x.Mode)
			if err != nil {
				return err
			}
			x.Mode = mode
		case message.OpGetenv:
			return d.checkRoots(&x.Values, "OsCall.values", 1, func(int) value.NodeID { return x.Default })
		case message.OpSleep, message.OpSystemSleep:
			if err := message.CheckSleepSeconds("Sleep.seconds", x.Seconds); err != nil {
				return err
			}
		case message.OpAsyncSleep, message.OpAsyncSystemSleep:
			if err := message.CheckSleepSeconds("AsyncSleep.delay", x.Seconds); err != nil {
				return err
			}
		}
		return d.checkRoots(&x.Values, "OsCall.values", 0, noRoot)
	case *message.NameLookup:
		return d.checkObjectID("NameLookup.object_id")
	case *message.Complete:
		return d.checkRoots(&x.Values, "Complete.values", 1, func(int) value.NodeID { return x.Value })
	case *message.Error:
		return d.checkException(x.Exception)
	}
	return nil
}

// callRoots returns how many roots a function call's arena holds and the
// i-th of them: the positional arguments, then each keyword's name and
// value.
func callRoots(x *message.FunctionCall) (int, func(int) value.NodeID) {
	na := len(x.Args)
	return na + 2*len(x.Kwargs), func(i int) value.NodeID {
		if i < na {
			return x.Args[i]
		}
		p := x.Kwargs[(i-na)/2]
		if (i-na)%2 == 0 {
			return p.Key
		}
		return p.Value
	}
}

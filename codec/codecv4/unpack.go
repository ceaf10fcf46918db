package codecv4

import (
	"slices"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// A graph made by value.FromGo may hold a list's int items packed, with
// no node each (value.Node.Ints). The arena gives every item its node, so
// the encoder sends the message's values unpacked (value.Graph.Unpack),
// with its roots mapped to their new ids. The caller's message is never
// modified: a message to unpack is copied.

// mapID returns the new id of id, or id itself when it is out of range
// (for the checks to report).
func mapID(ids []value.NodeID, id value.NodeID) value.NodeID {
	if int(id) < len(ids) {
		return ids[id]
	}
	return id
}

// mapResult returns r with its returned value's id mapped (a copy when it
// changes).
func mapResult(ids []value.NodeID, r *message.ExtResult) *message.ExtResult {
	if r == nil || r.Kind != message.ResultReturn {
		return r
	}
	c := *r
	c.Value = mapID(ids, r.Value)
	return &c
}

// unpackRequest returns body with its values unpacked when they hold
// packed items, else body itself.
func unpackRequest(body message.Request) message.Request {
	switch x := body.(type) {
	case *message.Feed:
		g, ids := x.Values.Unpack()
		if ids == nil {
			return body
		}
		c := *x
		c.Values = *g
		c.Inputs = slices.Clone(x.Inputs)
		for i := range c.Inputs {
			c.Inputs[i].Value = mapID(ids, c.Inputs[i].Value)
		}
		return &c
	case *message.ResumeCall:
		g, ids := x.Values.Unpack()
		if ids == nil {
			return body
		}
		c := *x
		c.Values = *g
		c.Result = mapResult(ids, x.Result)
		return &c
	case *message.ResumeNameLookup:
		g, ids := x.Values.Unpack()
		if ids == nil {
			return body
		}
		c := *x
		c.Values = *g
		if c.Kind == message.LookupValue {
			c.Value = mapID(ids, x.Value)
		}
		return &c
	case *message.ResumeFutures:
		g, ids := x.Values.Unpack()
		if ids == nil {
			return body
		}
		c := *x
		c.Values = *g
		c.Results = slices.Clone(x.Results)
		for i := range c.Results {
			c.Results[i].Result = mapResult(ids, x.Results[i].Result)
		}
		return &c
	}
	return body
}

// unpackEvent is unpackRequest for events.
func unpackEvent(body message.Event) message.Event {
	switch x := body.(type) {
	case *message.FunctionCall:
		g, ids := x.Values.Unpack()
		if ids == nil {
			return body
		}
		c := *x
		c.Values = *g
		c.Args = make([]value.NodeID, len(x.Args))
		for i, a := range x.Args {
			c.Args[i] = mapID(ids, a)
		}
		if x.Kwargs != nil {
			c.Kwargs = make([]value.Pair, len(x.Kwargs))
			for i, p := range x.Kwargs {
				c.Kwargs[i] = value.Pair{Key: mapID(ids, p.Key), Value: mapID(ids, p.Value)}
			}
		}
		return &c
	case *message.OsCall:
		g, ids := x.Values.Unpack()
		if ids == nil {
			return body
		}
		c := *x
		c.Values = *g
		if c.Op == message.OpGetenv {
			c.Default = mapID(ids, x.Default)
		}
		return &c
	case *message.Complete:
		g, ids := x.Values.Unpack()
		if ids == nil {
			return body
		}
		c := *x
		c.Values = *g
		c.Value = mapID(ids, x.Value)
		return &c
	}
	return body
}

package codecv4

import (
	"slices"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// A graph made by value.FromGo may hold a list's int or float items
// packed, with no node each (value.Node.Ints, Floats). The arena gives
// every item its node: the encoder writes the arena of the unpacked graph
// (value.Graph.Unpack) straight from the packed one, each packed item a
// node right before the list that holds it, every other node's references
// and the message's roots mapped to their ids in that arena
// (value.Graph.UnpackedIDs). The bytes are those of the unpacked message.
// The caller's message is never modified: one whose roots move is copied.

// mapResult returns r with its returned value's id mapped (a copy when it
// changes).
func mapResult(ids []value.NodeID, r *message.ExtResult) *message.ExtResult {
	if r == nil || r.Kind != message.ResultReturn {
		return r
	}
	c := *r
	c.Value = value.MapID(ids, r.Value)
	return &c
}

// remapped returns a copy of message x with fix applied to it, and the
// id map, when x's graph g holds packed items; else x itself and nil.
func remapped[T any](x *T, g *value.Graph, fix func(c *T, ids []value.NodeID)) (*T, []value.NodeID) {
	ids := g.UnpackedIDs()
	if ids == nil {
		return x, nil
	}
	c := *x
	fix(&c, ids)
	return &c, ids
}

// unpackRequest returns body with its roots mapped to their ids in the
// unpacked arena, and the map, when its values hold packed items; else
// body itself and nil.
func unpackRequest(body message.Request) (message.Request, []value.NodeID) {
	switch x := body.(type) {
	case *message.Feed:
		return remapped(x, &x.Values, func(c *message.Feed, ids []value.NodeID) {
			c.Inputs = slices.Clone(x.Inputs)
			for i := range c.Inputs {
				c.Inputs[i].Value = value.MapID(ids, c.Inputs[i].Value)
			}
		})
	case *message.ResumeCall:
		return remapped(x, &x.Values, func(c *message.ResumeCall, ids []value.NodeID) {
			c.Result = mapResult(ids, x.Result)
		})
	case *message.ResumeNameLookup:
		return remapped(x, &x.Values, func(c *message.ResumeNameLookup, ids []value.NodeID) {
			if c.Kind == message.LookupValue {
				c.Value = value.MapID(ids, x.Value)
			}
		})
	case *message.ResumeFutures:
		return remapped(x, &x.Values, func(c *message.ResumeFutures, ids []value.NodeID) {
			c.Results = slices.Clone(x.Results)
			for i := range c.Results {
				c.Results[i].Result = mapResult(ids, x.Results[i].Result)
			}
		})
	}
	return body, nil
}

// unpackEvent is unpackRequest for events.
func unpackEvent(body message.Event) (message.Event, []value.NodeID) {
	switch x := body.(type) {
	case *message.FunctionCall:
		return remapped(x, &x.Values, func(c *message.FunctionCall, ids []value.NodeID) {
			c.Args = make([]value.NodeID, len(x.Args))
			for i, a := range x.Args {
				c.Args[i] = value.MapID(ids, a)
			}
			if x.Kwargs != nil {
				c.Kwargs = make([]value.Pair, len(x.Kwargs))
				for i, p := range x.Kwargs {
					c.Kwargs[i] = value.Pair{Key: value.MapID(ids, p.Key), Value: value.MapID(ids, p.Value)}
				}
			}
		})
	case *message.OsCall:
		return remapped(x, &x.Values, func(c *message.OsCall, ids []value.NodeID) {
			if c.Op == message.OpGetenv {
				c.Default = value.MapID(ids, x.Default)
			}
		})
	case *message.Complete:
		return remapped(x, &x.Values, func(c *message.Complete, ids []value.NodeID) {
			c.Value = value.MapID(ids, x.Value)
		})
	}
	return body, nil
}

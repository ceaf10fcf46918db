package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gomonty/monty/internal/oserror"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// Value is one value of a graph: a root node and the graph that holds it.
// It is plain data, safe to read from several goroutines.
type Value struct {
	// Graph holds the value's nodes.
	Graph *value.Graph
	// Root is the id of the value's node in Graph.
	Root value.NodeID
}

func (v Value) valid() bool { return v.Graph != nil && int(v.Root) < v.Graph.Len() }

// Node returns the root node, or nil for an empty Value.
func (v Value) Node() *value.Node {
	if !v.valid() {
		return nil
	}
	return v.Graph.Node(v.Root)
}

// Repr renders the value the way Python's repr() does.
func (v Value) Repr() string {
	if !v.valid() {
		return "<no value>"
	}
	return v.Graph.Repr(v.Root)
}

// String returns Repr, so that fmt's verbs (%v, %s, Println) show a
// Value, and a Result, which embeds one, as Python's repr() would
// ("[1, 'a']", "'text'"), not as the graph they are made of. A Result's
// TotalExecution is not shown.
func (v Value) String() string { return v.Repr() }

// Str renders the value the way Python's str() does.
func (v Value) Str() string {
	if !v.valid() {
		return "<no value>"
	}
	return v.Graph.Str(v.Root)
}

// Decode converts the value into the Go value dst points to (see
// [value.ToGo]).
func (v Value) Decode(dst any) error {
	if !v.valid() {
		return errors.New("monty session: empty value")
	}
	return toGo(v.Graph, v.Root, dst)
}

// Any converts the value into a generic Go value (see [value.ToAny]).
func (v Value) Any() (any, error) {
	if !v.valid() {
		return nil, errors.New("monty session: empty value")
	}
	return toAny(v.Graph, v.Root)
}

// MarshalJSON writes the value as JSON (see [value.AppendJSON]): what
// Python's json.dumps writes for the values it accepts, and the
// conventional forms of bytes, sets, dates and times, timedeltas, paths
// and dataclasses. A value with no JSON form (NaN, an exception, ...) is a
// *value.ConversionError naming where it sits. A Result marshals as its
// value alone. (json.Marshal rewrites <, > and & in the text as \u003c and
// so on, for HTML; MarshalJSON itself, or a json.Encoder with
// SetEscapeHTML(false), keeps json.dumps's text.)
func (v Value) MarshalJSON() ([]byte, error) {
	if !v.valid() {
		return nil, errors.New("monty session: empty value")
	}
	return value.AppendJSON(nil, v.Graph, v.Root)
}

// Result is the outcome of a feed that completed: the value of its last
// expression (None for a statement).
//
// A Result is plain data: safe to read from several goroutines, not to modify
// concurrently.
type Result struct {
	Value
	// TotalExecution is the session's cumulative execution time after the
	// feed.
	TotalExecution time.Duration
}

// AppendGraph copies the value (the nodes reachable from its root) into
// g and returns the new root, so a Value can be passed anywhere a Go value
// is converted with value.FromGo, also nested inside other Go values.
func (v Value) AppendGraph(g *value.Graph) (value.NodeID, error) {
	if !v.valid() {
		return 0, errors.New("monty session: empty Value")
	}
	src := v.Graph
	if int(v.Root) == src.Len()-1 && allReachable(src, v.Root) {
		return v.Root + g.Append(src), nil
	}
	// Copy only what the root reaches, in id order (which keeps the graph
	// in post-order), remapping the references.
	reach := make([]bool, v.Root+1)
	reach[v.Root] = true
	for id := int(v.Root); id >= 0; id-- {
		if !reach[id] {
			continue
		}
		src.Node(value.NodeID(id)).Children(func(c value.NodeID) {
			if int(c) < id {
				reach[c] = true
			}
		})
	}
	var sub value.Graph
	remap := make([]value.NodeID, v.Root+1)
	for id := range reach {
		if !reach[id] {
			continue
		}
		n := *src.Node(value.NodeID(id))
		n = remapNode(n, remap)
		remap[id] = sub.Add(n)
	}
	return remap[v.Root] + g.Append(&sub), nil
}

// allReachable reports whether every node of g below root is reachable
// from it (the common case of a graph holding exactly one value).
func allReachable(g *value.Graph, root value.NodeID) bool {
	seen := make([]bool, root+1)
	seen[root] = true
	count := 1
	for id := int(root); id >= 0; id-- {
		if !seen[id] {
			return false
		}
		g.Node(value.NodeID(id)).Children(func(c value.NodeID) {
			if int(c) < id && !seen[c] {
				seen[c] = true
				count++
			}
		})
	}
	return count == int(root)+1
}

func remapNode(n value.Node, m []value.NodeID) value.Node {
	return n.MapRefs(func(r value.NodeID) value.NodeID { return m[r] })
}

// DecodeGraph makes a *Value a valid destination of value.ToGo: it
// records the node without converting it, so a typed host function can
// take a Value parameter for raw access to an argument.
func (v *Value) DecodeGraph(g *value.Graph, id value.NodeID) error {
	v.Graph, v.Root = g, id
	return nil
}

// toGraph adds v (any Go value value.FromGo accepts, a Value included) to
// g and returns its root.
func toGraph(g *value.Graph, v any) (value.NodeID, error) { return value.FromGo(g, v) }

func toGo(g *value.Graph, id value.NodeID, dst any) error { return value.ToGo(g, id, dst) }

func toAny(g *value.Graph, id value.NodeID) (any, error) { return value.ToAny(g, id) }

// exceptionFor turns a Go error from the host into the exception the
// sandbox raises. Every path does it through here, so the same error is
// the same exception whether a host function, a method, a constructor, an
// attribute hook, an Async function's future or an OS handler returned it
// (and for the low-level API's Raise and FutureOutcome):
//
//   - a *message.RaisedException in err's chain (a *PythonError included)
//     raises its type with its data, but not its traceback: the worker
//     shows only the sandbox's own frames, down to the call, and rejects
//     the whole answer over a frame it finds invalid. Its message is
//     err's own text, in which the exception's rendering ("Type: msg",
//     wherever the wrappers put it) reads as just msg, so that the
//     wrappers' context is kept: fmt.Errorf("ctx: %w", exc) raises
//     "ctx: msg". A type the worker does not know becomes a RuntimeError
//     with err's text, so the worker never rejects the answer;
//   - a *value.ConversionError in the chain (a Call.DecodeArg or
//     Value.Decode that failed, say) raises TypeError, as the arguments
//     of a function adapted by reflection do, with err's text;
//   - an errno in the chain (*fs.PathError, *os.SyscallError, a bare
//     syscall.Errno) or fs.ErrNotExist, fs.ErrExist or fs.ErrPermission
//     raises CPython's OSError subclass for it (internal/oserror), with
//     err's text;
//   - context.DeadlineExceeded or os.ErrDeadlineExceeded raises
//     TimeoutError, with err's text;
//   - anything else raises fallback (RuntimeError for calls, OSError for
//     the OS handler) with err's text.
//
// Messages are made UTF-8, which is all the protocol carries.
func exceptionFor(err error, fallback string) *message.RaisedException {
	var exc *message.RaisedException
	if errors.As(err, &exc) && exc != nil {
		if !value.KnownExceptionType(exc.Type) {
			return message.NewException("RuntimeError", err.Error())
		}
		msg := exc.Msg()
		if err != error(exc) {
			msg = wrappedMessage(err.Error(), exc)
		}
		rewrite := msg != exc.Msg() || !utf8.ValidString(msg)
		if !rewrite && exc.Traceback == nil {
			return exc
		}
		// Without the traceback, and the message rewritten (or repaired:
		// the protocol carries only UTF-8), in a copy.
		c := *exc
		c.Traceback = nil
		if rewrite {
			c.Message = message.NewException("", msg).Message
		}
		return &c
	}
	typ := fallback
	var conv *value.ConversionError
	if errors.As(err, &conv) {
		typ = "TypeError"
	} else if c, ok := oserror.ClassOf(err); ok {
		typ = c
	} else if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		typ = "TimeoutError"
	}
	return message.NewException(typ, err.Error())
}

// wrappedMessage is the message of exc raised for an error whose text is
// outer: outer with exc's rendering in it (its last occurrence) read as
// exc's message, or outer itself when the wrapper does not quote it.
func wrappedMessage(outer string, exc *message.RaisedException) string {
	r := exc.Error()
	i := strings.LastIndex(outer, r)
	if i < 0 {
		return outer
	}
	before, msg, after := outer[:i], exc.Msg(), outer[i+len(r):]
	if msg == "" {
		// "no key: KeyError" is KeyError("no key"), and
		// "KeyError (retrying)" KeyError("(retrying)").
		if after == "" {
			before = strings.TrimSuffix(before, ": ")
		} else if before == "" {
			after = strings.TrimPrefix(strings.TrimPrefix(after, ":"), " ")
		}
	}
	return before + msg + after
}

// typeError returns a TypeError exception.
func typeError(format string, args ...any) *message.RaisedException {
	return message.NewException("TypeError", fmt.Sprintf(format, args...))
}

package core

import (
	"unicode/utf8"

	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The check pass every encoder runs before it sizes a message: one walk in
// field order over the places where a message can hold something the peer
// would refuse or the version cannot say. The walk decides where to look;
// the Checker, the version's, decides what each finding is called and
// which one wins (protocol 2 keeps the first in field order; protocols 4
// and 5 rank them by class: kinds, then the graph, then the roots, then
// the text).

// Problem is a finding of the check pass other than text or a value root.
type Problem uint8

// The problems; arg is what Checker.Bad receives with each.
const (
	BadResultKind  Problem = iota + 1 // an unknown ExtResult kind (arg: message.ResultKind)
	BadLookupKind                     // an unknown ResumeNameLookup kind (arg: message.LookupKind)
	NilResultError                    // an error result without its exception
	NilLookupError                    // a lookup error without its exception
	BothObjects                       // UnicodeErrorData with object_bytes and object_str
	NoCwd                             // Feed.cwd at a version without it (arg: the cwd)
	NoEager                           // FunctionCall.allow_eager_await at a version without it
	Segments                          // not one Print segment at a version without segments (arg: the count)
	NoBody                            // a body type the walk does not know (arg: the body)
	BadOsOp                           // an OS call the version does not have (arg: message.OsOp)
)

// Checker is what a version does with the findings of CheckRequest and
// CheckEvent.
type Checker interface {
	// BadText reports a string field that is not UTF-8.
	BadText(field string)
	// Root reports value root id, written as field at message level lvl
	// (the frame's top message is 0); an error names it field+sub.
	Root(id value.NodeID, lvl int, field, sub string)
	// Bad reports a problem in field ("request" or "event" for NoBody).
	Bad(p Problem, field string, arg any)
	// OsCall checks the rest of an OS call of a known op (or none): the
	// versions name its strings apart.
	OsCall(x *message.OsCall)
}

type walk struct {
	d *Dialect
	h Checker
}

// Text reports s to h, as field, when it is not UTF-8.
func Text(h Checker, s, field string) {
	if !utf8.ValidString(s) {
		h.BadText(field)
	}
}

// Fields reports to h the first string of f that is not UTF-8.
func Fields(h Checker, f leaf.Fields) {
	if name, bad := f.BadText(); bad {
		h.BadText(name)
	}
}

func (w walk) text(s, field string) { Text(w.h, s, field) }

func (w walk) opt(s *string, field string) {
	if s != nil {
		Text(w.h, *s, field)
	}
}

func (w walk) exc(e *message.RaisedException) {
	if name, bad := leaf.ExcBadText(e); bad {
		w.h.BadText(name)
	}
	if u, ok := e.Data.(*message.UnicodeErrorData); ok && u != nil && u.ObjectBytes != nil && u.ObjectStr != nil {
		w.h.Bad(BothObjects, "", nil)
	}
}

// ext walks an ExtFunctionResult at level lvl; notFound is field's
// not_found arm.
func (w walk) ext(r *message.ExtResult, lvl int, field, notFound string) {
	switch r.Kind {
	case 0, message.ResultFuture, message.ResultNotHandled:
		// Kind 0 (no arm) is a protocol violation the worker reports itself.
	case message.ResultReturn:
		w.h.Root(r.Value, lvl, field, ".return_value")
	case message.ResultError:
		if r.Error == nil {
			w.h.Bad(NilResultError, field, nil)
			return
		}
		w.exc(r.Error)
	case message.ResultNotFound:
		w.text(r.Name, notFound)
	default:
		w.h.Bad(BadResultKind, field, r.Kind)
	}
}

// CheckRequest walks r, whose body is body (r.Body, or what a typed nil
// body stands for), reporting to h.
func CheckRequest(d *Dialect, r *message.ParentRequest, body message.Request, h Checker) {
	w := walk{d, h}
	switch x := body.(type) {
	case nil, *message.Dump, *message.Load, *message.Reset, *message.Shutdown:
	case *message.Configure:
		Fields(h, leaf.ConfigureFields(x))
		w.opt(x.Profile, "Configure.profile")
		if p := x.OsPolicy; p != nil && p.TimeZone != nil {
			w.text(p.TimeZone.Name, "SandboxTimeZone.name")
			w.opt(p.TimeZone.Fixed.Name, "TimeZone.name")
		}
	case *message.InstallDependencies:
		for _, s := range x.Requirements {
			w.text(s, "InstallDependencies.requirements")
		}
	case *message.Feed:
		if d.FeedCwd == 0 && x.Cwd != "" {
			h.Bad(NoCwd, "Feed.cwd", x.Cwd)
		}
		w.text(x.Code, "Feed.code")
		w.text(x.Cwd, "Feed.cwd")
		for i := range x.Inputs {
			w.text(x.Inputs[i].Name, "NamedValue.name")
			h.Root(x.Inputs[i].Value, 2, "NamedValue.value", "")
		}
	case *message.ResumeCall:
		if x.Result != nil {
			w.ext(x.Result, 2, "ResumeCall.result", "ResumeCall.result.not_found")
		}
	case *message.ResumeNameLookup:
		switch x.Kind {
		case 0, message.LookupUndefined:
		case message.LookupValue:
			h.Root(x.Value, 1, "ResumeNameLookup.value", "")
		case message.LookupError:
			if x.Error == nil {
				h.Bad(NilLookupError, "ResumeNameLookup.error", nil)
				break
			}
			w.exc(x.Error)
		default:
			h.Bad(BadLookupKind, "ResumeNameLookup", x.Kind)
		}
	case *message.ResumeFutures:
		for i := range x.Results {
			if r := x.Results[i].Result; r != nil {
				w.ext(r, 3, "FutureResult.result", "FutureResult.result.not_found")
			}
		}
	case *message.AbortFeed:
		if x.Exception != nil {
			w.exc(x.Exception)
		}
	default:
		h.Bad(NoBody, "request", x)
	}
	w.opt(r.TraceParent, "ParentRequest.trace_parent")
}

// CheckEvent is CheckRequest for events.
func CheckEvent(d *Dialect, e *message.ChildEvent, body message.Event, h Checker) {
	w := walk{d, h}
	switch x := body.(type) {
	case nil, *message.ResolveFutures, *message.DumpResult, *message.Ok, *message.ShutdownDump:
	case *message.Print:
		if !d.PrintSegmented {
			if len(x.Segments) != 1 {
				h.Bad(Segments, "Print", len(x.Segments))
				break
			}
			w.text(x.Segments[0].Text, "Print.text")
			break
		}
		for i := range x.Segments {
			w.text(x.Segments[i].Text, "PrintSegment.text")
		}
	case *message.FunctionCall:
		if d.FcEager == 0 && x.AllowEagerAwait {
			h.Bad(NoEager, "FunctionCall.allow_eager_await", nil)
		}
		w.text(x.FunctionName, "FunctionCall.function_name")
		for _, a := range x.Args {
			h.Root(a, 1, "FunctionCall.args", "")
		}
		for _, p := range x.Kwargs {
			h.Root(p.Key, 2, "Pair.key", "")
			h.Root(p.Value, 2, "Pair.value", "")
		}
	case *message.OsCall:
		if x.Op != 0 && d.OsArm(x.Op) == 0 {
			h.Bad(BadOsOp, "OsCall", x.Op)
		}
		h.OsCall(x)
		if x.Op == message.OpGetenv {
			h.Root(x.Default, 2, "Getenv.default", "")
		}
	case *message.NameLookup:
		w.text(x.Name, "NameLookup.name")
	case *message.Complete:
		h.Root(x.Value, 1, "Complete.value", "")
	case *message.Error:
		if x.Exception != nil {
			w.exc(x.Exception)
		}
	case *message.TypingError:
		w.text(x.Diagnostics, "TypingError.diagnostics")
	case *message.FatalError:
		w.text(x.Message, "FatalError.message")
	default:
		h.Bad(NoBody, "event", x)
	}
	w.opt(e.RestoredScriptName, "ChildEvent.restored_script_name")
}

// RequestGraph is the value graph of a request body, nil for one without.
func RequestGraph(b message.Request) *value.Graph {
	switch x := b.(type) {
	case *message.Feed:
		return &x.Values
	case *message.ResumeCall:
		return &x.Values
	case *message.ResumeNameLookup:
		return &x.Values
	case *message.ResumeFutures:
		return &x.Values
	}
	return nil
}

// EventGraph is RequestGraph for events.
func EventGraph(b message.Event) *value.Graph {
	switch x := b.(type) {
	case *message.FunctionCall:
		return &x.Values
	case *message.OsCall:
		return &x.Values
	case *message.Complete:
		return &x.Values
	}
	return nil
}

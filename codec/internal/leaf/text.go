package leaf

import (
	"unicode/utf8"

	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The UTF-8 checks of an encoder: every string field of a proto3 message
// must be UTF-8, and a peer's decoder refuses a frame with one that is not
// (ours do), so an encoder refuses to write it. Each function returns the
// name of the first offending field.

// text is a walk that stops at the first string that is not UTF-8.
type text struct{ bad string }

func (t *text) s(s, field string) {
	if t.bad == "" && !utf8.ValidString(s) {
		t.bad = field
	}
}

func (t *text) opt(s *string, field string) {
	if s != nil {
		t.s(*s, field)
	}
}

func (t *text) exc(e *message.RaisedException) {
	if name, bad := ExcBadText(e); bad && t.bad == "" {
		t.bad = name
	}
}

func (t *text) ext(r *message.ExtResult, field string) {
	if r == nil {
		return
	}
	switch r.Kind {
	case message.ResultError:
		t.exc(r.Error)
	case message.ResultNotFound:
		t.s(r.Name, field+".not_found")
	}
}

// RequestBadText reports the first string field of r that is not UTF-8
// (value graphs aside: see NodeBadText).
func RequestBadText(r *message.ParentRequest) (string, bool) {
	var t text
	switch x := r.Body.(type) {
	case *message.Configure:
		f := ConfigureFields(x)
		if name, bad := f.BadText(); bad {
			return name, true
		}
		t.opt(x.Profile, "Configure.profile")
		if p := x.OsPolicy; p != nil && p.TimeZone != nil {
			t.s(p.TimeZone.Name, "SandboxTimeZone.name")
			t.opt(p.TimeZone.Fixed.Name, "TimeZone.name")
		}
	case *message.InstallDependencies:
		for _, s := range x.Requirements {
			t.s(s, "InstallDependencies.requirements")
		}
	case *message.Feed:
		t.s(x.Code, "Feed.code")
		t.s(x.Cwd, "Feed.cwd")
		for i := range x.Inputs {
			t.s(x.Inputs[i].Name, "NamedValue.name")
		}
	case *message.ResumeCall:
		t.ext(x.Result, "ResumeCall.result")
	case *message.ResumeNameLookup:
		if x.Kind == message.LookupError {
			t.exc(x.Error)
		}
	case *message.ResumeFutures:
		for i := range x.Results {
			t.ext(x.Results[i].Result, "FutureResult.result")
		}
	case *message.AbortFeed:
		t.exc(x.Exception)
	}
	t.opt(r.TraceParent, "ParentRequest.trace_parent")
	return t.bad, t.bad != ""
}

// EventBadText reports the first string field of e that is not UTF-8
// (value graphs aside: see NodeBadText).
func EventBadText(e *message.ChildEvent) (string, bool) {
	var t text
	switch x := e.Body.(type) {
	case *message.Print:
		for _, s := range x.Segments {
			t.s(s.Text, "PrintSegment.text")
		}
	case *message.FunctionCall:
		t.s(x.FunctionName, "FunctionCall.function_name")
	case *message.OsCall:
		t.s(x.Path, "OsCall.path")
		t.s(x.Dst, "OsCall.dst")
		t.s(x.Text, "OsCall.text")
		t.s(x.Mode, "OsCall.mode")
		t.s(x.Key, "OsCall.key")
		t.s(x.Caller, "OsCall.caller")
		if x.TZ != nil {
			t.opt(x.TZ.Name, "TimeZone.name")
		}
	case *message.NameLookup:
		t.s(x.Name, "NameLookup.name")
	case *message.Error:
		t.exc(x.Exception)
	case *message.TypingError:
		t.s(x.Diagnostics, "TypingError.diagnostics")
	case *message.FatalError:
		t.s(x.Message, "FatalError.message")
	}
	t.opt(e.RestoredScriptName, "ChildEvent.restored_script_name")
	return t.bad, t.bad != ""
}

// NodeBadText reports the first string of a value node that is not UTF-8.
// The check is package value's own (the one value.FromGo makes), reached
// through internal/valuecheck, so the encoders refuse what FromGo refuses.
// The encoders call it for every node they write, so the hot kinds are
// answered here, without the indirect call: a str whose text is UTF-8, and
// the scalars and containers, which hold no string.
func NodeBadText(n *value.Node) (string, bool) {
	switch n.Kind {
	case value.KindStr:
		if utf8.ValidString(n.Text()) {
			return "", false
		}
	case value.KindNone, value.KindBool, value.KindInt, value.KindBigInt, value.KindFloat, value.KindBytes,
		value.KindList, value.KindTuple, value.KindDict, value.KindSet, value.KindFrozenSet:
		return "", false
	}
	name := valuecheck.BadText(n)
	return name, name != ""
}

package core_test

import (
	"fmt"
	"testing"

	"github.com/gomonty/monty/codec/codecv2"
	"github.com/gomonty/monty/codec/codecv4"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The encoders' check pass (check.go) is one walk for every version; what
// each finding is called, and which finding wins when a message has
// several, stays each version's. This table pins both: every case holds
// the exact error text of protocols 2, 4 and 5 ("" for none). The texts
// are those of the two check passes the walk replaced, except that a
// typed nil Feed at 4 and 5, which their text check dereferenced
// (a panic), now encodes as the empty Feed, as their body check meant.

const bad = "\xff"

func graph(ns ...value.Node) value.Graph {
	var g value.Graph
	for _, n := range ns {
		g.Add(n)
	}
	return g
}

func exc(typ string, data message.ExcData) *message.RaisedException {
	return &message.RaisedException{Type: typ, Data: data}
}

func both() *message.UnicodeErrorData {
	s := "x"
	return &message.UnicodeErrorData{Encoding: "utf-8", ObjectBytes: []byte("x"), ObjectStr: &s, Reason: "r"}
}

func ext(k message.ResultKind) *message.ExtResult { return &message.ExtResult{Kind: k} }

var checkRequests = []struct {
	name string
	r    message.ParentRequest
}{
	{"feed cwd and bad code", message.ParentRequest{Body: &message.Feed{Code: bad, Cwd: "/tmp"}}},
	{"feed bad code, root out of range", message.ParentRequest{Body: &message.Feed{Code: bad,
		Inputs: []message.NamedRef{{Name: "a", Value: 3}}, Values: graph(value.Int(1))}}},
	{"feed root out of range, then bad name", message.ParentRequest{Body: &message.Feed{Code: "x",
		Inputs: []message.NamedRef{{Name: "a", Value: 3}, {Name: bad}}, Values: graph(value.Int(1))}}},
	{"feed bad name, bad graph", message.ParentRequest{Body: &message.Feed{Code: "x",
		Inputs: []message.NamedRef{{Name: bad, Value: 4}}, Values: graph(value.List(7))}}},
	{"feed too deep", message.ParentRequest{Body: &message.Feed{Code: "x",
		Inputs: []message.NamedRef{{Name: "a", Value: 60}}, Values: deep(61)}}},
	{"call unknown result kind", message.ParentRequest{Body: &message.ResumeCall{Result: ext(99)}}},
	{"call unknown kind, bad graph", message.ParentRequest{Body: &message.ResumeCall{Result: ext(99), Values: graph(value.List(7))}}},
	{"call error without exception", message.ParentRequest{Body: &message.ResumeCall{Result: ext(message.ResultError)}}},
	{"call exception: bad type and both objects", message.ParentRequest{Body: &message.ResumeCall{
		Result: &message.ExtResult{Kind: message.ResultError, Error: exc(bad, both())}}}},
	{"call not found bad, trace parent bad", message.ParentRequest{TraceParent: ptr(bad), Body: &message.ResumeCall{
		Result: &message.ExtResult{Kind: message.ResultNotFound, Name: bad}}}},
	{"call return out of range", message.ParentRequest{Body: &message.ResumeCall{
		Result: &message.ExtResult{Kind: message.ResultReturn, Value: 2}}}},
	{"lookup unknown kind", message.ParentRequest{Body: &message.ResumeNameLookup{Kind: 9}}},
	{"lookup error without exception", message.ParentRequest{Body: &message.ResumeNameLookup{Kind: message.LookupError}}},
	{"lookup value out of range", message.ParentRequest{Body: &message.ResumeNameLookup{Kind: message.LookupValue, Value: 1}}},
	{"lookup exception both objects", message.ParentRequest{Body: &message.ResumeNameLookup{Kind: message.LookupError,
		Error: exc("UnicodeError", both())}}},
	{"futures not found bad, then unknown kind", message.ParentRequest{Body: &message.ResumeFutures{Results: []message.FutureResult{
		{Result: &message.ExtResult{Kind: message.ResultNotFound, Name: bad}}, {Result: ext(99)}}}}},
	{"futures return out of range, then error without exception", message.ParentRequest{Body: &message.ResumeFutures{Results: []message.FutureResult{
		{Result: &message.ExtResult{Kind: message.ResultReturn, Value: 5}}, {Result: ext(message.ResultError)}}}}},
	{"abort exception bad type", message.ParentRequest{Body: &message.AbortFeed{Exception: exc(bad, nil)}}},
	{"configure bad script name", message.ParentRequest{Body: &message.Configure{ScriptName: bad}}},
	{"install bad requirement", message.ParentRequest{Body: &message.InstallDependencies{Requirements: []string{"a", bad}}}},
	{"futures both objects, then unknown kind", message.ParentRequest{Body: &message.ResumeFutures{Results: []message.FutureResult{
		{Result: &message.ExtResult{Kind: message.ResultError, Error: exc("UnicodeError", both())}}, {Result: ext(99)}}}}},
	{"typed nil feed", message.ParentRequest{Body: (*message.Feed)(nil)}},
}

var checkEvents = []struct {
	name string
	e    message.ChildEvent
}{
	{"print two segments", message.ChildEvent{Body: &message.Print{Segments: []message.PrintSegment{{Text: "a"}, {Text: bad}}}}},
	{"print bad segment", message.ChildEvent{Body: &message.Print{Segments: []message.PrintSegment{{Text: bad}}}}},
	{"call eager and bad name", message.ChildEvent{Body: &message.FunctionCall{FunctionName: bad, AllowEagerAwait: true}}},
	{"call bad name, arg out of range", message.ChildEvent{Body: &message.FunctionCall{FunctionName: bad, Args: []value.NodeID{0, 4}, Values: graph(value.Int(1))}}},
	{"call kwarg value out of range, bad graph", message.ChildEvent{Body: &message.FunctionCall{FunctionName: "f",
		Kwargs: []value.Pair{{Key: 0, Value: 9}}, Values: graph(value.Str("k"), value.List(7))}}},
	{"os urandom", message.ChildEvent{Body: &message.OsCall{Op: message.OpUrandom}}},
	{"os op 1", message.ChildEvent{Body: &message.OsCall{Op: 1, Path: bad}}},
	{"os op 31", message.ChildEvent{Body: &message.OsCall{Op: 31}}},
	{"os op 1, bad graph", message.ChildEvent{Body: &message.OsCall{Op: 1, Values: graph(value.List(7))}}},
	{"os open bad mode", message.ChildEvent{Body: &message.OsCall{Op: message.OpOpen, Path: "p", Mode: "q" + bad}}},
	{"os getenv bad key, default out of range", message.ChildEvent{Body: &message.OsCall{Op: message.OpGetenv, Key: bad, Default: 3}}},
	{"os rename bad dst", message.ChildEvent{Body: &message.OsCall{Op: message.OpRename, Path: "a", Dst: bad}}},
	{"os exists bad path", message.ChildEvent{Body: &message.OsCall{Op: message.OpExists, Path: bad}}},
	{"os now bad zone", message.ChildEvent{Body: &message.OsCall{Op: message.OpDateTimeNow, TZ: &value.TimeZone{Name: ptr(bad)}}}},
	{"os sleep negative", message.ChildEvent{Body: &message.OsCall{Op: message.OpSleep, Seconds: -1}}},
	{"complete out of range", message.ChildEvent{Body: &message.Complete{Value: 2}}},
	{"complete bad graph", message.ChildEvent{Body: &message.Complete{Value: 0, Values: graph(value.List(7))}}},
	{"error both objects", message.ChildEvent{Body: &message.Error{Exception: exc("UnicodeError", both())}}},
	{"lookup bad name, script name bad", message.ChildEvent{RestoredScriptName: ptr(bad), Body: &message.NameLookup{Name: bad}}},
	{"typing bad", message.ChildEvent{Body: &message.TypingError{Diagnostics: bad}}},
	{"fatal bad", message.ChildEvent{Body: &message.FatalError{Message: bad}}},
}

func ptr[T any](x T) *T { return &x }

// deep is n nested lists around an int; the outermost is node n-1.
func deep(n int) value.Graph {
	var g value.Graph
	id := g.Add(value.Int(1))
	for range n - 1 {
		id = g.Add(value.List(id))
	}
	return g
}

func try(f func() error) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("panic: %v", r)
		}
	}()
	if err := f(); err != nil {
		return err.Error()
	}
	return ""
}

func TestCheckTextsPerVersion(t *testing.T) {
	check := func(name string, got [3]string) {
		t.Helper()
		want, ok := checkWant[name]
		if !ok {
			t.Errorf("%s: no texts pinned", name)
		}
		for i, v := range []string{"2", "4", "5"} {
			if got[i] != want[i] {
				t.Errorf("%s at protocol %s:\n got %q\nwant %q", name, v, got[i], want[i])
			}
		}
	}
	for _, c := range checkRequests {
		r2, r4, r5 := c.r, c.r, c.r
		check(c.name, [3]string{
			try(func() error { _, err := codecv2.AppendRequest(nil, &r2); return err }),
			try(func() error { _, err := codecv4.AppendRequest(nil, &r4); return err }),
			try(func() error { _, err := codecv4.V5().AppendRequest(nil, &r5); return err }),
		})
	}
	for _, c := range checkEvents {
		e2, e4, e5 := c.e, c.e, c.e
		check(c.name, [3]string{
			try(func() error { _, err := codecv2.AppendEvent(nil, &e2); return err }),
			try(func() error { _, err := codecv4.AppendEvent(nil, &e4); return err }),
			try(func() error { _, err := codecv4.V5().AppendEvent(nil, &e5); return err }),
		})
	}
}

// checkWant holds each case's texts at protocols 2, 4 and 5.
var checkWant = map[string][3]string{
	"feed cwd and bad code": {
		"codecv2: Feed.cwd: protocol 2 has no working-directory field (got \"/tmp\")",
		"codecv4: Feed.code is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: Feed.code is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"feed bad code, root out of range": {
		"codecv2: Feed.code is not valid UTF-8",
		"codecv4: invalid value graph: invalid value for Arena: value root 3 is out of range for an arena of 1 nodes",
		"codecv5: invalid value graph: invalid value for Arena: value root 3 is out of range for an arena of 1 nodes",
	},
	"feed root out of range, then bad name": {
		"codecv2: NamedValue.value: value root 3 is out of range for a graph of 1 nodes",
		"codecv4: invalid value graph: invalid value for Arena: value root 3 is out of range for an arena of 1 nodes",
		"codecv5: invalid value graph: invalid value for Arena: value root 3 is out of range for an arena of 1 nodes",
	},
	"feed bad name, bad graph": {
		"codecv2: value node 0 (list): references node 7, which is not below it",
		"codecv4: invalid value graph: invalid value for Arena: value node 0 references node 7, which is not below it",
		"codecv5: invalid value graph: invalid value for Arena: value node 0 references node 7, which is not below it",
	},
	"feed too deep": {
		"codecv2: NamedValue.value: the value reaches 123 protobuf message levels below the frame's top message; the protocol-2 worker's decoder stops at 100 (an int in 48 nested lists is the deepest list input)",
		"",
		"",
	},
	"call unknown result kind": {
		"codecv2: ResumeCall.result: unknown result kind 99",
		"codecv4: cannot encode ExtResult kind unset: unknown kind",
		"codecv5: cannot encode ExtResult kind unset: unknown kind",
	},
	"call unknown kind, bad graph": {
		"codecv2: value node 0 (list): references node 7, which is not below it",
		"codecv4: cannot encode ExtResult kind unset: unknown kind",
		"codecv5: cannot encode ExtResult kind unset: unknown kind",
	},
	"call error without exception": {
		"codecv2: ResumeCall.result: error result with a nil exception",
		"",
		"",
	},
	"call exception: bad type and both objects": {
		"codecv2: RaisedException.exc_type is not valid UTF-8",
		"codecv4: UnicodeErrorData has both object_bytes and object_str",
		"codecv5: UnicodeErrorData has both object_bytes and object_str",
	},
	"call not found bad, trace parent bad": {
		"codecv2: ResumeCall.result.not_found is not valid UTF-8",
		"codecv4: ResumeCall.result.not_found is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: ResumeCall.result.not_found is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"call return out of range": {
		"codecv2: ResumeCall.result.return_value: value root 2 is out of range for a graph of 0 nodes",
		"codecv4: invalid value graph: invalid value for Arena: value root 2 is out of range for an arena of 0 nodes",
		"codecv5: invalid value graph: invalid value for Arena: value root 2 is out of range for an arena of 0 nodes",
	},
	"lookup unknown kind": {
		"codecv2: ResumeNameLookup: unknown kind 9",
		"codecv4: cannot encode LookupKind 9: unknown kind",
		"codecv5: cannot encode LookupKind 9: unknown kind",
	},
	"lookup error without exception": {
		"codecv2: ResumeNameLookup.error: nil exception",
		"",
		"",
	},
	"lookup value out of range": {
		"codecv2: ResumeNameLookup.value: value root 1 is out of range for a graph of 0 nodes",
		"codecv4: invalid value graph: invalid value for Arena: value root 1 is out of range for an arena of 0 nodes",
		"codecv5: invalid value graph: invalid value for Arena: value root 1 is out of range for an arena of 0 nodes",
	},
	"lookup exception both objects": {
		"codecv2: UnicodeErrorData: both object_bytes and object_str are set",
		"codecv4: UnicodeErrorData has both object_bytes and object_str",
		"codecv5: UnicodeErrorData has both object_bytes and object_str",
	},
	"futures not found bad, then unknown kind": {
		"codecv2: FutureResult.result.not_found is not valid UTF-8",
		"codecv4: cannot encode ExtResult kind unset: unknown kind",
		"codecv5: cannot encode ExtResult kind unset: unknown kind",
	},
	"futures return out of range, then error without exception": {
		"codecv2: FutureResult.result.return_value: value root 5 is out of range for a graph of 0 nodes",
		"codecv4: invalid value graph: invalid value for Arena: value root 5 is out of range for an arena of 0 nodes",
		"codecv5: invalid value graph: invalid value for Arena: value root 5 is out of range for an arena of 0 nodes",
	},
	"abort exception bad type": {
		"codecv2: RaisedException.exc_type is not valid UTF-8",
		"codecv4: RaisedException.exc_type is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: RaisedException.exc_type is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"configure bad script name": {
		"codecv2: Configure.script_name is not valid UTF-8",
		"codecv4: Configure.script_name is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: Configure.script_name is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"install bad requirement": {
		"codecv2: InstallDependencies.requirements is not valid UTF-8",
		"codecv4: InstallDependencies.requirements is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: InstallDependencies.requirements is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"futures both objects, then unknown kind": {
		"codecv2: UnicodeErrorData: both object_bytes and object_str are set",
		"codecv4: UnicodeErrorData has both object_bytes and object_str",
		"codecv5: UnicodeErrorData has both object_bytes and object_str",
	},
	"typed nil feed": {
		"codecv2: nil *message.Feed request body",
		"",
		"",
	},
	"print two segments": {
		"codecv2: Print: protocol 2 carries exactly one segment per event, got 2",
		"codecv4: PrintSegment.text is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: PrintSegment.text is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"print bad segment": {
		"codecv2: Print.text is not valid UTF-8",
		"codecv4: PrintSegment.text is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: PrintSegment.text is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"call eager and bad name": {
		"codecv2: FunctionCall.allow_eager_await: protocol 2 has no eager await",
		"codecv4: FunctionCall.function_name is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: FunctionCall.function_name is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"call bad name, arg out of range": {
		"codecv2: FunctionCall.function_name is not valid UTF-8",
		"codecv4: invalid value graph: invalid value for Arena: value root 4 is out of range for an arena of 1 nodes",
		"codecv5: invalid value graph: invalid value for Arena: value root 4 is out of range for an arena of 1 nodes",
	},
	"call kwarg value out of range, bad graph": {
		"codecv2: value node 1 (list): references node 7, which is not below it",
		"codecv4: invalid value graph: invalid value for Arena: value node 1 references node 7, which is not below it",
		"codecv5: invalid value graph: invalid value for Arena: value node 1 references node 7, which is not below it",
	},
	"os urandom": {
		"codecv2: OsCall.urandom: protocol 2 has no urandom call (OsCall arms stop at 24)",
		"",
		"",
	},
	"os op 1": {
		"codecv2: OsCall: unknown op 1",
		"codecv4: cannot encode OsOp 1: unknown kind",
		"codecv5: cannot encode OsOp 1: unknown kind",
	},
	"os op 31": {
		"codecv2: OsCall: unknown op 31",
		"codecv4: cannot encode OsOp 31: unknown kind",
		"codecv5: cannot encode OsOp 31: unknown kind",
	},
	"os op 1, bad graph": {
		"codecv2: value node 0 (list): references node 7, which is not below it",
		"codecv4: cannot encode OsOp 1: unknown kind",
		"codecv5: cannot encode OsOp 1: unknown kind",
	},
	"os open bad mode": {
		"codecv2: OsCall.open: invalid file mode \"q\\u{fffd}\"",
		"codecv4: OsCall.mode is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: OsCall.mode is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"os getenv bad key, default out of range": {
		"codecv2: Getenv.key is not valid UTF-8",
		"codecv4: invalid value graph: invalid value for Arena: value root 3 is out of range for an arena of 0 nodes",
		"codecv5: invalid value graph: invalid value for Arena: value root 3 is out of range for an arena of 0 nodes",
	},
	"os rename bad dst": {
		"codecv2: Rename.dst is not valid UTF-8",
		"codecv4: OsCall.dst is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: OsCall.dst is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"os exists bad path": {
		"codecv2: OsCall.exists is not valid UTF-8",
		"codecv4: OsCall.path is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: OsCall.path is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"os now bad zone": {
		"codecv2: TimeZone.name is not valid UTF-8",
		"codecv4: TimeZone.name is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: TimeZone.name is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"os sleep negative": {
		"codec: protocol 2: OsCall.sleep cannot be expressed in protocol 2",
		"codec: protocol 4: OsCall.sleep cannot be expressed in protocol 4",
		"codecv5: OsCall: invalid value for Sleep.seconds: delay is negative",
	},
	"complete out of range": {
		"codecv2: Complete.value: value root 2 is out of range for a graph of 0 nodes",
		"codecv4: invalid value graph: invalid value for Arena: value root 2 is out of range for an arena of 0 nodes",
		"codecv5: invalid value graph: invalid value for Arena: value root 2 is out of range for an arena of 0 nodes",
	},
	"complete bad graph": {
		"codecv2: value node 0 (list): references node 7, which is not below it",
		"codecv4: invalid value graph: invalid value for Arena: value node 0 references node 7, which is not below it",
		"codecv5: invalid value graph: invalid value for Arena: value node 0 references node 7, which is not below it",
	},
	"error both objects": {
		"codecv2: UnicodeErrorData: both object_bytes and object_str are set",
		"codecv4: UnicodeErrorData has both object_bytes and object_str",
		"codecv5: UnicodeErrorData has both object_bytes and object_str",
	},
	"lookup bad name, script name bad": {
		"codecv2: NameLookup.name is not valid UTF-8",
		"codecv4: NameLookup.name is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: NameLookup.name is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"typing bad": {
		"codecv2: TypingError.diagnostics is not valid UTF-8",
		"codecv4: TypingError.diagnostics is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: TypingError.diagnostics is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
	"fatal bad": {
		"codecv2: FatalError.message is not valid UTF-8",
		"codecv4: FatalError.message is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
		"codecv5: FatalError.message is not valid UTF-8: invalid string value: data is not UTF-8 encoded",
	},
}

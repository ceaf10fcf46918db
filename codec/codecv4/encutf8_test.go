package codecv4

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// Every string field of a frame must be UTF-8: the decoders (ours and the
// peer's) refuse one that is not, so the encoder refuses to write it, with
// an *EncodeError naming the field, for requests, events and value nodes.
// Before, protocols 4 and 5 wrote such frames (a Go caller's Feed.code
// with a stray byte came back as the worker's "malformed request" error,
// where protocol 2 returned an encode error).
func TestEncodeRefusesBadUTF8(t *testing.T) {
	bad := "\xff"
	graph := func(n value.Node) value.Graph {
		var g value.Graph
		g.Add(n)
		return g
	}
	exc := &message.RaisedException{Type: "ValueError", Message: &bad}
	reqs := []struct {
		r    message.Request
		want string
	}{
		{&message.Feed{Code: bad}, "Feed.code"},
		{&message.Feed{Code: "x", Cwd: "/" + bad}, "Feed.cwd"},
		{&message.Feed{Code: "x", Inputs: []message.NamedRef{{Name: bad}}, Values: graph(value.Int(1))}, "NamedValue.name"},
		{&message.Feed{Code: "x", Inputs: []message.NamedRef{{Name: "a"}}, Values: graph(value.Str(bad))}, "text"},
		{&message.Configure{ScriptName: bad}, "Configure.script_name"},
		{&message.Configure{MontyVersion: bad}, "Configure.monty_version"},
		{&message.InstallDependencies{Requirements: []string{"a", bad}}, "InstallDependencies.requirements"},
		{&message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultError, Error: exc}}, "RaisedException.message"},
		{&message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultNotFound, Name: bad}}, "ResumeCall.result.not_found"},
		{&message.ResumeNameLookup{Kind: message.LookupError, Error: exc}, "RaisedException.message"},
		{&message.AbortFeed{Exception: exc}, "RaisedException.message"},
	}
	for _, c := range reqs {
		_, err := AppendRequest(nil, &message.ParentRequest{Body: c.r})
		checkUTF8Refusal(t, err, c.want)
	}
	_, err := AppendRequest(nil, &message.ParentRequest{Body: &message.Reset{}, TraceParent: &bad})
	checkUTF8Refusal(t, err, "ParentRequest.trace_parent")

	events := []struct {
		e    message.Event
		want string
	}{
		{&message.Print{Segments: []message.PrintSegment{{Text: "ok"}, {Text: bad}}}, "PrintSegment.text"},
		{&message.FunctionCall{FunctionName: bad}, "FunctionCall.function_name"},
		{&message.NameLookup{Name: bad}, "NameLookup.name"},
		{&message.OsCall{Op: message.OpExists, Path: bad}, "OsCall.path"},
		{&message.OsCall{Op: message.OpRename, Path: "a", Dst: bad}, "OsCall.dst"},
		{&message.Error{Exception: exc}, "RaisedException.message"},
		{&message.TypingError{Diagnostics: bad}, "TypingError.diagnostics"},
		{&message.FatalError{Message: bad}, "FatalError.message"},
		{&message.Complete{Values: graph(value.Str(bad))}, "text"},
	}
	for _, c := range events {
		_, err := AppendEvent(nil, &message.ChildEvent{Body: c.e})
		checkUTF8Refusal(t, err, c.want)
	}
	_, err = AppendEvent(nil, &message.ChildEvent{Body: &message.Ok{}, RestoredScriptName: &bad})
	checkUTF8Refusal(t, err, "ChildEvent.restored_script_name")
}

func checkUTF8Refusal(t *testing.T, err error, field string) {
	t.Helper()
	var ee *codec.EncodeError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("got %v, want an *EncodeError saying %s is not valid UTF-8", err, field)
		return
	}
	if !strings.Contains(err.Error(), "invalid value graph") && !errors.Is(err, leaf.ErrUTF8) {
		t.Errorf("%v does not match the UTF-8 refusal", err)
	}
}

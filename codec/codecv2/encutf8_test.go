package codecv2

import (
	"errors"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// TestEncodeRefusesBadUTF8InSharedMessages checks the UTF-8 refusals of
// the messages protocol 2 writes through the shared leaf encoders: each
// names the field as the protocol-2 encoder always has.
func TestEncodeRefusesBadUTF8InSharedMessages(t *testing.T) {
	bad := "\xff"
	exc := func(f func(*message.RaisedException)) *message.ChildEvent {
		e := &message.RaisedException{Type: "ValueError",
			Traceback: []message.StackFrame{{Filename: "a.py"}}}
		f(e)
		return &message.ChildEvent{Body: &message.Error{Exception: e}}
	}
	osCall := func(x *message.OsCall) *message.ChildEvent { return &message.ChildEvent{Body: x} }
	events := []struct {
		ev   *message.ChildEvent
		want string
	}{
		{exc(func(e *message.RaisedException) { e.Type = bad }), "RaisedException.exc_type"},
		{exc(func(e *message.RaisedException) { e.Message = &bad }), "RaisedException.message"},
		{exc(func(e *message.RaisedException) { e.Traceback[0].Filename = bad }), "StackFrame.filename"},
		{exc(func(e *message.RaisedException) { e.Traceback[0].FrameName = &bad }), "StackFrame.frame_name"},
		{exc(func(e *message.RaisedException) { e.Traceback[0].PreviewLine = &bad }), "StackFrame.preview_line"},
		{exc(func(e *message.RaisedException) {
			e.Data = &message.UnicodeErrorData{Encoding: bad, ObjectBytes: []byte{1}}
		}), "UnicodeErrorData.encoding"},
		{exc(func(e *message.RaisedException) { e.Data = &message.UnicodeErrorData{ObjectStr: &bad} }), "UnicodeErrorData.object_str"},
		{exc(func(e *message.RaisedException) {
			e.Data = &message.UnicodeErrorData{Reason: bad, ObjectBytes: []byte{}}
		}), "UnicodeErrorData.reason"},
		{exc(func(e *message.RaisedException) { e.Data = &message.JSONErrorData{Msg: bad} }), "JsonErrorData.msg"},
		{exc(func(e *message.RaisedException) { e.Data = &message.JSONErrorData{Doc: &bad} }), "JsonErrorData.doc"},
		{osCall(&message.OsCall{Op: message.OpExists, Path: bad}), "OsCall.exists"},
		{osCall(&message.OsCall{Op: message.OpWriteText, Path: "p", Text: bad}), "TextWrite.data"},
		{osCall(&message.OsCall{Op: message.OpAppendBytes, Path: bad}), "BytesWrite.path"},
		{osCall(&message.OsCall{Op: message.OpMkdir, Path: bad}), "Mkdir.path"},
		{osCall(&message.OsCall{Op: message.OpRename, Path: "p", Dst: bad}), "Rename.dst"},
		{osCall(&message.OsCall{Op: message.OpDateTimeNow, TZ: &value.TimeZone{Name: &bad}}), "TimeZone.name"},
	}
	for _, c := range events {
		_, err := AppendEvent(nil, c.ev)
		checkUTF8Refusal(t, err, c.want)
	}
	cfg := func(f func(*message.Configure)) *message.ParentRequest {
		c := &message.Configure{}
		f(c)
		return &message.ParentRequest{Body: c}
	}
	requests := []struct {
		r    *message.ParentRequest
		want string
	}{
		{cfg(func(c *message.Configure) { c.ScriptName = bad }), "Configure.script_name"},
		{cfg(func(c *message.Configure) { c.TypeCheckStubs = &bad }), "Configure.type_check_stubs"},
		{cfg(func(c *message.Configure) { c.MontyVersion = bad }), "Configure.monty_version"},
		{&message.ParentRequest{Body: &message.AbortFeed{Exception: &message.RaisedException{Type: bad}}}, "RaisedException.exc_type"},
	}
	for _, c := range requests {
		_, err := AppendRequest(nil, c.r)
		checkUTF8Refusal(t, err, c.want)
	}
}

func checkUTF8Refusal(t *testing.T, err error, field string) {
	t.Helper()
	var ee *codec.EncodeError
	if !errors.As(err, &ee) {
		t.Errorf("%s: error %v (%T), want a *codec.EncodeError", field, err, err)
		return
	}
	if want := "codecv2: " + field + " is not valid UTF-8"; ee.Error() != want {
		t.Errorf("error %q, want %q", ee.Error(), want)
	}
}

package session

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/worker"
)

// hostileFatal is a FatalError text a hostile worker could send: forged
// log lines, terminal escapes and a megabyte of text.
const hostileFatalHead = "boom\nlevel=ERROR msg=forged \x1b[31mred é"

func hostileFatal() string { return hostileFatalHead + strings.Repeat("é", 1<<20) }

// checkFatalText fails unless err is an announced *worker.CrashError that
// keeps the worker's text whole in Message (it is data: a relay child
// passes it on byte for byte) while the error's text quotes it bounded and
// clean: the first KiB, cut at a character boundary, with control
// characters replaced by U+FFFD.
func checkFatalText(t *testing.T, err error) {
	t.Helper()
	var ce *worker.CrashError
	if !errors.As(err, &ce) || ce.Reason != worker.Announced {
		t.Fatalf("got %v, want an announced *worker.CrashError", err)
	}
	if ce.Message != hostileFatal() {
		t.Fatalf("Message of %d bytes, %.60q…: want the worker's text as sent", len(ce.Message), ce.Message)
	}
	text := err.Error()
	if len(text) > 2048 || !utf8.ValidString(text) || strings.ContainsFunc(text, unicode.IsControl) {
		t.Fatalf("error text of %d bytes, %.80q…: want at most 2 KiB of valid UTF-8 without control characters", len(text), text)
	}
	if want := "boom level=ERROR msg=forged \uFFFD[31mred é"; !strings.Contains(text, want) || !strings.Contains(text, "é…") {
		t.Fatalf("error text %.100q…: want it to quote %q and end the quote with a cut", text, want)
	}
}

// A local worker's FatalError answering a request is kept as a remote
// one's is (TestRemoteFatalErrorTextIsBounded): bounded and cleaned.
func TestFakeFatalErrorTextIsBounded(t *testing.T) {
	s, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply {
		return fakeReply{events: []*message.ChildEvent{ev(&message.FatalError{Message: hostileFatal()})}, exit: 76}
	})
	_, err := s.Feed(bg, "1")
	checkFatalText(t, err)
}

// The same for a FatalError found in the pipe after the request could not
// be sent.
func TestFakeFatalErrorLeftInPipeIsBounded(t *testing.T) {
	fs := &fakeSpawner{bin: fakeBinary(t), handler: func(int) fakeHandler {
		return withConfigure(func(*message.ParentRequest) fakeReply { return reply(ev(&message.Ok{})) })
	}}
	s, err := Start(bg, fs.launch(2), Config{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f := fs.last()
	fatal, _ := f.codec.AppendEvent(nil, ev(&message.FatalError{Message: hostileFatal()}))
	f.in.set(io.MultiReader(bytes.NewReader(frame.AppendFrame(nil, fatal)), f.evR))
	f.reqR.CloseWithError(syscall.EPIPE)
	<-f.done
	_, err = s.Feed(bg, "1")
	checkFatalText(t, err)
}

package message_test

import (
	"encoding/hex"
	"testing"

	"github.com/gomonty/monty/codec"
	v2 "github.com/gomonty/monty/codec/codecv2"
	v4 "github.com/gomonty/monty/codec/codecv4"
	"github.com/gomonty/monty/message"
)

// The frames a traceback is rendered from travel the same in protocols 2
// and 4 (StackFrame fields 1-7 are identical in both schemas). These tests
// take them off the wire, through each codec, to the CLI's text.

// bareRaiseV2 is the Error event the released worker (protocol 2) sent for
// "def f():\n    raise\nf()": the bare raise's frame has file name "\x00"
// and an empty preview.
const bareRaiseV2 = "3a750a730a0c52756e74696d654572726f72121e4e6f2061637469766520657863657074696f6e20746f20726572616973651a2d0a103c707974686f6e2d696e7075742d303e1204080310011a040803100422083c6d6f64756c653e2a036628291a140a01001204080110011a04080110012201662a00a0011cb801e807"

// bareRaiseCLI is what `monty -c` prints for that program.
const bareRaiseCLI = "Traceback (most recent call last):\n" +
	"  File \"<string>\", line 3, in <module>\n    f()\n    ~~~\n" +
	"  File \"\", line 1, in f\n    def f():\n    ~\n" +
	"RuntimeError: No active exception to reraise\n"

func decodeError(t *testing.T, c codec.Codec, frame []byte) *message.RaisedException {
	t.Helper()
	ev, err := c.DecodeEvent(frame, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	e, ok := ev.Body.(*message.Error)
	if !ok {
		t.Fatalf("decoded %T, want *message.Error", ev.Body)
	}
	return e.Exception
}

func TestTracebackFromWire(t *testing.T) {
	raw, err := hex.DecodeString(bareRaiseV2)
	if err != nil {
		t.Fatal(err)
	}
	recorded := decodeError(t, v2.V2{}, raw)
	opts := message.TracebackOptions{Filename: "<string>", Source: "def f():\n    raise\nf()"}
	if got := string(recorded.AppendTracebackWith(nil, opts)); got != bareRaiseCLI {
		t.Fatalf("protocol 2 recording:\n%s\nwant\n%s", got, bareRaiseCLI)
	}

	// An undefined name's call, as the worker reports it, through both
	// codecs: the carets are derived from the positions that arrive.
	module, preview := "<module>", "missing_func(1, 2, 3)"
	sent := message.NewException("NameError", "name 'missing_func' is not defined")
	sent.Traceback = []message.StackFrame{{Filename: "<python-input-0>",
		Start: message.CodeLoc{Line: 1, Column: 1}, End: message.CodeLoc{Line: 1, Column: 22},
		FrameName: &module, PreviewLine: &preview}}
	const want = "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n" +
		"    missing_func(1, 2, 3)\n    ~~~~~~~~~~~~\nNameError: name 'missing_func' is not defined\n"
	for _, c := range []codec.Codec{v2.V2{}, v4.V4{}} {
		for _, exc := range []*message.RaisedException{sent, recorded} {
			frame, err := c.AppendEvent(nil, &message.ChildEvent{Body: &message.Error{Exception: exc}})
			if err != nil {
				t.Fatalf("protocol %d: %v", c.Version(), err)
			}
			got := decodeError(t, c, frame)
			text := string(got.AppendTracebackWith(nil, message.TracebackOptions{Filename: "<string>", Source: opts.Source}))
			wantText := want
			if exc == recorded {
				wantText = bareRaiseCLI
			}
			if text != wantText {
				t.Errorf("protocol %d:\n%s\nwant\n%s", c.Version(), text, wantText)
			}
		}
	}
}

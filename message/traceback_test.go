package message

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// Golden cases: frames as the worker sends them, and the text its CLI
// prints for the same code (see testdata/gen-traceback-golden.py).

type goldenFrame struct {
	Filename      string    `json:"filename"`
	Start         [2]uint32 `json:"start"`
	End           [2]uint32 `json:"end"`
	FrameName     *string   `json:"frame_name"`
	PreviewLine   *string   `json:"preview_line"`
	HideCaret     bool      `json:"hide_caret"`
	HideFrameName bool      `json:"hide_frame_name"`
}

type goldenTraceback struct {
	Name      string `json:"name"`
	Source    string `json:"source"`
	Code      string `json:"python_code"`
	Want      string `json:"want"`
	Exception struct {
		Type      string        `json:"type"`
		Message   *string       `json:"message"`
		Traceback []goldenFrame `json:"traceback"`
	} `json:"exception"`
}

func (c *goldenTraceback) raised() *RaisedException {
	e := &RaisedException{Type: c.Exception.Type, Message: c.Exception.Message}
	for _, f := range c.Exception.Traceback {
		e.Traceback = append(e.Traceback, StackFrame{
			Filename:      f.Filename,
			Start:         CodeLoc{Line: f.Start[0], Column: f.Start[1]},
			End:           CodeLoc{Line: f.End[0], Column: f.End[1]},
			FrameName:     f.FrameName,
			PreviewLine:   f.PreviewLine,
			HideCaret:     f.HideCaret,
			HideFrameName: f.HideFrameName,
		})
	}
	return e
}

func TestTracebackGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/traceback_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []goldenTraceback `json:"cases"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	vectors := 0
	for _, c := range doc.Cases {
		if strings.HasPrefix(c.Source, "vector:") {
			vectors++
		}
		t.Run(c.Name, func(t *testing.T) {
			e := c.raised()
			if err := e.Sanitize(); err != nil {
				t.Fatalf("recorded exception does not sanitize: %v", err)
			}
			// The fed code is the source of the outermost frame: with it,
			// every case renders as the CLI does.
			if got := string(e.AppendTracebackWith(nil, TracebackOptions{Source: c.Code})); got != c.Want {
				t.Errorf("code %q, with the source\n--- got\n%s--- want\n%s", c.Code, got, c.Want)
			}
			// Without it, the line of a frame with no location (a bare
			// raise with nothing active) is left out.
			for _, f := range e.Traceback {
				if f.Filename == noFile {
					return
				}
			}
			if got := e.TracebackString(); got != c.Want {
				t.Errorf("code %q\n--- got\n%s--- want\n%s", c.Code, got, c.Want)
			}
			var buf bytes.Buffer
			if err := e.FormatTraceback(&buf); err != nil || buf.String() != c.Want {
				t.Errorf("FormatTraceback = %q, %v", buf.String(), err)
			}
		})
	}
	if vectors < 10 || len(doc.Cases) < 30 {
		t.Fatalf("only %d cases (%d from vectors)", len(doc.Cases), vectors)
	}
}

func ptr[T any](v T) *T { return &v }

func TestTracebackSynthetic(t *testing.T) {
	mod := ptr("<module>")
	for _, tc := range []struct {
		name string
		e    *RaisedException
		want string
	}{
		{
			name: "no frames",
			e:    &RaisedException{Type: "RuntimeError", Message: ptr("protocol violation: request has no kind")},
			want: "RuntimeError: protocol violation: request has no kind\n",
		},
		{
			name: "no frames no message",
			e:    &RaisedException{Type: "KeyboardInterrupt"},
			want: "KeyboardInterrupt\n",
		},
		{
			name: "frame without preview",
			e: &RaisedException{Type: "ValueError", Message: ptr("host"), Traceback: []StackFrame{
				{Filename: "host.py", Start: CodeLoc{12, 0}, End: CodeLoc{12, 0}, FrameName: ptr("handler"), HideCaret: true},
				{Filename: "host.py", Start: CodeLoc{3, 0}, End: CodeLoc{3, 0}},
			}},
			want: "Traceback (most recent call last):\n" +
				"  File \"host.py\", line 12, in handler\n" +
				"  File \"host.py\", line 3, in <module>\n" +
				"ValueError: host\n",
		},
		{
			name: "nil name and <module> do not fold together",
			e: &RaisedException{Type: "E", Traceback: []StackFrame{
				{Filename: "f", Start: CodeLoc{1, 1}, End: CodeLoc{1, 1}, FrameName: mod},
				{Filename: "f", Start: CodeLoc{1, 1}, End: CodeLoc{1, 1}, FrameName: mod},
				{Filename: "f", Start: CodeLoc{1, 1}, End: CodeLoc{1, 1}, FrameName: mod},
				{Filename: "f", Start: CodeLoc{1, 1}, End: CodeLoc{1, 1}},
			}},
			want: "Traceback (most recent call last):\n" + strings.Repeat("  File \"f\", line 1, in <module>\n", 4) + "E\n",
		},
		{
			name: "bogus columns are clamped",
			e: &RaisedException{Type: "E", Traceback: []StackFrame{
				{Filename: "f", Start: CodeLoc{1, 4000000000}, End: CodeLoc{1, 4000000001}, FrameName: mod, PreviewLine: ptr("ab")},
				{Filename: "f", Start: CodeLoc{2, 3}, End: CodeLoc{2, 1}, FrameName: mod, PreviewLine: ptr("abc")},
			}},
			want: "Traceback (most recent call last):\n" +
				"  File \"f\", line 1, in <module>\n    ab\n       ~\n" +
				"  File \"f\", line 2, in <module>\n    abc\n      ~\n" +
				"E\n",
		},
		{
			name: "multi-line preview with CRLF and trailing newline",
			e: &RaisedException{Type: "E", Traceback: []StackFrame{
				{Filename: "f", Start: CodeLoc{1, 1}, End: CodeLoc{2, 3}, FrameName: mod, PreviewLine: ptr("a = (\r\n  b)\n")},
			}},
			want: "Traceback (most recent call last):\n  File \"f\", line 1, in <module>\n    a = (\n      b)\nE\n",
		},
		{
			name: "nil",
			e:    nil,
			want: "<nil exception>\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.e.TracebackString(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("boom") }

func TestFormatTracebackWriteError(t *testing.T) {
	if err := NewException("ValueError", "x").FormatTraceback(failWriter{}); err == nil {
		t.Fatal("want the writer's error")
	}
}

func TestAppendTraceback(t *testing.T) {
	got := string(NewException("ValueError", "x").AppendTraceback([]byte("> ")))
	if got != "> ValueError: x\n" {
		t.Fatalf("got %q", got)
	}
}

// An empty message and no message differ in the traceback, as in the
// worker's CLI ("ValueError: " for raise ValueError("")), but not in
// Error, which follows CPython's last line.
func TestEmptyMessage(t *testing.T) {
	empty := NewException("ValueError", "")
	none := &RaisedException{Type: "ValueError"}
	if empty.Error() != "ValueError" || none.Error() != "ValueError" {
		t.Errorf("Error() = %q and %q, want ValueError for both", empty.Error(), none.Error())
	}
	if got := empty.TracebackString(); got != "ValueError: \n" {
		t.Errorf("empty message: TracebackString() = %q", got)
	}
	if got := none.TracebackString(); got != "ValueError\n" {
		t.Errorf("no message: TracebackString() = %q", got)
	}
}

package message

import (
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file renders a RaisedException as the Python-style traceback the
// worker's own CLI prints (`monty -c CODE` writes it after "error: "). The
// layout follows CPython's, with the worker's differences kept on purpose so
// that the text matches what the sandbox reports:
//
//   - Carets are "~" under the whole span (CPython mixes "~" and "^" and
//     omits the line when the span covers the whole statement).
//   - SyntaxError frames ("hide_frame_name") print "  File ..., line N"
//     without ", in ...", but the "Traceback (most recent call last):" header
//     is still printed.
//   - Repeats are folded after three identical (filename, line, frame name)
//     frames as "  [Previous line repeated N more times]", plural even for
//     N == 1 (CPython says "1 more time").
//   - The last line is "Type: message" whenever a message is present, even an
//     empty one ("ValueError: "); CPython prints just "ValueError" for an
//     empty message. With no message it is "Type".
//
// The filename is the frame's own: frames from `monty subprocess` name the
// fed code "<python-input-N>", the CLI names it "<string>".

// repeatFramesShown is how many identical consecutive frames are printed
// before the rest are folded.
const repeatFramesShown = 3

// FormatTraceback writes the traceback of e to w, ending with a newline. See
// [RaisedException.AppendTraceback].
func (e *RaisedException) FormatTraceback(w io.Writer) error {
	_, err := w.Write(e.AppendTraceback(nil))
	return err
}

// TracebackString returns the traceback of e as text, ending with a newline:
//
//	Traceback (most recent call last):
//	  File "<string>", line 2, in <module>
//	    f(0)
//	    ~~~~
//	ZeroDivisionError: division by zero
//
// The header is printed only when there are frames.
func (e *RaisedException) TracebackString() string { return string(e.AppendTraceback(nil)) }

// AppendTraceback appends the traceback text of e (see
// [RaisedException.TracebackString]) to dst.
func (e *RaisedException) AppendTraceback(dst []byte) []byte {
	if e == nil {
		return append(dst, "<nil exception>\n"...)
	}
	tb := e.Traceback
	if len(tb) > 0 {
		dst = append(dst, "Traceback (most recent call last):\n"...)
	}
	for i := 0; i < len(tb); {
		n := 1
		for i+n < len(tb) && sameFrame(&tb[i], &tb[i+n]) {
			n++
		}
		shown := n
		if n > repeatFramesShown {
			shown = repeatFramesShown
		}
		for j := range shown {
			dst = tb[i+j].appendTo(dst)
		}
		if n > shown {
			dst = append(dst, "  [Previous line repeated "...)
			dst = strconv.AppendInt(dst, int64(n-shown), 10)
			dst = append(dst, " more times]\n"...)
		}
		i += n
	}
	dst = append(dst, e.Type...)
	if e.Message != nil {
		dst = append(dst, ": "...)
		dst = append(dst, *e.Message...)
	}
	return append(dst, '\n')
}

// sameFrame reports whether two frames fold together: same file, same start
// line and same frame name (a missing name differs from "<module>").
func sameFrame(a, b *StackFrame) bool {
	if a.Filename != b.Filename || a.Start.Line != b.Start.Line {
		return false
	}
	if (a.FrameName == nil) != (b.FrameName == nil) {
		return false
	}
	return a.FrameName == nil || *a.FrameName == *b.FrameName
}

func (f *StackFrame) appendTo(dst []byte) []byte {
	dst = append(dst, `  File "`...)
	dst = append(dst, f.Filename...)
	dst = append(dst, `", line `...)
	dst = strconv.AppendUint(dst, uint64(f.Start.Line), 10)
	if !f.HideFrameName {
		dst = append(dst, ", in "...)
		if f.FrameName != nil {
			dst = append(dst, *f.FrameName...)
		} else {
			dst = append(dst, "<module>"...)
		}
	}
	dst = append(dst, '\n')
	if f.PreviewLine == nil {
		return dst
	}
	line := *f.PreviewLine
	if f.Start.Line != f.End.Line {
		// A span over several lines: the worker sends the lines already
		// dedented (with "...<N lines>..." for long spans). Each is printed
		// at the frame indent, without carets.
		for _, l := range splitLines(line) {
			dst = append(dst, "    "...)
			dst = append(dst, l...)
			dst = append(dst, '\n')
		}
		return dst
	}
	trimmed := strings.TrimLeftFunc(line, unicode.IsSpace)
	dst = append(dst, "    "...)
	dst = append(dst, trimmed...)
	dst = append(dst, '\n')
	if f.HideCaret {
		return dst
	}
	// Columns are 1-based characters. Like the worker, the caret is shifted
	// left by the number of bytes of stripped indentation (the same as
	// characters for the spaces and tabs of real code). Columns past what
	// Sanitize accepts are clamped, so a bogus frame cannot make us write
	// gigabytes of "~".
	limit := uint64(utf8.RuneCountInString(line)) + 2
	start := min(uint64(f.Start.Column), limit)
	end := min(uint64(f.End.Column), limit)
	lead := uint64(len(line) - len(trimmed))
	pad := uint64(4)
	if start > lead {
		pad += start - lead - 1
	}
	width := uint64(1)
	if end > start {
		width = end - start
	}
	for range pad {
		dst = append(dst, ' ')
	}
	for range width {
		dst = append(dst, '~')
	}
	return append(dst, '\n')
}

// splitLines splits s the way the worker does (Rust's str::lines): at each
// "\n" or "\r\n"; a final line ending adds no empty line, and a "\r" not
// followed by "\n" stays part of its line.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, strings.TrimSuffix(s[:i], "\r"))
		s = s[i+1:]
	}
	return out
}

package message

import (
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/gomonty/monty/internal/pyident"
)

// This file renders a RaisedException as the Python-style traceback the
// worker's own CLI prints (`monty -c CODE` writes it after "error: "). The
// rules are documented in docs/PROTOCOL.md ("Rendering tracebacks") and
// checked against the worker's CLI by cmd/montygo's corpus test.

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

// TracebackOptions adjusts a rendering to what the code's author sees. The
// zero value renders from the frames alone, keeping the worker's file
// names.
//
// It is plain data, safe to share between goroutines.
type TracebackOptions struct {
	// Filename, when not empty, names the fed code in frame headers in
	// place of the worker's "<python-input-N>" (the CLI uses "<string>" for
	// `run -c`, the script's path for `run FILE`).
	Filename string
	// Source is the code of the feed that raised, when known. The worker
	// leaves two things out of its frames that its own CLI prints from the
	// source: the line of a frame with no location (a bare `raise` with no
	// active exception), and the original indentation of the first line of
	// a multi-line span (it dedents the preview). Without Source the first
	// is left out and the second is inferred from the preview.
	Source string
}

// noFile is the file name the worker gives a frame without a location: the
// default location, line 1 column 1 of no file, whose preview is empty. The
// worker's CLI prints it as an empty name with line 1 of its program.
const noFile = "\x00"

// AppendTraceback appends the traceback text of e (see
// [RaisedException.TracebackString]) to dst, with no options.
func (e *RaisedException) AppendTraceback(dst []byte) []byte {
	return e.AppendTracebackWith(dst, TracebackOptions{})
}

// AppendTracebackWith appends the traceback text of e to dst as the
// worker's CLI prints it, applying o. The text ends with a newline. Its
// size is linear in the size of e: carets are clamped to the preview line
// and repeated frames are folded.
//
// Like the CLI's output, the text leaves out control characters other
// than tab, newline, form feed and carriage return, and terminal escape
// sequences (see strip.go), wherever they occur: in the message, the
// preview lines, the file names. (Unlike the CLI, it keeps its final
// newline when an escape sequence is left open before it.)
func (e *RaisedException) AppendTracebackWith(dst []byte, o TracebackOptions) []byte {
	if e == nil {
		return append(dst, "<nil exception>\n"...)
	}
	start := len(dst)
	dst = e.appendTraceback(dst, o)
	// The final newline stays even where the CLI's stream would swallow
	// it (an escape sequence left open at the end of the message).
	body := stripTerminal(dst[start : len(dst)-1])
	return append(dst[:start+len(body)], '\n')
}

// appendTraceback renders e as AppendTracebackWith does, before the
// stripping.
func (e *RaisedException) appendTraceback(dst []byte, o TracebackOptions) []byte {
	tb := e.Traceback
	r := renderer{opts: o}
	if len(tb) > 0 {
		dst = append(dst, "Traceback (most recent call last):\n"...)
		// The outermost frame is the <module> of the feed that raised:
		// Source is that frame's file.
		r.current = tb[0].Filename
		r.undefined = undefinedName(e)
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
			dst = r.frame(dst, &tb[i+j], i+j == len(tb)-1)
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

// undefinedName returns N for a NameError "name 'N' is not defined", or "".
func undefinedName(e *RaisedException) string {
	if e.Type != "NameError" || e.Message == nil {
		return ""
	}
	rest, ok := strings.CutPrefix(*e.Message, "name '")
	if !ok {
		return ""
	}
	name, ok := strings.CutSuffix(rest, "' is not defined")
	if !ok || name == "" {
		return ""
	}
	if !pyident.Valid(name) {
		return ""
	}
	return name
}

// renderer holds what one rendering needs beyond the frame itself.
type renderer struct {
	opts      TracebackOptions
	current   string     // file name of the feed that raised
	undefined string     // the name of a NameError "name 'N' is not defined"
	lines     []int      // byte offsets of the source's lines, indexed on demand
	scanned   int        // bytes of the source indexed so far
	iter      *norm.Iter // for sameName, allocated on first use
}

// frame renders one frame. Only the innermost frame (where the exception
// was raised) can be a location-less raise or an undefined name's call, so
// only it is looked up in the source or narrowed: the output stays linear
// in the exception plus one source line, however many frames a hostile
// worker sends.
func (r *renderer) frame(dst []byte, f *StackFrame, innermost bool) []byte {
	undefined := ""
	if innermost {
		undefined = r.undefined
	}
	// What to print under the header: the preview as sent, or a line of
	// the source, or the narrowed line of an undefined name's call (which
	// may be a later line of the span: the header follows it).
	lineNo := f.Start.Line
	var line string
	hasLine := f.PreviewLine != nil
	if hasLine {
		line = *f.PreviewLine
		if f.Filename == noFile && line == "" {
			if innermost {
				line, hasLine = r.sourceLine(f.Start.Line)
			} else {
				hasLine = false
			}
		}
	}
	multi, narrowed := f.Start.Line != f.End.Line, false
	var nameCol, nameWidth uint32
	if hasLine && multi && undefined != "" && !f.HideCaret {
		var n uint32
		var l string
		if n, l, nameCol, nameWidth, narrowed = r.narrowMultiLine(f, line, undefined); narrowed {
			lineNo, line, multi = n, l, false
		}
	}

	dst = append(dst, `  File "`...)
	switch {
	case f.Filename == noFile:
	case r.opts.Filename != "" && fedName(f.Filename):
		dst = append(dst, r.opts.Filename...)
	default:
		dst = append(dst, f.Filename...)
	}
	dst = append(dst, `", line `...)
	dst = strconv.AppendUint(dst, uint64(lineNo), 10)
	if !f.HideFrameName {
		dst = append(dst, ", in "...)
		if f.FrameName != nil {
			dst = append(dst, *f.FrameName...)
		} else {
			dst = append(dst, "<module>"...)
		}
	}
	dst = append(dst, '\n')
	switch {
	case !hasLine:
		return dst
	case narrowed:
		return appendLineAndCarets(dst, line, nameCol, nameCol+nameWidth)
	case multi:
		// A span over several lines is printed as the worker sends it (the
		// lines dedented, "...<N lines>..." for long spans), at the frame
		// indent, without carets.
		for _, l := range splitLines(line) {
			dst = append(dst, "    "...)
			dst = append(dst, l...)
			dst = append(dst, '\n')
		}
		return dst
	case f.HideCaret:
		dst = append(dst, "    "...)
		dst = append(dst, strings.TrimLeftFunc(line, unicode.IsSpace)...)
		return append(dst, '\n')
	}
	start, end := f.Start.Column, f.End.Column
	if undefined != "" {
		if s, w, ok := r.callee(line, start, end, undefined); ok {
			start, end = s, s+w
		}
	}
	return appendLineAndCarets(dst, line, start, end)
}

// appendLineAndCarets prints line without its indentation and "~" under
// the characters [start, end) (1-based columns; at least one caret).
func appendLineAndCarets(dst []byte, line string, start, end uint32) []byte {
	trimmed := strings.TrimLeftFunc(line, unicode.IsSpace)
	dst = append(dst, "    "...)
	dst = append(dst, trimmed...)
	dst = append(dst, '\n')
	// Like the worker, the caret is shifted left by the number of bytes of
	// stripped indentation (the same as characters for the spaces and tabs
	// of real code). Columns past what Sanitize accepts are clamped, so a
	// bogus frame cannot make us write gigabytes of "~".
	limit := uint64(utf8.RuneCountInString(line)) + 2
	s := min(uint64(start), limit)
	e := min(uint64(end), limit)
	lead := uint64(len(line) - len(trimmed))
	pad := uint64(4)
	if s > lead {
		pad += s - lead - 1
	}
	width := uint64(1)
	if e > s {
		width = e - s
	}
	for range pad {
		dst = append(dst, ' ')
	}
	for range width {
		dst = append(dst, '~')
	}
	return append(dst, '\n')
}

// callee finds the undefined name at the head of the call spanning columns
// [start, end) of line: the worker reports a call of an undefined name at
// the whole call, where its CLI underlines the name alone. Opening
// parentheses and spaces before the name are skipped ("(f)(1)"). It returns
// the name's 1-based column and its width in the line (see [sameName]), or
// false when the span does not start with the name (end == 0 means the span
// runs past the line).
func (r *renderer) callee(line string, start, end uint32, name string) (uint32, uint32, bool) {
	if start == 0 {
		return 0, 0, false
	}
	col := uint32(1)
	i := 0
	for i < len(line) && col < start {
		_, n := utf8.DecodeRuneInString(line[i:])
		i += n
		col++
	}
	if col != start {
		return 0, 0, false
	}
	for i < len(line) && (end == 0 || col < end) {
		c, n := utf8.DecodeRuneInString(line[i:])
		if c != '(' && !unicode.IsSpace(c) {
			break
		}
		i += n
		col++
	}
	tok := pyident.Prefix(line[i:])
	if !r.sameName(tok, name) {
		return 0, 0, false
	}
	width := uint32(utf8.RuneCountInString(tok))
	if end != 0 && col+width > end {
		return 0, 0, false
	}
	return col, width, true
}

// sameName reports whether tok, an identifier as the source spells it, is
// name, the identifier as Python knows it: Python normalises identifiers to
// NFKC (PEP 3131), so "résumé" written with combining accents, "ﬁle" or
// "µ" (the micro sign) name 'résumé', 'file' and 'μ'. The worker's CLI
// underlines the identifier as spelled.
func (r *renderer) sameName(tok, name string) bool {
	if tok == name {
		return true
	}
	if tok == "" || norm.NFKC.QuickSpanString(tok) == len(tok) {
		return false // already in normal form (as all ASCII is)
	}
	// The iteration stops at the first segment that differs from name.
	// InitString does not empty the segments an unfinished iteration left
	// buffered (x/text v0.43.0 returns them, or panics, on the next Next),
	// so the iterator starts from zero each time: 736 bytes cleared, no
	// allocation.
	if r.iter == nil {
		r.iter = new(norm.Iter) // one per rendering
	} else {
		*r.iter = norm.Iter{}
	}
	r.iter.InitString(norm.NFKC, tok)
	rest := name
	for !r.iter.Done() {
		seg := r.iter.Next()
		if len(rest) < len(seg) || rest[:len(seg)] != string(seg) {
			return false
		}
		rest = rest[len(seg):]
	}
	return rest == ""
}

// narrowMultiLine handles an undefined name's call spanning several lines:
// the CLI prints only the line holding the name, underlining it. That is
// the span's first line, or a later one when the span opens with "(" and
// the name follows on the next lines ("(\n    f\n)(1)"). It returns the
// line's number, the line (from the source with its indentation, or from
// the dedented preview) and the name's column in it.
func (r *renderer) narrowMultiLine(f *StackFrame, preview, name string) (uint32, string, uint32, uint32, bool) {
	if f.Filename == r.current {
		if l, ok := r.sourceLine(f.Start.Line); ok {
			if col, w, ok := r.callee(l, f.Start.Column, 0, name); ok {
				return f.Start.Line, l, col, w, true
			}
			if !onlyOpening(l, f.Start.Column) {
				return 0, "", 0, 0, false
			}
			for n := f.Start.Line + 1; n <= f.End.Line; n++ {
				l, ok := r.sourceLine(n)
				if !ok {
					break
				}
				if col, w, ok := r.callee(l, 1, 0, name); ok {
					return n, l, col, w, true
				}
				if !onlyOpening(l, 1) {
					break
				}
			}
			return 0, "", 0, 0, false
		}
	}
	lines := splitLines(preview)
	if len(lines) == 0 {
		return 0, "", 0, 0, false
	}
	if col, w, ok := r.dedentedCallee(lines[0], f.Start.Column, name); ok {
		return f.Start.Line, lines[0], col, w, true
	}
	// The span may start on the first line's trailing run of "(" and
	// spaces (at a column <= start: the preview is dedented).
	if openingTail(lines[0]) > f.Start.Column {
		return 0, "", 0, 0, false
	}
	for k := 1; k < len(lines) && uint64(f.Start.Line)+uint64(k) <= uint64(f.End.Line); k++ {
		l := lines[k]
		if strings.HasPrefix(l, "...<") {
			break // elided lines: the line number is lost
		}
		if col, w, ok := r.callee(l, 1, 0, name); ok {
			return f.Start.Line + uint32(k), l, col, w, true
		}
		if !onlyOpening(l, 1) {
			break
		}
	}
	return 0, "", 0, 0, false
}

// opening reports whether c may come between the start of a call's span
// and its callee: an opening parenthesis or white space.
func opening(c rune) bool { return c == '(' || unicode.IsSpace(c) }

// onlyOpening reports whether line holds nothing but "(", spaces and
// perhaps a comment from column col on.
func onlyOpening(line string, col uint32) bool {
	c := uint32(1)
	for _, r := range line {
		if c >= col {
			if r == '#' {
				return true
			}
			if !opening(r) {
				return false
			}
		}
		c++
	}
	return true
}

// openingTail returns the column where line's trailing run of "(" and
// spaces begins, before any comment (one past the end when there is none).
func openingTail(line string) uint32 {
	col, run := uint32(1), uint32(0)
	for _, r := range line {
		if r == '#' {
			break
		}
		if opening(r) {
			if run == 0 {
				run = col
			}
		} else {
			run = 0
		}
		col++
	}
	if run == 0 {
		return col
	}
	return run
}

// dedentedCallee finds the undefined name heading a call that starts at
// column start of a source line, in that line with some unknown number
// D >= 0 of leading characters removed (the worker dedents a multi-line
// preview by the indentation common to its lines). A candidate is an
// occurrence of the name that the span can start at (the name at a column
// <= start, or reached from start over "(" and spaces), after which the
// line leaves a bracket open or ends (the call's parenthesis is on a later
// line). The last candidate wins: the one needing the least indentation.
// It returns the candidate's column and width (see [renderer.sameName]).
// Two passes over the line, no allocation but the renderer's one NFKC
// iterator.
func (r *renderer) dedentedCallee(line string, start uint32, name string) (uint32, uint32, bool) {
	if name == "" {
		return 0, 0, false
	}
	// limit is the last column a candidate may have: start, or the end of
	// the run of "(" and spaces beginning at start.
	limit, col := start, uint32(1)
	total := uint32(0)
	for _, c := range line {
		total++
		if col == limit && (c == '(' || unicode.IsSpace(c)) {
			limit++
		}
		col++
	}
	// Right to left, keeping the bracket balance of the suffix and its
	// non-space characters (all, and those other than ")").
	depth, nonSpace, notClose := 0, uint32(0), uint32(0)
	col = total + 1
	for i := len(line); i > 0; {
		c, n := utf8.DecodeLastRuneInString(line[:i])
		i -= n
		col--
		switch c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		}
		if !unicode.IsSpace(c) {
			nonSpace++
			if c != ')' {
				notClose++
			}
		}
		if col > limit {
			continue
		}
		if prev, _ := utf8.DecodeLastRuneInString(line[:i]); i > 0 && pyident.Continue(prev) {
			continue
		}
		// Identifiers starting here are disjoint: the tokens read add up
		// to one pass over the line.
		tok := pyident.Prefix(line[i:])
		if !r.sameName(tok, name) {
			continue
		}
		// The suffix after the name: the name has no brackets or spaces.
		w := uint32(utf8.RuneCountInString(tok))
		ns, nc := nonSpace-w, notClose-w
		if depth > 0 || ns == 0 || (ns == 1 && nc == 0) {
			return col, w, true
		}
	}
	return 0, 0, false
}

// sourceLine returns line n (1-based) of the source, split like the worker
// splits it (Rust's str::lines). Line starts are indexed as far as asked,
// once per rendering, so a rendering costs at most one pass over the
// source.
func (r *renderer) sourceLine(n uint32) (string, bool) {
	src := r.opts.Source
	if n == 0 || src == "" {
		return "", false
	}
	if r.lines == nil {
		r.lines = []int{0}
	}
	for uint64(len(r.lines)) < uint64(n) && r.scanned < len(src) {
		i := strings.IndexByte(src[r.scanned:], '\n')
		if i < 0 {
			r.scanned = len(src)
			break
		}
		r.scanned += i + 1
		if r.scanned < len(src) {
			r.lines = append(r.lines, r.scanned)
		}
	}
	if uint64(n) > uint64(len(r.lines)) {
		return "", false
	}
	l := src[r.lines[n-1]:]
	if i := strings.IndexByte(l, '\n'); i >= 0 {
		l = l[:i]
	}
	return strings.TrimSuffix(l, "\r"), true
}

// fedName reports whether name is the worker's name for fed code,
// "<python-input-N>".
func fedName(name string) bool {
	digits, ok := strings.CutPrefix(name, "<python-input-")
	if !ok {
		return false
	}
	digits, ok = strings.CutSuffix(digits, ">")
	if !ok || digits == "" {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
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

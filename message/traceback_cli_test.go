package message

import (
	"fmt"
	"strings"
	"testing"
)

// Frames as the released worker sends them (`monty subprocess`) and the
// text its CLI (`monty -c`) prints for the same program. cmd/montygo's
// corpus test checks the same rules end to end against the real worker.

func nameError(name string, frames ...StackFrame) *RaisedException {
	return &RaisedException{Type: "NameError", Message: ptr("name '" + name + "' is not defined"), Traceback: frames}
}

func fr(file string, sl, sc, el, ec uint32, name, preview string) StackFrame {
	return StackFrame{Filename: file, Start: CodeLoc{sl, sc}, End: CodeLoc{el, ec}, FrameName: ptr(name), PreviewLine: ptr(preview)}
}

const tbHead = "Traceback (most recent call last):\n"

func TestTracebackCLIRules(t *testing.T) {
	const in0 = "<python-input-0>"
	for _, tc := range []struct {
		name string
		e    *RaisedException
		opts TracebackOptions
		want string
	}{
		{
			name: "undefined call underlines the name",
			e:    nameError("missing_func", fr(in0, 1, 1, 1, 22, "<module>", "missing_func(1, 2, 3)")),
			opts: TracebackOptions{Filename: "<string>"},
			want: tbHead + "  File \"<string>\", line 1, in <module>\n    missing_func(1, 2, 3)\n    ~~~~~~~~~~~~\n" +
				"NameError: name 'missing_func' is not defined\n",
		},
		{
			name: "undefined call inside a binary operation",
			e:    nameError("missing_func", fr(in0, 1, 9, 1, 23, "<module>", "x = 1 + missing_func()")),
			want: tbHead + "  File \"<python-input-0>\", line 1, in <module>\n    x = 1 + missing_func()\n            ~~~~~~~~~~~~\n" +
				"NameError: name 'missing_func' is not defined\n",
		},
		{
			name: "undefined call in an inner frame; outer calls keep the whole span",
			e: nameError("snap",
				fr(in0, 3, 1, 3, 4, "<module>", "g()"),
				fr(in0, 2, 12, 2, 19, "g", "    return snap(1)")),
			want: tbHead + "  File \"<python-input-0>\", line 3, in <module>\n    g()\n    ~~~\n" +
				"  File \"<python-input-0>\", line 2, in g\n    return snap(1)\n           ~~~~\n" +
				"NameError: name 'snap' is not defined\n",
		},
		{
			name: "parenthesised callee",
			e:    nameError("missing", fr(in0, 1, 5, 1, 17, "<module>", "x = (missing)(1)")),
			want: tbHead + "  File \"<python-input-0>\", line 1, in <module>\n    x = (missing)(1)\n         ~~~~~~~\n" +
				"NameError: name 'missing' is not defined\n",
		},
		{
			name: "a read of an undefined name is already the name",
			e:    nameError("missing", fr(in0, 1, 7, 1, 14, "<module>", "print(missing)")),
			want: tbHead + "  File \"<python-input-0>\", line 1, in <module>\n    print(missing)\n          ~~~~~~~\n" +
				"NameError: name 'missing' is not defined\n",
		},
		{
			name: "a span not headed by the name is left alone",
			e:    nameError("x", fr(in0, 1, 1, 1, 7, "<module>", "foo(x)")),
			want: tbHead + "  File \"<python-input-0>\", line 1, in <module>\n    foo(x)\n    ~~~~~~\n" +
				"NameError: name 'x' is not defined\n",
		},
		{
			name: "a longer identifier sharing the prefix is not the name",
			e:    nameError("miss", fr(in0, 1, 1, 1, 11, "<module>", "missing(1)")),
			want: tbHead + "  File \"<python-input-0>\", line 1, in <module>\n    missing(1)\n    ~~~~~~~~~~\n" +
				"NameError: name 'miss' is not defined\n",
		},
		{
			// Python identifiers continue with combining marks (Mn, Mc),
			// connector punctuation (Pc) and Other_ID_Continue: Devanagari
			// names are full of vowel signs and viramas.
			name: "undefined call of a name with combining marks",
			e:    nameError("नमस्ते", fr(in0, 1, 1, 1, 10, "<module>", "नमस्ते(1)")),
			want: tbHead + "  File \"<python-input-0>\", line 1, in <module>\n    नमस्ते(1)\n    ~~~~~~\n" +
				"NameError: name 'नमस्ते' is not defined\n",
		},
		{
			name: "undefined call of names with connector punctuation and a middle dot",
			e: nameError("x‿y·z",
				fr(in0, 2, 1, 2, 4, "<module>", "f()"),
				fr(in0, 1, 17, 1, 25, "f", "def f(): return x‿y·z(1)")),
			want: tbHead + "  File \"<python-input-0>\", line 2, in <module>\n    f()\n    ~~~\n" +
				"  File \"<python-input-0>\", line 1, in f\n    def f(): return x‿y·z(1)\n                    ~~~~~\n" +
				"NameError: name 'x‿y·z' is not defined\n",
		},
		{
			name: "multi-line undefined call of a name with combining marks, no source",
			e: nameError("नमस्ते",
				fr(in0, 4, 1, 4, 4, "<module>", "f()"),
				fr(in0, 2, 12, 3, 11, "f", "return नमस्ते(\n    1)")),
			want: tbHead + "  File \"<python-input-0>\", line 4, in <module>\n    f()\n    ~~~\n" +
				"  File \"<python-input-0>\", line 2, in f\n    return नमस्ते(\n           ~~~~~~\n" +
				"NameError: name 'नमस्ते' is not defined\n",
		},
		{
			// Python normalises identifiers to NFKC: the message names
			// 'résumé' (precomposed) where the source spells it with
			// combining accents (as text from macOS often does); the CLI
			// underlines the identifier as spelled.
			name: "undefined call of a name the source spells in another normal form",
			e:    nameError("r\u00e9sum\u00e9", fr(in0, 1, 5, 1, 16, "<module>", "x = re\u0301sume\u0301(1)")),
			want: tbHead + "  File \"<python-input-0>\", line 1, in <module>\n    x = re\u0301sume\u0301(1)\n        ~~~~~~~~\n" +
				"NameError: name 'r\u00e9sum\u00e9' is not defined\n",
		},
		{
			name: "undefined calls of compatibility characters: a ligature and the micro sign",
			e: nameError("file",
				fr(in0, 2, 1, 2, 4, "<module>", "f()"),
				fr(in0, 1, 17, 1, 23, "f", "def f(): return \ufb01le(1) + \u00b5(2)")),
			want: tbHead + "  File \"<python-input-0>\", line 2, in <module>\n    f()\n    ~~~\n" +
				"  File \"<python-input-0>\", line 1, in f\n    def f(): return \ufb01le(1) + \u00b5(2)\n                    ~~~\n" +
				"NameError: name 'file' is not defined\n",
		},
		{
			name: "multi-line undefined call of a name in another normal form, no source",
			e: nameError("\u03bcx",
				fr(in0, 4, 1, 4, 4, "<module>", "f()"),
				fr(in0, 2, 12, 3, 11, "f", "return \u00b5x(\n    1)")),
			want: tbHead + "  File \"<python-input-0>\", line 4, in <module>\n    f()\n    ~~~\n" +
				"  File \"<python-input-0>\", line 2, in f\n    return \u00b5x(\n           ~~\n" +
				"NameError: name '\u03bcx' is not defined\n",
		},
		{
			name: "multi-line undefined call of a name in another normal form, from the source",
			e: nameError("\u03bcx",
				fr(in0, 4, 1, 4, 4, "<module>", "f()"),
				fr(in0, 2, 12, 3, 11, "f", "return \u00b5x(\n    1)")),
			opts: TracebackOptions{Source: "def f():\n    return \u00b5x(\n        1)\nf()"},
			want: tbHead + "  File \"<python-input-0>\", line 4, in <module>\n    f()\n    ~~~\n" +
				"  File \"<python-input-0>\", line 2, in f\n    return \u00b5x(\n           ~~\n" +
				"NameError: name '\u03bcx' is not defined\n",
		},
		{
			name: "an identifier whose normal form only starts with the name is not the callee",
			e:    nameError("fi", fr(in0, 1, 1, 1, 7, "<module>", "\ufb01le(1)")),
			want: tbHead + "  File \"<python-input-0>\", line 1, in <module>\n    \ufb01le(1)\n    ~~~~~~\n" +
				"NameError: name 'fi' is not defined\n",
		},
		{
			name: "a name ending before a combining mark is not the callee",
			e:    nameError("नमस", fr(in0, 1, 1, 1, 10, "<module>", "नमस्ते(1)")),
			want: tbHead + "  File \"<python-input-0>\", line 1, in <module>\n    नमस्ते(1)\n    ~~~~~~~~~\n" +
				"NameError: name 'नमस' is not defined\n",
		},
		{
			name: "other exception types keep the span",
			e: &RaisedException{Type: "TypeError", Message: ptr("'int' object is not callable"),
				Traceback: []StackFrame{fr(in0, 2, 1, 2, 4, "<module>", "x()")}},
			want: tbHead + "  File \"<python-input-0>\", line 2, in <module>\n    x()\n    ~~~\n" +
				"TypeError: 'int' object is not callable\n",
		},
		{
			name: "multi-line undefined call, dedented preview, no source",
			e: nameError("missing",
				fr(in0, 6, 1, 6, 4, "<module>", "f()"),
				fr(in0, 3, 16, 5, 11, "f", "return missing(\n    1,\n2)")),
			want: tbHead + "  File \"<python-input-0>\", line 6, in <module>\n    f()\n    ~~~\n" +
				"  File \"<python-input-0>\", line 3, in f\n    return missing(\n           ~~~~~~~\n" +
				"NameError: name 'missing' is not defined\n",
		},
		{
			name: "multi-line undefined call, from the source",
			e: nameError("missing",
				fr(in0, 6, 1, 6, 4, "<module>", "f()"),
				fr(in0, 3, 16, 5, 11, "f", "return missing(\n    1,\n2)")),
			opts: TracebackOptions{Source: "def f():\n    if True:\n        return missing(\n            1,\n        2)\nf()"},
			want: tbHead + "  File \"<python-input-0>\", line 6, in <module>\n    f()\n    ~~~\n" +
				"  File \"<python-input-0>\", line 3, in f\n    return missing(\n           ~~~~~~~\n" +
				"NameError: name 'missing' is not defined\n",
		},
		{
			name: "multi-line undefined call with the parenthesis on the next line",
			e:    nameError("missing", fr(in0, 1, 6, 2, 9, "<module>", "x = (missing\n     (1))")),
			want: tbHead + "  File \"<python-input-0>\", line 1, in <module>\n    x = (missing\n         ~~~~~~~\n" +
				"NameError: name 'missing' is not defined\n",
		},
		{
			name: "multi-line undefined call repeated on its line picks the open call",
			e:    nameError("m", fr(in0, 2, 13, 3, 6, "f", "x = m(1) + m(\n    2)")),
			want: tbHead + "  File \"<python-input-0>\", line 2, in f\n    x = m(1) + m(\n               ~\n" +
				"NameError: name 'm' is not defined\n",
		},
		{
			name: "callee on the line after the span's opening parenthesis, no source",
			e: nameError("missing",
				fr(in0, 5, 1, 5, 4, "<module>", "f()"),
				fr(in0, 2, 9, 4, 9, "f", "x = (\n    missing\n)(1)")),
			want: tbHead + "  File \"<python-input-0>\", line 5, in <module>\n    f()\n    ~~~\n" +
				"  File \"<python-input-0>\", line 3, in f\n    missing\n    ~~~~~~~\n" +
				"NameError: name 'missing' is not defined\n",
		},
		{
			name: "callee on the line after the span's opening parenthesis, from the source",
			e:    nameError("missing", fr(in0, 1, 5, 2, 12, "<module>", "x = (\nmissing)(1)")),
			opts: TracebackOptions{Source: "x = (  # a comment\nmissing)(1)"},
			want: tbHead + "  File \"<python-input-0>\", line 2, in <module>\n    missing)(1)\n    ~~~~~~~\n" +
				"NameError: name 'missing' is not defined\n",
		},
		{
			name: "elided lines end the search for the callee",
			e:    nameError("missing", fr(in0, 1, 5, 6, 5, "<module>", "x = (\n...<4 lines>...\n)(1)")),
			want: tbHead + "  File \"<python-input-0>\", line 1, in <module>\n    x = (\n    ...<4 lines>...\n    )(1)\n" +
				"NameError: name 'missing' is not defined\n",
		},
		{
			name: "multi-line span of another error stays a block",
			e: &RaisedException{Type: "TypeError", Message: ptr("unsupported operand type(s) for +: 'int' and 'NoneType'"),
				Traceback: []StackFrame{fr(in0, 3, 14, 4, 22, "f", "x = (1 +\n         None)")}},
			want: tbHead + "  File \"<python-input-0>\", line 3, in f\n    x = (1 +\n             None)\n" +
				"TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'\n",
		},
		{
			name: "frame without a location, with the source",
			e: &RaisedException{Type: "RuntimeError", Message: ptr("No active exception to reraise"),
				Traceback: []StackFrame{fr("\x00", 1, 1, 1, 1, "<module>", "")}},
			opts: TracebackOptions{Filename: "<string>", Source: "try:\n    pass\nexcept:\n    pass\nraise"},
			want: tbHead + "  File \"\", line 1, in <module>\n    try:\n    ~\nRuntimeError: No active exception to reraise\n",
		},
		{
			name: "frame without a location inside a function",
			e: &RaisedException{Type: "RuntimeError", Message: ptr("No active exception to reraise"),
				Traceback: []StackFrame{
					fr(in0, 3, 1, 3, 4, "<module>", "f()"),
					fr("\x00", 1, 1, 1, 1, "f", ""),
				}},
			opts: TracebackOptions{Filename: "<string>", Source: "def f():\n    raise\nf()"},
			want: tbHead + "  File \"<string>\", line 3, in <module>\n    f()\n    ~~~\n" +
				"  File \"\", line 1, in f\n    def f():\n    ~\nRuntimeError: No active exception to reraise\n",
		},
		{
			name: "frame without a location, no source: no NUL and no empty line",
			e: &RaisedException{Type: "RuntimeError", Message: ptr("No active exception to reraise"),
				Traceback: []StackFrame{fr("\x00", 1, 1, 1, 1, "<module>", "")}},
			want: tbHead + "  File \"\", line 1, in <module>\nRuntimeError: No active exception to reraise\n",
		},
		{
			name: "frame without a location past the source's end",
			e: &RaisedException{Type: "RuntimeError", Message: ptr("No active exception to reraise"),
				Traceback: []StackFrame{fr("\x00", 9, 1, 9, 1, "<module>", "")}},
			opts: TracebackOptions{Source: "raise\n"},
			want: tbHead + "  File \"\", line 9, in <module>\nRuntimeError: No active exception to reraise\n",
		},
		{
			name: "only the worker's names for fed code are renamed",
			e: &RaisedException{Type: "E", Traceback: []StackFrame{
				fr("<python-input-12>", 1, 1, 1, 2, "<module>", "x"),
				fr("<python-input->", 1, 1, 1, 2, "f", "x"),
				fr("<python-input-1a>", 1, 1, 1, 2, "g", "x"),
				fr("lib.py", 1, 1, 1, 2, "h", "x"),
			}},
			opts: TracebackOptions{Filename: "main.py"},
			want: tbHead + "  File \"main.py\", line 1, in <module>\n    x\n    ~\n" +
				"  File \"<python-input->\", line 1, in f\n    x\n    ~\n" +
				"  File \"<python-input-1a>\", line 1, in g\n    x\n    ~\n" +
				"  File \"lib.py\", line 1, in h\n    x\n    ~\nE\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range tc.e.Traceback {
				if err := f.check(); err != nil {
					t.Fatalf("frame does not sanitize: %v", err)
				}
			}
			if got := string(tc.e.AppendTracebackWith(nil, tc.opts)); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// hostileTracebacks are exceptions a hostile worker could send to make a
// renderer quadratic: frames frames without a location over a source of
// 2*frames lines, and a multi-line undefined call whose first line is
// calls "m(" (every one a candidate name).
func hostileTracebacks(frames, calls int) (e1, e2 *RaisedException, src string) {
	src = strings.Repeat("x = 1\n", 2*frames)
	e1 = &RaisedException{Type: "RuntimeError", Message: ptr("No active exception to reraise")}
	for i := range frames {
		e1.Traceback = append(e1.Traceback, fr("\x00", uint32(i+1), 1, uint32(i+1), 1, "f"+strings.Repeat("x", i%3), ""))
	}
	line := strings.Repeat("m(", calls)
	e2 = nameError("m", fr("<python-input-0>", 1, uint32(2*calls), 2, 1, "<module>", line+"\n)"))
	return e1, e2, src
}

func TestTracebackHostileIsLinear(t *testing.T) {
	e1, e2, src := hostileTracebacks(100_000, 500_000)
	out := e1.AppendTracebackWith(nil, TracebackOptions{Source: src})
	// Only the innermost frame (where a bare raise can be) gets its source
	// line: a hostile worker's location-less frames cannot each copy one.
	if !strings.HasSuffix(string(out), "  File \"\", line 99999, in fxx\n  File \"\", line 100000, in f\n    x = 1\n    ~\nRuntimeError: No active exception to reraise\n") {
		t.Fatalf("unexpected rendering of the last frames:\n%s", out[len(out)-300:])
	}
	if len(out) > 40*100_000 {
		t.Fatalf("%d bytes for 100,000 location-less frames", len(out))
	}
	out = e2.AppendTracebackWith(nil, TracebackOptions{})
	// The last "m(" is the call left open at the end of the line.
	want := "    " + strings.Repeat("m(", 500_000) + "\n    " + strings.Repeat(" ", 999_998) + "~\n"
	if !strings.Contains(string(out), want) {
		t.Fatalf("the huge undefined call is not narrowed to its last name (%d bytes)", len(out))
	}
	// Identifiers not in normal form are compared through NFKC: one
	// iterator per rendering, not one allocation per candidate.
	line := strings.Repeat("\ufb01(", 200_000) + "\u00b5("
	e3 := nameError("\u03bc", fr("<python-input-0>", 1, 400_001, 2, 1, "<module>", line+"\n)"))
	var buf []byte
	allocs := testing.AllocsPerRun(3, func() { buf = e3.AppendTracebackWith(buf[:0], TracebackOptions{}) })
	if allocs > 10 {
		t.Errorf("%v allocations rendering 200,000 candidates not in normal form", allocs)
	}
	if !strings.HasSuffix(string(buf), strings.Repeat(" ", 4+400_000)+"~\nNameError: name '\u03bc' is not defined\n") {
		t.Errorf("the call of \u00b5 at the end of the line is not underlined: ...%q", buf[max(0, len(buf)-200):])
	}
}

// BenchmarkTracebackHostile shows rendering linear in the exception's size
// (ten times the input, about ten times the time), beside a plain copy of
// the largest output as the reference.
func BenchmarkTracebackHostile(b *testing.B) {
	var largest []byte
	for _, n := range []int{10_000, 100_000} {
		e1, _, src := hostileTracebacks(n, 0)
		b.Run(fmt.Sprintf("location-less-frames-%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf = e1.AppendTracebackWith(buf[:0], TracebackOptions{Source: src})
			}
			largest = buf
		})
	}
	for _, n := range []int{50_000, 500_000} {
		_, e2, _ := hostileTracebacks(0, n)
		b.Run(fmt.Sprintf("undefined-call-of-%d-candidates", n), func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf = e2.AppendTracebackWith(buf[:0], TracebackOptions{})
			}
		})
	}
	b.Run("reference-copy-of-the-100000-frame-output", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, len(largest))
		for b.Loop() {
			buf = append(buf[:0], largest...)
		}
	})
}

// TestSameNameAfterEarlyStop compares a second identifier after the first
// comparison stopped partway through its normalisation. norm.Iter's
// InitString keeps the segments buffered by an unfinished iteration (a
// fuzzer found "ﯪ" leaving "ا" behind, then panicking in x/text), so the
// iterator must start from zero for every identifier.
func TestSameNameAfterEarlyStop(t *testing.T) {
	var r renderer
	if r.sameName("\ufbea", "A") {
		t.Fatal(`"\ufbea" is not A`)
	}
	// U+FBEA normalises (NFKC) to U+0626 U+0627.
	if !r.sameName("\ufbea", "\u0626\u0627") {
		t.Fatal(`after an early stop, "\ufbea" no longer normalises to "\u0626\u0627"`)
	}
	if !r.sameName("\ufb01le", "file") || r.sameName("\ufb01", "fl") {
		t.Fatal("NFKC comparison of the ligature fi is wrong after reuse")
	}
}

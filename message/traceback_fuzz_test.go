package message

import (
	"testing"
)

// FuzzTraceback renders exceptions built from arbitrary frames, names and
// sources: rendering never panics, sanitized or not, and the output of a
// sanitized exception stays within a linear bound of its input.
func FuzzTraceback(f *testing.F) {
	f.Add("NameError", "name 'missing' is not defined", "<python-input-0>", "<module>",
		"x = (missing\n     (1))", uint32(1), uint32(6), uint32(2), uint32(9), uint8(1), "x = (missing\n     (1))", "<string>")
	f.Add("RuntimeError", "No active exception to reraise", "\x00", "f", "", uint32(1), uint32(1), uint32(1), uint32(1),
		uint8(3), "def f():\n    raise\nf()", "<string>")
	f.Add("NameError", "name 'm' is not defined", "<python-input-0>", "g", "return m(\n    1,\n...<3 lines>...\n)",
		uint32(3), uint32(16), uint32(7), uint32(2), uint8(2), "", "")
	f.Add("ZeroDivisionError", "division by zero", "main.py", "r", "\t  1/0 é", uint32(4), uint32(4), uint32(4), uint32(7),
		uint8(5), "", "main.py")
	f.Fuzz(func(t *testing.T, typ, msg, file, name, preview string, sl, sc, el, ec uint32, frames uint8, src, script string) {
		e := &RaisedException{Type: typ, Message: &msg}
		for i := range int(frames % 8) {
			fr := StackFrame{Filename: file, Start: CodeLoc{sl, sc}, End: CodeLoc{el, ec}, FrameName: &name, PreviewLine: &preview}
			switch i % 4 {
			case 1:
				fr.Start.Line, fr.End.Line = fr.Start.Line+uint32(i), fr.Start.Line+uint32(i)
			case 2:
				fr.HideCaret = true
			case 3:
				fr.FrameName, fr.HideFrameName = nil, true
			}
			e.Traceback = append(e.Traceback, fr)
		}
		opts := TracebackOptions{Filename: script, Source: src}
		out := e.AppendTracebackWith(nil, opts) // must not panic
		for i := range e.Traceback {
			if e.Traceback[i].check() != nil {
				return // a codec would have refused the exception
			}
		}
		limit := 64 + len(typ) + len(msg) + 3*len(src)
		for range e.Traceback {
			limit += 96 + len(file) + len(script) + len(name) + 6*len(preview)
		}
		if len(out) > limit {
			t.Fatalf("%d bytes of traceback for a %d-byte bound", len(out), limit)
		}
	})
}

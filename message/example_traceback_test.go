package message_test

import (
	"fmt"

	"github.com/gomonty/monty/message"
)

// A NameError for a call of an undefined name, as the worker sends it: the
// frame spans the whole call. Rendered as the worker's CLI prints it, the
// carets underline the name alone and the frame names the script.
func ExampleRaisedException_AppendTracebackWith() {
	module, preview := "<module>", "total = 1 + price_of('pear', 2)"
	exc := message.NewException("NameError", "name 'price_of' is not defined")
	exc.Traceback = []message.StackFrame{{
		Filename:    "<python-input-0>",
		Start:       message.CodeLoc{Line: 1, Column: 13},
		End:         message.CodeLoc{Line: 1, Column: 32},
		FrameName:   &module,
		PreviewLine: &preview,
	}}
	opts := message.TracebackOptions{Filename: "<string>", Source: preview}
	fmt.Print(string(exc.AppendTracebackWith(nil, opts)))
	// Output:
	// Traceback (most recent call last):
	//   File "<string>", line 1, in <module>
	//     total = 1 + price_of('pear', 2)
	//                 ~~~~~~~~
	// NameError: name 'price_of' is not defined
}

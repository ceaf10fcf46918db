// Package unsent words the exception the sandbox raises in place of a
// host's answer that could not be sent to the worker: one over the frame
// cap, or one the worker's protocol version cannot express (a value nested
// deeper than protocol 2's decoder reads). Package session raises it for
// its own host functions, values and OS handlers, and child/relay for an
// answer of its parent that the inner worker cannot take, so that the
// sandbox's code catches the same ValueError either way.
package unsent

import "github.com/gomonty/monty/message"

// Subject names what an answer answers: a host function, a host value or
// the OS handler of an op. Its parts are joined only when an answer cannot
// be sent, so that naming every call costs nothing. The zero Subject is
// "the host".
type Subject struct {
	kind uint8
	name string
}

const (
	kindNone uint8 = iota
	kindFunc
	kindValue
	kindOS
)

// Function is the subject of host function name's answer.
func Function(name string) Subject { return Subject{kindFunc, name} }

// Value is the subject of the answer to the lookup of the host value name.
func Value(name string) Subject { return Subject{kindValue, name} }

// OS is the subject of the OS handler's answer to an op call.
func OS(op message.OsOp) Subject { return Subject{kindOS, op.String()} }

// String returns the subject as the exception names it: "host function
// f", "host value v", "the OS handler for Path.read_text" or "the host".
func (s Subject) String() string {
	switch s.kind {
	case kindFunc:
		return "host function " + s.name
	case kindValue:
		return "host value " + s.name
	case kindOS:
		return "the OS handler for " + s.name
	}
	return "the host"
}

// Result is the error result sent in place of a call's result of kind
// (ResultReturn or ResultError) that could not be sent for the reason why:
// a ValueError naming s.
func (s Subject) Result(kind message.ResultKind, why string) *message.ExtResult {
	what := " returned a value that cannot be sent to the sandbox: "
	if kind == message.ResultError {
		what = " raised an exception that cannot be sent to the sandbox: "
	}
	return &message.ExtResult{Kind: message.ResultError, Error: message.NewException("ValueError", s.String()+what+why)}
}

// Lookup is the lookup error sent in place of a name lookup's value that
// could not be sent for the reason why: a ValueError naming s.
func (s Subject) Lookup(why string) *message.ResumeNameLookup {
	return &message.ResumeNameLookup{Kind: message.LookupError,
		Error: message.NewException("ValueError", s.String()+" cannot be sent to the sandbox: "+why)}
}

// StandIn returns the answer sent in place of req when req could not be
// sent for the reason why: a call's result (a value or an exception) or a
// looked-up value (or its error) becomes the same answer raising a
// ValueError naming s. It returns nil for any other request, and for a
// call's answer that carries nothing that could fail to be sent.
func (s Subject) StandIn(req message.Request, why string) message.Request {
	switch q := req.(type) {
	case *message.ResumeCall:
		if q.Result != nil && Replaceable(q.Result.Kind) {
			return &message.ResumeCall{CallID: q.CallID, Result: s.Result(q.Result.Kind, why)}
		}
	case *message.ResumeNameLookup:
		if q.Kind == message.LookupValue || q.Kind == message.LookupError {
			return s.Lookup(why)
		}
	}
	return nil
}

// Replaceable reports whether a call's result of kind is one that Result
// replaces: a value or an exception (a future, not found or not handled
// carries nothing that could fail to be sent).
func Replaceable(kind message.ResultKind) bool {
	return kind == message.ResultReturn || kind == message.ResultError
}

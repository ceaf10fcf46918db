package message

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/value"
)

// RaisedException is a Python exception raised in the sandbox (or by the
// host, to be raised there), with its traceback, outermost frame first.
//
// *RaisedException implements error; its Error text is "Type: message".
type RaisedException struct {
	Type      string
	Message   *string
	Traceback []StackFrame
	// Data is structured data of the exception: *UnicodeErrorData or
	// *JSONErrorData, or nil.
	Data ExcData
}

// NewException returns an exception of type typ with message msg. The
// protocol carries only UTF-8 text, so a msg that is not UTF-8 (a Go
// error quoting a file name or raw bytes) has each invalid sequence
// replaced with U+FFFD, as Python's errors="replace" would.
func NewException(typ, msg string) *RaisedException {
	if !utf8.ValidString(msg) {
		msg = strings.ToValidUTF8(msg, "\uFFFD")
	}
	return &RaisedException{Type: typ, Message: &msg}
}

// Msg returns the message, or "" when there is none.
func (e *RaisedException) Msg() string {
	if e == nil || e.Message == nil {
		return ""
	}
	return *e.Message
}

// Error renders the exception's last traceback line as CPython prints it,
// "Type: message", or just "Type" when the message is absent or empty. (The
// worker's CLI, and so [RaisedException.TracebackString], print "Type: "
// for an empty message.)
func (e *RaisedException) Error() string {
	if e == nil {
		return "<nil exception>"
	}
	if e.Message == nil || *e.Message == "" {
		return e.Type
	}
	return e.Type + ": " + *e.Message
}

// CodeLoc is a 1-based line and column.
type CodeLoc struct {
	Line, Column uint32
}

// StackFrame is one traceback frame.
type StackFrame struct {
	Filename string
	Start    CodeLoc
	End      CodeLoc
	// FrameName is "<module>", a function name or "<lambda>"; nil on
	// SyntaxError frames.
	FrameName     *string
	PreviewLine   *string
	HideCaret     bool
	HideFrameName bool
}

// ExcData is the structured payload of an exception: *UnicodeErrorData or
// *JSONErrorData.
type ExcData interface {
	isExcData()
}

// UnicodeErrorData is the payload of UnicodeDecodeError/UnicodeEncodeError.
// Exactly one of ObjectBytes and ObjectStr is set.
type UnicodeErrorData struct {
	Encoding    string
	ObjectBytes []byte
	ObjectStr   *string
	Start, End  uint64
	Reason      string
}

// JSONErrorData is the payload of json.JSONDecodeError.
type JSONErrorData struct {
	Msg                string
	Doc                *string
	Pos, Lineno, Colno uint64
}

func (*UnicodeErrorData) isExcData() {}
func (*JSONErrorData) isExcData()    {}

// MaxExcDataLen bounds the strings of an exception's structured data. A
// payload with a longer string is dropped, not trusted.
const MaxExcDataLen = 64 << 10

// sane reports whether the structured data is consistent; an insane payload
// is dropped (the exception itself is kept).
func saneData(d ExcData) bool {
	switch x := d.(type) {
	case *UnicodeErrorData:
		if len(x.Encoding) > MaxExcDataLen || len(x.Reason) > MaxExcDataLen {
			return false
		}
		var n uint64
		switch {
		case x.ObjectBytes != nil && x.ObjectStr == nil:
			if len(x.ObjectBytes) > MaxExcDataLen {
				return false
			}
			n = uint64(len(x.ObjectBytes))
		case x.ObjectStr != nil && x.ObjectBytes == nil:
			if len(*x.ObjectStr) > MaxExcDataLen {
				return false
			}
			n = uint64(utf8.RuneCountInString(*x.ObjectStr))
		default:
			return false
		}
		return x.Start < x.End && x.End <= n
	case *JSONErrorData:
		if len(x.Msg) > MaxExcDataLen || x.Lineno == 0 || x.Colno == 0 {
			return false
		}
		if x.Doc != nil {
			if len(*x.Doc) > MaxExcDataLen {
				return false
			}
			if x.Pos > uint64(utf8.RuneCountInString(*x.Doc)) {
				return false
			}
		}
		return true
	}
	return false
}

// Sanitize validates an exception that arrived from a peer: the type must
// be a known exception name and every frame's columns must be consistent
// with its preview line. Inconsistent structured data is dropped (set to
// nil), never trusted.
func (e *RaisedException) Sanitize() error { return e.SanitizeDecoded(-1, "") }

// SanitizeDecoded is Sanitize for an exception decoded from the wire whose
// traceback frame at index missing (-1: none) was the first to lack a
// location, missingField (StackFrame.start or StackFrame.end), which the
// domain frame cannot say. The checks run in the worker's order: the type,
// then frame by frame, the missing location where it is missing, else the
// columns.
func (e *RaisedException) SanitizeDecoded(missing int, missingField string) error {
	if !value.KnownExceptionType(e.Type) {
		return value.UnknownExceptionType(e.Type)
	}
	for i := range e.Traceback {
		if i == missing {
			return valuecheck.MissingField(missingField)
		}
		if err := e.Traceback[i].check(); err != nil {
			return err
		}
	}
	if e.Data != nil && !saneData(e.Data) {
		e.Data = nil
	}
	return nil
}

func (f *StackFrame) check() error {
	if f.PreviewLine == nil || f.Start.Line != f.End.Line {
		return nil
	}
	if f.End.Column < f.Start.Column {
		return valuecheck.InvalidValue("StackFrame.end.column",
			fmt.Sprintf("%d is before start column %d", f.End.Column, f.Start.Column))
	}
	if n := uint64(utf8.RuneCountInString(*f.PreviewLine)) + 2; uint64(f.End.Column) > n {
		return valuecheck.InvalidValue("StackFrame.end.column",
			fmt.Sprintf("%d is beyond the %d-character preview line", f.End.Column, n-2))
	}
	return nil
}

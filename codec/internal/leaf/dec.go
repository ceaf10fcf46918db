package leaf

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The decode side of the shared leaf messages: each message whose scalar
// fields both schemas number alike is described once, as a table of its
// fields (number, path segment, destination), and codec/internal/wire's
// Dec.Fields walks a table for both codecs, with the version's budget
// charges and string storage. What a table does not hold (nested
// messages, oneofs, fields the versions number apart) the decoder handles
// beside it.

// maxFields is the most fields a table holds.
const maxFields = 10

// Slot is one scalar field of a message being decoded.
type Slot struct {
	Num protowire.Number
	// Name is the field's path segment ("Date.year"), as prost names it.
	Name string
	// Dst is where the value goes: *int32, *uint32 or *uint64 (varints,
	// truncated as proto3 does), **int32, **uint32 or **uint64 (optional
	// varints, boxed on first sight), *bool, *string, **string (optional)
	// or *[]byte (implicit presence: empty is nil).
	Dst any
}

// Fields is the table of a message's scalar fields. It is a value, so a
// table built for one message occurrence lives on the decoder's stack.
type Fields struct {
	n int
	s [maxFields]Slot
}

func table(s ...Slot) (f Fields) {
	f.n = copy(f.s[:], s)
	return f
}

// Find returns the slot of field num, or nil when the table has none (a
// zero number, a field the protocol version does not have, never matches).
func (f *Fields) Find(num protowire.Number) *Slot {
	for i := range f.n {
		if f.s[i].Num == num {
			return &f.s[i]
		}
	}
	return nil
}

// DateFields is the table of a Date.
func DateFields(x *value.Date) Fields {
	return table(Slot{1, "Date.year", &x.Year}, Slot{2, "Date.month", &x.Month}, Slot{3, "Date.day", &x.Day})
}

// TimeFields is the table of a Time.
func TimeFields(x *value.Time) Fields {
	return table(Slot{1, "Time.hour", &x.Hour}, Slot{2, "Time.minute", &x.Minute},
		Slot{3, "Time.second", &x.Second}, Slot{4, "Time.microsecond", &x.Microsecond},
		Slot{5, "Time.offset_seconds", &x.Offset}, Slot{6, "Time.timezone_name", &x.TZName},
		Slot{7, "Time.fold", &x.Fold})
}

// DateTimeFields is the table of a DateTime.
func DateTimeFields(x *value.DateTime) Fields {
	return table(Slot{1, "DateTime.year", &x.Year}, Slot{2, "DateTime.month", &x.Month},
		Slot{3, "DateTime.day", &x.Day}, Slot{4, "DateTime.hour", &x.Hour},
		Slot{5, "DateTime.minute", &x.Minute}, Slot{6, "DateTime.second", &x.Second},
		Slot{7, "DateTime.microsecond", &x.Microsecond}, Slot{8, "DateTime.offset_seconds", &x.Offset},
		Slot{9, "DateTime.timezone_name", &x.TZName})
}

// TimeDeltaFields is the table of a TimeDelta.
func TimeDeltaFields(x *value.TimeDelta) Fields {
	return table(Slot{1, "TimeDelta.days", &x.Days}, Slot{2, "TimeDelta.seconds", &x.Seconds},
		Slot{3, "TimeDelta.microseconds", &x.Microseconds})
}

// TimeZoneFields is the table of a TimeZone.
func TimeZoneFields(x *value.TimeZone) Fields {
	return table(Slot{1, "TimeZone.offset_seconds", &x.Offset}, Slot{2, "TimeZone.name", &x.Name})
}

// ExceptionFields is the table of an Exception value.
func ExceptionFields(x *value.Exception) Fields {
	return table(Slot{1, "Exception.exc_type", &x.Type}, Slot{2, "Exception.arg", &x.Arg})
}

// FunctionFields is the table of a Function value.
func FunctionFields(x *value.Function) Fields {
	return table(Slot{1, "Function.name", &x.Name}, Slot{2, "Function.docstring", &x.Docstring})
}

// FileHandleFields is the table of a FileHandle value.
func FileHandleFields(x *value.FileHandle) Fields {
	return table(Slot{1, "FileHandle.path", &x.Path}, Slot{2, "FileHandle.mode", &x.Mode},
		Slot{3, "FileHandle.position", &x.Position})
}

// CodeLocFields is the table of a CodeLoc.
func CodeLocFields(x *message.CodeLoc) Fields {
	return table(Slot{1, "CodeLoc.line", &x.Line}, Slot{2, "CodeLoc.column", &x.Column})
}

// StackFrameFields is the table of a StackFrame's scalar fields (its
// locations, 2 and 3, are CodeLoc messages).
func StackFrameFields(x *message.StackFrame) Fields {
	return table(Slot{1, "StackFrame.filename", &x.Filename},
		Slot{4, "StackFrame.frame_name", &x.FrameName}, Slot{5, "StackFrame.preview_line", &x.PreviewLine},
		Slot{6, "StackFrame.hide_caret", &x.HideCaret}, Slot{7, "StackFrame.hide_frame_name", &x.HideFrameName})
}

// JSONErrorFields is the table of a JsonErrorData.
func JSONErrorFields(x *message.JSONErrorData) Fields {
	return table(Slot{1, "JsonErrorData.msg", &x.Msg}, Slot{2, "JsonErrorData.doc", &x.Doc},
		Slot{3, "JsonErrorData.pos", &x.Pos}, Slot{4, "JsonErrorData.lineno", &x.Lineno},
		Slot{5, "JsonErrorData.colno", &x.Colno})
}

// UnicodeErrorFields is the table of a UnicodeErrorData's fields outside
// its object oneof (2 and 3).
func UnicodeErrorFields(x *message.UnicodeErrorData) Fields {
	return table(Slot{1, "UnicodeErrorData.encoding", &x.Encoding}, Slot{4, "UnicodeErrorData.start", &x.Start},
		Slot{5, "UnicodeErrorData.end", &x.End}, Slot{6, "UnicodeErrorData.reason", &x.Reason})
}

// LimitNums are the ResourceLimits field numbers the protocol versions
// disagree on (zero where a version lacks the field).
type LimitNums struct{ Duration, Feed, Turn, Sleep protowire.Number }

// LimitFields is the table of a ResourceLimits.
func LimitFields(x *message.ResourceLimits, n LimitNums) Fields {
	return table(Slot{n.Duration, "ResourceLimits.max_duration_micros", &x.MaxDurationMicros},
		Slot{2, "ResourceLimits.max_memory_bytes", &x.MaxMemoryBytes},
		Slot{3, "ResourceLimits.gc_interval", &x.GCInterval},
		Slot{4, "ResourceLimits.max_recursion_depth", &x.MaxRecursionDepth},
		Slot{5, "ResourceLimits.max_suspensions", &x.MaxSuspensions},
		Slot{n.Feed, "ResourceLimits.max_feed_duration_micros", &x.MaxFeedDurationMicros},
		Slot{n.Turn, "ResourceLimits.max_turn_duration_micros", &x.MaxTurnDurationMicros},
		Slot{n.Sleep, "ResourceLimits.max_total_sleep_micros", &x.MaxTotalSleepMicros})
}

// ConfigureFields is the table of a Configure's scalar fields common to
// every version (limits, 2, is a message; the later fields are numbered
// per version).
func ConfigureFields(x *message.Configure) Fields {
	return table(Slot{1, "Configure.script_name", &x.ScriptName}, Slot{3, "Configure.type_check", &x.TypeCheck},
		Slot{4, "Configure.type_check_stubs", &x.TypeCheckStubs}, Slot{5, "Configure.monty_version", &x.MontyVersion},
		Slot{6, "Configure.assert_message_annotations", &x.AssertMessageAnnotations},
		Slot{7, "Configure.type_check_format", (*uint32)(&x.TypeCheckFormat)},
		Slot{8, "Configure.type_check_color", &x.TypeCheckColor},
		Slot{9, "Configure.protocol_version", &x.ProtocolVersion},
		Slot{10, "Configure.print_flush_interval_ms", &x.PrintFlushIntervalMs})
}

// OsArgFields is the table of the OsCall argument message of arm num
// (TextWrite, BytesWrite, Open, Mkdir, Rename: 14 to 20, numbered alike
// in every version); ok is false for the other arms.
func OsArgFields(num protowire.Number, x *message.OsCall) (f Fields, ok bool) {
	switch num {
	case 14, 15:
		return table(Slot{1, "TextWrite.path", &x.Path}, Slot{2, "TextWrite.data", &x.Text}), true
	case 16, 17:
		return table(Slot{1, "BytesWrite.path", &x.Path}, Slot{2, "BytesWrite.data", &x.Data}), true
	case 18:
		return table(Slot{1, "Open.path", &x.Path}, Slot{2, "Open.mode", &x.Mode}), true
	case 19:
		return table(Slot{1, "Mkdir.path", &x.Path}, Slot{2, "Mkdir.parents", &x.Parents},
			Slot{3, "Mkdir.exist_ok", &x.ExistOK}), true
	case 20:
		return table(Slot{1, "Rename.src", &x.Path}, Slot{2, "Rename.dst", &x.Dst}), true
	}
	return f, false
}

// The messages of one scalar field.

// LoadFields is the table of a Load request.
func LoadFields(x *message.Load) Fields { return table(Slot{1, "Load.state", &x.State}) }

// TypingErrorFields is the table of a TypingError event.
func TypingErrorFields(x *message.TypingError) Fields {
	return table(Slot{1, "TypingError.diagnostics", &x.Diagnostics})
}

// DumpResultFields is the table of a DumpResult event.
func DumpResultFields(x *message.DumpResult) Fields {
	return table(Slot{1, "DumpResult.state", &x.State})
}

// FatalErrorFields is the table of a FatalError event.
func FatalErrorFields(x *message.FatalError) Fields {
	return table(Slot{1, "FatalError.message", &x.Message})
}

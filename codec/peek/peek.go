package peek

import (
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// MaxArmField is the highest field number reserved for oneof arms in both
// envelopes. Message-level fields are numbered from MaxArmField+1.
const MaxArmField = 19

// RequestKind is the oneof arm of a ParentRequest, numbered by its field.
type RequestKind uint8

// ParentRequest arms.
const (
	RequestConfigure           RequestKind = 1
	RequestInstallDependencies RequestKind = 2
	RequestFeed                RequestKind = 3
	RequestResumeCall          RequestKind = 4
	RequestResumeNameLookup    RequestKind = 5
	RequestResumeFutures       RequestKind = 6
	RequestDump                RequestKind = 7
	RequestLoad                RequestKind = 8
	RequestReset               RequestKind = 9
	RequestShutdown            RequestKind = 10
	RequestAbortFeed           RequestKind = 11
)

var requestNames = [...]string{
	RequestConfigure:           "Configure",
	RequestInstallDependencies: "InstallDependencies",
	RequestFeed:                "Feed",
	RequestResumeCall:          "ResumeCall",
	RequestResumeNameLookup:    "ResumeNameLookup",
	RequestResumeFutures:       "ResumeFutures",
	RequestDump:                "Dump",
	RequestLoad:                "Load",
	RequestReset:               "Reset",
	RequestShutdown:            "Shutdown",
	RequestAbortFeed:           "AbortFeed",
}

// Known reports whether k is one of the named request kinds.
func (k RequestKind) Known() bool {
	return k >= RequestConfigure && k <= RequestAbortFeed
}

// String returns the schema name of the arm, such as "Feed", or
// "RequestKind(N)" for an unknown value.
func (k RequestKind) String() string {
	if k.Known() {
		return requestNames[k]
	}
	return "RequestKind(" + strconv.Itoa(int(k)) + ")"
}

// EventKind is the oneof arm of a ChildEvent, numbered by its field.
type EventKind uint8

// ChildEvent arms.
const (
	EventPrint          EventKind = 1
	EventFunctionCall   EventKind = 2
	EventOsCall         EventKind = 3
	EventNameLookup     EventKind = 4
	EventResolveFutures EventKind = 5
	EventComplete       EventKind = 6
	EventError          EventKind = 7
	EventTypingError    EventKind = 8
	EventDumpResult     EventKind = 9
	EventOk             EventKind = 10
	EventFatalError     EventKind = 11
	EventShutdownDump   EventKind = 12
)

var eventNames = [...]string{
	EventPrint:          "Print",
	EventFunctionCall:   "FunctionCall",
	EventOsCall:         "OsCall",
	EventNameLookup:     "NameLookup",
	EventResolveFutures: "ResolveFutures",
	EventComplete:       "Complete",
	EventError:          "Error",
	EventTypingError:    "TypingError",
	EventDumpResult:     "DumpResult",
	EventOk:             "Ok",
	EventFatalError:     "FatalError",
	EventShutdownDump:   "ShutdownDump",
}

// Known reports whether k is one of the named event kinds.
func (k EventKind) Known() bool {
	return k >= EventPrint && k <= EventShutdownDump
}

// String returns the schema name of the arm, such as "Complete", or
// "EventKind(N)" for an unknown value.
func (k EventKind) String() string {
	if k.Known() {
		return eventNames[k]
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// EndsTurn reports whether an event of kind k ends the worker's turn. Print
// is the only event that does not: a worker answers each request with any
// number of Print events followed by exactly one other event. The answer
// is meaningful only for a kind returned by Event with ok == true.
func (k EventKind) EndsTurn() bool {
	return k != EventPrint
}

// Request classifies an encoded ParentRequest (a frame body, without the
// length prefix). ok is false for an opaque frame: empty, malformed or
// truncated input, no arm, or an arm that is not a known RequestKind.
func Request(frame []byte) (RequestKind, bool) {
	n, ok := arm(frame)
	if !ok || !RequestKind(n).Known() {
		return 0, false
	}
	return RequestKind(n), true
}

// Event classifies an encoded ChildEvent (a frame body, without the length
// prefix). ok is false for an opaque frame: empty, malformed or truncated
// input, no arm, or an arm that is not a known EventKind.
func Event(frame []byte) (EventKind, bool) {
	n, ok := arm(frame)
	if !ok || !EventKind(n).Known() {
		return 0, false
	}
	return EventKind(n), true
}

// DecodedRequest returns the arm a ParentRequest's decoder reads from a
// frame that decodes: the last length-delimited field numbered as a known
// RequestKind. Unlike Request it skips every other field, as the decoders
// do, even one at a number reserved for arms; 0 when there is none.
func DecodedRequest(frame []byte) RequestKind {
	var last RequestKind
	keys(frame, func(num protowire.Number, typ protowire.Type) bool {
		if k := RequestKind(num); num <= MaxArmField && k.Known() && typ == protowire.BytesType {
			last = k
		}
		return true
	})
	return last
}

// arm walks every field key of b and returns the field number of the last
// oneof arm (1..MaxArmField). It fails if b is malformed or truncated, if
// an arm key is not length-delimited, or if there is no arm.
func arm(b []byte) (protowire.Number, bool) {
	var last protowire.Number
	ok := keys(b, func(num protowire.Number, typ protowire.Type) bool {
		if num <= MaxArmField {
			if typ != protowire.BytesType {
				return false
			}
			last = num
		}
		return true
	})
	return last, ok && last != 0
}

// keys walks the field keys of message b, skipping each value, and hands
// each key to f; it stops when f returns false. It reports whether the
// walk reached the end of b: false when f stopped it or b is malformed or
// truncated (a key wider than 32 bits included).
func keys(b []byte, f func(num protowire.Number, typ protowire.Type) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		// protowire accepts field numbers up to 2^31-1 here, but a key
		// wider than 32 bits is invalid protobuf (and rejected by prost).
		if num > protowire.MaxValidNumber {
			return false
		}
		b = b[n:]
		if !f(num, typ) {
			return false
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

//go:build unix

package main

import (
	"encoding/hex"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The JSON shape of a decoded message (decodeShapeHelp says it for users,
// docs/PROTOCOL.md's "montygo decode" section in full):
//
//   - Every key is a field or oneof name of the schema of the version
//     decoded (proto/…/*.proto), written in field-number order.
//   - A oneof is the oneof's name with the chosen arm's name as its value,
//     then the arm under its own name; an arm of type Unit has no value and
//     so no key of its own. The envelope's oneof is "kind":
//     {"kind":"complete","complete":{…},"total_execution_micros":12}.
//   - A field with explicit presence (optional, a message) that is absent
//     is left out; every other field of the version's schema is written,
//     default values included. A field the version's schema lacks is never
//     written.
//   - Enums are their value names ("PRINT_STREAM_STDOUT"); a number the
//     schema does not name is written as the number.
//   - bytes are lowercase hex strings; a Uuid is its canonical text.
//   - Values are trees, whatever the wire form (protocol 4 and 5 carry an
//     arena of nodes, protocol 2 nested objects): see renderer.value.
//     Arenas are not shown; each root is its value tree, with "repr", its
//     Python repr, beside the kind.
//
// The renderer never fails and never panics on a decoded message: graphs
// are walked without recursion, ids out of range render as null, and the
// value trees of one message are bounded in size (see renderer.limit).

// renderer writes one message as a line of JSON.
type renderer struct {
	proto uint32 // the protocol version whose schema names the fields
	buf   []byte
	first bool // the next key or element is the first of its object or array

	start int   // len(buf) when the message began
	limit int64 // bound on the message's rendering: set by begin
	stack []vframe

	// treeFull and reprFull say that a value tree, a repr, did not fit
	// within the bound: the room left only shrinks, so later ones are not
	// even computed (a frame with thousands of roots sharing one large
	// value would otherwise build each up to the bound, to throw it away).
	treeFull, reprFull bool
	tries              int // trees and reprs computed, for the tests
}

// renderLimitFloor and renderLimitPerByte make the bound on a message's
// value trees: the floor plus a multiple of the frame's length. A value
// tree is its graph with shared nodes written out at every occurrence (as
// repr writes them), so only a graph whose nodes are shared many times can
// reach it; the root that does not fit, and every root after it, is
// written as {"kind":"repr","repr":…}.
const (
	renderLimitFloor   = 1 << 20
	renderLimitPerByte = 64
)

// maxTreeDepth is how many containers deep a value tree is written; a
// container below that many is written as {"kind":"repr","repr":…}. A
// level of a value tree is up to four levels of JSON nesting, so a line
// stays within the 256 levels some JSON readers allow (jq 1.6).
const maxTreeDepth = 48

// begin starts a message decoded from a frame of frameLen bytes.
func (r *renderer) begin(frameLen int) {
	r.start = len(r.buf)
	r.limit = renderLimitFloor + renderLimitPerByte*int64(frameLen)
	r.first = true
	r.treeFull, r.reprFull = false, false
}

func (r *renderer) over() bool { return int64(len(r.buf)-r.start) > r.limit }

// --- JSON primitives ---

func (r *renderer) open(c byte) {
	r.buf = append(r.buf, c)
	r.first = true
}

func (r *renderer) close(c byte) {
	r.buf = append(r.buf, c)
	r.first = false
}

// sep writes the comma before a key or an element that is not the first.
func (r *renderer) sep() {
	if !r.first {
		r.buf = append(r.buf, ',')
	}
	r.first = false
}

func (r *renderer) key(k string) {
	r.sep()
	r.buf = append(r.buf, '"')
	r.buf = append(r.buf, k...)
	r.buf = append(r.buf, '"', ':')
}

func (r *renderer) str(s string) { r.buf = appendJSONString(r.buf, s) }

func (r *renderer) uint(u uint64) { r.buf = strconv.AppendUint(r.buf, u, 10) }

func (r *renderer) int(i int64) { r.buf = strconv.AppendInt(r.buf, i, 10) }

func (r *renderer) bool(b bool) { r.buf = strconv.AppendBool(r.buf, b) }

func (r *renderer) hex(b []byte) {
	r.buf = append(r.buf, '"')
	r.buf = hex.AppendEncode(r.buf, b)
	r.buf = append(r.buf, '"')
}

// float writes a finite float as its Python repr, which is a JSON number
// ("1.0", "1e+16"), and NaN and the infinities, which JSON has no number
// for, as the strings "nan", "inf" and "-inf".
func (r *renderer) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		r.str(value.FloatRepr(f))
		return
	}
	r.buf = append(r.buf, value.FloatRepr(f)...)
}

func (r *renderer) keyStr(k, s string)         { r.key(k); r.str(s) }
func (r *renderer) keyUint(k string, u uint64) { r.key(k); r.uint(u) }
func (r *renderer) keyBool(k string, b bool)   { r.key(k); r.bool(b) }

func (r *renderer) keyOptStr(k string, s *string) {
	if s != nil {
		r.keyStr(k, *s)
	}
}

func (r *renderer) keyOptUint(k string, u *uint64) {
	if u != nil {
		r.keyUint(k, *u)
	}
}

func (r *renderer) keyOptUint32(k string, u *uint32) {
	if u != nil {
		r.keyUint(k, uint64(*u))
	}
}

// keyEnum writes an enum field: its value's name, or the number when the
// schema names none.
func (r *renderer) keyEnum(k string, names []string, v uint64) {
	r.key(k)
	if v < uint64(len(names)) && names[v] != "" {
		r.str(names[v])
		return
	}
	r.uint(v)
}

func (r *renderer) keyUUID(k string, u *value.UUID) {
	if u != nil {
		r.keyStr(k, u.String())
	}
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it without HTML escaping: text that is not UTF-8 (which the
// decoders refuse on the wire) has each bad byte replaced with U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		ru, size := utf8.DecodeRuneInString(s[i:])
		if ru == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if ru == '\u2028' || ru == '\u2029' {
			// Valid JSON, but not valid JavaScript: escaped as
			// encoding/json escapes them.
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[ru&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// --- enum names, indexed by number ---

var (
	printStreamNames = []string{"PRINT_STREAM_UNSPECIFIED", "PRINT_STREAM_STDOUT", "PRINT_STREAM_STDERR"}
	typeOriginNames  = []string{"TYPE_ORIGIN_UNSPECIFIED", "TYPE_ORIGIN_BUILTIN", "TYPE_ORIGIN_SANDBOX", "TYPE_ORIGIN_HOST"}
	persistenceNames = []string{"PERSISTENCE_UNSPECIFIED", "PERSISTENCE_EPHEMERAL", "PERSISTENCE_STORED"}
	typeCheckNames   = []string{"TYPE_CHECK_FORMAT_UNSPECIFIED", "TYPE_CHECK_FORMAT_FULL",
		"TYPE_CHECK_FORMAT_CONCISE", "TYPE_CHECK_FORMAT_AZURE", "TYPE_CHECK_FORMAT_JSON",
		"TYPE_CHECK_FORMAT_JSON_LINES", "TYPE_CHECK_FORMAT_RDJSON", "TYPE_CHECK_FORMAT_PYLINT",
		"TYPE_CHECK_FORMAT_GITLAB", "TYPE_CHECK_FORMAT_GITHUB"}
)

// requestArms and eventArms are the envelopes' oneof arm names, by kind
// number (the arm's field number).
var (
	requestArms = []string{1: "configure", 2: "install_dependencies", 3: "feed", 4: "resume_call",
		5: "resume_name_lookup", 6: "resume_futures", 7: "dump", 8: "load", 9: "reset",
		10: "shutdown", 11: "abort_feed"}
	eventArms = []string{1: "print", 2: "function_call", 3: "os_call", 4: "name_lookup",
		5: "resolve_futures", 6: "complete", 7: "error", 8: "typing_error", 9: "dump_result",
		10: "ok", 11: "fatal_error", 12: "shutdown"}
)

// nodeArms are the value oneof's arm names (MontyNode, MontyObject), by
// kind number, which is the arm number.
var nodeArms = [...]string{1: "ellipsis", 2: "none", 3: "not_implemented", 4: "boolean",
	5: "int", 6: "bigint", 7: "float", 8: "str", 9: "bytes", 11: "list", 12: "tuple",
	13: "named_tuple", 14: "dict", 15: "set", 16: "frozen_set", 17: "date", 18: "time",
	19: "datetime", 20: "timedelta", 21: "timezone", 22: "exception", 23: "type",
	24: "class_instance", 25: "function", 26: "builtin_function", 27: "path",
	28: "file_handle", 29: "repr", 30: "cycle"}

func armName(names []string, k int) (string, bool) {
	if k > 0 && k < len(names) && names[k] != "" {
		return names[k], true
	}
	return "", false
}

// --- envelopes ---

// request writes a ParentRequest.
func (r *renderer) request(m *message.ParentRequest) {
	r.open('{')
	r.key("kind")
	if m.Body == nil {
		r.buf = append(r.buf, "null"...)
	} else if name, ok := armName(requestArms, int(m.Body.RequestKind())); ok {
		r.str(name)
		r.key(name)
		r.requestBody(m.Body)
	} else {
		r.uint(uint64(m.Body.RequestKind()))
	}
	r.keyOptStr("trace_parent", m.TraceParent)
	r.close('}')
}

// event writes a ChildEvent.
func (r *renderer) event(m *message.ChildEvent) {
	r.open('{')
	r.key("kind")
	if m.Body == nil {
		r.buf = append(r.buf, "null"...)
	} else if name, ok := armName(eventArms, int(m.Body.EventKind())); ok {
		r.str(name)
		r.key(name)
		r.eventBody(m.Body)
	} else {
		r.uint(uint64(m.Body.EventKind()))
	}
	r.keyUint("total_execution_micros", m.TotalExecutionMicros)
	if r.proto < 5 { // reserved at 5
		r.keyOptUint("max_duration_micros", m.MaxDurationMicros)
	}
	if r.proto == 2 { // 22 and 23 swapped relative to 4 and 5
		r.keyOptStr("restored_script_name", m.RestoredScriptName)
		r.keyOptUint("max_suspensions", m.MaxSuspensions)
	} else {
		r.keyOptUint("max_suspensions", m.MaxSuspensions)
		r.keyOptStr("restored_script_name", m.RestoredScriptName)
	}
	if r.proto >= 5 {
		r.keyUint("feed_execution_micros", m.FeedExecutionMicros)
		r.keyOptUint("max_feed_duration_micros", m.MaxFeedDurationMicros)
		r.keyOptUint("max_turn_duration_micros", m.MaxTurnDurationMicros)
		r.keyOptUint("max_total_sleep_micros", m.MaxTotalSleepMicros)
		if m.SessionID != nil {
			r.key("session_id")
			r.hex(m.SessionID)
		}
	}
	r.close('}')
}

// --- requests ---

func (r *renderer) requestBody(b message.Request) {
	r.open('{')
	switch b := b.(type) {
	case *message.Configure:
		r.keyStr("script_name", b.ScriptName)
		if b.Limits != nil {
			r.key("limits")
			r.limits(b.Limits)
		}
		r.keyBool("type_check", b.TypeCheck)
		r.keyOptStr("type_check_stubs", b.TypeCheckStubs)
		r.keyStr("monty_version", b.MontyVersion)
		r.keyOptUint32("assert_message_annotations", b.AssertMessageAnnotations)
		r.keyEnum("type_check_format", typeCheckNames, uint64(b.TypeCheckFormat))
		r.keyBool("type_check_color", b.TypeCheckColor)
		r.keyUint("protocol_version", uint64(b.ProtocolVersion))
		r.keyOptUint32("print_flush_interval_ms", b.PrintFlushIntervalMs)
		if r.proto >= 5 {
			if b.OsPolicy != nil {
				r.key("os_policy")
				r.osPolicy(b.OsPolicy)
			}
			r.keyEnum("persistence", persistenceNames, uint64(b.Persistence))
			r.keyOptStr("profile", b.Profile)
		}
	case *message.InstallDependencies:
		r.key("requirements")
		r.open('[')
		for _, s := range b.Requirements {
			r.sep()
			r.str(s)
		}
		r.close(']')
	case *message.Feed:
		r.keyStr("code", b.Code)
		r.key("inputs")
		r.open('[')
		for _, in := range b.Inputs {
			r.sep()
			r.open('{')
			r.keyStr("name", in.Name)
			r.key("value")
			r.root(&b.Values, in.Value)
			r.close('}')
		}
		r.close(']')
		r.keyBool("skip_type_check", b.SkipTypeCheck)
		if r.proto >= 4 {
			r.keyStr("cwd", b.Cwd)
		}
	case *message.ResumeCall:
		r.keyUint("call_id", uint64(b.CallID))
		if b.Result != nil {
			r.key("result")
			r.extResult(b.Result, &b.Values)
		}
	case *message.ResumeNameLookup:
		switch b.Kind {
		case message.LookupValue:
			r.keyStr("kind", "value")
			r.key("value")
			r.root(&b.Values, b.Value)
		case message.LookupUndefined:
			r.keyStr("kind", "undefined")
		case message.LookupError:
			r.keyStr("kind", "error")
			if b.Error != nil {
				r.key("error")
				r.exception(b.Error)
			}
		}
	case *message.ResumeFutures:
		r.key("results")
		r.open('[')
		for _, fr := range b.Results {
			r.sep()
			r.open('{')
			r.keyUint("call_id", uint64(fr.CallID))
			if fr.Result != nil {
				r.key("result")
				r.extResult(fr.Result, &b.Values)
			}
			r.close('}')
		}
		r.close(']')
	case *message.Load:
		r.key("state")
		r.hex(b.State)
	case *message.AbortFeed:
		if b.Exception != nil {
			r.key("exception")
			r.exception(b.Exception)
		}
	case *message.Dump, *message.Reset, *message.Shutdown:
		// No fields.
	}
	r.close('}')
}

func (r *renderer) limits(l *message.ResourceLimits) {
	r.open('{')
	if r.proto < 5 { // reserved at 5
		r.keyOptUint("max_duration_micros", l.MaxDurationMicros)
	}
	r.keyOptUint("max_memory_bytes", l.MaxMemoryBytes)
	r.keyOptUint("gc_interval", l.GCInterval)
	r.keyOptUint("max_recursion_depth", l.MaxRecursionDepth)
	r.keyOptUint("max_suspensions", l.MaxSuspensions)
	if r.proto >= 5 {
		r.keyOptUint("max_feed_duration_micros", l.MaxFeedDurationMicros)
		r.keyOptUint("max_turn_duration_micros", l.MaxTurnDurationMicros)
		r.keyOptUint("max_total_sleep_micros", l.MaxTotalSleepMicros)
	}
	r.close('}')
}

func (r *renderer) osPolicy(p *message.OsPolicy) {
	r.open('{')
	switch p.Clock {
	case message.ClockSystem:
		r.keyStr("datetime", "system")
	case message.ClockCallHost:
		r.keyStr("datetime", "call_host")
	case message.ClockFixed:
		r.keyStr("datetime", "fixed")
		r.key("fixed")
		r.open('{')
		r.key("unix_seconds")
		r.int(p.Fixed.UnixSeconds)
		r.keyUint("microsecond", uint64(p.Fixed.Microsecond))
		r.close('}')
	}
	if z := p.TimeZone; z != nil {
		r.key("timezone")
		r.open('{')
		switch z.Kind {
		case message.ZoneUTC:
			r.keyStr("zone", "utc")
		case message.ZoneNamed:
			r.keyStr("zone", "named")
			r.keyStr("named", z.Name)
		case message.ZoneFixed:
			r.keyStr("zone", "fixed")
			r.key("fixed")
			r.timezone(&z.Fixed)
		}
		r.close('}')
	}
	if s := p.Sleep; s != nil {
		r.key("sleep")
		r.open('{')
		switch s.Kind {
		case message.SleepSystem:
			r.keyStr("mode", "system")
			r.key("system")
			r.open('{')
			r.keyOptUint("max_micros", s.MaxMicros)
			r.close('}')
		case message.SleepCallHost:
			r.keyStr("mode", "call_host")
		case message.SleepZero:
			r.keyStr("mode", "zero")
		}
		r.close('}')
	}
	switch p.Random {
	case message.RandomSystem:
		r.keyStr("random_start", "random_system")
	case message.RandomCallHost:
		r.keyStr("random_start", "random_call_host")
	case message.RandomSeeded:
		r.keyStr("random_start", "seed")
		r.key("seed")
		r.open('{')
		switch s := p.Seed; s.Kind {
		case message.SeedInt:
			r.keyStr("value", "int")
			r.key("int")
			r.hex(s.Int)
		case message.SeedFloat:
			r.keyStr("value", "float")
			r.key("float")
			r.float(s.Float)
		case message.SeedStr:
			r.keyStr("value", "str")
			r.keyStr("str", s.Str)
		case message.SeedBytes:
			r.keyStr("value", "bytes")
			r.key("bytes")
			r.hex(s.Bytes)
		}
		r.close('}')
	}
	switch p.ProcessTime {
	case message.ProcessTimeZero:
		r.keyStr("process_time", "zero")
	case message.ProcessTimeElapsed:
		r.keyStr("process_time", "elapsed")
	}
	r.close('}')
}

func (r *renderer) extResult(x *message.ExtResult, g *value.Graph) {
	r.open('{')
	switch x.Kind {
	case message.ResultReturn:
		r.keyStr("kind", "return_value")
		r.key("return_value")
		r.root(g, x.Value)
	case message.ResultError:
		r.keyStr("kind", "error")
		if x.Error != nil {
			r.key("error")
			r.exception(x.Error)
		}
	case message.ResultFuture:
		r.keyStr("kind", "future")
		r.keyUint("future", uint64(x.Future))
	case message.ResultNotFound:
		r.keyStr("kind", "not_found")
		r.keyStr("not_found", x.Name)
	case message.ResultNotHandled:
		r.keyStr("kind", "not_handled")
	}
	r.close('}')
}

func (r *renderer) exception(e *message.RaisedException) {
	r.open('{')
	r.keyStr("exc_type", e.Type)
	r.keyOptStr("message", e.Message)
	r.key("traceback")
	r.open('[')
	for i := range e.Traceback {
		f := &e.Traceback[i]
		r.sep()
		r.open('{')
		r.keyStr("filename", f.Filename)
		r.key("start")
		r.codeLoc(f.Start)
		r.key("end")
		r.codeLoc(f.End)
		r.keyOptStr("frame_name", f.FrameName)
		r.keyOptStr("preview_line", f.PreviewLine)
		r.keyBool("hide_caret", f.HideCaret)
		r.keyBool("hide_frame_name", f.HideFrameName)
		r.close('}')
	}
	r.close(']')
	switch d := e.Data.(type) {
	case *message.UnicodeErrorData:
		r.key("data")
		r.open('{')
		r.keyStr("kind", "unicode")
		r.key("unicode")
		r.open('{')
		r.keyStr("encoding", d.Encoding)
		switch {
		case d.ObjectStr != nil:
			r.keyStr("object", "object_str")
			r.keyStr("object_str", *d.ObjectStr)
		case d.ObjectBytes != nil:
			r.keyStr("object", "object_bytes")
			r.key("object_bytes")
			r.hex(d.ObjectBytes)
		}
		r.keyUint("start", d.Start)
		r.keyUint("end", d.End)
		r.keyStr("reason", d.Reason)
		r.close('}')
		r.close('}')
	case *message.JSONErrorData:
		r.key("data")
		r.open('{')
		r.keyStr("kind", "json")
		r.key("json")
		r.open('{')
		r.keyStr("msg", d.Msg)
		r.keyOptStr("doc", d.Doc)
		r.keyUint("pos", d.Pos)
		r.keyUint("lineno", d.Lineno)
		r.keyUint("colno", d.Colno)
		r.close('}')
		r.close('}')
	}
	r.close('}')
}

func (r *renderer) codeLoc(l message.CodeLoc) {
	r.open('{')
	r.keyUint("line", uint64(l.Line))
	r.keyUint("column", uint64(l.Column))
	r.close('}')
}

func (r *renderer) position(p *message.SourceRange) {
	if p == nil || r.proto < 5 {
		return
	}
	r.key("position")
	r.open('{')
	r.keyStr("filename", p.Filename)
	r.keyUint("start", uint64(p.Start))
	r.keyUint("end", uint64(p.End))
	r.close('}')
}

// --- events ---

func (r *renderer) eventBody(b message.Event) {
	r.open('{')
	switch b := b.(type) {
	case *message.Print:
		if r.proto == 2 && len(b.Segments) == 1 {
			// Protocol 2's Print is one segment, flat.
			r.keyEnum("stream", printStreamNames, uint64(b.Segments[0].Stream))
			r.keyStr("text", b.Segments[0].Text)
			break
		}
		r.key("segments")
		r.open('[')
		for _, s := range b.Segments {
			r.sep()
			r.open('{')
			r.keyEnum("stream", printStreamNames, uint64(s.Stream))
			r.keyStr("text", s.Text)
			r.close('}')
		}
		r.close(']')
	case *message.FunctionCall:
		r.keyStr("function_name", b.FunctionName)
		r.key("args")
		r.open('[')
		for _, a := range b.Args {
			r.sep()
			r.root(&b.Values, a)
		}
		r.close(']')
		r.key("kwargs")
		r.open('[')
		for _, kw := range b.Kwargs {
			r.sep()
			r.open('{')
			r.key("key")
			r.root(&b.Values, kw.Key)
			r.key("value")
			r.root(&b.Values, kw.Value)
			r.close('}')
		}
		r.close(']')
		r.keyUint("call_id", uint64(b.CallID))
		r.keyUUID("object_id", b.ObjectID)
		if r.proto >= 4 {
			r.keyBool("allow_eager_await", b.AllowEagerAwait)
		}
		r.position(b.Position)
	case *message.OsCall:
		r.osCall(b)
	case *message.NameLookup:
		r.keyStr("name", b.Name)
		r.keyUUID("object_id", b.ObjectID)
		r.position(b.Position)
	case *message.ResolveFutures:
		r.key("pending_call_ids")
		r.open('[')
		for _, id := range b.PendingCallIDs {
			r.sep()
			r.uint(uint64(id))
		}
		r.close(']')
		r.position(b.Position)
	case *message.Complete:
		r.key("value")
		r.root(&b.Values, b.Value)
	case *message.Error:
		if b.Exception != nil {
			r.key("exception")
			r.exception(b.Exception)
		}
	case *message.TypingError:
		r.keyStr("diagnostics", b.Diagnostics)
	case *message.DumpResult:
		r.key("state")
		r.hex(b.State)
	case *message.FatalError:
		r.keyStr("message", b.Message)
	case *message.ShutdownDump:
		if b.Dump != nil {
			r.key("dump")
			r.hex(*b.Dump)
		}
	case *message.Ok:
		// No fields.
	}
	r.close('}')
}

func (r *renderer) osCall(c *message.OsCall) {
	r.keyUint("call_id", uint64(c.CallID))
	op := c.Op.String()
	if c.Op < message.OpExists || op == "unknown_os_call" {
		// No arm the codecs decode: nothing more to say.
		return
	}
	r.keyStr("call", op)
	switch c.Op {
	case message.OpExists, message.OpIsFile, message.OpIsDir, message.OpIsSymlink,
		message.OpReadText, message.OpReadBytes, message.OpStat, message.OpIterdir,
		message.OpResolve, message.OpAbsolute, message.OpUnlink, message.OpRmdir:
		r.keyStr(op, c.Path)
	case message.OpGetEnviron, message.OpDateToday:
		// Unit arms.
	default:
		r.key(op)
		r.open('{')
		switch c.Op {
		case message.OpWriteText, message.OpAppendText:
			r.keyStr("path", c.Path)
			r.keyStr("data", c.Text)
		case message.OpWriteBytes, message.OpAppendBytes:
			r.keyStr("path", c.Path)
			r.key("data")
			r.hex(c.Data)
		case message.OpOpen:
			r.keyStr("path", c.Path)
			r.keyStr("mode", c.Mode)
		case message.OpMkdir:
			r.keyStr("path", c.Path)
			r.keyBool("parents", c.Parents)
			r.keyBool("exist_ok", c.ExistOK)
		case message.OpRename:
			r.keyStr("src", c.Path)
			r.keyStr("dst", c.Dst)
		case message.OpGetenv:
			r.keyStr("key", c.Key)
			r.key("default")
			r.root(&c.Values, c.Default)
		case message.OpDateTimeNow:
			if c.TZ != nil {
				r.key("tz")
				r.timezone(c.TZ)
			}
		case message.OpUrandom:
			r.keyUint("size", c.Size)
		case message.OpTime:
			r.keyStr("caller", c.Caller)
		case message.OpSleep, message.OpSystemSleep:
			r.key("seconds")
			r.float(c.Seconds)
		case message.OpAsyncSleep, message.OpAsyncSystemSleep:
			r.key("delay")
			r.float(c.Seconds)
		}
		r.close('}')
	}
	if r.proto >= 5 {
		r.keyBool("allow_eager_await", c.AllowEagerAwait)
	}
	r.position(c.Position)
}

// --- values ---

// root writes the value tree of a message's root id, with its repr beside
// the kind: {"kind":"int","int":3,"repr":"3"}. A tree that would take the
// message past its bound is written as {"kind":"repr","repr":…} instead,
// the repr itself cut to "..." when it does not fit either.
func (r *renderer) root(g *value.Graph, id value.NodeID) {
	g, id = g.Unpacked(id)
	if int(id) >= len(g.Nodes) {
		r.buf = append(r.buf, "null"...)
		return
	}
	mark, reprFull := len(r.buf), r.reprFull
	if !r.treeFull && r.tree(g, id) {
		if g.Nodes[id].Kind == value.KindRepr {
			return // its repr is its text, there already
		}
		r.buf = r.buf[:len(r.buf)-1] // reopen the root's object
		r.key("repr")
		r.reprText(g, id)
		r.close('}')
		return
	}
	// What the tree wrote is undone, and with it the room a repr inside
	// it (a branch cut for depth) may have failed to find.
	r.treeFull, r.reprFull = true, reprFull
	r.buf = r.buf[:mark]
	r.open('{')
	r.keyStr("kind", "repr")
	r.key("repr")
	r.reprText(g, id)
	r.close('}')
}

// reprText writes the repr of id, or "..." when it would take the message
// past its bound.
func (r *renderer) reprText(g *value.Graph, id value.NodeID) {
	if r.reprFull {
		r.buf = append(r.buf, `"..."`...)
		return
	}
	r.tries++
	mark := len(r.buf)
	r.buf = appendJSONString(r.buf, g.Repr(id))
	if r.over() {
		r.reprFull = true
		r.buf = append(r.buf[:mark], `"..."`...)
	}
}

// vframe is a container being written: its node, the children in the
// order they are written, and the next one.
type vframe struct {
	n    *value.Node
	kids []value.NodeID
	i    int
}

// tree writes node id of g and everything under it, without recursion.
// It reports false, having written part of the tree, when the message
// outgrew its bound.
func (r *renderer) tree(g *value.Graph, id value.NodeID) bool {
	r.tries++
	r.stack = r.stack[:0]
	r.node(g, id)
	for len(r.stack) > 0 {
		if r.over() {
			return false
		}
		f := &r.stack[len(r.stack)-1]
		if f.i == len(f.kids) {
			r.endContainer(f.n)
			r.stack = r.stack[:len(r.stack)-1]
			continue
		}
		i := f.i
		f.i++
		r.beforeChild(f.n, i)
		kid := f.kids[i]
		r.node(g, kid) // may push a frame: f is not used after this
	}
	return !r.over()
}

// node writes a leaf whole, or a container's opening (pushing its frame).
func (r *renderer) node(g *value.Graph, id value.NodeID) {
	if int(id) >= len(g.Nodes) {
		r.buf = append(r.buf, "null"...)
		r.first = false
		return
	}
	n := &g.Nodes[id]
	r.open('{')
	if len(r.stack) >= maxTreeDepth && n.Kind.IsContainer() {
		// Deeper than tools reading the line may nest: the rest of the
		// branch as its repr.
		r.keyStr("kind", "repr")
		r.key("repr")
		r.reprText(g, id)
		r.close('}')
		return
	}
	name := ""
	if int(n.Kind) < len(nodeArms) {
		name = nodeArms[n.Kind]
	}
	if name == "" {
		// No kind the decoders produce: the kind's number.
		r.key("kind")
		r.uint(uint64(n.Kind))
		r.close('}')
		return
	}
	r.keyStr("kind", name)
	switch n.Kind {
	case value.KindEllipsis, value.KindNone, value.KindNotImplemented:
		// Unit arms.
	case value.KindBool:
		r.keyBool(name, n.Bool())
	case value.KindInt:
		r.key(name)
		r.int(n.Int())
	case value.KindBigInt:
		r.key(name)
		r.bigint(n.BigInt())
	case value.KindFloat:
		r.key(name)
		r.float(n.Float())
	case value.KindStr, value.KindBuiltinFunction, value.KindPath, value.KindRepr:
		r.keyStr(name, n.Text())
	case value.KindCycle:
		if r.proto == 2 {
			// Protocol 2's Cycle is a message with an identity.
			r.key(name)
			r.open('{')
			r.keyUint("identity", n.Num)
			r.keyStr("placeholder", n.Text())
			r.close('}')
		} else {
			r.keyStr(name, n.Text())
		}
	case value.KindBytes:
		r.key(name)
		r.hex(n.Bytes())
	case value.KindDate:
		d, _ := n.Ext().(*value.Date)
		r.key(name)
		r.date(d)
	case value.KindTime:
		t, _ := n.Ext().(*value.Time)
		r.key(name)
		r.time(t)
	case value.KindDateTime:
		d, _ := n.Ext().(*value.DateTime)
		r.key(name)
		r.datetime(d)
	case value.KindTimeDelta:
		d, _ := n.Ext().(*value.TimeDelta)
		r.key(name)
		r.open('{')
		if d != nil {
			r.key("days")
			r.int(int64(d.Days))
			r.key("seconds")
			r.int(int64(d.Seconds))
			r.key("microseconds")
			r.int(int64(d.Microseconds))
		}
		r.close('}')
	case value.KindTimeZone:
		z, _ := n.Ext().(*value.TimeZone)
		r.key(name)
		r.timezone(z)
	case value.KindException:
		e, _ := n.Ext().(*value.Exception)
		r.key(name)
		r.open('{')
		if e != nil {
			r.keyStr("exc_type", e.Type)
			r.keyOptStr("arg", e.Arg)
		}
		r.close('}')
	case value.KindFunction:
		fn, _ := n.Ext().(*value.Function)
		r.key(name)
		r.open('{')
		if fn != nil {
			r.keyStr("name", fn.Name)
			r.keyOptStr("docstring", fn.Docstring)
		}
		r.close('}')
	case value.KindFileHandle:
		fh, _ := n.Ext().(*value.FileHandle)
		r.key(name)
		r.open('{')
		if fh != nil {
			r.keyStr("path", fh.Path)
			r.keyStr("mode", fh.Mode)
			r.keyUint("position", fh.Position)
		}
		r.close('}')
	case value.KindList, value.KindTuple, value.KindSet, value.KindFrozenSet, value.KindDict:
		r.key(name)
		r.open('[')
		r.stack = append(r.stack, vframe{n: n, kids: n.Refs()})
		return
	case value.KindNamedTuple:
		nt, _ := n.Ext().(*value.NamedTuple)
		r.key(name)
		r.open('{')
		if nt != nil {
			r.keyStr("type_name", nt.TypeName)
			r.key("field_names")
			r.open('[')
			for _, f := range nt.FieldNames {
				r.sep()
				r.str(f)
			}
			r.close(']')
		}
		r.key("values")
		r.open('[')
		r.stack = append(r.stack, vframe{n: n, kids: n.Refs()})
		return
	case value.KindType:
		t, _ := n.Ext().(*value.Type)
		r.key(name)
		r.open('{')
		if t == nil {
			r.close('}')
			break
		}
		r.keyStr("name", t.Name)
		if !t.ID.IsZero() {
			r.keyStr("id", t.ID.String())
		}
		r.keyEnum("origin", typeOriginNames, uint64(t.Origin))
		r.keyBool("is_dataclass", t.IsDataclass)
		r.key("attrs")
		r.open('[')
		r.stack = append(r.stack, vframe{n: n, kids: pairIDs(t.Attrs, nil)})
		return
	case value.KindClassInstance:
		ci, _ := n.Ext().(*value.ClassInstance)
		r.key(name)
		r.open('{')
		if ci == nil {
			r.close('}')
			break
		}
		r.stack = append(r.stack, vframe{n: n, kids: pairIDs(ci.Attrs, []value.NodeID{ci.Class})})
		return
	}
	r.close('}')
}

// pairIDs lists pairs' ids key, value, key, value…, after head.
func pairIDs(pairs []value.Pair, head []value.NodeID) []value.NodeID {
	ids := make([]value.NodeID, 0, len(head)+2*len(pairs))
	ids = append(ids, head...)
	for _, p := range pairs {
		ids = append(ids, p.Key, p.Value)
	}
	return ids
}

// beforeChild writes what comes before child i of container n.
func (r *renderer) beforeChild(n *value.Node, i int) {
	switch n.Kind {
	case value.KindDict, value.KindType:
		r.pairPart(i)
	case value.KindClassInstance:
		if i == 0 {
			if r.proto == 2 {
				r.key("type")
			} else {
				r.key("class_type")
			}
			return
		}
		if i == 1 {
			ci, _ := n.Ext().(*value.ClassInstance)
			if ci != nil {
				r.keyStr("instance_id", ci.InstanceID.String())
			}
			r.key("attrs")
			r.open('[')
		}
		r.pairPart(i - 1)
	default:
		r.sep()
	}
}

// pairPart writes what comes before item i of a pair list: an opening
// {"key": for a key, ,"value": for its value.
func (r *renderer) pairPart(i int) {
	if i%2 == 0 {
		if i > 0 {
			r.close('}')
		}
		r.sep()
		r.open('{')
		r.key("key")
		return
	}
	r.key("value")
}

// endContainer closes what node opened for container n.
func (r *renderer) endContainer(n *value.Node) {
	switch n.Kind {
	case value.KindList, value.KindTuple, value.KindSet, value.KindFrozenSet:
		r.close(']')
	case value.KindDict:
		if len(n.Refs()) > 0 {
			r.close('}')
		}
		r.close(']')
	case value.KindNamedTuple:
		r.close(']')
		r.close('}')
	case value.KindType:
		if t, _ := n.Ext().(*value.Type); t != nil && len(t.Attrs) > 0 {
			r.close('}')
		}
		r.close(']')
		r.close('}')
	case value.KindClassInstance:
		ci, _ := n.Ext().(*value.ClassInstance)
		if len(ci.Attrs) > 0 {
			r.close('}')
		} else {
			// beforeChild never saw child 1.
			r.keyStr("instance_id", ci.InstanceID.String())
			r.key("attrs")
			r.open('[')
		}
		r.close(']')
		r.close('}')
	}
	r.close('}') // the node's own object
}

// bigint writes a big int as a JSON string of its decimal digits, or, past
// value.MaxIntStrDigits digits (which CPython itself refuses to print), of
// its hex digits after "0x" (with the sign before it).
func (r *renderer) bigint(x *big.Int) {
	if x == nil {
		r.str("0")
		return
	}
	r.buf = append(r.buf, '"')
	if float64(x.BitLen())*math.Log10(2) < value.MaxIntStrDigits {
		r.buf = x.Append(r.buf, 10)
	} else {
		if x.Sign() < 0 {
			r.buf = append(r.buf, '-')
		}
		r.buf = append(r.buf, "0x"...)
		r.buf = new(big.Int).Abs(x).Append(r.buf, 16)
	}
	r.buf = append(r.buf, '"')
}

func (r *renderer) date(d *value.Date) {
	r.open('{')
	if d != nil {
		r.key("year")
		r.int(int64(d.Year))
		r.keyUint("month", uint64(d.Month))
		r.keyUint("day", uint64(d.Day))
	}
	r.close('}')
}

func (r *renderer) time(t *value.Time) {
	r.open('{')
	if t != nil {
		r.keyUint("hour", uint64(t.Hour))
		r.keyUint("minute", uint64(t.Minute))
		r.keyUint("second", uint64(t.Second))
		r.keyUint("microsecond", uint64(t.Microsecond))
		r.offset(t.Offset, t.TZName)
		r.keyUint("fold", uint64(t.Fold))
	}
	r.close('}')
}

func (r *renderer) datetime(d *value.DateTime) {
	r.open('{')
	if d != nil {
		r.key("year")
		r.int(int64(d.Year))
		r.keyUint("month", uint64(d.Month))
		r.keyUint("day", uint64(d.Day))
		r.keyUint("hour", uint64(d.Hour))
		r.keyUint("minute", uint64(d.Minute))
		r.keyUint("second", uint64(d.Second))
		r.keyUint("microsecond", uint64(d.Microsecond))
		r.offset(d.Offset, d.TZName)
	}
	r.close('}')
}

func (r *renderer) offset(off *int32, name *string) {
	if off != nil {
		r.key("offset_seconds")
		r.int(int64(*off))
	}
	r.keyOptStr("timezone_name", name)
}

func (r *renderer) timezone(z *value.TimeZone) {
	r.open('{')
	if z != nil {
		r.key("offset_seconds")
		r.int(int64(z.Offset))
		r.keyOptStr("name", z.Name)
	}
	r.close('}')
}

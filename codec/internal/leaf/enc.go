package leaf

import (
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The encode side of the shared protocol messages: each Size is the
// payload length the matching Append writes (without the enclosing
// field's key and length), field for field in ascending order as the
// worker writes them. Encoders check what they must before sizing; these
// functions only measure and write.

// UUIDFieldSize is the size of a Uuid message field (field number below
// 16) holding its 16 bytes.
const UUIDFieldSize = 1 + 1 + 18

// AppendUUID writes a Uuid message field holding u.
func AppendUUID(b []byte, num protowire.Number, u *value.UUID) []byte {
	b = AppendM(b, num, 18)
	b = append(b, 0x0a, 0x10)
	return append(b, u[:]...)
}

// PackedSize is the payload size of a packed repeated uint32 field.
func PackedSize(ids []uint32) int {
	n := 0
	for _, id := range ids {
		switch {
		case id < 1<<7:
			n++
		case id < 1<<14:
			n += 2
		case id < 1<<21:
			n += 3
		case id < 1<<28:
			n += 4
		default:
			n += 5
		}
	}
	return n
}

// SizePacked is the size of a packed uint32 field (absent when empty).
func SizePacked(num protowire.Number, ids []uint32) int {
	if len(ids) == 0 {
		return 0
	}
	return SizeM(num, PackedSize(ids))
}

// AppendPacked writes a packed uint32 field (nothing when empty).
func AppendPacked(b []byte, num protowire.Number, ids []uint32) []byte {
	if len(ids) == 0 {
		return b
	}
	b = AppendM(b, num, PackedSize(ids))
	for _, id := range ids {
		if id < 0x80 {
			b = append(b, byte(id))
		} else {
			b = protowire.AppendVarint(b, uint64(id))
		}
	}
	return b
}

// sizeOptUN is SizeOptU of a field a version may lack (num 0).
func sizeOptUN(num protowire.Number, p *uint64) int {
	if num == 0 {
		return 0
	}
	return SizeOptU(num, p)
}

func appendOptUN(b []byte, num protowire.Number, p *uint64) []byte {
	if num == 0 {
		return b
	}
	return AppendOptU(b, num, p)
}

// LimitsSize is the payload size of a ResourceLimits with the field
// numbers n; a limit whose number is 0 is not written (the encoders'
// field checks have refused it when set).
func LimitsSize(x *message.ResourceLimits, n LimitNums) int {
	return sizeOptUN(n.Duration, x.MaxDurationMicros) + SizeOptU(2, x.MaxMemoryBytes) + SizeOptU(3, x.GCInterval) +
		SizeOptU(4, x.MaxRecursionDepth) + SizeOptU(5, x.MaxSuspensions) + sizeOptUN(n.Feed, x.MaxFeedDurationMicros) +
		sizeOptUN(n.Turn, x.MaxTurnDurationMicros) + sizeOptUN(n.Sleep, x.MaxTotalSleepMicros)
}

// AppendLimits writes a ResourceLimits payload, max_duration_micros first
// whatever its number (as the worker does).
func AppendLimits(b []byte, x *message.ResourceLimits, n LimitNums) []byte {
	b = appendOptUN(b, n.Duration, x.MaxDurationMicros)
	b = AppendOptU(b, 2, x.MaxMemoryBytes)
	b = AppendOptU(b, 3, x.GCInterval)
	b = AppendOptU(b, 4, x.MaxRecursionDepth)
	b = AppendOptU(b, 5, x.MaxSuspensions)
	b = appendOptUN(b, n.Feed, x.MaxFeedDurationMicros)
	b = appendOptUN(b, n.Turn, x.MaxTurnDurationMicros)
	return appendOptUN(b, n.Sleep, x.MaxTotalSleepMicros)
}

// enumBits is the varint form of an enum held as uint32: enums are int32
// on the wire, negative ones sign-extended.
func enumBits(v message.TypeCheckFormat) uint64 { return uint64(int64(int32(v))) }

// ConfigureSize is the size of a Configure's fields 1 to 10, the ones
// every version numbers alike (the later ones are the encoder's).
func ConfigureSize(x *message.Configure, n LimitNums) int {
	s := SizeS(1, len(x.ScriptName)) + SizeBool(3, x.TypeCheck) + SizeOptS(4, x.TypeCheckStubs) +
		SizeS(5, len(x.MontyVersion)) + SizeOptU32(6, x.AssertMessageAnnotations) +
		SizeU(7, enumBits(x.TypeCheckFormat)) + SizeBool(8, x.TypeCheckColor) +
		SizeU(9, uint64(x.ProtocolVersion)) + SizeOptU32(10, x.PrintFlushIntervalMs)
	if x.Limits != nil {
		s += SizeM(2, LimitsSize(x.Limits, n))
	}
	return s
}

// AppendConfigure writes a Configure's fields 1 to 10.
func AppendConfigure(b []byte, x *message.Configure, n LimitNums) []byte {
	b = AppendS(b, 1, x.ScriptName)
	if x.Limits != nil {
		b = AppendM(b, 2, LimitsSize(x.Limits, n))
		b = AppendLimits(b, x.Limits, n)
	}
	b = AppendBool(b, 3, x.TypeCheck)
	b = AppendOptS(b, 4, x.TypeCheckStubs)
	b = AppendS(b, 5, x.MontyVersion)
	b = AppendOptU32(b, 6, x.AssertMessageAnnotations)
	b = AppendU(b, 7, enumBits(x.TypeCheckFormat))
	b = AppendBool(b, 8, x.TypeCheckColor)
	b = AppendU(b, 9, uint64(x.ProtocolVersion))
	return AppendOptU32(b, 10, x.PrintFlushIntervalMs)
}

// ExcSize is the payload size of a RaisedException (0 for nil).
func ExcSize(x *message.RaisedException) int {
	if x == nil {
		return 0
	}
	n := SizeS(1, len(x.Type)) + SizeOptS(2, x.Message)
	for i := range x.Traceback {
		n += SizeM(3, frameSize(&x.Traceback[i]))
	}
	if l, ok := excDataSize(x.Data); ok {
		n += SizeM(4, l)
	}
	return n
}

// AppendExc writes a RaisedException payload. Of a UnicodeErrorData with
// both object arms set (which the encoders refuse) only the bytes go out.
func AppendExc(b []byte, x *message.RaisedException) []byte {
	if x == nil {
		return b
	}
	b = AppendS(b, 1, x.Type)
	b = AppendOptS(b, 2, x.Message)
	for i := range x.Traceback {
		f := &x.Traceback[i]
		b = AppendM(b, 3, frameSize(f))
		b = AppendS(b, 1, f.Filename)
		b = appendLoc(b, 2, f.Start)
		b = appendLoc(b, 3, f.End)
		b = AppendOptS(b, 4, f.FrameName)
		b = AppendOptS(b, 5, f.PreviewLine)
		b = AppendBool(b, 6, f.HideCaret)
		b = AppendBool(b, 7, f.HideFrameName)
	}
	l, ok := excDataSize(x.Data)
	if !ok {
		return b
	}
	b = AppendM(b, 4, l)
	switch d := x.Data.(type) {
	case *message.UnicodeErrorData:
		b = AppendM(b, 1, unicodeSize(d))
		b = AppendS(b, 1, d.Encoding)
		if d.ObjectBytes != nil {
			b = AppendBytesA(b, 2, d.ObjectBytes)
		} else if d.ObjectStr != nil {
			b = AppendSA(b, 3, *d.ObjectStr)
		}
		b = AppendU(b, 4, d.Start)
		b = AppendU(b, 5, d.End)
		b = AppendS(b, 6, d.Reason)
	case *message.JSONErrorData:
		b = AppendM(b, 2, jsonSize(d))
		b = AppendS(b, 1, d.Msg)
		b = AppendOptS(b, 2, d.Doc)
		b = AppendU(b, 3, d.Pos)
		b = AppendU(b, 4, d.Lineno)
		b = AppendU(b, 5, d.Colno)
	}
	return b
}

func locSize(l message.CodeLoc) int { return SizeU(1, uint64(l.Line)) + SizeU(2, uint64(l.Column)) }

func appendLoc(b []byte, num protowire.Number, l message.CodeLoc) []byte {
	b = AppendM(b, num, locSize(l))
	b = AppendU(b, 1, uint64(l.Line))
	return AppendU(b, 2, uint64(l.Column))
}

func frameSize(f *message.StackFrame) int {
	return SizeS(1, len(f.Filename)) + SizeM(2, locSize(f.Start)) + SizeM(3, locSize(f.End)) +
		SizeOptS(4, f.FrameName) + SizeOptS(5, f.PreviewLine) + SizeBool(6, f.HideCaret) + SizeBool(7, f.HideFrameName)
}

// excDataSize is the payload size of an ExcData message, and whether one
// is written at all.
func excDataSize(d message.ExcData) (int, bool) {
	switch x := d.(type) {
	case *message.UnicodeErrorData:
		if x != nil {
			return SizeM(1, unicodeSize(x)), true
		}
	case *message.JSONErrorData:
		if x != nil {
			return SizeM(2, jsonSize(x)), true
		}
	}
	return 0, false
}

func unicodeSize(x *message.UnicodeErrorData) int {
	n := SizeS(1, len(x.Encoding)) + SizeU(4, x.Start) + SizeU(5, x.End) + SizeS(6, len(x.Reason))
	if x.ObjectBytes != nil {
		n += SizeM(2, len(x.ObjectBytes))
	} else if x.ObjectStr != nil {
		n += SizeM(3, len(*x.ObjectStr))
	}
	return n
}

func jsonSize(x *message.JSONErrorData) int {
	return SizeS(1, len(x.Msg)) + SizeOptS(2, x.Doc) + SizeU(3, x.Pos) + SizeU(4, x.Lineno) + SizeU(5, x.Colno)
}

// SegmentSize is the payload size of a Print segment (the protocol-2
// Print event has the same two fields).
func SegmentSize(s *message.PrintSegment) int {
	return SizeU(1, uint64(s.Stream)) + SizeS(2, len(s.Text))
}

// AppendSegment writes a Print segment's payload.
func AppendSegment(b []byte, s *message.PrintSegment) []byte {
	b = AppendU(b, 1, uint64(s.Stream))
	return AppendS(b, 2, s.Text)
}

// OsArgSize is the payload size of the OsCall argument arm of the ops
// numbered alike in every version (1 to 24 but getenv, 21, whose default
// is written per version); ok is false for the other ops.
func OsArgSize(x *message.OsCall) (n int, ok bool) {
	switch op := x.Op; {
	case op == 0 || op == message.OpGetenv || op > message.OpDateTimeNow:
		return 0, false
	case op <= message.OpRmdir:
		return len(x.Path), true
	case op == message.OpWriteText || op == message.OpAppendText:
		return SizeS(1, len(x.Path)) + SizeS(2, len(x.Text)), true
	case op == message.OpWriteBytes || op == message.OpAppendBytes:
		return SizeS(1, len(x.Path)) + SizeS(2, len(x.Data)), true
	case op == message.OpOpen:
		return SizeS(1, len(x.Path)) + SizeS(2, len(FileMode(x.Mode))), true
	case op == message.OpMkdir:
		return SizeS(1, len(x.Path)) + SizeBool(2, x.Parents) + SizeBool(3, x.ExistOK), true
	case op == message.OpRename:
		return SizeS(1, len(x.Path)) + SizeS(2, len(x.Dst)), true
	case op == message.OpDateTimeNow && x.TZ != nil:
		return SizeM(1, TimeZoneSize(x.TZ)), true
	}
	return 0, true // get_environ, date_today, date_time_now without a zone
}

// AppendOsArg writes the payload OsArgSize measures.
func AppendOsArg(b []byte, x *message.OsCall) []byte {
	switch op := x.Op; {
	case op <= message.OpRmdir:
		return append(b, x.Path...)
	case op == message.OpWriteText || op == message.OpAppendText:
		return AppendS(AppendS(b, 1, x.Path), 2, x.Text)
	case op == message.OpWriteBytes || op == message.OpAppendBytes:
		return AppendBytes(AppendS(b, 1, x.Path), 2, x.Data)
	case op == message.OpOpen:
		return AppendS(AppendS(b, 1, x.Path), 2, FileMode(x.Mode))
	case op == message.OpMkdir:
		return AppendBool(AppendBool(AppendS(b, 1, x.Path), 2, x.Parents), 3, x.ExistOK)
	case op == message.OpRename:
		return AppendS(AppendS(b, 1, x.Path), 2, x.Dst)
	case op == message.OpDateTimeNow && x.TZ != nil:
		return AppendTimeZone(AppendM(b, 1, TimeZoneSize(x.TZ)), x.TZ)
	}
	return b
}

// BadText returns the name of the first string field of f that is not
// valid UTF-8 (protocol 2's encoder refuses such a frame).
func (f *Fields) BadText() (string, bool) {
	for i := range f.n {
		s := &f.s[i]
		switch d := s.Dst.(type) {
		case *string:
			if !utf8.ValidString(*d) {
				return s.Name, true
			}
		case **string:
			if *d != nil && !utf8.ValidString(**d) {
				return s.Name, true
			}
		}
	}
	return "", false
}

// ExcBadText is BadText over every string of a RaisedException.
func ExcBadText(x *message.RaisedException) (string, bool) {
	switch {
	case x == nil:
		return "", false
	case !utf8.ValidString(x.Type):
		return "RaisedException.exc_type", true
	case x.Message != nil && !utf8.ValidString(*x.Message):
		return "RaisedException.message", true
	}
	for i := range x.Traceback {
		f := StackFrameFields(&x.Traceback[i])
		if name, bad := f.BadText(); bad {
			return name, true
		}
	}
	switch d := x.Data.(type) {
	case *message.UnicodeErrorData:
		switch {
		case d == nil:
		case !utf8.ValidString(d.Encoding):
			return "UnicodeErrorData.encoding", true
		case d.ObjectStr != nil && !utf8.ValidString(*d.ObjectStr):
			return "UnicodeErrorData.object_str", true
		case !utf8.ValidString(d.Reason):
			return "UnicodeErrorData.reason", true
		}
	case *message.JSONErrorData:
		if d != nil {
			f := JSONErrorFields(d)
			return f.BadText()
		}
	}
	return "", false
}

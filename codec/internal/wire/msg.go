package wire

import (
	"strconv"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/internal/budget"
	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The messages both protocol versions shape alike, decoded once: the
// exception family (RaisedException, StackFrame, ExcData,
// UnicodeErrorData), ExtFunctionResult, ResumeNameLookup's kind arm,
// Configure with its ResourceLimits, a print segment, the OsCall argument
// messages, Uuid, and the checks of a decoded Type and class instance.
// Each takes a payload (or a field, when the version decides where its
// target is made: see Dec) and names its fields in an error path as prost
// does; the fields the versions shape apart are handed to a function of
// the caller.

// Exception merges one occurrence of a RaisedException field into *p,
// making it when absent; seg names the field.
func (d *Dec) Exception(wt protowire.Type, b []byte, p **message.RaisedException, seg string) (int, error) {
	v, n, err := d.open(wt, b, func() error { return NewAt(d, p) })
	if err == nil {
		x := *p
		err = d.Walk(v, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			switch num {
			case 1:
				n, err := d.Text(wt, b, &x.Type)
				return Wrap(n, err, "RaisedException.exc_type")
			case 2:
				n, err := d.OptText(wt, b, &x.Message)
				return Wrap(n, err, "RaisedException.message")
			case 3:
				n, err := d.stackFrame(wt, b, x)
				return Wrap(n, err, "RaisedException.traceback")
			case 4:
				n, err := d.excData(wt, b, x)
				return Wrap(n, err, "RaisedException.data")
			}
			return -1, nil
		})
	}
	return Wrap(n, err, seg)
}

// ExtResult merges one occurrence of an ExtFunctionResult field (seg) into
// *p, making it when absent. value reads the return value, which the
// versions shape apart; switched (nil: none) learns that another arm
// replaced the one held.
func (d *Dec) ExtResult(wt protowire.Type, b []byte, p **message.ExtResult, seg string,
	value func(protowire.Type, []byte, *message.ExtResult) (int, error), switched func()) (int, error) {
	v, n, err := d.open(wt, b, func() error { return NewAt(d, p) })
	if err == nil {
		r := *p
		err = d.Walk(v, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if num < 1 || num > 5 {
				return -1, nil
			}
			if k := message.ResultKind(num); r.Kind != k {
				*r = message.ExtResult{Kind: k}
				if switched != nil {
					switched()
				}
			}
			const seg = "ExtFunctionResult.kind"
			var n int
			var err error
			switch num {
			case 1:
				n, err = value(wt, b, r)
			case 2:
				return d.Exception(wt, b, &r.Error, seg)
			case 3:
				n, err = Int(wt, b, &r.Future)
			case 4:
				n, err = d.Text(wt, b, &r.Name)
			case 5:
				return d.Sub(wt, b, seg, d.SkipMessage)
			}
			return Wrap(n, err, seg)
		})
	}
	return Wrap(n, err, seg)
}

// LookupArm merges one occurrence of ResumeNameLookup's kind arm k into x,
// which another arm resets (switched, nil for none, learns of it). value
// reads the value arm, which the versions shape apart.
func (d *Dec) LookupArm(k message.LookupKind, wt protowire.Type, b []byte, x *message.ResumeNameLookup,
	value func(protowire.Type, []byte) (int, error), switched func()) (int, error) {
	if x.Kind != k {
		x.Kind, x.Value, x.Error = k, 0, nil
		if switched != nil {
			switched()
		}
	}
	const seg = "ResumeNameLookup.kind"
	switch k {
	case message.LookupValue:
		n, err := value(wt, b)
		return Wrap(n, err, seg)
	case message.LookupUndefined:
		return d.Sub(wt, b, seg, d.SkipMessage)
	}
	return d.Exception(wt, b, &x.Error, seg)
}

// CheckType applies the rules of a decoded Type in the worker's order: the
// origin's range, then value's rules on the id and attrs presence and the
// builtin name, then the id's length.
func CheckType(t *value.Type, origin int32, idSeen bool, idLen int, attrsSeen bool) error {
	if origin < 0 || origin > int32(value.OriginHost) {
		return valuecheck.InvalidValue("Type.origin", "unknown origin "+strconv.Itoa(int(origin)))
	}
	t.Origin = value.TypeOrigin(origin)
	if err := valuecheck.CheckType(t, idSeen, attrsSeen); err != nil {
		return err
	}
	if idSeen && idLen != 16 {
		return UUIDLenErr("Type.id", idLen)
	}
	return nil
}

// CheckInstance checks the fields a class instance message (msg) requires:
// its instance_id, 16 bytes long, and its attrs.
func CheckInstance(msg string, idSeen bool, idLen int, attrsSeen bool) error {
	switch {
	case !idSeen:
		return valuecheck.MissingField(msg + ".instance_id")
	case idLen != 16:
		return UUIDLenErr(msg+".instance_id", idLen)
	case !attrsSeen:
		return valuecheck.MissingField(msg + ".attrs")
	}
	return nil
}

// stackFrame appends one traceback frame to e. The frame is decoded in
// place: its field table holds pointers into it, so a local would move to
// the heap, one allocation per frame. Protocol 4 checks the wire type
// before it grows the traceback, protocol 2 after.
func (d *Dec) stackFrame(wt protowire.Type, b []byte, e *message.RaisedException) (int, error) {
	if !d.Proto2 && wt != protowire.BytesType {
		return 0, &TypeError{Got: wt, Want: protowire.BytesType}
	}
	var err error
	if e.Traceback, err = grow(d, e.Traceback); err != nil {
		return 0, err
	}
	e.Traceback = append(e.Traceback, message.StackFrame{})
	f := &e.Traceback[len(e.Traceback)-1]
	var start, end bool
	n, err := d.FieldsMsg(wt, b, leaf.StackFrameFields(f), func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 2:
			start = true
			n, err := d.FieldsMsg(wt, b, leaf.CodeLocFields(&f.Start), nil)
			return Wrap(n, err, "StackFrame.start")
		case 3:
			end = true
			n, err := d.FieldsMsg(wt, b, leaf.CodeLocFields(&f.End), nil)
			return Wrap(n, err, "StackFrame.end")
		}
		return -1, nil
	})
	if err != nil || (start && end) {
		return n, err
	}
	// Checked when the exception converts, after its type.
	return n, d.Missing.Note(e, start, d.Charge)
}

// grow makes room for one more element in s by the protocol's vector rule,
// charging the replacement allocation at the Go size of T.
func grow[T any](d *Dec, s []T) ([]T, error) {
	var z T
	return budget.Grow(&d.Bud, s, int64(unsafe.Sizeof(z)))
}

// excData merges one occurrence of an ExcData field into e.Data; an arm
// other than the one held replaces it.
func (d *Dec) excData(wt protowire.Type, b []byte, e *message.RaisedException) (int, error) {
	v, n, err := d.Msg(wt, b)
	if err != nil {
		return 0, err
	}
	return n, d.Walk(v, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return excArm(d, wt, b, e, d.unicodeData)
		case 2:
			return excArm(d, wt, b, e, func(v []byte, j *message.JSONErrorData) error {
				return d.Fields(v, leaf.JSONErrorFields(j), true, nil)
			})
		}
		return -1, nil
	})
}

// excArm merges one occurrence of an ExcData arm whose payload is a T,
// made (when e.Data holds another) in the version's order; read decodes it.
func excArm[T any, PT interface {
	*T
	message.ExcData
}](d *Dec, wt protowire.Type, b []byte, e *message.RaisedException, read func([]byte, PT) error) (int, error) {
	x, _ := e.Data.(PT)
	v, n, err := d.open(wt, b, func() error {
		if x != nil {
			return nil
		}
		y, err := New[T](d)
		if err == nil {
			x, e.Data = y, PT(y)
		}
		return err
	})
	if err == nil {
		err = read(v, x)
	}
	return Wrap(n, err, "ExcData.kind")
}

// unicodeData merges a UnicodeErrorData message into x. Its object is
// bytes or a string, the last occurrence winning; protocol 2 boxes each
// string occurrence afresh, protocol 4 reuses the box.
func (d *Dec) unicodeData(b []byte, x *message.UnicodeErrorData) error {
	return d.Fields(b, leaf.UnicodeErrorFields(x), true, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 2:
			v, n, err := BytesField(wt, b)
			if err == nil {
				x.ObjectStr = nil
				x.ObjectBytes, err = d.Bytes(v)
			}
			return Wrap(n, err, "UnicodeErrorData.object")
		case 3:
			v, n, err := TextField(wt, b)
			if err == nil {
				if d.Proto2 {
					x.ObjectStr = nil
				}
				x.ObjectBytes = nil
				err = d.StrPtr(&x.ObjectStr, v)
			}
			return Wrap(n, err, "UnicodeErrorData.object")
		}
		return -1, nil
	})
}

// Configure merges a Configure message into x: the fields both versions
// number alike, the limits by the version's numbers (lim); other (nil:
// skip) takes the rest.
func (d *Dec) Configure(b []byte, x *message.Configure, lim leaf.LimitNums, other FieldFunc) error {
	return d.Fields(b, leaf.ConfigureFields(x), true, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if num != 2 {
			if other == nil {
				return -1, nil
			}
			return other(num, wt, b)
		}
		v, n, err := d.open(wt, b, func() error { return NewAt(d, &x.Limits) })
		if err == nil {
			err = d.Fields(v, leaf.LimitFields(x.Limits, lim), true, nil)
		}
		return Wrap(n, err, "Configure.limits")
	})
}

// PrintSegment merges a print segment (protocol 2's Print, protocol 4's
// PrintSegment: msg names it in an error path) into s. A stream the domain
// type cannot hold is StreamUnspecified.
func (d *Dec) PrintSegment(b []byte, s *message.PrintSegment, msg string) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		var n int
		var err error
		var field string
		switch num {
		case 1:
			var v int32
			n, err = Int(wt, b, &v)
			s.Stream = message.StreamUnspecified
			if v > 0 && v <= 255 {
				s.Stream = message.PrintStream(v)
			}
			field = ".stream"
		case 2:
			n, err = d.Text(wt, b, &s.Text)
			field = ".text"
		default:
			return -1, nil
		}
		if err != nil {
			return 0, At(err, msg+field)
		}
		return n, nil
	})
}

// OsArgs merges one occurrence of OsCall arm op (its number, up to
// urandom; a protocol-5 arm is mapped by its dialect) into x, which an
// arm other than the one held resets. other takes the arms the versions
// shape apart (getenv, protocol 5's), given the arm's payload. The caller
// names the field ("OsCall.call").
func (d *Dec) OsArgs(op message.OsOp, wt protowire.Type, b []byte, x *message.OsCall, other func(v []byte) error) (int, error) {
	if x.Op != op {
		*x = message.OsCall{CallID: x.CallID, Op: op, Values: x.Values,
			AllowEagerAwait: x.AllowEagerAwait, Position: x.Position}
	}
	v, n, err := d.Msg(wt, b)
	if err != nil {
		return 0, err
	}
	num := protowire.Number(op)
	if f, ok := leaf.OsArgFields(num, x); ok {
		err = d.Fields(v, f, true, nil)
		return n, err
	}
	switch {
	case num <= 13:
		if err = CheckUTF8(v); err == nil {
			x.Path, err = d.Str(v)
		}
	case num == 22 || num == 23:
		err = d.SkipMessage(v)
	case num == 24:
		err = d.OsFields(v, "DateTimeNow", func(f protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if f != 1 {
				return -1, nil
			}
			v, n, err := d.open(wt, b, func() error { return NewAt(d, &x.TZ) })
			if err == nil {
				// The generated TimeZone names its fields, unlike a
				// value's leaf.
				err = d.Fields(v, leaf.TimeZoneFields(x.TZ), true, nil)
			}
			return n, err
		}, "tz")
	case num == 25:
		err = d.OsFields(v, "Urandom", func(f protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if f != 1 {
				return -1, nil
			}
			return Int(wt, b, &x.Size)
		}, "size")
	default:
		err = other(v)
	}
	return n, err
}

// OsFields walks one of OsCall's nested payload messages, naming the field
// of an error by the nested message (e.g. "TextWrite.path").
func (d *Dec) OsFields(b []byte, msg string, f FieldFunc, names ...string) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		n, err := f(num, wt, b)
		if err != nil && int(num) <= len(names) {
			return 0, At(err, msg+"."+names[num-1])
		}
		return n, err
	})
}

// UUIDLenErr is the conversion error of a Uuid field whose data is n
// bytes, not 16.
func UUIDLenErr(field string, n int) error {
	return valuecheck.InvalidValue(field, "uuid must be 16 bytes, got "+strconv.Itoa(n))
}

// UUID merges a Uuid message: it returns the length of the last data
// field read (prev when there is none) and copies 16-byte data into u
// (other lengths leave it zero: the callers fail them).
func (d *Dec) UUID(b []byte, prev int, u *value.UUID) (int, error) {
	l := prev
	err := d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if num != 1 {
			return -1, nil
		}
		v, m, err := BytesField(wt, b)
		if err != nil {
			// Uuid is a generated message: its field's errors carry its
			// path segment, a skipped unknown field's do not.
			return 0, At(err, "Uuid.data")
		}
		l = len(v)
		*u = value.UUID{}
		if l == 16 {
			*u = value.UUID(v)
		}
		return m, nil
	})
	if err != nil {
		return 0, err
	}
	return l, nil
}

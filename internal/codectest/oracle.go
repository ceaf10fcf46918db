package codectest

import (
	"errors"
	"math/big"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// OracleSide is one message type of one protocol version for
// CheckMutant: our decoder and encoder, and a fresh generated message of
// the version's schema.
type OracleSide struct {
	Name   string
	Decode func([]byte) (any, error)
	Encode func(any) ([]byte, error)
	Oracle func() proto.Message
}

// CheckMutant holds our decoder to protobuf-go on one frame: where we
// decode, the oracle must decode too, and our re-encoding of what we read
// must read in the oracle as the frame itself does (both as Normalize
// leaves them); where we fail, the error is a *codec.DecodeError. It
// returns whether we decoded and whether the oracle did.
func CheckMutant(t *testing.T, s OracleSide, f []byte) (bool, bool) {
	t.Helper()
	theirs := s.Oracle()
	perr := proto.Unmarshal(f, theirs)
	m, err := s.Decode(f)
	if err != nil {
		var de *codec.DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("%s: % x: error %T %v is not a *codec.DecodeError", s.Name, f, err, err)
		}
		return false, perr == nil
	}
	if perr != nil {
		t.Fatalf("%s: % x: we decode, the oracle fails: %v", s.Name, f, perr)
	}
	b, err := s.Encode(m)
	if err != nil {
		t.Fatalf("%s: % x: decoded message does not encode: %v", s.Name, f, err)
	}
	ours := s.Oracle()
	if err := proto.Unmarshal(b, ours); err != nil {
		t.Fatalf("%s: % x: oracle cannot read our re-encoding: %v", s.Name, f, err)
	}
	Normalize(theirs.ProtoReflect())
	Normalize(ours.ProtoReflect())
	if !proto.Equal(ours, theirs) {
		t.Fatalf("%s: % x: values differ\n ours   %v\n oracle %v", s.Name, f, ours, theirs)
	}
	return true, true
}

// Normalize rewrites m, a message of one of the generated schemas, to what
// the codecs' domain types can say, so that a frame as protobuf-go reads
// it compares with proto.Equal to our decoding of it re-encoded: unknown
// fields dropped (at every level), and the differences the protocol
// defines as meaningless cleared: an Arena's node_count (a capacity hint),
// an empty arena, a class type's empty attrs, a BigInt's leading zero
// bytes and zero's sign, a value's BigInt within int64 (as the int arm),
// a file mode's spelling (value.NormalizeFileMode), a print stream number
// no domain PrintStream holds, and exception data
// message.RaisedException.Sanitize drops.
func Normalize(m protoreflect.Message) {
	m.SetUnknown(nil)
	// A stream number the domain cannot hold reads as unspecified
	// (printStream).
	if fd := m.Descriptor().Fields().ByName("stream"); fd != nil && fd.Kind() == protoreflect.EnumKind {
		if s := m.Get(fd).Enum(); s < 0 || s > 255 {
			m.Clear(fd)
		}
	}
	if m.Descriptor().Name() == "RaisedException" {
		dropInsaneData(m)
	}
	// A BigInt's leading zero bytes, and the sign of zero, say nothing.
	if m.Descriptor().Name() == "BigInt" {
		fd := m.Descriptor().Fields().ByName("magnitude")
		mag := m.Get(fd).Bytes()
		for len(mag) > 0 && mag[0] == 0 {
			mag = mag[1:]
		}
		m.Set(fd, protoreflect.ValueOfBytes(mag))
		if len(mag) == 0 {
			m.Clear(fd)
			m.Clear(m.Descriptor().Fields().ByName("negative"))
		}
	}
	// A class type's empty attrs read as none.
	if m.Descriptor().Name() == "Type" {
		fd := m.Descriptor().Fields().ByName("attrs")
		if a := m.Get(fd).Message(); m.Has(fd) && a.Get(a.Descriptor().Fields().ByName("pairs")).List().Len() == 0 {
			m.Clear(fd)
		}
	}
	// A file mode reads normalized (rt is r, bw is wb).
	if fd := m.Descriptor().Fields().ByName("mode"); fd != nil && fd.Kind() == protoreflect.StringKind {
		if mode, err := value.NormalizeFileMode(m.Get(fd).String()); err == nil {
			m.Set(fd, protoreflect.ValueOfString(mode))
		}
	}
	// A value's BigInt within int64 reads as the int arm (protocol 2's
	// encoder writes it so).
	if fd, fi := m.Descriptor().Fields().ByName("bigint"), m.Descriptor().Fields().ByName("int"); fd != nil && fi != nil && m.Has(fd) {
		b := m.Get(fd).Message()
		mag := b.Get(b.Descriptor().Fields().ByName("magnitude")).Bytes()
		for len(mag) > 0 && mag[0] == 0 {
			mag = mag[1:]
		}
		z := new(big.Int).SetBytes(mag)
		if b.Get(b.Descriptor().Fields().ByName("negative")).Bool() {
			z.Neg(z)
		}
		if z.IsInt64() {
			m.Set(fi, protoreflect.ValueOfInt64(z.Int64()))
		}
	}
	if m.Descriptor().Name() == "Arena" {
		if fd := m.Descriptor().Fields().ByName("node_count"); fd != nil {
			m.Clear(fd)
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					Normalize(mv.Message())
					return true
				})
			}
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				Normalize(v.List().Get(i).Message())
			}
		case fd.Kind() == protoreflect.MessageKind:
			Normalize(v.Message())
			// An empty arena reads as none.
			if fd.Message().Name() == "Arena" && v.Message().Get(fd.Message().Fields().ByName("nodes")).List().Len() == 0 {
				m.Clear(fd)
			}
		}
		return true
	})
}

// dropInsaneData clears a RaisedException's data where the decoders drop
// it: no arm, or an arm message.RaisedException.Sanitize finds inconsistent.
func dropInsaneData(m protoreflect.Message) {
	fd := m.Descriptor().Fields().ByName("data")
	if !m.Has(fd) {
		return
	}
	data := m.Get(fd).Message()
	get := func(x protoreflect.Message, name protoreflect.Name) protoreflect.Value {
		return x.Get(x.Descriptor().Fields().ByName(name))
	}
	has := func(x protoreflect.Message, name protoreflect.Name) bool {
		return x.Has(x.Descriptor().Fields().ByName(name))
	}
	exc := &message.RaisedException{Type: "ValueError"}
	switch {
	case has(data, "unicode"):
		u := get(data, "unicode").Message()
		d := &message.UnicodeErrorData{Encoding: get(u, "encoding").String(), Start: get(u, "start").Uint(),
			End: get(u, "end").Uint(), Reason: get(u, "reason").String()}
		if has(u, "object_bytes") {
			d.ObjectBytes = append([]byte{}, get(u, "object_bytes").Bytes()...)
		}
		if has(u, "object_str") {
			s := get(u, "object_str").String()
			d.ObjectStr = &s
		}
		exc.Data = d
	case has(data, "json"):
		j := get(data, "json").Message()
		d := &message.JSONErrorData{Msg: get(j, "msg").String(), Pos: get(j, "pos").Uint(),
			Lineno: get(j, "lineno").Uint(), Colno: get(j, "colno").Uint()}
		if has(j, "doc") {
			s := get(j, "doc").String()
			d.Doc = &s
		}
		exc.Data = d
	}
	if exc.Data != nil {
		_ = exc.Sanitize()
	}
	if exc.Data == nil {
		m.Clear(fd)
	}
}

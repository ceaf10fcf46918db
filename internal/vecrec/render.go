//go:build unix

package main

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gomonty/monty/internal/pb/montyp2v1"
)

// renderRequest and renderEvent give the debug text of a frame that
// testdata/v2 stores beside its hex ("*_decoded"): every set field in
// field-number order as "name(number): value", nested messages indented.
// The text is only a reading aid; the hex is what the tests use.
func renderRequest(b []byte) string { return render(b, &montyp2v1.ParentRequest{}) }

func renderEvent(b []byte) string { return render(b, &montyp2v1.ChildEvent{}) }

func render(b []byte, m proto.Message) string {
	if err := proto.Unmarshal(b, m); err != nil {
		return "undecodable: " + err.Error()
	}
	var sb strings.Builder
	writeFields(&sb, m.ProtoReflect(), 0)
	return strings.TrimSuffix(sb.String(), "\n")
}

func writeFields(sb *strings.Builder, m protoreflect.Message, depth int) {
	var fds []protoreflect.FieldDescriptor
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		fds = append(fds, fd)
		return true
	})
	sort.Slice(fds, func(i, j int) bool { return fds[i].Number() < fds[j].Number() })
	ind := strings.Repeat("  ", depth)
	for _, fd := range fds {
		v := m.Get(fd)
		head := fmt.Sprintf("%s%s(%d): ", ind, fd.Name(), fd.Number())
		switch {
		case fd.IsList() && fd.Message() == nil && fd.Kind() != protoreflect.StringKind && fd.Kind() != protoreflect.BytesKind:
			l := v.List()
			parts := make([]string, l.Len())
			for i := range parts {
				parts[i] = fmt.Sprint(l.Get(i).Interface())
			}
			sb.WriteString(head + "packed [" + strings.Join(parts, ", ") + "]\n")
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				writeOne(sb, head, fd, l.Get(i), depth)
			}
		default:
			writeOne(sb, head, fd, v, depth)
		}
	}
}

func writeOne(sb *strings.Builder, head string, fd protoreflect.FieldDescriptor, v protoreflect.Value, depth int) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		name := string(fd.Message().Name())
		var inner strings.Builder
		writeFields(&inner, v.Message(), depth+1)
		if inner.Len() == 0 {
			sb.WriteString(head + name + " {}\n")
			return
		}
		sb.WriteString(head + name + " {\n" + inner.String() + strings.Repeat("  ", depth) + "}\n")
	case protoreflect.StringKind:
		sb.WriteString(head + pyRepr(v.String()) + "\n")
	case protoreflect.BytesKind:
		sb.WriteString(fmt.Sprintf("%sbytes[%d] %s\n", head, len(v.Bytes()), hex.EncodeToString(v.Bytes())))
	case protoreflect.BoolKind:
		n := 0
		if v.Bool() {
			n = 1
		}
		sb.WriteString(fmt.Sprintf("%sbool %d\n", head, n))
	case protoreflect.EnumKind:
		sb.WriteString(fmt.Sprintf("%senum %d\n", head, v.Enum()))
	default:
		sb.WriteString(fmt.Sprintf("%s%s %v\n", head, fd.Kind(), v.Interface()))
	}
}

// pyRepr quotes s as Python's repr of a str does, roughly: single quotes
// unless s holds one and no double quote; control characters escaped.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var sb strings.Builder
	sb.WriteByte(q)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == rune(q) || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, r)
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte(q)
	return sb.String()
}

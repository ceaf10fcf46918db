package pb_test

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/gomonty/monty/internal/pb/montyp2v1"
	"github.com/gomonty/monty/internal/pb/montyp5v1"
	"github.com/gomonty/monty/internal/pb/montyv1"
)

var update = flag.Bool("update", false, "rewrite the structure snapshots in testdata/")

const (
	v4Path = "monty/v1/monty.proto"
	v2Path = "montyp2/v1/montyp2.proto"
	v5Path = "montyp5/v1/montyp5.proto"
)

// TestRegistersSideBySide checks that both schemas live in the global
// registry under distinct files and packages. A name clash would already
// panic at init; this also guards against one silently replacing the other.
func TestRegistersSideBySide(t *testing.T) {
	for _, tc := range []struct {
		path, pkg string
		fd        protoreflect.FileDescriptor
	}{
		{v4Path, "monty.v1", montyv1.File_monty_v1_monty_proto},
		{v2Path, "montyp2.v1", montyp2v1.File_montyp2_v1_montyp2_proto},
		{v5Path, "montyp5.v1", montyp5v1.File_montyp5_v1_montyp5_proto},
	} {
		got, err := protoregistry.GlobalFiles.FindFileByPath(tc.path)
		if err != nil {
			t.Fatalf("FindFileByPath(%q): %v", tc.path, err)
		}
		if got != tc.fd {
			t.Errorf("%s: registry holds a different descriptor than the generated package", tc.path)
		}
		if string(got.Package()) != tc.pkg {
			t.Errorf("%s: package = %q, want %q", tc.path, got.Package(), tc.pkg)
		}
	}
	for _, name := range []protoreflect.FullName{"monty.v1.ChildEvent", "montyp2.v1.ChildEvent", "montyp5.v1.ChildEvent"} {
		if _, err := protoregistry.GlobalFiles.FindDescriptorByName(name); err != nil {
			t.Errorf("FindDescriptorByName(%q): %v", name, err)
		}
	}
}

func marshalHex(t *testing.T, m proto.Message) string {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatalf("marshal %T: %v", m, err)
	}
	return hex.EncodeToString(b)
}

// TestWireFacts pins a few encodings that the protocol documents, so a
// schema edit that changes the bytes is caught even if the snapshot is
// regenerated carelessly.
func TestWireFacts(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  proto.Message
		want string
	}{
		// ChildEvent.ok is arm 10, length-delimited: key 0x52, empty body.
		{"v4 ChildEvent ok", &montyv1.ChildEvent{Kind: &montyv1.ChildEvent_Ok{Ok: &montyv1.Ok{}}}, "5200"},
		// A oneof arm is written even at its zero value; int is zigzag field 5.
		{"v2 MontyObject int 0", &montyp2v1.MontyObject{Kind: &montyp2v1.MontyObject_Int{Int: 0}}, "2800"},
		{"v4 MontyNode int -1", &montyv1.MontyNode{Kind: &montyv1.MontyNode_Int{Int: -1}}, "2801"},
		// A None node inside an arena: Arena.nodes (field 2) holding arm 2.
		{"v4 Arena [None]", &montyv1.Arena{Nodes: []*montyv1.MontyNode{{Kind: &montyv1.MontyNode_None{None: &montyv1.Unit{}}}}}, "12021200"},
		// Explicit-presence fields are written even when zero/empty.
		{"v4 ChildEvent max_suspensions=0 (22)", &montyv1.ChildEvent{MaxSuspensions: proto.Uint64(0)}, "b00100"},
		{"v4 ChildEvent restored_script_name='' (23)", &montyv1.ChildEvent{RestoredScriptName: proto.String("")}, "ba0100"},
		{"v2 ChildEvent restored_script_name='' (22)", &montyp2v1.ChildEvent{RestoredScriptName: proto.String("")}, "b20100"},
		{"v2 ChildEvent max_suspensions=0 (23)", &montyp2v1.ChildEvent{MaxSuspensions: proto.Uint64(0)}, "b80100"},
		// Protocol 5: OsCall.values moved to 50 (key 0x92 0x03), tag 26 is
		// the time arm (key 0xd2 0x01), echoed limits at 25..27.
		{"v5 OsCall values at 50", &montyp5v1.OsCall{Values: &montyp5v1.Arena{NodeCount: 1}}, "92030208" + "01"},
		{"v5 OsCall time arm 26", &montyp5v1.OsCall{Call: &montyp5v1.OsCall_Time{Time: &montyp5v1.OsCall_TimeCall{}}}, "d20100"},
		{"v5 ChildEvent max_feed_duration_micros=0 (25)", &montyp5v1.ChildEvent{MaxFeedDurationMicros: proto.Uint64(0)}, "c80100"},
		{"v5 ResourceLimits max_total_sleep_micros=1 (8)", &montyp5v1.ResourceLimits{MaxTotalSleepMicros: proto.Uint64(1)}, "4001"},
		// Implicit-presence zero is omitted.
		{"v4 ChildEvent total_execution_micros=0", &montyv1.ChildEvent{TotalExecutionMicros: 0}, ""},
	} {
		if got := marshalHex(t, tc.msg); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}

	for _, tc := range []struct {
		md   protoreflect.MessageDescriptor
		num  protoreflect.FieldNumber
		name protoreflect.Name
	}{
		{(&montyv1.ChildEvent{}).ProtoReflect().Descriptor(), 22, "max_suspensions"},
		{(&montyv1.ChildEvent{}).ProtoReflect().Descriptor(), 23, "restored_script_name"},
		{(&montyp2v1.ChildEvent{}).ProtoReflect().Descriptor(), 22, "restored_script_name"},
		{(&montyp2v1.ChildEvent{}).ProtoReflect().Descriptor(), 23, "max_suspensions"},
	} {
		fd := tc.md.Fields().ByNumber(tc.num)
		if fd == nil {
			t.Errorf("%s: no field %d", tc.md.FullName(), tc.num)
			continue
		}
		if fd.Name() != tc.name {
			t.Errorf("%s field %d = %s, want %s", tc.md.FullName(), tc.num, fd.Name(), tc.name)
		}
		if !fd.HasPresence() || fd.ContainingOneof() == nil || !fd.ContainingOneof().IsSynthetic() {
			t.Errorf("%s.%s: want proto3 optional", tc.md.FullName(), fd.Name())
		}
	}
}

// TestStructureSnapshot compares the wire-relevant structure of each schema
// (messages, field numbers, types, labels, oneofs, explicit presence, enums;
// no comments) with a committed golden file.
//
// Its purpose is to force a conscious protocol-version decision: any
// structural change to a .proto file breaks this test. Before running it
// with -update, decide whether an older peer could misread the change; if it
// could, the protocol version (Configure.protocol_version) must be bumped,
// or, for protocol 2, the change is simply wrong because that worker is
// already released.
//
//	go test ./internal/pb -run TestStructureSnapshot -update
func TestStructureSnapshot(t *testing.T) {
	for _, tc := range []struct {
		golden string
		fd     protoreflect.FileDescriptor
	}{
		{"montyv1.structure.txt", montyv1.File_monty_v1_monty_proto},
		{"montyp2v1.structure.txt", montyp2v1.File_montyp2_v1_montyp2_proto},
		{"montyp5v1.structure.txt", montyp5v1.File_montyp5_v1_montyp5_proto},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			got := renderStructure(tc.fd)
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(want, []byte(got)) {
				t.Errorf("structure of %s changed; this is a protocol decision "+
					"(see the test comment), then run with -update.\n%s",
					tc.fd.Path(), lineDiff(string(want), got))
			}
		})
	}
}

// renderStructure prints a file descriptor's wire-relevant structure in a
// stable, line-oriented form, in declaration order.
func renderStructure(fd protoreflect.FileDescriptor) string {
	var b strings.Builder
	fmt.Fprintf(&b, "file %s\n", fd.Path())
	fmt.Fprintf(&b, "syntax %s\n", fd.Syntax())
	fmt.Fprintf(&b, "package %s\n", fd.Package())
	renderEnums(&b, fd.Enums(), "")
	renderMessages(&b, fd.Messages(), "")
	return b.String()
}

func renderEnums(b *strings.Builder, enums protoreflect.EnumDescriptors, indent string) {
	for i := 0; i < enums.Len(); i++ {
		e := enums.Get(i)
		fmt.Fprintf(b, "%senum %s\n", indent, e.FullName())
		vals := e.Values()
		for j := 0; j < vals.Len(); j++ {
			v := vals.Get(j)
			fmt.Fprintf(b, "%s  %s = %d\n", indent, v.Name(), v.Number())
		}
	}
}

func renderMessages(b *strings.Builder, msgs protoreflect.MessageDescriptors, indent string) {
	for i := 0; i < msgs.Len(); i++ {
		m := msgs.Get(i)
		fmt.Fprintf(b, "%smessage %s\n", indent, m.FullName())
		oneofs := m.Oneofs()
		for j := 0; j < oneofs.Len(); j++ {
			o := oneofs.Get(j)
			if o.IsSynthetic() {
				continue // proto3 optional; shown on the field itself
			}
			fmt.Fprintf(b, "%s  oneof %s\n", indent, o.Name())
		}
		fields := m.Fields()
		for j := 0; j < fields.Len(); j++ {
			fmt.Fprintf(b, "%s  %s\n", indent, renderField(fields.Get(j)))
		}
		rr := m.ReservedRanges()
		for j := 0; j < rr.Len(); j++ {
			r := rr.Get(j)
			fmt.Fprintf(b, "%s  reserved %d..%d\n", indent, r[0], r[1]-1)
		}
		rn := m.ReservedNames()
		for j := 0; j < rn.Len(); j++ {
			fmt.Fprintf(b, "%s  reserved %q\n", indent, rn.Get(j))
		}
		renderEnums(b, m.Enums(), indent+"  ")
		renderMessages(b, m.Messages(), indent+"  ")
	}
}

func renderField(f protoreflect.FieldDescriptor) string {
	typ := f.Kind().String()
	switch f.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		typ = string(f.Message().FullName())
	case protoreflect.EnumKind:
		typ = string(f.Enum().FullName())
	}
	var attrs []string
	switch {
	case f.IsList():
		attrs = append(attrs, "repeated")
		if f.IsPacked() {
			attrs = append(attrs, "packed")
		}
	case f.IsMap():
		attrs = append(attrs, "map")
	}
	if o := f.ContainingOneof(); o != nil {
		if o.IsSynthetic() {
			attrs = append(attrs, "optional")
		} else {
			attrs = append(attrs, "oneof="+string(o.Name()))
		}
	}
	if f.HasPresence() {
		attrs = append(attrs, "presence")
	}
	s := fmt.Sprintf("%d %s %s", f.Number(), f.Name(), typ)
	if len(attrs) > 0 {
		s += " [" + strings.Join(attrs, ",") + "]"
	}
	return s
}

// lineDiff is a minimal line diff: lines only in want ("-") or got ("+").
func lineDiff(want, got string) string {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	w, g := count(want), count(got)
	var out strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if g[l] < w[l] {
			fmt.Fprintf(&out, "- %s\n", l)
			w[l]--
		}
	}
	w = count(want)
	for _, l := range strings.Split(got, "\n") {
		if w[l] < g[l] {
			fmt.Fprintf(&out, "+ %s\n", l)
			g[l]--
		}
	}
	if out.Len() == 0 {
		return "(only line order differs)"
	}
	return out.String()
}

package codecv4

import (
	"bytes"
	"fmt"
	"math/big"
	"regexp"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/codecv2"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// pathRE matches a decode error's prefix and path, which differ between
// the versions (MontyObject at 2, the arena's MontyNode at 4).
var pathRE = regexp.MustCompile(`^(failed to decode Protobuf message: )?([A-Za-z]+\.[a-z_]+: )*`)

// The leaf values are the same messages at protocols 2 and 4: a byte of a
// leaf's payload changed must fail (or not) alike in both decoders, with
// the same text once the path, which names each version's container, is
// set aside. Protocol 2's decoder is checked against the released worker.
func TestLeafPayloadsFailAsProtocol2(t *testing.T) {
	checked := 0
	off, name := int32(3600), "Europe/Paris"
	arg := "a"
	leaves := map[string]value.Node{
		"date":     value.DateNode(value.Date{Year: 2024, Month: 12, Day: 25}),
		"time":     value.TimeNode(value.Time{Hour: 1, Minute: 2, Second: 3, Microsecond: 4, Offset: &off, TZName: &name, Fold: 1}),
		"datetime": value.DateTimeNode(value.DateTime{Year: 2024, Month: 1, Day: 2, Hour: 3, Minute: 4, Second: 5, Microsecond: 6, Offset: &off, TZName: &name}),
		"td":       value.TimeDeltaNode(value.TimeDelta{Days: -3, Seconds: 4, Microseconds: 5}),
		"tz":       value.TimeZoneNode(value.TimeZone{Offset: off, Name: &name}),
		"exc":      value.ExceptionNode(value.Exception{Type: "ValueError", Arg: &arg}),
		"func":     value.FunctionNode(value.Function{Name: "f", Docstring: &arg}),
		"file":     value.FileHandleNode(value.FileHandle{Path: "/a/b", Mode: "r", Position: 300}),
		"big":      value.BigIntNode(new(big.Int).Lsh(big.NewInt(-3), 100)),
		"str":      value.Str("héllo"),
		"bytes":    value.Bytes([]byte{1, 2, 3}),
		"path":     value.Path("/x"),
		"float":    value.Float(1.5),
		"int":      value.Int(-300),
		"bool":     value.Bool(true),
	}
	for lname, leaf := range leaves {
		var g value.Graph
		id := g.Add(leaf)
		ev := &message.ChildEvent{Body: &message.Complete{Value: id, Values: g}}
		b4, err := AppendEvent(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		b2, err := codecv2.AppendEvent(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		// the leaf's payload: the longest common suffix region after the kind key
		var g1 value.Graph
		g1.Add(leaf)
		nodeBytes, _ := AppendArena(nil, &g1)
		// nodeBytes = 12 L <node>; node = key len payload
		var node []byte
		for p := 0; p < len(nodeBytes); {
			num, wt, k := protowire.ConsumeTag(nodeBytes[p:])
			m := protowire.ConsumeFieldValue(num, wt, nodeBytes[p+k:])
			if num == 2 {
				node, _ = protowire.ConsumeBytes(nodeBytes[p+k:])
			}
			p += k + m
		}
		i4, i2 := bytes.Index(b4, node), bytes.Index(b2, node)
		if i4 < 0 || i2 < 0 {
			t.Fatalf("%s: node not found\n% x\n% x\n% x", lname, node, b4, b2)
		}
		n := 0
		_, _, hk := protowire.ConsumeTag(node)
		_, hl := protowire.ConsumeVarint(node[hk:])
		for pos := hk + hl; pos < len(node); pos++ {
			for _, v := range []byte{0x00, 0x01, 0x02, 0x7f, 0x80, 0xff, node[pos] ^ 0x08, node[pos] + 1, node[pos] - 1} {
				if v == node[pos] {
					continue
				}
				f4, f2 := bytes.Clone(b4), bytes.Clone(b2)
				f4[i4+pos], f2[i2+pos] = v, v
				_, e4 := DecodeEvent(f4, codec.Limits{})
				_, e2 := codecv2.DecodeEvent(f2, codec.Limits{})
				checked++
				s4, s2 := pathRE.ReplaceAllString(fmt.Sprint(e4), ""), pathRE.ReplaceAllString(fmt.Sprint(e2), "")
				if s4 != s2 {
					n++
					if n <= 4 {
						t.Errorf("%s byte %d = %02x:\n  v2 %v\n  v4 %v", lname, pos, v, e2, e4)
					}
				}
			}
		}
		if n > 4 {
			t.Errorf("%s: %d more", lname, n-4)
		}
	}
	if checked < 500 {
		t.Fatalf("only %d frames checked", checked)
	}
}

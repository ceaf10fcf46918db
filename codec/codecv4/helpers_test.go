package codecv4

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// diff compares two domain values structurally and returns a description of
// the first difference, or "". Nil and empty slices are equal, *big.Int
// values compare by value, and floats are compared by their bits (they are
// held as uint64 in value.Node anyway).
func diff(a, b any) string {
	return diffValue(reflect.ValueOf(a), reflect.ValueOf(b), "")
}

var (
	bigIntType = reflect.TypeOf((*big.Int)(nil))
	nodeType   = reflect.TypeFor[value.Node]()
)

func diffValue(a, b reflect.Value, path string) string {
	if !a.IsValid() || !b.IsValid() {
		if a.IsValid() != b.IsValid() {
			return path + ": one side is invalid"
		}
		return ""
	}
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s: type %v != %v", path, a.Type(), b.Type())
	}
	if a.Type() == nodeType {
		// A node's payload sits behind unexported fields: compare what its
		// accessors return.
		x, y := a.Interface().(value.Node), b.Interface().(value.Node)
		if x.Kind != y.Kind || x.Num != y.Num || x.Text() != y.Text() {
			return fmt.Sprintf("%s: node %v/%d/%q != %v/%d/%q", path, x.Kind, x.Num, x.Text(), y.Kind, y.Num, y.Text())
		}
		if d := diffValue(reflect.ValueOf(x.Refs()), reflect.ValueOf(y.Refs()), path+".Refs"); d != "" {
			return d
		}
		return diffValue(reflect.ValueOf(x.Ext()), reflect.ValueOf(y.Ext()), path+".Ext")
	}
	if a.Type() == bigIntType {
		x, y := a.Interface().(*big.Int), b.Interface().(*big.Int)
		if (x == nil) != (y == nil) || (x != nil && x.Cmp(y) != 0) {
			return fmt.Sprintf("%s: bigint %v != %v", path, x, y)
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": nil pointer on one side"
			}
			return ""
		}
		return diffValue(a.Elem(), b.Elem(), path)
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": nil interface on one side"
			}
			return ""
		}
		return diffValue(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if !a.Type().Field(i).IsExported() {
				continue // caches, such as value.Graph's packed flag
			}
			if d := diffValue(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: len %d != %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := diffValue(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Array:
		for i := range a.Len() {
			if d := diffValue(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Float32, reflect.Float64:
		// By bits: a NaN (legal in a value, and in an OsPolicy seed that the
		// child then refuses on Configure) equals itself.
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return fmt.Sprintf("%s: %v != %v", path, a.Float(), b.Float())
		}
		return ""
	}
	if a.Interface() != b.Interface() {
		return fmt.Sprintf("%s: %v != %v", path, a.Interface(), b.Interface())
	}
	return ""
}

// ---- hand-built frames ----

// pb is a tiny protobuf writer for crafting test frames.
type pb []byte

func (p pb) varint(num protowire.Number, v uint64) pb {
	p = protowire.AppendTag(p, num, protowire.VarintType)
	return protowire.AppendVarint(p, v)
}

func (p pb) bytes(num protowire.Number, v []byte) pb {
	p = protowire.AppendTag(p, num, protowire.BytesType)
	return protowire.AppendBytes(p, v)
}

func (p pb) str(num protowire.Number, s string) pb { return p.bytes(num, []byte(s)) }

func (p pb) msg(num protowire.Number, m pb) pb { return p.bytes(num, m) }

func (p pb) fixed64(num protowire.Number, v uint64) pb {
	p = protowire.AppendTag(p, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(p, v)
}

func (p pb) packed(num protowire.Number, ids ...uint64) pb {
	var run []byte
	for _, id := range ids {
		run = protowire.AppendVarint(run, id)
	}
	return p.bytes(num, run)
}

// node wraps a MontyNode payload as one Arena.nodes field.
func node(m pb) pb { return pb(nil).msg(2, m) }

// arenaOf concatenates node fields into an Arena payload.
func arenaOf(nodes ...pb) pb {
	var a pb
	for _, n := range nodes {
		a = append(a, n...)
	}
	return a
}

// completeFrame wraps an arena payload in ChildEvent{Complete{value, values}}.
func completeFrame(root uint64, arena pb) []byte {
	c := pb(nil).varint(1, root).msg(2, arena)
	return pb(nil).msg(6, c)
}

var noneNode = node(pb(nil).msg(2, nil))

func mustEncodeEvent(t testing.TB, e *message.ChildEvent) []byte {
	t.Helper()
	b, err := AppendEvent(nil, e)
	if err != nil {
		t.Fatalf("encode %T: %v", e.Body, err)
	}
	return b
}

func mustEncodeRequest(t testing.TB, r *message.ParentRequest) []byte {
	t.Helper()
	b, err := AppendRequest(nil, r)
	if err != nil {
		t.Fatalf("encode %T: %v", r.Body, err)
	}
	return b
}

// lim returns limits with the given decode budget.
func lim(budget int64) codec.Limits { return codec.Limits{MaxDecodeBytes: budget} }

// wantErr checks that err is a *codec.DecodeError whose text is want, or
// contains want when want starts with "…".
func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	if _, ok := err.(*codec.DecodeError); !ok {
		t.Fatalf("error %T (%v), want *codec.DecodeError", err, err)
	}
	if sub, ok := strings.CutPrefix(want, "…"); ok {
		if !strings.Contains(err.Error(), sub) {
			t.Fatalf("error %q does not contain %q", err, sub)
		}
		return
	}
	if err.Error() != want {
		t.Fatalf("error\n  %q\nwant\n  %q", err, want)
	}
}

// arenaGraph returns the graph of a decoded Complete event.
func completeGraph(t *testing.T, e *message.ChildEvent) *value.Graph {
	t.Helper()
	c, ok := e.Body.(*message.Complete)
	if !ok {
		t.Fatalf("body %T, want *Complete", e.Body)
	}
	return &c.Values
}

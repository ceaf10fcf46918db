package value

import (
	"errors"
	"reflect"
	"testing"
)

type hooked struct{ N int }

var errHook = errors.New("hook refused")

// TestEncoderHookAtEveryNode checks that the encode hook sees nested values
// (in slices, maps, struct fields and interfaces), that HookTypes limits it,
// and that its errors keep their chain.
func TestEncoderHookAtEveryNode(t *testing.T) {
	var asked []reflect.Type
	enc := Encoder{
		Hook: func(s *EncodeState, v reflect.Value) (NodeID, bool, error) {
			h := v.Interface().(*hooked)
			if h.N < 0 {
				return 0, true, errHook
			}
			return s.Graph().Add(Str("hooked")), true, nil
		},
		HookTypes: func(t reflect.Type) bool {
			asked = append(asked, t)
			return t == reflect.TypeFor[*hooked]()
		},
	}
	var g Graph
	v := map[string]any{"a": []*hooked{{1}, {2}}, "b": struct{ H *hooked }{&hooked{3}}, "c": []int64{1, 2, 3}}
	root, err := enc.Encode(&g, v)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.Repr(root), `{'a': ['hooked', 'hooked'], 'b': {'H': 'hooked'}, 'c': [1, 2, 3]}`; got != want {
		t.Fatalf("repr %s, want %s", got, want)
	}
	seen := map[reflect.Type]int{}
	for _, t := range asked {
		seen[t]++
	}
	for ty, n := range seen {
		if n > 1 {
			t.Fatalf("HookTypes asked %d times about %v", n, ty)
		}
	}
	n := g.Len()
	_, err = enc.Encode(&g, []any{1, &hooked{-1}})
	var ce *ConversionError
	if !errors.Is(err, errHook) || !errors.As(err, &ce) || ce.Path != "[1]" || g.Len() != n {
		t.Fatalf("err %v (path %q), %d nodes (want %d)", err, ce.Path, g.Len(), n)
	}
}

// TestDecoderHookAtEveryNode checks that the decode hook is consulted for
// nested destinations, including the elements of interface containers.
func TestDecoderHookAtEveryNode(t *testing.T) {
	the := &hooked{N: 42}
	dec := Decoder{
		Hook: func(s *DecodeState, id NodeID, t reflect.Type) (reflect.Value, bool, error) {
			if n := s.Graph().Node(id); n.Kind != KindStr || n.Text() != "obj" {
				return reflect.Value{}, false, nil
			}
			if t.Kind() == reflect.Interface || t == reflect.TypeFor[*hooked]() {
				return reflect.ValueOf(the), true, nil
			}
			return reflect.Value{}, true, errHook
		},
	}
	var g Graph
	root, err := FromGo(&g, map[string]any{"xs": []string{"obj", "obj"}, "n": 1})
	if err != nil {
		t.Fatal(err)
	}
	var dst struct {
		XS []*hooked `monty:"xs"`
		N  int       `monty:"n"`
	}
	if err := dec.Decode(&g, root, &dst); err != nil {
		t.Fatal(err)
	}
	if len(dst.XS) != 2 || dst.XS[0] != the || dst.XS[1] != the || dst.N != 1 {
		t.Fatalf("decoded %+v", dst)
	}
	a, err := dec.DecodeAny(&g, root)
	if err != nil {
		t.Fatal(err)
	}
	if xs := a.(map[string]any)["xs"].([]any); xs[0] != any(the) {
		t.Fatalf("DecodeAny gave %v", xs)
	}
	var bad struct {
		XS []string `monty:"xs"`
	}
	if err := dec.Decode(&g, root, &bad); !errors.Is(err, errHook) {
		t.Fatalf("err %v", err)
	}
}

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

// errSentinelConv is a *ConversionError a caller's code returns as it is,
// from every call.
var errSentinelConv = &ConversionError{Reason: "refused"}

type sentinelDecoder struct{}

func (*sentinelDecoder) DecodeGraph(*Graph, NodeID) error { return errSentinelConv }

type sentinelAppender struct{}

func (sentinelAppender) AppendGraph(*Graph) (NodeID, error) { return 0, errSentinelConv }

type plainFailDecoder struct{}

func (*plainFailDecoder) DecodeGraph(*Graph, NodeID) error { return errHook }

// TestCallersConversionErrorIsNotRewritten checks that a *ConversionError
// returned by a hook, a GraphAppender or a GraphDecoder is left as it was:
// the path of each failure is its own. The conversions wrote the path into
// the caller's error, so a sentinel's path grew with every failure
// (.X[0], then .X[0].X[0], ...) and concurrent conversions raced on it.
func TestCallersConversionErrorIsNotRewritten(t *testing.T) {
	var g Graph
	root, err := FromGo(&g, map[string]any{"X": []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	dec := Decoder{Hook: func(s *DecodeState, id NodeID, t reflect.Type) (reflect.Value, bool, error) {
		if t.Kind() != reflect.Int {
			return reflect.Value{}, false, nil
		}
		return reflect.Value{}, true, errSentinelConv
	}}
	hookEnc := Encoder{Hook: func(s *EncodeState, v reflect.Value) (NodeID, bool, error) {
		return 0, true, errSentinelConv
	}, HookTypes: func(t reflect.Type) bool { return t == reflect.TypeFor[hooked]() }}
	cases := []struct {
		name, path string
		run        func() error
	}{
		{"GraphDecoder", ".X[0]", func() error {
			var dst struct{ X []sentinelDecoder }
			return ToGo(&g, root, &dst)
		}},
		{"decode hook", `["X"][0]`, func() error {
			var dst map[string][]int
			return dec.Decode(&g, root, &dst)
		}},
		{"GraphAppender", `["k"][0]`, func() error {
			_, err := FromGo(&Graph{}, map[string]any{"k": []any{sentinelAppender{}}})
			return err
		}},
		{"encode hook", `["k"][0]`, func() error {
			_, err := hookEnc.Encode(&Graph{}, map[string]any{"k": []any{hooked{}}})
			return err
		}},
	}
	for _, c := range cases {
		for i := range 3 {
			err := c.run()
			var ce *ConversionError
			if !errors.As(err, &ce) || ce.Path != c.path || ce.Reason != "refused" {
				t.Fatalf("%s, failure %d: %v, want a *ConversionError at %s", c.name, i+1, err, c.path)
			}
		}
		if errSentinelConv.Path != "" {
			t.Fatalf("%s: the caller's error got the path %q", c.name, errSentinelConv.Path)
		}
	}
}

// TestGraphDecoderErrorIsAConversionError checks that a GraphDecoder's own
// error comes back as a *ConversionError locating it (its chain kept), as
// a GraphAppender's and a hook's do; it came back bare, with no path.
func TestGraphDecoderErrorIsAConversionError(t *testing.T) {
	var g Graph
	root, err := FromGo(&g, map[string]any{"X": []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	var dst struct{ X []plainFailDecoder }
	err = ToGo(&g, root, &dst)
	var ce *ConversionError
	if !errors.As(err, &ce) || ce.Path != ".X[0]" || ce.Kind != KindInt || !errors.Is(err, errHook) {
		t.Fatalf("got %T %v, want a *ConversionError at .X[0] wrapping errHook", err, err)
	}
	if got, want := err.Error(), "value: cannot convert int to value.plainFailDecoder at .X[0]: hook refused"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestEncodeHookNestedErrorKeepsItsPath checks that an error of
// EncodeState.Encode that a hook returns keeps the path inside the value the
// hook encoded, beside the path to the hook's value.
func TestEncodeHookNestedErrorKeepsItsPath(t *testing.T) {
	enc := Encoder{Hook: func(s *EncodeState, v reflect.Value) (NodeID, bool, error) {
		id, err := s.Encode(map[string]any{"in": []any{1, make(chan int)}})
		return id, true, err
	}, HookTypes: func(t reflect.Type) bool { return t == reflect.TypeFor[hooked]() }}
	_, err := enc.Encode(&Graph{}, map[string]any{"k": []any{hooked{}}})
	var ce *ConversionError
	if !errors.As(err, &ce) || ce.Path != `["k"][0]["in"][1]` {
		t.Fatalf("got %v, want a *ConversionError at [\"k\"][0][\"in\"][1]", err)
	}
}

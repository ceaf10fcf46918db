package value_test

import (
	"encoding/json"
	"errors"
	"math/big"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/codecv4"
	"github.com/gomonty/monty/internal/codectest"
	"github.com/gomonty/monty/value"
)

// convertTarget is a struct with a field of every kind ToGo fills, keys
// that hold interfaces among them (whose dynamic values may not hash).
type convertTarget struct {
	B     bool
	I     int
	I8    int8
	U16   uint16
	U64   uint64
	F32   float32
	F     float64
	S     string
	Bs    []byte
	T     time.Time
	D     time.Duration
	Big   *big.Int
	BigV  big.Int
	Loc   *time.Location
	ID    value.UUID
	Addr  netip.Addr
	L     []int64
	A     [2]string
	M     map[string]int
	MA    map[any]any
	MS    map[struct{ K any }]string
	MArr  map[[2]any]bool
	P     *convertTarget
	Any   any
	Items []convertTarget
	Tup   value.TupleValue
	Dict  value.DictValue
	Named struct {
		X int `monty:"x"`
		Y any `monty:"y"`
	} `monty:"named"`
}

// convertDests returns fresh destinations of the shapes callers decode
// results into.
func convertDests() []any {
	return []any{
		new(any), new([]any), new(map[string]any), new(map[any]any), new(map[any]bool),
		new(map[[1]any]int), new(map[struct{ K any }]int), new(map[int64]string),
		new(convertTarget), new([]convertTarget), new(map[string]convertTarget), new(*convertTarget),
		new(int64), new(uint8), new(float64), new(string), new([]byte), new(bool),
		new([]int64), new([]float64), new([3]int), new(time.Time), new(time.Duration),
		new(*big.Int), new(value.TupleValue), new(value.SetValue), new(value.DictValue),
		new(value.NamedTupleValue), new(value.ObjectValue), new(value.ClassValue),
		new(value.Exception), new(value.FileHandle), new(*time.Location), new(value.UUID),
		new(*hookedObject), new([]*hookedObject), new(map[string]*hookedObject),
	}
}

// convertSeeds are arenas of the values the worker sends, and of values no
// honest worker sends (a list as a dict key) but the wire can carry.
func convertSeeds(f *testing.F) {
	add := func(g *value.Graph, roots ...value.NodeID) {
		b, err := codecv4.AppendArena(nil, g, roots...)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	g, root := codectest.EveryShape()
	add(&g, root)

	var h value.Graph
	one, two := h.Add(value.Int(1)), h.Add(value.Int(2))
	tup := h.Add(value.Tuple(one, two))
	lst := h.Add(value.List(one, two))
	fz := h.Add(value.FrozenSet(one, two))
	s := h.Add(value.Str("x"))
	d := h.Add(value.Dict(value.Pair{Key: tup, Value: s}, value.Pair{Key: lst, Value: two}, value.Pair{Key: fz, Value: one}))
	set := h.Add(value.Set(tup, fz))
	id := value.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	typ := h.Add(value.TypeNode(value.Type{Name: "Point", ID: id, Origin: value.OriginHost, Attrs: []value.Pair{{Key: s, Value: one}}}))
	inst := h.Add(value.ClassInstanceNode(value.ClassInstance{Class: typ, InstanceID: id, Attrs: []value.Pair{{Key: s, Value: d}}}))
	cyc := h.Add(value.List(h.Add(value.Cycle("[...]")), h.Add(value.Path("/a/b")), h.Add(value.Ellipsis())))
	add(&h, h.Add(value.List(d, set, inst, cyc)))

	// A shared value: twenty levels of x = [x, x] and of {'Kids': [x, x]}.
	var dag value.Graph
	x, y := dag.Add(value.List()), dag.Add(value.Dict())
	kids := dag.Add(value.Str("Kids"))
	for range 20 {
		x = dag.Add(value.List(x, x))
		y = dag.Add(value.Dict(value.Pair{Key: kids, Value: dag.Add(value.List(y, y))}))
	}
	add(&dag, dag.Add(value.Tuple(x, y)))
}

// hookedObject is what the fuzz hook makes of a class instance.
type hookedObject struct{ id value.UUID }

// hooked is a Decoder as a session uses one: its hook takes class
// instances for *hookedObject and for the empty interface, refuses an
// instance with a zero id, and leaves every other node to the default
// rules.
var hooked = value.Decoder{
	HookTypes: func(t reflect.Type) bool { return t == reflect.TypeFor[*hookedObject]() || t == reflect.TypeFor[any]() },
	Hook: func(s *value.DecodeState, id value.NodeID, t reflect.Type) (reflect.Value, bool, error) {
		n := s.Graph().Node(id)
		if n.Kind != value.KindClassInstance {
			return reflect.Value{}, false, nil
		}
		ci, ok := n.Ext().(*value.ClassInstance)
		if !ok || ci.InstanceID.IsZero() {
			return reflect.Value{}, false, errors.New("no such object")
		}
		return reflect.ValueOf(&hookedObject{ci.InstanceID}), true, nil
	},
}

// renderBudget bounds the text one FuzzConvert input renders. Each
// rendering of a node may reach its bound (1 MiB and more) when shared
// sub-values expand; four renderings of up to 256 nodes took seed #2 (the
// 20-level DAG) past the 10 s the fuzzer allows one input under its
// coverage instrumentation on a loaded machine, which it reports as a hang.
const renderBudget = 16 << 20

// FuzzConvert decodes an arena as the codec would from a child, then
// converts every node it holds the ways a caller would: ToAny (and FromGo of
// what it returned), ToGo and a hooked Decoder into every destination of
// convertDests, Repr, ReprChecked, AppendStr and AppendJSON (whose text
// must be valid JSON; past renderBudget of text only the root is
// rendered). Whatever the graph, none may panic, and every error must be
// a *value.ConversionError or, from ReprChecked, an
// *value.IntStrDigitsError or ErrReprTooLarge.
func FuzzConvert(f *testing.F) {
	convertSeeds(f)
	f.Fuzz(func(t *testing.T, arena []byte) {
		g, err := codecv4.DecodeArena(arena, codec.Limits{MaxFrameLen: 1 << 16})
		if err != nil {
			return
		}
		typed := func(what string, err error) {
			var ce *value.ConversionError
			if err != nil && !errors.As(err, &ce) {
				t.Fatalf("%s: error %T is not a *value.ConversionError: %v", what, err, err)
			}
		}
		n := min(len(g.Nodes), 256)
		rendered := 0
		for i := len(g.Nodes) - n; i < len(g.Nodes); i++ {
			id := value.NodeID(i)
			// The root (the last node) is always rendered, the others
			// while the input's rendering budget lasts.
			if rendered < renderBudget || i == len(g.Nodes)-1 {
				r := g.Repr(id)
				rendered += 2 * len(r) // Repr and ReprChecked
				rendered += len(value.AppendStr(nil, g, id))
				if _, err := g.ReprChecked(id); err != nil {
					var de *value.IntStrDigitsError
					if !errors.As(err, &de) && !errors.Is(err, value.ErrReprTooLarge) {
						t.Fatalf("ReprChecked(%d): unexpected error %T: %v", id, err, err)
					}
				}
				if js, err := value.AppendJSON(nil, g, id); err != nil {
					typed("AppendJSON", err)
				} else if !json.Valid(js) {
					t.Fatalf("AppendJSON(%d): invalid JSON %q", id, js)
				} else {
					rendered += len(js)
				}
			}
			a, err := value.ToAny(g, id)
			typed("ToAny", err)
			if err == nil {
				var back value.Graph
				_, err := value.FromGo(&back, a)
				typed("FromGo(ToAny)", err)
			}
			for _, dst := range convertDests() {
				typed("ToGo", value.ToGo(g, id, dst))
				typed("Decoder.Decode (hooked)", hooked.Decode(g, id, dst))
			}
		}
	})
}

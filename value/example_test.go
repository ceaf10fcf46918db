package value_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"time"

	"github.com/gomonty/monty/value"
)

func ExampleGraph_Repr() {
	var g value.Graph
	s := g.Add(value.Str("it's"))
	f := g.Add(value.Float(1e16))
	t := g.Add(value.Tuple(s, f))
	z := g.Add(value.TimeZoneNode(value.TimeZone{Offset: -3600}))
	root := g.Add(value.List(t, z))
	fmt.Println(g.Repr(root))
	fmt.Println(g.Str(s))
	// Output:
	// [("it's", 1e+16), datetime.timezone(datetime.timedelta(days=-1, seconds=82800))]
	// it's
}

func ExampleFromGo() {
	type Job struct {
		Name    string        `monty:"name"`
		Retries int           `monty:"retries,omitempty"`
		Timeout time.Duration `monty:"timeout"`
		Tags    []string      `monty:"tags"`
	}
	var g value.Graph
	id, err := value.FromGo(&g, Job{Name: "build", Timeout: 90 * time.Second, Tags: []string{"ci"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Repr(id))
	// Output: {'name': 'build', 'timeout': datetime.timedelta(seconds=90), 'tags': ['ci']}
}

func ExampleToGo() {
	var g value.Graph
	k := g.Add(value.Str("port"))
	v := g.Add(value.Int(70000))
	root := g.Add(value.Dict(value.Pair{Key: k, Value: v}))

	var cfg struct {
		Port uint16 `monty:"port"`
	}
	fmt.Println(value.ToGo(&g, root, &cfg))
	var loose map[string]any
	fmt.Println(value.ToGo(&g, root, &loose), loose)
	// Output:
	// value: cannot convert int to uint16 at .Port: 70000 is out of range
	// <nil> map[port:70000]
}

func ExampleGraph_ReprChecked() {
	// An int of a million bits: printing it in decimal is what CPython
	// refuses past 4300 digits, and so does ReprChecked, from the bit
	// length alone.
	var g value.Graph
	huge := g.Add(value.BigIntNode(new(big.Int).Lsh(big.NewInt(1), 1_000_000)))
	root := g.Add(value.List(g.Add(value.Int(1)), huge))
	_, err := g.ReprChecked(root)
	var de *value.IntStrDigitsError
	if errors.As(err, &de) {
		fmt.Printf("%s: %v\n", de.PythonType(), err)
	}
	// Repr never fails: it prints a placeholder.
	fmt.Println(g.Repr(root))
	// Output:
	// ValueError: Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit
	// [1, <int of 1000001 bits: more than 4300 digits>]
}

// Secret is a Go type whose values must never reach the sandbox in clear.
type Secret string

func ExampleEncoder() {
	// The hook is consulted at every node; HookTypes keeps it to Secret
	// values, so the []int below still takes the fast path.
	enc := value.Encoder{
		Hook: func(s *value.EncodeState, v reflect.Value) (value.NodeID, bool, error) {
			return s.Graph().Add(value.Str("***")), true, nil
		},
		HookTypes: func(t reflect.Type) bool { return t == reflect.TypeFor[Secret]() },
	}
	var g value.Graph
	root, err := enc.Encode(&g, map[string]any{"user": "ann", "token": Secret("hunter2"), "ids": []int{1, 2}})
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Repr(root))
	// Output:
	// {'ids': [1, 2], 'token': '***', 'user': 'ann'}
}

func ExampleDecoder() {
	var g value.Graph
	root, _ := value.FromGo(&g, []string{"a", "@b", "c"})
	// The hook sees every node; here it resolves "@name" references.
	refs := map[string]int{"b": 42}
	dec := value.Decoder{
		Hook: func(s *value.DecodeState, id value.NodeID, t reflect.Type) (reflect.Value, bool, error) {
			n := s.Graph().Node(id)
			if n.Kind != value.KindStr || !strings.HasPrefix(n.Text(), "@") {
				return reflect.Value{}, false, nil
			}
			return reflect.ValueOf(fmt.Sprint(refs[n.Text()[1:]])), true, nil
		},
	}
	var out []string
	if err := dec.Decode(&g, root, &out); err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output:
	// [a 42 c]
}

// FromGo holds a Go integer slice as one list with packed items; Unpacked
// gives every item its own node, as a decoded value has.
func ExampleGraph_Unpacked() {
	var g value.Graph
	root, err := value.FromGo(&g, []int64{3, 1, 4})
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Len(), g.Node(root).Ints(), g.Repr(root))

	u, id := g.Unpacked(root)
	fmt.Println(u.Len(), u.Node(id).Refs(), u.Repr(id))
	// Output:
	// 1 [3 1 4] [3, 1, 4]
	// 4 [0 1 2] [3, 1, 4]
}

func ExampleAppendJSON() {
	var g value.Graph
	when := g.Add(value.DateNode(value.Date{Year: 2024, Month: 2, Day: 29}))
	ratio := g.Add(value.Float(1))
	tags := g.Add(value.Tuple(g.Add(value.Str("a\"b")), g.Add(value.None())))
	root := g.Add(value.Dict(
		value.Pair{Key: g.Add(value.Str("when")), Value: when},
		value.Pair{Key: g.Add(value.Int(7)), Value: ratio},
		value.Pair{Key: g.Add(value.Str("tags")), Value: tags},
	))
	text, err := value.AppendJSON(nil, &g, root)
	fmt.Println(string(text), err)

	nan := g.Add(value.Float(math.NaN()))
	_, err = value.AppendJSON(nil, &g, g.Add(value.List(root, nan)))
	fmt.Println(err)
	// Output:
	// {"when":"2024-02-29","7":1.0,"tags":["a\"b",null]} <nil>
	// value: cannot convert float to json.RawMessage at [1]: Out of range float values are not JSON compliant: nan
}

func ExampleFromJSON() {
	var g value.Graph
	id, err := value.FromJSON(&g, []byte(`{"b": [1, 2.0, 12345678901234567890], "a": null, "b": "last wins"}`))
	fmt.Println(g.Repr(id), err)

	_, err = value.FromJSON(&g, []byte(`{"a": [1, 2}`))
	fmt.Println(err)
	// Output:
	// {'b': 'last wins', 'a': None} <nil>
	// value: cannot convert Go json.RawMessage: invalid JSON at byte 11: unexpected '}'
}

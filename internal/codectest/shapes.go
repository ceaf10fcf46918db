package codectest

import (
	"math/big"

	"github.com/gomonty/monty/value"
)

// EveryShape returns a graph holding a value of every shape an input may
// take (every leaf kind, each container, a dict with a container value),
// and its root.
func EveryShape() (value.Graph, value.NodeID) {
	off, name, arg := int32(3600), "Europe/Paris", "a"
	var g value.Graph
	leaves := []value.NodeID{
		g.Add(value.DateNode(value.Date{Year: 2024, Month: 12, Day: 25})),
		g.Add(value.TimeNode(value.Time{Hour: 1, Minute: 2, Second: 3, Microsecond: 4, Offset: &off, TZName: &name, Fold: 1})),
		g.Add(value.DateTimeNode(value.DateTime{Year: 2024, Month: 1, Day: 2, Hour: 3, Minute: 4, Second: 5, Microsecond: 6, Offset: &off, TZName: &name})),
		g.Add(value.TimeDeltaNode(value.TimeDelta{Days: -3, Seconds: 4, Microseconds: 5})),
		g.Add(value.TimeZoneNode(value.TimeZone{Offset: off, Name: &name})),
		g.Add(value.ExceptionNode(value.Exception{Type: "ValueError", Arg: &arg})),
		g.Add(value.BigIntNode(new(big.Int).Lsh(big.NewInt(-3), 100))),
		g.Add(value.Str("héllo")),
		g.Add(value.Bytes([]byte{1, 2, 3})),
		g.Add(value.Float(1.5)),
		g.Add(value.Int(-300)),
		g.Add(value.Bool(true)),
		g.Add(value.None()),
	}
	k := g.Add(value.Str("k"))
	lst := g.Add(value.List(leaves[:4]...))
	tup := g.Add(value.Tuple(leaves[4:8]...))
	st := g.Add(value.FrozenSet(leaves[9], leaves[10]))
	nt := g.Add(value.NamedTupleNode("P", []string{"a", "b"}, leaves[7], leaves[10]))
	d := g.Add(value.Dict(value.Pair{Key: k, Value: lst}, value.Pair{Key: leaves[10], Value: tup}))
	return g, g.Add(value.List(d, st, nt, leaves[8], leaves[11], leaves[12]))
}

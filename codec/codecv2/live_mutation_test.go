package codecv2

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// TestLiveMutatedFeeds sends the worker 3,000 Feeds, each a frame holding
// a value of every shape with one byte changed, inserted or nudged, and
// requires our decoder's verdict on each to be the worker's: the same
// decode error text, a conversion error where the worker reports one (the
// texts of those are the session's business), or no error where the worker
// runs the Feed. This is how the worker's MontyObject merge semantics
// (mergeCases) were found.
func TestLiveMutatedFeeds(t *testing.T) {
	w := startWorker(t)
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
	root := g.Add(value.List(d, st, nt, leaves[8], leaves[11], leaves[12]))
	feed := &message.ParentRequest{Body: &message.Feed{Code: "v", Values: g, Inputs: []message.NamedRef{{Name: "v", Value: root}}}}
	base, err := AppendRequest(nil, feed)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	n, bad := 0, 0
	for range 3000 {
		f := append([]byte(nil), base...)
		switch rng.IntN(3) {
		case 0:
			f[rng.IntN(len(f))] = byte(rng.IntN(256))
		case 1:
			i := rng.IntN(len(f))
			f[i] += byte(rng.IntN(5)) - 2
		case 2:
			i := rng.IntN(len(f))
			f = append(f[:i:i], append([]byte{byte(rng.IntN(256))}, f[i:]...)...)
		}
		n++
		_, err := DecodeRequest(f, codec.Limits{})
		ev := last(w.turnRaw(f))
		got := errText(ev)
		switch ev.(type) {
		case *message.Complete, *message.Error, *message.Ok:
		default:
			// A code byte changed into a name the sandbox looks up, or an
			// arm changed into another request: start afresh.
			w.stop()
			w = startWorker(t)
		}
		var de *codec.DecodeError
		ok := true
		switch {
		case err == nil:
			ok = !strings.Contains(got, "malformed request")
		case errors.As(err, &de) && de.Structural:
			ok = strings.HasPrefix(got, "RuntimeError: ") && !strings.Contains(got, "malformed request")
		default:
			ok = got == "RuntimeError: protocol violation: malformed request: "+err.Error()
		}
		if !ok {
			bad++
			if bad <= 10 {
				t.Errorf("% x\n  worker %s\n  ours   %v", f, got, err)
			}
		}
	}
	if n != 3000 {
		t.Fatalf("%d frames sent", n)
	}
}

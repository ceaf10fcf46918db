package relay

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/value"
)

// versionOnly is an inner session of which standIn asks only the version.
type versionOnly uint32

func (v versionOnly) Do(context.Context, message.Request) (*message.ChildEvent, error) {
	panic("not relayed")
}
func (v versionOnly) Stamps() session.Stamps { return session.Stamps{} }
func (v versionOnly) Version() uint32        { return uint32(v) }
func (v versionOnly) Pid() int               { return 0 }
func (v versionOnly) Close() error           { return nil }

// nested adds to g a list nested n deep around None.
func nested(g *value.Graph, n int) value.NodeID {
	id := g.Add(value.None())
	for range n {
		id = g.Add(value.List(id))
	}
	return id
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A ResumeFutures the protocol-2 worker cannot take as a whole has each
// of its results checked alone, to replace only those it cannot take. A
// hostile parent made that check cost the whole request again for every
// result: with a graph of G nodes and R results, R walks of G nodes (and
// R encodings of every result that fits), all before the turn could end:
// 40 results sharing one value of 16 MiB as a protocol-2 tree encoded
// 640 MiB, and 3000 tiny results beside a list of 2^18 ints walked 800
// million nodes, from frames of a few kilobytes. The checks now stop once
// the results kept cannot go together anyway, or once they would walk
// more than a bound; then every result is replaced.
func TestStandInWorkBounded(t *testing.T) {
	e := &Engine{s: versionOnly(2)}
	t.Run("tall", func(t *testing.T) {
		// A DAG of 22 nodes whose tree is 2^18 strings of 64 bytes.
		r := &message.ResumeFutures{}
		id := r.Values.Add(value.Str(strings.Repeat("z", 64)))
		for range 18 {
			id = r.Values.Add(value.List(id, id))
		}
		for i := range 40 {
			r.Results = append(r.Results, message.FutureResult{CallID: uint32(i), Result: &message.ExtResult{Kind: message.ResultReturn, Value: id}})
		}
		var alt message.Request
		n := allocated(func() { alt = e.standIn(r, "too large", false) })
		if n > 256<<20 {
			t.Errorf("checking 40 results alone allocated %d MiB", n>>20)
		}
		if alt != nil {
			// Each fits alone, so there is nothing to replace alone; the
			// second pass replaces them all.
			t.Fatalf("the first pass replaced some of results that each fit: %+v", alt)
		}
	})
	t.Run("wide", func(t *testing.T) {
		r := &message.ResumeFutures{}
		ints := make([]value.NodeID, 1<<18)
		for i := range ints {
			ints[i] = r.Values.Add(value.Int(int64(i)))
		}
		big := r.Values.Add(value.List(ints...))
		deep := nested(&r.Values, 300)
		none := r.Values.Add(value.None())
		r.Results = append(r.Results,
			message.FutureResult{CallID: 0, Result: &message.ExtResult{Kind: message.ResultReturn, Value: big}},
			message.FutureResult{CallID: 1, Result: &message.ExtResult{Kind: message.ResultReturn, Value: deep}})
		for i := range 3000 {
			r.Results = append(r.Results, message.FutureResult{CallID: uint32(i + 2), Result: &message.ExtResult{Kind: message.ResultReturn, Value: none}})
		}
		n := allocated(func() { e.standIn(r, "too deep", false) })
		if n > 256<<20 {
			t.Errorf("checking 3002 results alone allocated %d MiB", n>>20)
		}
	})
	t.Run("few", func(t *testing.T) {
		// Within the bounds, only the result that cannot go is replaced.
		r := &message.ResumeFutures{}
		deep := nested(&r.Values, 300)
		one := r.Values.Add(value.Int(1))
		r.Results = []message.FutureResult{
			{CallID: 0, Result: &message.ExtResult{Kind: message.ResultReturn, Value: one}},
			{CallID: 1, Result: &message.ExtResult{Kind: message.ResultReturn, Value: deep}},
		}
		alt, ok := e.standIn(r, "too deep", false).(*message.ResumeFutures)
		if !ok || len(alt.Results) != 2 || alt.Results[0].Result.Kind != message.ResultReturn || alt.Results[1].Result.Kind != message.ResultError {
			t.Fatalf("standIn: %+v", alt)
		}
	})
}

package codecv2

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// A minimal driver for a real `monty subprocess` worker, enough to run the
// codec against it (the real session layer lives elsewhere).

const workerPath = "../../.monty/bin/monty"

type worker struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer

	stopped bool
	fatal   bool // the worker sent a FatalError: it exits non-zero
}

// startWorker spawns the worker with an empty environment and configures a
// protocol-2 session. It skips the test when the binary is missing, unless
// CI=true, where a missing worker is a failure.
func startWorker(t *testing.T) *worker {
	t.Helper()
	w := startUnconfigured(t)
	evs := w.turn(&message.ParentRequest{Body: &message.Configure{ScriptName: "main.py", ProtocolVersion: 2}})
	if _, ok := evs[len(evs)-1].Body.(*message.Ok); !ok {
		t.Fatalf("configure: %+v", evs[len(evs)-1].Body)
	}
	return w
}

// startUnconfigured is startWorker without the Configure.
func startUnconfigured(t *testing.T) *worker {
	t.Helper()
	if _, err := os.Stat(workerPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("worker binary missing under CI: %v", err)
		}
		t.Skipf("worker binary not installed (%v); run scripts/install-worker.sh", err)
	}
	w := &worker{t: t}
	w.cmd = exec.Command(workerPath, "subprocess")
	w.cmd.Env = []string{}
	w.cmd.Stderr = &w.stderr
	in, err := w.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.in, w.out = in, bufio.NewReader(out)
	t.Cleanup(w.stop)
	return w
}

func (w *worker) stop() {
	if w.stopped {
		return
	}
	w.stopped = true
	w.in.Close() // EOF on a frame boundary: the worker exits 0
	done := make(chan error, 1)
	go func() { done <- w.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil && !w.fatal {
			w.t.Errorf("worker exit: %v (stderr %q)", err, w.stderr.String())
		}
	case <-time.After(10 * time.Second):
		_ = w.cmd.Process.Kill()
		<-done
		w.t.Errorf("worker did not exit on EOF")
	}
}

func (w *worker) send(frame []byte) {
	w.t.Helper()
	var hdr [4]byte
	binary.LittleEndian.PutUint32(hdr[:], uint32(len(frame)))
	if _, err := w.in.Write(append(hdr[:], frame...)); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

func (w *worker) read() []byte {
	w.t.Helper()
	var hdr [4]byte
	if _, err := io.ReadFull(w.out, hdr[:]); err != nil {
		w.t.Fatalf("read: %v (stderr %q)", err, w.stderr.String())
	}
	b := make([]byte, binary.LittleEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(w.out, b); err != nil {
		w.t.Fatalf("read: %v", err)
	}
	return b
}

// turnRaw sends one frame and reads events until one ends the turn. Every
// event must decode and re-encode to the bytes the worker wrote.
func (w *worker) turnRaw(frame []byte) []*message.ChildEvent {
	w.t.Helper()
	timer := time.AfterFunc(60*time.Second, func() { _ = w.cmd.Process.Kill() })
	defer timer.Stop()
	w.send(frame)
	var evs []*message.ChildEvent
	for {
		b := w.read()
		ev, err := DecodeEvent(b, codec.Limits{})
		if err != nil {
			w.t.Fatalf("event %x: %v", b, err)
		}
		if again, err := AppendEvent(nil, ev); err != nil || !bytes.Equal(again, b) {
			w.t.Errorf("event does not re-encode identically (%v)\n got %x\nwant %x", err, again, b)
		}
		evs = append(evs, ev)
		if ev.Body == nil || ev.Body.EventKind().EndsTurn() {
			return evs
		}
	}
}

func (w *worker) turn(r *message.ParentRequest) []*message.ChildEvent {
	w.t.Helper()
	b, err := AppendRequest(nil, r)
	if err != nil {
		w.t.Fatalf("encode: %v", err)
	}
	return w.turnRaw(b)
}

// last returns the turn-ending event.
func last(evs []*message.ChildEvent) message.Event { return evs[len(evs)-1].Body }

func errText(ev message.Event) string {
	if e, ok := ev.(*message.Error); ok {
		return e.Exception.Error()
	}
	return fmt.Sprintf("%T", ev)
}

// feedValue sends g's root as input v and feeds code.
func (w *worker) feedValue(g *value.Graph, root value.NodeID, code string) message.Event {
	w.t.Helper()
	return last(w.turn(&message.ParentRequest{Body: &message.Feed{Code: code, Values: *g,
		Inputs: []message.NamedRef{{Name: "v", Value: root}}}}))
}

// TestLiveValues sends a value of every kind the sandbox accepts as an
// input and checks that `v` comes back equal.
func TestLiveValues(t *testing.T) {
	w := startWorker(t)
	big1, _ := new(big.Int).SetString("1267650600228229401496703205376", 10) // 2**100
	hostID, instID := value.UUID{0x10, 0x20, 0x30}, value.UUID{0x40, 0x50}
	type build func(g *value.Graph) value.NodeID
	leaf := func(n value.Node) build { return func(g *value.Graph) value.NodeID { return g.Add(n) } }
	cases := map[string]build{
		"list": func(g *value.Graph) value.NodeID {
			a, b := g.Add(value.Int(1)), g.Add(value.Str("a"))
			return g.Add(value.List(a, b, g.Add(value.None())))
		},
		"empty list": leaf(value.List()),
		"tuple": func(g *value.Graph) value.NodeID {
			return g.Add(value.Tuple(g.Add(value.Int(1)), g.Add(value.Float(2.5))))
		},
		"empty tuple": leaf(value.Tuple()),
		"dict": func(g *value.Graph) value.NodeID {
			k, v := g.Add(value.Str("k")), g.Add(value.Int(1))
			k2 := g.Add(value.Tuple(g.Add(value.Int(1)), g.Add(value.Int(2))))
			return g.Add(value.Dict(value.Pair{Key: k, Value: v}, value.Pair{Key: k2, Value: g.Add(value.List(v))}))
		},
		"set":       func(g *value.Graph) value.NodeID { return g.Add(value.Set(g.Add(value.Int(1)), g.Add(value.Int(2)))) },
		"frozenset": func(g *value.Graph) value.NodeID { return g.Add(value.FrozenSet(g.Add(value.Str("x")))) },
		"nested": func(g *value.Graph) value.NodeID {
			s := g.Add(value.Set(g.Add(value.Int(3))))
			l := g.Add(value.List(g.Add(value.Int(2)), s))
			t := g.Add(value.Tuple(g.Add(value.Int(1)), l))
			return g.Add(value.List(g.Add(value.Dict(value.Pair{Key: g.Add(value.Str("k")), Value: t}))))
		},
		"named tuple": func(g *value.Graph) value.NodeID {
			return g.Add(value.NamedTupleNode("os.stat_result", []string{"st_mode", "st_size"}, g.Add(value.Int(0o644)), g.Add(value.Int(10))))
		},
		"int 0":           leaf(value.Int(0)),
		"int min":         leaf(value.Int(math.MinInt64)),
		"int max":         leaf(value.Int(math.MaxInt64)),
		"big positive":    leaf(value.BigIntNode(big1)),
		"big negative":    leaf(value.BigIntNode(new(big.Int).Neg(big1))),
		"big 2**63":       leaf(value.BigIntNode(new(big.Int).Lsh(big.NewInt(1), 63))),
		"float":           leaf(value.Float(-1.25e300)),
		"float -0.0":      leaf(value.Float(math.Copysign(0, -1))),
		"float inf":       leaf(value.Float(math.Inf(1))),
		"float -inf":      leaf(value.Float(math.Inf(-1))),
		"float nan":       leaf(value.Float(math.NaN())),
		"bool":            leaf(value.Bool(true)),
		"bool false":      leaf(value.Bool(false)),
		"none":            leaf(value.None()),
		"ellipsis":        leaf(value.Ellipsis()),
		"not implemented": leaf(value.NotImplemented()),
		"str":             leaf(value.Str("h\u00e9 \U0001F600 \U00010348 end")),
		"str empty":       leaf(value.Str("")),
		"str large":       leaf(value.Str(strings.Repeat("\U0001F600", 50000))),
		"bytes":           leaf(value.Bytes([]byte{0, 1, 0xff, 'a'})),
		"bytes empty":     leaf(value.Bytes(nil)),
		"date":            leaf(value.DateNode(value.Date{Year: 2024, Month: 2, Day: 29})),
		"date min":        leaf(value.DateNode(value.Date{Year: 1, Month: 1, Day: 1})),
		"time":            leaf(value.TimeNode(value.Time{Hour: 13, Minute: 45, Second: 30, Microsecond: 123456})),
		"time aware":      leaf(value.TimeNode(value.Time{Hour: 1, Minute: 2, Offset: value.Ptr[int32](3600), TZName: value.Ptr("X")})),
		"time fold":       leaf(value.TimeNode(value.Time{Hour: 1, Fold: 1})),
		"datetime":        leaf(value.DateTimeNode(value.DateTime{Year: 9999, Month: 12, Day: 31, Hour: 23, Minute: 59, Second: 59, Microsecond: 999999})),
		"datetime utc":    leaf(value.DateTimeNode(value.DateTime{Year: 2024, Month: 1, Day: 2, Offset: value.Ptr[int32](0)})),
		"datetime neg":    leaf(value.DateTimeNode(value.DateTime{Year: 2024, Month: 1, Day: 2, Hour: 3, Offset: value.Ptr[int32](-12600)})),
		"timedelta":       leaf(value.TimeDeltaNode(value.TimeDelta{Days: -1, Seconds: 86399, Microseconds: 999999})),
		"timedelta big":   leaf(value.TimeDeltaNode(value.TimeDelta{Days: 999999999})),
		"timezone":        leaf(value.TimeZoneNode(value.TimeZone{Offset: 7200, Name: value.Ptr("CEST")})),
		"timezone utc":    leaf(value.TimeZoneNode(value.TimeZone{})),
		"timezone neg":    leaf(value.TimeZoneNode(value.TimeZone{Offset: -86399})),
		"exception":       leaf(value.ExceptionNode(value.Exception{Type: "ValueError", Arg: value.Ptr("bad")})),
		"exception bare":  leaf(value.ExceptionNode(value.Exception{Type: "KeyError"})),
		"exception json":  leaf(value.ExceptionNode(value.Exception{Type: "json.JSONDecodeError", Arg: value.Ptr("x")})),
		"builtin type":    leaf(value.BuiltinType("int")),
		"builtin types": func(g *value.Graph) value.NodeID {
			var ids []value.NodeID
			for _, n := range []string{"list", "dict", "NoneType", "datetime.date", "PosixPath", "ValueError"} {
				ids = append(ids, g.Add(value.BuiltinType(n)))
			}
			return g.Add(value.List(ids...))
		},
		"host type": func(g *value.Graph) value.NodeID {
			return g.Add(value.TypeNode(value.Type{Name: "Widget", ID: hostID, Origin: value.OriginHost}))
		},
		"host type attrs": func(g *value.Graph) value.NodeID {
			k := g.Add(value.Str("KIND"))
			return g.Add(value.TypeNode(value.Type{Name: "Widget", ID: hostID, Origin: value.OriginHost,
				Attrs: []value.Pair{{Key: k, Value: g.Add(value.Str("w"))}}}))
		},
		"host dataclass type": func(g *value.Graph) value.NodeID {
			return g.Add(value.TypeNode(value.Type{Name: "HDC", ID: value.UUID{0x77}, Origin: value.OriginHost, IsDataclass: true}))
		},
		"host instance": func(g *value.Graph) value.NodeID {
			c := g.Add(value.TypeNode(value.Type{Name: "Widget", ID: hostID, Origin: value.OriginHost}))
			k := g.Add(value.Str("size"))
			return g.Add(value.ClassInstanceNode(value.ClassInstance{Class: c, InstanceID: instID,
				Attrs: []value.Pair{{Key: k, Value: g.Add(value.Int(3))}}}))
		},
		"host instance no attrs": func(g *value.Graph) value.NodeID {
			c := g.Add(value.TypeNode(value.Type{Name: "Widget", ID: hostID, Origin: value.OriginHost}))
			return g.Add(value.ClassInstanceNode(value.ClassInstance{Class: c, InstanceID: value.UUID{0x41}}))
		},
		"host dataclass instance": func(g *value.Graph) value.NodeID {
			c := g.Add(value.TypeNode(value.Type{Name: "HDC", ID: value.UUID{0x78}, Origin: value.OriginHost, IsDataclass: true}))
			k := g.Add(value.Str("a"))
			return g.Add(value.ClassInstanceNode(value.ClassInstance{Class: c, InstanceID: value.UUID{0x42},
				Attrs: []value.Pair{{Key: k, Value: g.Add(value.Int(1))}}}))
		},
		"function":         leaf(value.FunctionNode(value.Function{Name: "ext"})),
		"builtin function": leaf(value.BuiltinFunction("len")),
		"builtin functions": func(g *value.Graph) value.NodeID {
			return g.Add(value.List(g.Add(value.BuiltinFunction("print")), g.Add(value.BuiltinFunction("isinstance"))))
		},
		"path":          leaf(value.Path("/a/b.txt")),
		"path relative": leaf(value.Path("rel/x")),
		"file handle":   leaf(value.FileHandleNode(value.FileHandle{Path: "/x.txt", Mode: "r"})),
		"file handle b": leaf(value.FileHandleNode(value.FileHandle{Path: "/y.bin", Mode: "wb", Position: 12})),
	}
	for name, b := range cases {
		g := &value.Graph{}
		root := b(g)
		ev := w.feedValue(g, root, "v")
		c, ok := ev.(*message.Complete)
		if !ok {
			t.Errorf("%s: %s", name, errText(ev))
			continue
		}
		if name == "float nan" {
			if n := c.Values.Node(c.Value); n.Kind != value.KindFloat || !math.IsNaN(n.Float()) {
				t.Errorf("nan came back as %s", show(&c.Values, c.Value))
			}
			continue
		}
		if err := sameValue(g, root, &c.Values, c.Value); err != nil {
			t.Errorf("%s: sent %s, got %s: %v", name, show(g, root), show(&c.Values, c.Value), err)
		}
	}

	// A file mode spelled "rt" is sent normalised, and comes back as "r".
	g := &value.Graph{}
	root := g.Add(value.FileHandleNode(value.FileHandle{Path: "/x", Mode: "rt"}))
	if c, ok := w.feedValue(g, root, "v").(*message.Complete); !ok || show(&c.Values, c.Value) != "<file '/x' r 0>" {
		t.Errorf("rt mode: %v", c)
	}
	// A function input can be called: the call suspends with its name.
	g = &value.Graph{}
	root = g.Add(value.FunctionNode(value.Function{Name: "ext", Docstring: value.Ptr("doc")}))
	fc, ok := w.feedValue(g, root, "v(1, k=[2])").(*message.FunctionCall)
	if !ok || fc.FunctionName != "ext" || len(fc.Args) != 1 || len(fc.Kwargs) != 1 ||
		show(&fc.Values, fc.Kwargs[0].Value) != "[2]" {
		t.Fatalf("function call: %+v", fc)
	}
	rg := &value.Graph{}
	rv := rg.Add(value.Str("done"))
	c, ok := last(w.turn(&message.ParentRequest{Body: &message.ResumeCall{CallID: fc.CallID, Values: *rg,
		Result: &message.ExtResult{Kind: message.ResultReturn, Value: rv}}})).(*message.Complete)
	if !ok || show(&c.Values, c.Value) != "'done'" {
		t.Errorf("resume: %+v", c)
	}
}

// TestLiveSandboxValues feeds code producing values only the sandbox can
// make and checks the decoded graph shape.
func TestLiveSandboxValues(t *testing.T) {
	w := startWorker(t)
	complete := func(code string) *message.Complete {
		t.Helper()
		ev := last(w.turn(&message.ParentRequest{Body: &message.Feed{Code: code}}))
		c, ok := ev.(*message.Complete)
		if !ok {
			t.Fatalf("%q: %s", code, errText(ev))
		}
		return c
	}
	instance := func(c *message.Complete, id value.NodeID) (*value.ClassInstance, *value.Type) {
		t.Helper()
		n := c.Values.Node(id)
		ci, ok := n.Ext().(*value.ClassInstance)
		if n.Kind != value.KindClassInstance || !ok {
			t.Fatalf("not an instance: %s", show(&c.Values, id))
		}
		return ci, c.Values.Node(ci.Class).Ext().(*value.Type)
	}

	c := complete("class P:\n    def __init__(self):\n        self.a = 1\n        self.b = [2]\np = P()\np")
	ci, typ := instance(c, c.Value)
	if typ.Name != "P" || typ.Origin != value.OriginSandbox || typ.ID.IsZero() || typ.IsDataclass || ci.InstanceID.IsZero() ||
		show(&c.Values, c.Value) != "sandbox:P(a=1, b=[2])" {
		t.Errorf("sandbox instance: %s %+v", show(&c.Values, c.Value), typ)
	}
	// The same object keeps its instance id across feeds.
	c2 := complete("p")
	if ci2, _ := instance(c2, c2.Value); ci2.InstanceID != ci.InstanceID {
		t.Errorf("instance id changed across feeds")
	}
	// A sandbox instance sent back is accepted.
	if ev := w.feedValue(&c.Values, c.Value, "v is p"); show(&ev.(*message.Complete).Values, ev.(*message.Complete).Value) != "True" {
		t.Errorf("instance round trip: %s", errText(ev))
	}

	c = complete("from dataclasses import dataclass\n@dataclass\nclass D:\n    x: int\n    y: str = 'd'\nD(3)")
	if _, typ := instance(c, c.Value); !typ.IsDataclass || show(&c.Values, c.Value) != "sandbox:D@dataclass(x=3, y='d')" {
		t.Errorf("dataclass: %s", show(&c.Values, c.Value))
	}

	// Two instances of one class share one class node.
	c = complete("class Q:\n    pass\n[Q(), Q(), P()]")
	l := c.Values.Node(c.Value)
	a, _ := instance(c, l.Refs()[0])
	b, _ := instance(c, l.Refs()[1])
	p, _ := instance(c, l.Refs()[2])
	if a.Class != b.Class || a.Class == p.Class || a.InstanceID == b.InstanceID {
		t.Errorf("class sharing: %+v %+v %+v", a, b, p)
	}

	c = complete("a = []\na.append(a)\na")
	if s := show(&c.Values, c.Value); !strings.HasPrefix(s, "[cycle#") || !strings.HasSuffix(s, "<[...]>]") {
		t.Errorf("list cycle: %s", s)
	}
	c = complete("d = {}\nd['self'] = d\nd['l'] = [d]\nd")
	n := c.Values.Node(c.Value)
	c1, c2n := c.Values.Node(n.Refs()[1]), c.Values.Node(c.Values.Node(n.Refs()[3]).Refs()[0])
	if c1.Kind != value.KindCycle || c2n.Kind != value.KindCycle || c1.Text() != "{...}" || c1.Num != c2n.Num || c1.Num == 0 {
		t.Errorf("dict cycles: %s", show(&c.Values, c.Value))
	}
	c = complete("class N:\n    pass\nn = N()\nn.n = n\nn")
	if s := show(&c.Values, c.Value); !strings.HasPrefix(s, "sandbox:N(n=cycle#") || !strings.HasSuffix(s, "<...>)") {
		t.Errorf("instance cycle: %s", s)
	}

	c = complete("s = [1]\n[s, s]")
	n = c.Values.Node(c.Value)
	if show(&c.Values, c.Value) != "[[1], [1]]" || n.Refs()[0] == n.Refs()[1] {
		t.Errorf("shared sub-object: %s %v", show(&c.Values, c.Value), n.Refs())
	}
	c = complete("class K:\n    pass\nK")
	if s := show(&c.Values, c.Value); s != "repr<<class 'K'>>" {
		t.Errorf("sandbox class: %s", s)
	}
	c = complete("v = 1\nfor _ in range(48):\n    v = [v]\nv")
	if got := show(&c.Values, c.Value); got != strings.Repeat("[", 48)+"1"+strings.Repeat("]", 48) {
		t.Errorf("deep output: %s", got)
	}
}

// TestLiveDepth checks MaxDepth against the worker: what the encoder
// accepts the worker accepts, and bytes one level deeper are refused by
// both with the same text.
func TestLiveDepth(t *testing.T) {
	w := startWorker(t)
	const rec = "failed to decode Protobuf message: NamedValue.value: Feed.inputs: ParentRequest.kind: recursion limit reached"
	for _, tc := range []struct {
		name     string
		leaf     value.Node
		deepest  int // the most lists the worker accepts
		innerNil bool
	}{
		{"int", value.Int(1), 48, false},
		{"None", value.None(), 48, false},
		{"empty list", value.List(), 49, true},
	} {
		depth := tc.deepest
		if tc.innerNil {
			depth-- // the leaf is itself a list
		}
		g, root := listGraph(depth, tc.leaf)
		if ev := w.feedValue(g, root, "len(str(v))"); ev.EventKind() != message.KindComplete {
			t.Errorf("%s in %d lists: %s", tc.name, tc.deepest, errText(ev))
		}
		g, root = listGraph(depth+1, tc.leaf)
		if _, err := AppendRequest(nil, feedRequest(g, root)); err == nil {
			t.Errorf("%s in %d lists: the encoder accepts it", tc.name, tc.deepest+1)
		}
		// Hand-built bytes reach the worker anyway; both refuse them alike.
		var leaf []byte
		if !tc.innerNil {
			leaf, _ = AppendValue(nil, &value.Graph{Nodes: []value.Node{tc.leaf}}, 0, codec.Limits{})
		}
		frame := feedWith(nestLists(tc.deepest+1, leaf))
		frame = append(frame[:0:0], frame...)
		_, err := DecodeRequest(frame, codec.Limits{})
		if err == nil || err.Error() != rec {
			t.Errorf("%s: our decoder: %v", tc.name, err)
		}
		got := errText(last(w.turnRaw(frame)))
		if want := "RuntimeError: protocol violation: malformed request: " + rec; got != want {
			t.Errorf("%s: worker: %s", tc.name, got)
		}
	}
}

// TestLiveDecodeErrors sends hand-made invalid inputs to the worker and
// requires our decoder to give the worker's text, or to accept what the
// worker accepts.
func TestLiveDecodeErrors(t *testing.T) {
	w := startWorker(t)
	host := ld(1, sf(1, "W"), ld(2, ld(1, make([]byte, 16))), vi(3, 3))
	uid := ld(1, []byte("0123456789abcdef"))
	for _, tc := range decodeErrorCases(host, uid) {
		frame := feedWith(tc.obj)
		ours := ""
		if _, err := DecodeRequest(frame, codec.Limits{}); err != nil {
			ours = "RuntimeError: protocol violation: malformed request: " + err.Error()
		}
		got := errText(last(w.turnRaw(frame)))
		if tc.want == "" {
			if ours != "" || strings.Contains(got, "malformed request") {
				t.Errorf("%s: ours %q, worker %q", tc.name, ours, got)
			}
			continue
		}
		if got != ours {
			t.Errorf("%s:\nworker %s\nours   %s", tc.name, got, ours)
		}
	}
	// Conversion errors.
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		{"top-level object without kind", feedWith(nil)},
		{"tag 10", feedWith(ld(10, uid))},
	} {
		_, err := DecodeRequest(tc.frame, codec.Limits{})
		var de *codec.DecodeError
		got := errText(last(w.turnRaw(tc.frame)))
		if !errors.As(err, &de) || !de.Structural || !strings.HasSuffix(got, ": "+err.Error()) {
			t.Errorf("%s: ours %v, worker %s", tc.name, err, got)
		}
	}
}

// TestLiveSuspensions drives the suspension events through the codec.
func TestLiveSuspensions(t *testing.T) {
	w := startWorker(t)
	fc, ok := last(w.turn(&message.ParentRequest{Body: &message.Feed{Code: "print('x')\nfoo(1, 'a', *[2], k={'a': (3,)})"}})).(*message.FunctionCall)
	if !ok || fc.FunctionName != "foo" || len(fc.Args) != 3 || show(&fc.Values, fc.Args[2]) != "2" ||
		show(&fc.Values, fc.Kwargs[0].Key) != "'k'" || show(&fc.Values, fc.Kwargs[0].Value) != "{'a': (3,)}" {
		t.Fatalf("function call: %+v", fc)
	}
	ev := last(w.turn(&message.ParentRequest{Body: &message.ResumeCall{CallID: fc.CallID, Result: &message.ExtResult{
		Kind: message.ResultError, Error: message.NewException("ValueError", "host")}}}))
	if errText(ev) != "ValueError: host" {
		t.Errorf("error result: %s", errText(ev))
	}
	oc, ok := last(w.turn(&message.ParentRequest{Body: &message.Feed{Code: "from pathlib import Path\nPath('/d/x.txt').write_text('hé')"}})).(*message.OsCall)
	if !ok || oc.Op != message.OpWriteText || oc.Path != "/d/x.txt" || oc.Text != "hé" {
		t.Fatalf("os call: %+v", oc)
	}
	ev = last(w.turn(&message.ParentRequest{Body: &message.ResumeCall{CallID: oc.CallID, Result: &message.ExtResult{Kind: message.ResultNotHandled}}}))
	if errText(ev) != "PermissionError: Permission denied: '/d/x.txt'" {
		t.Errorf("not handled: %s", errText(ev))
	}
	oc, ok = last(w.turn(&message.ParentRequest{Body: &message.Feed{Code: "import os\nos.getenv('HOME', 5)"}})).(*message.OsCall)
	if !ok || oc.Op != message.OpGetenv || oc.Key != "HOME" || show(&oc.Values, oc.Default) != "5" {
		t.Fatalf("getenv: %+v", oc)
	}
	w.turn(&message.ParentRequest{Body: &message.ResumeCall{CallID: oc.CallID, Result: &message.ExtResult{Kind: message.ResultNotHandled}}})
	nl, ok := last(w.turn(&message.ParentRequest{Body: &message.Feed{Code: "g = bar\ng"}})).(*message.NameLookup)
	if !ok || nl.Name != "bar" || nl.ObjectID != nil {
		t.Fatalf("name lookup: %+v", nl)
	}
	ev = last(w.turn(&message.ParentRequest{Body: &message.ResumeNameLookup{Kind: message.LookupUndefined}}))
	if errText(ev) != "NameError: name 'bar' is not defined" {
		t.Errorf("undefined: %s", errText(ev))
	}
	rf, ok := last(w.turn(&message.ParentRequest{Body: &message.Feed{Code: "import asyncio\nawait asyncio.gather(f(), f())"}})).(*message.FunctionCall)
	if !ok {
		t.Fatalf("gather: %+v", rf)
	}
	w.turn(&message.ParentRequest{Body: &message.ResumeCall{CallID: rf.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: rf.CallID}}})
	fc2 := last(w.turn(&message.ParentRequest{Body: &message.ResumeCall{CallID: 1, Result: &message.ExtResult{Kind: message.ResultFuture, Future: 1}}}))
	res, ok := fc2.(*message.ResolveFutures)
	if !ok || len(res.PendingCallIDs) != 2 {
		t.Fatalf("resolve futures: %+v", fc2)
	}
	g := &value.Graph{}
	one, two := g.Add(value.Int(1)), g.Add(value.Int(2))
	ev = last(w.turn(&message.ParentRequest{Body: &message.ResumeFutures{Values: *g, Results: []message.FutureResult{
		{CallID: 0, Result: &message.ExtResult{Kind: message.ResultReturn, Value: one}},
		{CallID: 1, Result: &message.ExtResult{Kind: message.ResultReturn, Value: two}}}}}))
	if c, ok := ev.(*message.Complete); !ok || show(&c.Values, c.Value) != "[1, 2]" {
		t.Errorf("gather result: %s", errText(ev))
	}
	d, ok := last(w.turn(&message.ParentRequest{Body: &message.Dump{}})).(*message.DumpResult)
	if !ok || !bytes.HasPrefix(d.State, []byte("MONTY\x00")) {
		t.Errorf("dump: %+v", d)
	}
}

// TestLiveMerge sends each of mergeCases as an input and requires the
// worker's value, or its decode error, to be the one the case states.
func TestLiveMerge(t *testing.T) {
	w := startWorker(t)
	const path = "failed to decode Protobuf message: NamedValue.value: Feed.inputs: ParentRequest.kind: "
	for _, tc := range mergeCases() {
		got := last(w.turnRaw(feedWith(tc.obj)))
		var s string
		switch ev := got.(type) {
		case *message.Complete:
			s = show(&ev.Values, ev.Value)
		default:
			s = errText(got)
			if rest, ok := strings.CutPrefix(s, "RuntimeError: protocol violation: malformed request: "+path); ok {
				s = "error: failed to decode Protobuf message: " + rest
			}
		}
		if s != tc.want {
			t.Errorf("%s: worker %s, want %s", tc.name, s, tc.want)
		}
	}
}

package codecv4

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// graphCase is a value graph and its root.
type graphCase struct {
	name string
	g    value.Graph
	root value.NodeID
}

func single(name string, n value.Node) graphCase {
	var g value.Graph
	return graphCase{name, g, addTo(&g, n)}
}

func addTo(g *value.Graph, n value.Node) value.NodeID { return g.Add(n) }

func bigFromString(s string) *big.Int {
	z, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return z
}

var (
	uuidA = value.UUID{0x6b, 0x1f, 0x0e, 0x4a, 0x9c, 0x3d, 0x4e, 0x8a, 0xb1, 0x2c, 0x5d, 0x6e, 0x7f, 0x80, 0x91, 0xa2}
	uuidB = value.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	uuid7 = value.UUID{15: 7}
)

// nodeCorpus covers every node kind, with default payloads and edge values.
func nodeCorpus() []graphCase {
	nanBits := math.Float64frombits(0x7ff8_0000_dead_beef)
	cs := []graphCase{
		single("ellipsis", value.Ellipsis()),
		single("none", value.None()),
		single("not_implemented", value.NotImplemented()),
		single("false", value.Bool(false)),
		single("true", value.Bool(true)),
		single("int0", value.Int(0)),
		single("int-1", value.Int(-1)),
		single("int_min", value.Int(math.MinInt64)),
		single("int_max", value.Int(math.MaxInt64)),
		single("bigint0", value.Node{Kind: value.KindBigInt}.WithExt(new(big.Int))),
		single("bigint-1", value.Node{Kind: value.KindBigInt}.WithExt(big.NewInt(-1))),
		single("bigint+39", value.BigIntNode(bigFromString("123456789012345678901234567890123456789"))),
		single("bigint-39", value.BigIntNode(bigFromString("-987654321098765432109876543210987654321"))),
		single("float0", value.Float(0)),
		single("float-0", value.Float(math.Copysign(0, -1))),
		single("nan", value.Float(math.NaN())),
		single("nan_payload", value.Node{Kind: value.KindFloat, Num: math.Float64bits(nanBits)}),
		single("+inf", value.Float(math.Inf(1))),
		single("-inf", value.Float(math.Inf(-1))),
		single("1.5e300", value.Float(1.5e300)),
		single("str_empty", value.Str("")),
		single("str_utf8", value.Str("héllo 🐍")),
		single("bytes_empty", value.Bytes(nil)),
		single("bytes", value.Bytes([]byte{0, 255, 128})),
		single("list_empty", value.List()),
		single("tuple_empty", value.Tuple()),
		single("set_empty", value.Set()),
		single("frozenset_empty", value.FrozenSet()),
		single("dict_empty", value.Dict()),
		single("named_tuple_empty", value.NamedTupleNode("", nil)),
		single("date", value.DateNode(value.Date{Year: 2024, Month: 5, Day: 17})),
		single("leap_day", value.DateNode(value.Date{Year: 2024, Month: 2, Day: 29})),
		single("datetime_midnight_y1", value.DateTimeNode(value.DateTime{Year: 1, Month: 1, Day: 1})),
		single("datetime_naive", value.DateTimeNode(value.DateTime{Year: 2023, Month: 12, Day: 31, Hour: 23, Minute: 59, Second: 59, Microsecond: 999999})),
		single("datetime_offset0_name_empty", value.DateTimeNode(value.DateTime{Year: 2020, Month: 6, Day: 1, Offset: value.Ptr[int32](0), TZName: value.Ptr("")})),
		single("datetime_aware_named", value.DateTimeNode(value.DateTime{Year: 2020, Month: 6, Day: 1, Hour: 12, Offset: value.Ptr[int32](19800), TZName: value.Ptr("IST")})),
		single("datetime_negative_offset", value.DateTimeNode(value.DateTime{Year: 9999, Month: 12, Day: 31, Offset: value.Ptr[int32](-86399)})),
		single("time_default", value.TimeNode(value.Time{})),
		single("time_max_fold", value.TimeNode(value.Time{Hour: 23, Minute: 59, Second: 59, Microsecond: 999999, Offset: value.Ptr[int32](0), TZName: value.Ptr(""), Fold: 1})),
		single("time_minus1", value.TimeNode(value.Time{Hour: 1, Offset: value.Ptr[int32](-3600), TZName: value.Ptr("MINUS1")})),
		single("timedelta_zero", value.TimeDeltaNode(value.TimeDelta{})),
		single("timedelta_normalized", value.TimeDeltaNode(value.TimeDelta{Days: -2, Seconds: 86399, Microseconds: 999999})),
		single("timezone_utc", value.TimeZoneNode(value.TimeZone{})),
		single("timezone_ist", value.TimeZoneNode(value.TimeZone{Offset: -19800, Name: value.Ptr("IST")})),
		single("exception_noarg", value.ExceptionNode(value.Exception{Type: "ValueError"})),
		single("exception_json", value.ExceptionNode(value.Exception{Type: "json.JSONDecodeError", Arg: value.Ptr("")})),
		single("type_int", value.BuiltinType("int")),
		single("type_keyerror", value.BuiltinType("KeyError")),
		single("type_deque", value.BuiltinType("collections.deque")),
		single("type_datetime", value.BuiltinType("datetime.datetime")),
		single("class_sandbox", value.TypeNode(value.Type{Name: "Foo", ID: uuidA, Origin: value.OriginSandbox})),
		single("class_zero_uuid", value.TypeNode(value.Type{ID: value.UUID{}, Origin: value.OriginHost})),
		single("builtin_len", value.BuiltinFunction("len")),
		single("builtin_setattr", value.BuiltinFunction("object.__setattr__")),
		single("path_empty", value.Path("")),
		single("path", value.Path("/mnt/data/file.txt")),
		single("function_nodoc", value.FunctionNode(value.Function{Name: "f"})),
		single("function_doc_empty", value.FunctionNode(value.Function{Name: "fetch", Docstring: value.Ptr("")})),
		single("function_doc", value.FunctionNode(value.Function{Name: "g", Docstring: value.Ptr("Fetch a thing.")})),
		single("repr_empty", value.Repr("")),
		single("repr", value.Repr("<unrepresentable>")),
		single("cycle_list", value.Cycle("[...]")),
		single("cycle_dict", value.Cycle("{...}")),
	}
	for _, m := range []string{"r", "rb", "w", "wb", "a", "ab"} {
		cs = append(cs, single("file_"+m, value.FileHandleNode(value.FileHandle{Path: "/f.bin", Mode: m, Position: 42})))
	}
	cs = append(cs, single("file_rb0", value.FileHandleNode(value.FileHandle{Path: "/f.bin", Mode: "rb"})))

	{ // nested list, tuple, set, frozenset
		var g value.Graph
		a := g.Add(value.Int(1))
		b := g.Add(value.Str("x"))
		l := g.Add(value.List(a, b))
		t := g.Add(value.Tuple(l, a))
		s := g.Add(value.Set(a, b))
		f := g.Add(value.FrozenSet(b))
		cs = append(cs, graphCase{"containers", g, g.Add(value.List(l, t, s, f, l))})
	}
	{ // named tuples
		var g value.Graph
		a := g.Add(value.Int(3))
		cs = append(cs, graphCase{"stat_result", g, g.Add(value.NamedTupleNode("os.stat_result", []string{""}, a))})
		var g2 value.Graph
		x, y := g2.Add(value.Int(1)), g2.Add(value.Int(2))
		cs = append(cs, graphCase{"point", g2, g2.Add(value.NamedTupleNode("Point", []string{"x", "y"}, x, y))})
	}
	{ // dict with an int key and a tuple key
		var g value.Graph
		k1 := g.Add(value.Int(1))
		v1 := g.Add(value.Str("one"))
		t := g.Add(value.Tuple(k1, k1))
		cs = append(cs, graphCase{"dict", g, g.Add(value.Dict(value.Pair{Key: k1, Value: v1}, value.Pair{Key: t, Value: v1}))})
	}
	{ // host dataclass with class attrs, instance with attrs
		var g value.Graph
		name := g.Add(value.Str("x"))
		one := g.Add(value.Int(1))
		lst := g.Add(value.List(one))
		cls := g.Add(value.TypeNode(value.Type{Name: "Child", ID: uuidB, Origin: value.OriginHost, IsDataclass: true,
			Attrs: []value.Pair{{Key: name, Value: lst}}}))
		inst := g.Add(value.ClassInstanceNode(value.ClassInstance{Class: cls, InstanceID: uuidA, Attrs: []value.Pair{{Key: name, Value: one}}}))
		cs = append(cs, graphCase{"host_dataclass_instance", g, inst})
	}
	{ // sandbox class with class attrs, and its instance without attrs
		var g value.Graph
		name := g.Add(value.Str("count"))
		zero := g.Add(value.Int(0))
		cls := g.Add(value.TypeNode(value.Type{Name: "Counter", ID: uuid7, Origin: value.OriginSandbox, Attrs: []value.Pair{{Key: name, Value: zero}}}))
		cs = append(cs, graphCase{"sandbox_class_attrs", g, g.Add(value.ClassInstanceNode(value.ClassInstance{Class: cls, InstanceID: uuidB}))})
	}
	{ // class instances sharing one class node, plus a list of both and the class
		var g value.Graph
		cls := g.Add(value.TypeNode(value.Type{Name: "Point", ID: uuidA, Origin: value.OriginSandbox}))
		i1 := g.Add(value.ClassInstanceNode(value.ClassInstance{Class: cls, InstanceID: uuidB}))
		i2 := g.Add(value.ClassInstanceNode(value.ClassInstance{Class: cls, InstanceID: uuid7}))
		cs = append(cs, graphCase{"shared_class", g, g.Add(value.List(i1, i2, cls))})
	}
	{ // class instance at node 1 whose class is node 0 with zero uuid
		var g value.Graph
		cls := g.Add(value.TypeNode(value.Type{Origin: value.OriginSandbox}))
		cs = append(cs, graphCase{"instance_all_empty", g, g.Add(value.ClassInstanceNode(value.ClassInstance{Class: cls}))})
	}
	{ // doubling ladder of 4 levels plus a dict
		var g value.Graph
		x := g.Add(value.Int(1))
		for range 4 {
			x = g.Add(value.List(x, x))
		}
		cs = append(cs, graphCase{"ladder_dict", g, g.Add(value.Dict(value.Pair{Key: 0, Value: x}))})
	}
	{ // a = []; a.append(a); [a, a]
		var g value.Graph
		c := g.Add(value.Cycle("[...]"))
		a := g.Add(value.List(c))
		cs = append(cs, graphCase{"executed_cycle", g, g.Add(value.List(a, a))})
	}
	{
		var g value.Graph
		c := g.Add(value.Cycle("(...)"))
		cs = append(cs, graphCase{"tuple_cycle", g, g.Add(value.Tuple(c, c))})
	}
	{ // ids needing multi-byte varints
		var g value.Graph
		for i := range 300 {
			g.Add(value.Int(int64(i)))
		}
		ids := make([]value.NodeID, 300)
		for i := range ids {
			ids[i] = value.NodeID(299 - i)
		}
		cs = append(cs, graphCase{"wide_list", g, g.Add(value.List(ids...))})
	}
	return cs
}

// randomGraph builds a random graph of about n nodes in post-order, with
// sharing (children picked among all lower ids), cycle leaves and classes.
func randomGraph(r *rand.Rand, n int) (value.Graph, value.NodeID) {
	var g value.Graph
	var classes []value.NodeID
	pick := func() value.NodeID { return value.NodeID(r.IntN(len(g.Nodes))) }
	picks := func(k int) []value.NodeID {
		if len(g.Nodes) == 0 {
			return nil
		}
		ids := make([]value.NodeID, k)
		for i := range ids {
			ids[i] = pick()
		}
		return ids
	}
	strs := []string{"", "a", "héllo 🐍", "x\x00y", "long string " + fmt.Sprint(r.Uint64())}
	for len(g.Nodes) < n {
		leaf := len(g.Nodes) == 0 || r.IntN(3) > 0
		var nd value.Node
		if leaf {
			switch r.IntN(22) {
			case 0:
				nd = value.None()
			case 1:
				nd = value.Ellipsis()
			case 2:
				nd = value.Bool(r.IntN(2) == 1)
			case 3:
				nd = value.Int(int64(r.Uint64()))
			case 4:
				nd = value.Int(int64(r.IntN(1000)) - 500)
			case 5:
				nd = value.Float(r.NormFloat64() * 1e10)
			case 6:
				nd = value.Node{Kind: value.KindFloat, Num: r.Uint64()} // any bits, NaNs included
			case 7:
				nd = value.Str(strs[r.IntN(len(strs))])
			case 8:
				b := make([]byte, r.IntN(40))
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				nd = value.Bytes(b)
			case 9:
				z := new(big.Int).Lsh(big.NewInt(int64(r.Uint64()|1)), uint(r.IntN(200)))
				if r.IntN(2) == 0 {
					z.Neg(z)
				}
				nd = value.Node{Kind: value.KindBigInt}.WithExt(z)
			case 10:
				nd = value.DateNode(value.Date{Year: int32(1 + r.IntN(9999)), Month: uint32(1 + r.IntN(12)), Day: uint32(1 + r.IntN(28))})
			case 11:
				t := value.Time{Hour: uint32(r.IntN(24)), Minute: uint32(r.IntN(60)), Second: uint32(r.IntN(60)), Microsecond: uint32(r.IntN(1000000)), Fold: uint32(r.IntN(2))}
				if r.IntN(2) == 0 {
					t.Offset = value.Ptr(int32(r.IntN(2*86399+1) - 86399))
					if r.IntN(2) == 0 {
						t.TZName = value.Ptr(strs[r.IntN(len(strs))])
					}
				}
				nd = value.TimeNode(t)
			case 12:
				d := value.DateTime{Year: int32(1 + r.IntN(9999)), Month: 2, Day: uint32(1 + r.IntN(28)), Hour: uint32(r.IntN(24)), Minute: uint32(r.IntN(60)), Second: uint32(r.IntN(60)), Microsecond: uint32(r.IntN(1000000))}
				if r.IntN(2) == 0 {
					d.Offset = value.Ptr(int32(r.IntN(2*86399+1) - 86399))
					d.TZName = value.Ptr("Z")
				}
				nd = value.DateTimeNode(d)
			case 13:
				nd = value.TimeDeltaNode(value.TimeDelta{Days: int32(r.Uint32()), Seconds: int32(r.IntN(86400)), Microseconds: int32(r.IntN(1000000))})
			case 14:
				z := value.TimeZone{Offset: int32(r.IntN(2*86399+1) - 86399)}
				if r.IntN(2) == 0 {
					z.Name = value.Ptr("UTC+x")
				}
				nd = value.TimeZoneNode(z)
			case 15:
				e := value.Exception{Type: "ValueError"}
				if r.IntN(2) == 0 {
					e.Arg = value.Ptr(strs[r.IntN(len(strs))])
				}
				nd = value.ExceptionNode(e)
			case 16:
				nd = value.BuiltinType([]string{"int", "str", "KeyError", "collections.deque"}[r.IntN(4)])
			case 17:
				nd = value.BuiltinFunction([]string{"len", "print", "object.__setattr__"}[r.IntN(3)])
			case 18:
				nd = value.Path(strs[r.IntN(len(strs))])
			case 19:
				nd = value.FileHandleNode(value.FileHandle{Path: "/p", Mode: []string{"r", "rb", "w", "wb", "a", "ab"}[r.IntN(6)], Position: r.Uint64()})
			case 20:
				nd = value.Cycle([]string{"[...]", "(...)", "{...}", "..."}[r.IntN(4)])
			default:
				f := value.Function{Name: "fn"}
				if r.IntN(2) == 0 {
					f.Docstring = value.Ptr("doc")
				}
				nd = value.FunctionNode(f)
			}
		} else {
			k := r.IntN(5)
			switch r.IntN(9) {
			case 0:
				nd = value.List(picks(k)...)
			case 1:
				nd = value.Tuple(picks(k)...)
			case 2:
				nd = value.Set(picks(k)...)
			case 3:
				nd = value.FrozenSet(picks(k)...)
			case 4:
				ps := make([]value.Pair, k)
				for i := range ps {
					ps[i] = value.Pair{Key: pick(), Value: pick()}
				}
				nd = value.Dict(ps...)
			case 5:
				names := make([]string, k)
				for i := range names {
					names[i] = fmt.Sprintf("f%d", i)
				}
				nd = value.NamedTupleNode("T", names, picks(k)...)
			case 6:
				ps := make([]value.Pair, k)
				for i := range ps {
					ps[i] = value.Pair{Key: pick(), Value: pick()}
				}
				var u value.UUID
				for i := range u {
					u[i] = byte(r.Uint32())
				}
				t := value.Type{Name: "C", ID: u, Origin: value.TypeOrigin(2 + r.IntN(2)), IsDataclass: r.IntN(2) == 0}
				if len(ps) > 0 {
					t.Attrs = ps
				}
				nd = value.TypeNode(t)
			default:
				if len(classes) == 0 {
					nd = value.Repr("<no class yet>")
					break
				}
				ps := make([]value.Pair, k)
				for i := range ps {
					ps[i] = value.Pair{Key: pick(), Value: pick()}
				}
				var u value.UUID
				u[0] = byte(len(g.Nodes))
				nd = value.ClassInstanceNode(value.ClassInstance{Class: classes[r.IntN(len(classes))], InstanceID: u, Attrs: ps})
			}
		}
		id := g.Add(nd)
		if t, ok := nd.Ext().(*value.Type); ok && t.Origin != value.OriginBuiltin {
			classes = append(classes, id)
		}
	}
	return g, value.NodeID(len(g.Nodes) - 1)
}

func exc(typ, msg string) *message.RaisedException {
	return &message.RaisedException{Type: typ, Message: &msg}
}

func fullException() *message.RaisedException {
	return &message.RaisedException{
		Type:    "ValueError",
		Message: value.Ptr("bad value"),
		Traceback: []message.StackFrame{
			{Filename: "main.py", Start: message.CodeLoc{Line: 3, Column: 1}, End: message.CodeLoc{Line: 3, Column: 6},
				FrameName: value.Ptr("<module>"), PreviewLine: value.Ptr("foo()")},
			{Filename: "lib.py", Start: message.CodeLoc{Line: 10, Column: 5}, End: message.CodeLoc{Line: 12, Column: 2},
				FrameName: value.Ptr("foo"), HideCaret: true, HideFrameName: true},
			{},
		},
	}
}

func listGraph(vals ...int64) (value.Graph, value.NodeID) {
	var g value.Graph
	ids := make([]value.NodeID, len(vals))
	for i, v := range vals {
		ids[i] = g.Add(value.Int(v))
	}
	return g, g.Add(value.List(ids...))
}

// requestCorpus has every request kind, each with its fields set.
func requestCorpus() []*message.ParentRequest {
	g, root := listGraph(1, 2, 3)
	g2, root2 := listGraph(10, 20)
	return []*message.ParentRequest{
		{},
		{TraceParent: value.Ptr("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")},
		{Body: &message.Configure{}},
		{Body: &message.Configure{ScriptName: "main.py", Limits: &message.ResourceLimits{
			MaxDurationMicros: value.Ptr[uint64](5e6), MaxMemoryBytes: value.Ptr[uint64](1 << 30), GCInterval: value.Ptr[uint64](0),
			MaxRecursionDepth: value.Ptr[uint64](1000), MaxSuspensions: value.Ptr[uint64](3)},
			TypeCheck: true, TypeCheckStubs: value.Ptr(""), MontyVersion: "0.0.19", AssertMessageAnnotations: value.Ptr[uint32](0),
			TypeCheckFormat: message.FormatGithub, TypeCheckColor: true, ProtocolVersion: 4, PrintFlushIntervalMs: value.Ptr[uint32](0)},
			TraceParent: value.Ptr("tp")},
		{Body: &message.Configure{Limits: &message.ResourceLimits{}, TypeCheckFormat: message.TypeCheckFormat(math.MaxUint32)}},
		{Body: &message.InstallDependencies{Requirements: []string{"numpy", "", "pandas>=2"}}},
		{Body: &message.Feed{}},
		{Body: &message.Feed{Code: "n + 1", Inputs: []message.NamedRef{{Name: "n", Value: root}, {Name: "first", Value: 0}}, Values: g, SkipTypeCheck: true, Cwd: "/work"}},
		{Body: &message.ResumeCall{CallID: 7}},
		{Body: &message.ResumeCall{CallID: 7, Result: &message.ExtResult{Kind: message.ResultReturn, Value: root}, Values: g}},
		{Body: &message.ResumeCall{CallID: 1, Result: &message.ExtResult{Kind: message.ResultReturn}, Values: g2}},
		{Body: &message.ResumeCall{CallID: 2, Result: &message.ExtResult{Kind: message.ResultError, Error: fullException()}}},
		{Body: &message.ResumeCall{CallID: 3, Result: &message.ExtResult{Kind: message.ResultFuture, Future: 3}}},
		{Body: &message.ResumeCall{CallID: 4, Result: &message.ExtResult{Kind: message.ResultNotFound, Name: "missing"}}},
		{Body: &message.ResumeCall{CallID: 4, Result: &message.ExtResult{Kind: message.ResultNotFound}}},
		{Body: &message.ResumeCall{CallID: 5, Result: &message.ExtResult{Kind: message.ResultNotHandled}}},
		{Body: &message.ResumeNameLookup{Kind: message.LookupValue, Value: root2, Values: g2}},
		{Body: &message.ResumeNameLookup{Kind: message.LookupValue, Value: 0, Values: g2}},
		{Body: &message.ResumeNameLookup{Kind: message.LookupUndefined}},
		{Body: &message.ResumeNameLookup{Kind: message.LookupError, Error: exc("KeyError", "k")}},
		{Body: &message.ResumeFutures{}},
		{Body: &message.ResumeFutures{Results: []message.FutureResult{
			{CallID: 1, Result: &message.ExtResult{Kind: message.ResultReturn, Value: root}},
			{CallID: 2, Result: &message.ExtResult{Kind: message.ResultError, Error: exc("TypeError", "")}},
			{CallID: 0, Result: &message.ExtResult{Kind: message.ResultReturn, Value: 0}},
			{CallID: 3, Result: &message.ExtResult{Kind: message.ResultFuture, Future: 3}},
			{CallID: 4, Result: &message.ExtResult{Kind: message.ResultNotFound, Name: "x"}},
		}, Values: g}},
		{Body: &message.Dump{}},
		{Body: &message.Load{}},
		{Body: &message.Load{State: []byte{1, 2, 3, 0, 255}}},
		{Body: &message.Reset{}},
		{Body: &message.Shutdown{}, TraceParent: value.Ptr("")},
		{Body: &message.AbortFeed{}},
		{Body: &message.AbortFeed{Exception: exc("RuntimeError", "suspension limit 3 exceeded")}},
	}
}

// osCalls has every OS call arm.
func osCalls() []*message.OsCall {
	gl, rl := listGraph(1, 2)
	var gn value.Graph
	gn.Add(value.None())
	gn.Add(value.Int(3))
	ops := []*message.OsCall{}
	for op := message.OpExists; op <= message.OpRmdir; op++ {
		ops = append(ops, &message.OsCall{CallID: uint32(op), Op: op, Path: "/mnt/" + op.String()})
	}
	ops = append(ops,
		&message.OsCall{CallID: 1, Op: message.OpExists},
		&message.OsCall{CallID: 14, Op: message.OpWriteText, Path: "/a.txt", Text: "héllo"},
		&message.OsCall{CallID: 15, Op: message.OpAppendText, Path: "/a.txt"},
		&message.OsCall{CallID: 16, Op: message.OpWriteBytes, Path: "/b.bin", Data: []byte{0, 1, 2}},
		&message.OsCall{CallID: 17, Op: message.OpAppendBytes, Data: []byte{9}},
		&message.OsCall{CallID: 19, Op: message.OpMkdir, Path: "/d", Parents: true, ExistOK: true},
		&message.OsCall{CallID: 19, Op: message.OpMkdir, Path: "/d"},
		&message.OsCall{CallID: 20, Op: message.OpRename, Path: "/from", Dst: "/to"},
		&message.OsCall{CallID: 21, Op: message.OpGetenv, Key: "HOME", Default: 0, Values: gn},
		&message.OsCall{CallID: 21, Op: message.OpGetenv, Key: "PATH", Default: rl, Values: gl},
		&message.OsCall{CallID: 22, Op: message.OpGetEnviron},
		&message.OsCall{CallID: 23, Op: message.OpDateToday},
		&message.OsCall{CallID: 24, Op: message.OpDateTimeNow},
		&message.OsCall{CallID: 24, Op: message.OpDateTimeNow, TZ: &value.TimeZone{Offset: 3600, Name: value.Ptr("CET")}},
		&message.OsCall{CallID: 24, Op: message.OpDateTimeNow, TZ: &value.TimeZone{}},
		&message.OsCall{CallID: 25, Op: message.OpUrandom, Size: 2496},
		&message.OsCall{CallID: 25, Op: message.OpUrandom, Size: math.MaxUint64},
	)
	for _, m := range []string{"r", "rb", "w", "wb", "a", "ab"} {
		ops = append(ops, &message.OsCall{CallID: 18, Op: message.OpOpen, Path: "/f", Mode: m})
	}
	return ops
}

// eventCorpus has every event kind, each with its fields set.
func eventCorpus() []*message.ChildEvent {
	g, root := listGraph(1, 2, 3)
	var fg value.Graph
	a := fg.Add(value.Int(1))
	b := fg.Add(value.Str("two"))
	c := fg.Add(value.List(a, b))
	kw := fg.Add(value.Str("key"))
	evs := []*message.ChildEvent{
		{},
		{TotalExecutionMicros: 12345, MaxDurationMicros: value.Ptr[uint64](0), MaxSuspensions: value.Ptr[uint64](1000), RestoredScriptName: value.Ptr("main.py")},
		{Body: &message.Print{}},
		{Body: &message.Print{Segments: []message.PrintSegment{{Stream: message.StreamStdout, Text: "hello\n"}, {Stream: message.StreamStderr, Text: "err\n"}, {}, {Stream: 7, Text: "x"}}}},
		{Body: &message.FunctionCall{}},
		{Body: &message.FunctionCall{FunctionName: "external", Args: []value.NodeID{a, b, c}, Kwargs: []value.Pair{{Key: kw, Value: a}, {Key: kw, Value: c}},
			CallID: 42, Values: fg}, TotalExecutionMicros: 99, MaxSuspensions: value.Ptr[uint64](1000)},
		{Body: &message.FunctionCall{FunctionName: "external", Args: []value.NodeID{a, b, c}, Kwargs: []value.Pair{{Key: kw, Value: a}, {Key: kw, Value: c}},
			CallID: 42, ObjectID: &uuid7, AllowEagerAwait: true, Values: fg}},
		{Body: &message.FunctionCall{FunctionName: "method", ObjectID: &value.UUID{}, Kwargs: []value.Pair{{}}, Values: fg}},
		{Body: &message.NameLookup{Name: "x"}},
		{Body: &message.NameLookup{Name: "attr", ObjectID: &uuidA}},
		{Body: &message.ResolveFutures{}},
		{Body: &message.ResolveFutures{PendingCallIDs: []uint32{3, 1, 0, 1 << 31}}},
		{Body: &message.Complete{Value: root, Values: g}, RestoredScriptName: value.Ptr("")},
		{Body: &message.Complete{Value: 0, Values: g}},
		{Body: &message.Error{}},
		{Body: &message.Error{Exception: fullException()}},
		{Body: &message.Error{Exception: &message.RaisedException{Type: "UnicodeDecodeError", Message: value.Ptr("bad"),
			Data: &message.UnicodeErrorData{Encoding: "utf-8", ObjectBytes: []byte{0x61, 0xff}, Start: 1, End: 2, Reason: "invalid start byte"}}}},
		{Body: &message.Error{Exception: &message.RaisedException{Type: "UnicodeEncodeError",
			Data: &message.UnicodeErrorData{Encoding: "ascii", ObjectStr: value.Ptr("é"), Start: 0, End: 1, Reason: "ordinal not in range"}}}},
		{Body: &message.Error{Exception: &message.RaisedException{Type: "json.JSONDecodeError",
			Data: &message.JSONErrorData{Msg: "Expecting value", Doc: value.Ptr("[1,"), Pos: 3, Lineno: 1, Colno: 4}}}},
		{Body: &message.Error{Exception: &message.RaisedException{Type: "json.JSONDecodeError",
			Data: &message.JSONErrorData{Msg: "Expecting value", Pos: 100000, Lineno: 1, Colno: 1}}}},
		{Body: &message.TypingError{Diagnostics: "error[invalid-assignment]"}},
		{Body: &message.TypingError{}},
		{Body: &message.DumpResult{State: []byte("MONTY\x00\x05\x00")}},
		{Body: &message.DumpResult{}},
		{Body: &message.Ok{}},
		{Body: &message.FatalError{Message: "unsupported protocol version 0"}},
		{Body: &message.ShutdownDump{}},
		{Body: &message.ShutdownDump{Dump: &[]byte{1, 2, 3}}},
		{Body: &message.ShutdownDump{Dump: &[]byte{}}},
	}
	for _, o := range osCalls() {
		evs = append(evs, &message.ChildEvent{Body: o, TotalExecutionMicros: 5})
	}
	return evs
}

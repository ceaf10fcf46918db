//go:build unix

package main

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// kases collects cases.
type kases []kase

func (out *kases) add(name, desc, code string, steps ...step) {
	*out = append(*out, kase{name: name, desc: desc, code: code, steps: steps})
}

// addCfg adds a case whose session is configured with cf.
func (out *kases) addCfg(name, desc, code string, cf *message.Configure, steps ...step) {
	*out = append(*out, kase{name: name, desc: desc, code: code, configure: cf, steps: steps})
}

// mainPy is the Configure a case has unless it says otherwise.
func mainPy() *message.Configure {
	return &message.Configure{ScriptName: "main.py", ProtocolVersion: 2}
}

// build makes a value in a fresh graph.
type build func(g *value.Graph) value.NodeID

func req(b message.Request) *message.ParentRequest { return &message.ParentRequest{Body: b} }

func feed(code string) step {
	return func(*message.ChildEvent) *message.ParentRequest { return req(&message.Feed{Code: code}) }
}

// feedWith feeds code with inputs named as given.
func feedWith(code string, names []string, vals ...build) step {
	return func(*message.ChildEvent) *message.ParentRequest {
		f := &message.Feed{Code: code}
		for i, b := range vals {
			f.Inputs = append(f.Inputs, message.NamedRef{Name: names[i], Value: b(&f.Values)})
		}
		return req(f)
	}
}

// callID is the id of the call the last event suspended on.
func callID(last *message.ChildEvent) uint32 {
	switch x := last.Body.(type) {
	case *message.FunctionCall:
		return x.CallID
	case *message.OsCall:
		return x.CallID
	}
	return 0
}

func ret(b build) step {
	return func(last *message.ChildEvent) *message.ParentRequest {
		r := &message.ResumeCall{CallID: callID(last)}
		r.Result = &message.ExtResult{Kind: message.ResultReturn, Value: b(&r.Values)}
		return req(r)
	}
}

func raise(e *message.RaisedException) step {
	return func(last *message.ChildEvent) *message.ParentRequest {
		return req(&message.ResumeCall{CallID: callID(last), Result: &message.ExtResult{Kind: message.ResultError, Error: e}})
	}
}

func exc(typ string, msg *string, frames ...message.StackFrame) *message.RaisedException {
	return &message.RaisedException{Type: typ, Message: msg, Traceback: frames}
}

func lookup(b build) step {
	return func(last *message.ChildEvent) *message.ParentRequest {
		r := &message.ResumeNameLookup{Kind: message.LookupValue}
		r.Value = b(&r.Values)
		return req(r)
	}
}

func fixed(b message.Request) step {
	return func(*message.ChildEvent) *message.ParentRequest { return req(b) }
}

// load sends back the state of the session's last DumpResult (the
// recorder fills in a Load whose State is nil).
func load(*message.ChildEvent) *message.ParentRequest { return req(&message.Load{}) }

// resumeFuturesAll answers the pending futures of the last
// ResolveFutures with what results makes, building values in g.
func resumeFuturesAll(results func(ids []uint32, g *value.Graph) []message.FutureResult) step {
	return func(last *message.ChildEvent) *message.ParentRequest {
		rf, _ := last.Body.(*message.ResolveFutures)
		var ids []uint32
		if rf != nil {
			ids = rf.PendingCallIDs
		}
		r := &message.ResumeFutures{}
		r.Results = results(ids, &r.Values)
		return req(r)
	}
}

// future answers a call with an external future under the call's id.
func future() step {
	return func(last *message.ChildEvent) *message.ParentRequest {
		r := &message.ResumeCall{CallID: callID(last)}
		r.Result = &message.ExtResult{Kind: message.ResultFuture, Future: callID(last)}
		return req(r)
	}
}

// Value builders.
func vStr(s string) build { return func(g *value.Graph) value.NodeID { return g.Add(value.Str(s)) } }
func vInt(i int64) build  { return func(g *value.Graph) value.NodeID { return g.Add(value.Int(i)) } }
func vFloat(f float64) build {
	return func(g *value.Graph) value.NodeID { return g.Add(value.Float(f)) }
}
func vBytes(b []byte) build {
	return func(g *value.Graph) value.NodeID { return g.Add(value.Bytes(b)) }
}
func vNone() build { return func(g *value.Graph) value.NodeID { return g.Add(value.None()) } }
func vBig(s string) build {
	return func(g *value.Graph) value.NodeID {
		n, _ := new(big.Int).SetString(s, 0)
		return g.Add(value.BigIntNode(n))
	}
}

// buildAll builds items in g, in order.
func buildAll(g *value.Graph, items []build) []value.NodeID {
	ids := make([]value.NodeID, len(items))
	for i, b := range items {
		ids[i] = b(g)
	}
	return ids
}
func vList(items ...build) build {
	return func(g *value.Graph) value.NodeID { return g.Add(value.List(buildAll(g, items)...)) }
}
func vTuple(items ...build) build {
	return func(g *value.Graph) value.NodeID { return g.Add(value.Tuple(buildAll(g, items)...)) }
}
func vSet(frozen bool, items ...build) build {
	return func(g *value.Graph) value.NodeID {
		if frozen {
			return g.Add(value.FrozenSet(buildAll(g, items)...))
		}
		return g.Add(value.Set(buildAll(g, items)...))
	}
}
func vDict(kv ...build) build {
	return func(g *value.Graph) value.NodeID {
		var ps []value.Pair
		for i := 0; i+1 < len(kv); i += 2 {
			k := kv[i](g)
			ps = append(ps, value.Pair{Key: k, Value: kv[i+1](g)})
		}
		return g.Add(value.Dict(ps...))
	}
}
func vNode(n value.Node) build { return func(g *value.Graph) value.NodeID { return g.Add(n) } }

func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// scripted are the multi-turn cases.
func scripted() []kase {
	s := value.Ptr[string]
	i32 := value.Ptr[int32]
	var out kases
	add, addCfg := out.add, out.addCfg
	lim := func(l message.ResourceLimits) *message.Configure {
		cf := mainPy()
		cf.Limits = &l
		return cf
	}
	memLimit := func(n uint64) *message.Configure { return lim(message.ResourceLimits{MaxMemoryBytes: &n}) }
	depthLimit := func(n uint64) *message.Configure { return lim(message.ResourceLimits{MaxRecursionDepth: &n}) }

	// Host function results of every shape, echoed back with repr.
	results := []struct {
		name string
		b    build
	}{
		{"bigint_pos", vBig("0x1" + strings.Repeat("0", 60))},
		{"bigint_neg", vBig("-" + strings.Repeat("9", 80))},
		{"float_nan", vFloat(nan())},
		{"float_neg_zero", vFloat(negZero())},
		{"float_subnormal", vFloat(5e-324)},
		{"str_astral", vStr("𝔘 🎉 e\u0301 \u2028 \x00")},
		{"bytes_all", vBytes(allBytes())},
		{"nested", vDict(vStr("a"), vList(vInt(1), vTuple(vNone(), vSet(false, vInt(2))), vSet(true)), vTuple(), vDict())},
		{"tuple_keys", vDict(vTuple(vInt(1), vStr("x")), vStr("v"), vFloat(1.5), vNone())},
		{"date", vNode(value.DateNode(value.Date{Year: 1, Month: 1, Day: 1}))},
		{"datetime_aware", vNode(value.DateTimeNode(value.DateTime{Year: 9999, Month: 12, Day: 31, Hour: 23, Minute: 59, Second: 59, Microsecond: 999999, Offset: i32(-86399)}))},
		{"datetime_named_tz", vNode(value.DateTimeNode(value.DateTime{Year: 2024, Month: 2, Day: 29, Hour: 1, Offset: i32(3600), TZName: s("CET")}))},
		{"time_fold", vNode(value.TimeNode(value.Time{Hour: 23, Minute: 59, Second: 59, Microsecond: 1, Fold: 1}))},
		{"timedelta_neg", vNode(value.TimeDeltaNode(value.TimeDelta{Days: -999999999, Seconds: 0, Microseconds: 0}))},
		{"timedelta_max", vNode(value.TimeDeltaNode(value.TimeDelta{Days: 999999999, Seconds: 86399, Microseconds: 999999}))},
		{"timezone_min", vNode(value.TimeZoneNode(value.TimeZone{Offset: -86340}))},
		{"timezone_named_unicode", vNode(value.TimeZoneNode(value.TimeZone{Offset: 19800, Name: s("इंडिया")}))},
		{"exception_value", vNode(value.ExceptionNode(value.Exception{Type: "KeyError", Arg: s("it's")}))},
		{"exception_noarg", vNode(value.ExceptionNode(value.Exception{Type: "StopIteration"}))},
		{"path", vNode(value.Path("/tmp/é 日/x.txt"))},
		{"namedtuple", vNode(value.NamedTupleNode("os.stat_result", []string{"st_mode", "st_size"}))},
		{"ellipsis_notimpl", vList(vNode(value.Ellipsis()), vNode(value.NotImplemented()))},
		{"builtin_type", vNode(value.BuiltinType("frozenset"))},
	}
	for _, r := range results {
		code := "x = ext()\n(x, repr(x))"
		if r.name == "namedtuple" {
			code = "x = ext()\nrepr(x)"
		}
		add("hostret_"+r.name, "A host function returns "+r.name+"; the sandbox returns it with its repr", code, feed(code), ret(r.b))
	}

	// Host function arguments of many kinds, as the worker sends them.
	add("hostarg_many_kinds", "Arguments and keyword arguments of many kinds in one call",
		"ext(...)", feed("from datetime import date, timedelta\next(2 ** 100, -0.0, float('inf'), 'é🎉', b'\\x00\\xff', (1,), {1: [2]}, {3}, frozenset(), None, ..., date(2020, 2, 29), timedelta(days=-1), k1=[], k2={'a': (None,)}, é=1)"), ret(vNone()))
	add("hostarg_cycle", "A cyclic list passed to a host function", "l = [1]; l.append(l); ext(l)",
		feed("l = [1]\nl.append(l)\next(l)"), ret(vNone()))
	add("hostarg_sandbox_instance", "A sandbox dataclass passed to a host function",
		"ext(P(...))", feed("from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n    y: list\next(P(1, [2]))"), ret(vInt(0)))

	// Host errors of many shapes, uncaught: the traceback the worker
	// builds.
	hostErrs := []struct {
		name string
		e    *message.RaisedException
	}{
		{"unknown_type", exc("WeirdHostError", s("weird"))},
		{"dotted_type", exc("requests.exceptions.HTTPError", s("404"))},
		{"no_message", exc("ValueError", nil)},
		{"empty_message", exc("KeyError", s(""))},
		{"multiline_message", exc("RuntimeError", s("line 1\nline 2\n"))},
		{"unicode_message", exc("ValueError", s("héllo 🎉 \u0301"))},
		{"oserror_subclass", exc("FileNotFoundError", s("[Errno 2] No such file or directory: '/x'"))},
		{"timeout", exc("TimeoutError", s("slow host"))},
		{"host_frames", exc("ValueError", s("from host"),
			message.StackFrame{Filename: "host.py", Start: message.CodeLoc{Line: 10, Column: 5}, End: message.CodeLoc{Line: 10, Column: 20}, FrameName: s("handler"), PreviewLine: s("    raise ValueError('from host')")},
			message.StackFrame{Filename: "lib/é.py", Start: message.CodeLoc{Line: 1, Column: 1}, End: message.CodeLoc{Line: 1, Column: 1}, FrameName: s("<module>")})},
	}
	for _, h := range hostErrs {
		add("hosterr_"+h.name, "A host function raises "+h.name+", uncaught", "def f():\n    return ext(1)\nf()",
			feed("def f():\n    return ext(1)\nf()"), raise(h.e))
	}
	add("hosterr_caught_reraised_chain", "A host error caught and re-raised as another type",
		"try: ext() except ValueError as e: raise KeyError(...) from e",
		feed("try:\n    ext()\nexcept ValueError as e:\n    raise KeyError(str(e)) from e"), raise(exc("ValueError", s("host"))))
	add("hosterr_caught_repr", "A host error caught: its repr and args", "try: ext() except Exception as e: (repr(e), str(e))",
		feed("try:\n    ext()\nexcept Exception as e:\n    r = (repr(e), str(e), type(e).__name__)\nr"), raise(exc("PermissionError", s("it's denied"))))

	// Names the worker refuses, quoted in its diagnostics with Rust's
	// Debug for str: which characters it escapes.
	quoted := []struct{ name, text string }{
		{"combining", "Bad\u0301Type"},
		{"leading_combining", "\u0301Lead"},
		{"soft_hyphen", "Soft\u00adHyphen"},
		{"unicode16", "New\U0001FA89Char"},
		{"zwnj_zwj", "Zw\u200cnj\u200dj"},
		{"controls", "Tab\tNl\nCr\rQ\"B\\Nul\x00Esc\x1bDel\x7f"},
		{"private_use", "Priv\ue000\U000f0000"},
		{"emoji_vs", "Emoji\U0001F389\ufe0f"},
		{"spacing_marks", "Mc\u0903\u09be\u0bd7"},
		{"separators", "Sp\u00a0\u2028\u3000x"},
		{"unassigned", "Un\u0378\U000e0080"},
		{"halfwidth_hangul", "H\uffa0\u1160\u3164"},
		{"tag_chars", "Flag\U000e0067\U000e007f"},
	}
	for _, q := range quoted {
		add("quotex_exc_type_"+q.name, "A host error of an unknown type whose name needs quoting ("+q.name+")",
			"ext()", feed("ext()"), raise(exc(q.text, s("m"))))
		add("quotex_builtin_"+q.name, "A Feed input naming an unknown builtin function that needs quoting ("+q.name+")",
			"v", rawFeedBuiltin("v", "v", q.text))
		add("quotex_input_name_"+q.name, "A Feed input whose name needs quoting ("+q.name+"), with a value the worker refuses",
			"1", rawFeedBuiltin("1", q.text, "nope"))
	}

	// Name lookups.
	add("lookupx_bigint_value", "A name resolved to a big int", "undefined_name * 2",
		feed("undefined_name * 2"), lookup(vBig("-"+strings.Repeat("7", 40))))
	add("lookupx_nested_value", "A name resolved to a nested container, then repr'd", "repr(thing)",
		feed("repr(thing)"), lookup(vDict(vStr("k"), vList(vSet(true, vInt(1)), vBytes([]byte("'\""))))))
	add("lookupx_error_value", "A name lookup answered with an exception", "missing_thing",
		feed("def f():\n    return missing_thing\nf()"), fixed(&message.ResumeNameLookup{Kind: message.LookupError, Error: exc("LookupError", s("no such thing: é"))}))

	// OS calls answered with errors of many types.
	for _, e := range []*message.RaisedException{
		exc("PermissionError", s("[Errno 13] Permission denied: '/data/x'")),
		exc("IsADirectoryError", s("dir")),
		exc("OSError", nil),
		exc("UnicodeDecodeError", s("'utf-8' codec can't decode byte 0xff in position 0: invalid start byte")),
	} {
		add("oserr_read_text_"+strings.ToLower(e.Type), "Path.read_text answered with "+e.Type,
			"from pathlib import Path\nPath('/data/x').read_text()",
			feed("from pathlib import Path\ndef read():\n    return Path('/data/x').read_text()\nread()"), raise(e))
	}
	add("oscallx_read_text_unicode", "Path.read_text answered with unicode text", "Path(...).read_text()",
		feed("from pathlib import Path\nt = Path('/data/é.txt').read_text()\n(t, len(t))"), ret(vStr("héllo\n🎉\r\n\x00")))
	add("oscallx_read_bytes_all", "Path.read_bytes answered with every byte", "Path(...).read_bytes()",
		feed("from pathlib import Path\nPath('/b').read_bytes()"), ret(vBytes(allBytes())))

	// Futures.
	add("futuresx_gather_errors", "asyncio.gather of two host coroutines, both answered with errors",
		"await asyncio.gather(ext(1), ext(2))",
		feed("import asyncio\nasync def main():\n    return await asyncio.gather(ext(1), ext(2))\nawait main()"),
		future(), future(),
		resumeFuturesAll(func(ids []uint32, g *value.Graph) []message.FutureResult {
			var rs []message.FutureResult
			for _, id := range ids {
				rs = append(rs, message.FutureResult{CallID: id, Result: &message.ExtResult{Kind: message.ResultError, Error: exc("ConnectionRefusedError", s("refused"))}})
			}
			return rs
		}))

	// Dump and load round trips.
	add("dumpx_load_functions_and_values", "Define a function and values, dump, reset, load, use them",
		"def f(x): ...; big = 2**100; s = 'é'",
		feed("def f(x):\n    return x * 2\nbig = 2 ** 100\ns = 'é🎉'\nst = {frozenset({1})}"),
		fixed(&message.Dump{}), fixed(&message.Reset{}),
		fixed(mainPy()), load,
		feed("(f(big), s, st)"))
	add("dumpx_load_then_error_traceback", "A loaded session raises: the traceback still shows the first feed's frames",
		"def g(): raise ValueError(...)",
		feed("def g():\n    raise ValueError('after load')"),
		fixed(&message.Dump{}), fixed(&message.Reset{}),
		fixed(mainPy()), load,
		feed("g()"))

	// Abort with exceptions of several kinds.
	for _, e := range []*message.RaisedException{
		exc("KeyboardInterrupt", nil),
		exc("SystemExit", s("3")),
		exc("CancelledHostError", s("cancelled")),
		exc("ValueError", s("multi\nline é")),
	} {
		add("abortx_"+strings.ToLower(e.Type), "AbortFeed with "+e.Type+" while suspended in a host call",
			"def f():\n    return ext()\nf()", feed("def f():\n    return ext()\nf()"),
			fixed(&message.AbortFeed{Exception: e}))
	}

	// Limits hit at several points.
	addCfg("limitx_memory_dict_build", "Memory limit while building a dict", "{i: str(i) for i in range(10**6)}",
		memLimit(2000000), feed("def build():\n    return {i: str(i) for i in range(10 ** 6)}\nbuild()"))
	addCfg("limitx_memory_str_join", "Memory limit in str.join", "'-'.join(...)",
		memLimit(1000000), feed("parts = ['abc'] * 1000\ns = ''\nfor _ in range(1000):\n    s = s + '-'.join(parts)"))
	addCfg("limitx_memory_bytes_mult", "Memory limit in bytes multiplication", "b'x' * 10**7",
		memLimit(1000000), feed("b'x' * 10 ** 7"))
	addCfg("limitx_memory_then_recover", "Memory limit, then a small feed succeeds", "x = [0] * 10**7; then 1 + 1",
		memLimit(1000000), feed("x = [0] * 10 ** 7"), feed("1 + 1"))
	addCfg("limitx_recursion_3_nested_calls", "Recursion limit 3 reached through nested calls", "def a(): b() ...",
		depthLimit(3), feed("def a():\n    return b()\ndef b():\n    return c()\ndef c():\n    return d()\ndef d():\n    return 1\na()"))
	addCfg("limitx_recursion_in_comprehension", "Recursion limit reached inside a comprehension", "[f(x) for x in ...]",
		depthLimit(10), feed("def f(n):\n    return [f(n + 1) for _ in range(1)]\nf(0)"))
	addCfg("limitx_recursion_in_repr", "Recursion limit reached inside __repr__", "repr(A())",
		depthLimit(20), feed("class A:\n    def __repr__(self):\n        return repr(self)\nrepr(A())"))
	addCfg("limitx_recursion_caught", "RecursionError caught in the sandbox", "try: f() except RecursionError",
		depthLimit(30), feed("def f():\n    return f()\ntry:\n    f()\nexcept RecursionError as e:\n    r = repr(e)\nr"))
	addCfg("limitx_suspensions_2", "max_suspensions 2 with three host calls", "ext(); ext(); ext()",
		lim(message.ResourceLimits{MaxSuspensions: value.Ptr[uint64](2)}), feed("ext(1)\next(2)\next(3)"), ret(vNone()), ret(vNone()), ret(vNone()))
	addCfg("limitx_memory_output_value", "Memory limit big enough to build, result sent", "list(range(1000))",
		memLimit(10000000), feed("list(range(1000))"))

	// Feed inputs of many kinds, read back with repr in the sandbox.
	inputs := []struct {
		name string
		b    build
	}{
		{"bigint_neg", vBig("-" + strings.Repeat("1234567890", 10))},
		{"float_nan", vFloat(nan())},
		{"str_controls", vStr("\x00\x1b\x7f\u0085\u2028\ufeff")},
		{"bytes_all", vBytes(allBytes())},
		{"frozenset_nested", vSet(true, vSet(true), vTuple(vInt(1)))},
		{"dict_mixed_keys", vDict(vNone(), vInt(1), vFloat(negZero()), vInt(2), vTuple(), vInt(3), vBytes([]byte("b")), vInt(4))},
		{"timezone_max", vNode(value.TimeZoneNode(value.TimeZone{Offset: 86340, Name: s("Z+")}))},
		{"time_aware_fold", vNode(value.TimeNode(value.Time{Hour: 1, Offset: i32(-3600), Fold: 1}))},
		{"exception_oserror", vNode(value.ExceptionNode(value.Exception{Type: "OSError", Arg: s("disk é")}))},
	}
	for _, in := range inputs {
		add("inputx_"+in.name, "A Feed input of kind "+in.name+", echoed with its repr", "(v, repr(v))",
			feedWith("(v, repr(v))", []string{"v"}, in.b))
	}

	// Sources with odd bytes.
	add("sourcex_crlf_error", "CRLF line endings and an error on line 3", "x = 1\\r\\ny = 2\\r\\nx / 0",
		feed("x = 1\r\ny = 2\r\nz = x / 0\r\n"))
	add("sourcex_cr_only", "Old Mac line endings", "x = 1\\ry = x / 0", feed("x = 1\ry = x / 0"))
	add("sourcex_nul_byte", "A NUL byte in the source", "x = 1\\x00", feed("x = 1\x00\n"))
	add("sourcex_bom", "A byte-order mark at the start", "\\ufeffx = 1", feed("\ufeffx = 1\nx / 0"))
	add("sourcex_form_feed_indent", "A form feed before a statement", "\\fx = 1", feed("\fx = 1\nx.y"))
	add("sourcex_vertical_tab", "A vertical tab at the start of a line", "x = 1\\n\\vy = x.z", feed("x = 1\n\vy = x.z"))
	add("sourcex_form_feed_token", "A form feed inside an expression", "x = 1 +\\f 2", feed("x = (1 +\f\x0b 2)\nx.y"))
	add("sourcex_control_token", "A control character as a token", "x = \\x01", feed("x = 1\ny = \x01"))
	add("sourcex_tab_caret", "Tabs before the failing expression", "\\tif ...", feed("if True:\n\t\tx = None + 1"))
	add("sourcex_wide_then_error_col", "Wide characters before the error column", "'日本語🎉' + ...",
		feed("y = ('日本語🎉', 'e\u0301')[0] + None"))
	add("sourcex_second_feed_line_numbers", "An error in the third feed shows <python-input-2>", "three feeds",
		feed("a = 1"), feed("b = 2"), feed("def f():\n    return a / (b - 2)\nf()"))

	// Configure variants.
	addCfg("configx_script_name_unicode", "A unicode script name in tracebacks", "1 / 0",
		&message.Configure{ScriptName: "скрипт é.py", ProtocolVersion: 2}, feed("def f():\n    return 1 / 0\nf()"))
	addCfg("configx_assert_annotations_long", "Assert annotations with long operands", "assert a == b",
		&message.Configure{ScriptName: "main.py", ProtocolVersion: 2, AssertMessageAnnotations: value.Ptr[uint32](20)},
		feed("a = 'x' * 100\nb = list(range(50))\nassert a == b"))
	addCfg("configx_typecheck_many_errors", "Type checking with several errors", "x: int = 'a' ...",
		&message.Configure{ScriptName: "main.py", ProtocolVersion: 2, TypeCheck: true},
		feed("x: int = 'a'\ndef f(a: str) -> int:\n    return a\nf(1)\ny: list[int] = [None]"))
	addCfg("configx_typecheck_unicode", "Type checking errors on lines with unicode", "名前: int = '日本'",
		&message.Configure{ScriptName: "main.py", ProtocolVersion: 2, TypeCheck: true},
		feed("名前: int = '日本🎉'"))
	addCfg("configx_typecheck_concise_multi", "Concise type check output, two errors", "...",
		&message.Configure{ScriptName: "main.py", ProtocolVersion: 2, TypeCheck: true, TypeCheckFormat: message.FormatConcise},
		feed("a: int = 'x'\nb: str = 1"))
	return out
}

func nan() float64     { return math.NaN() }
func negZero() float64 { return math.Copysign(0, -1) }

// rawRequest is a request frame written by hand: one our encoder would
// refuse to write, sent to see what the worker answers.
type rawRequest struct {
	kind message.RequestKind
	b    []byte
}

func (r *rawRequest) RequestKind() message.RequestKind { return r.kind }

// rawFeedBuiltin feeds code with one input, name, holding the builtin
// function fn (MontyObject.builtin_function, field 26), known or not.
func rawFeedBuiltin(code, name, fn string) step {
	return func(*message.ChildEvent) *message.ParentRequest {
		obj := protowire.AppendTag(nil, 26, protowire.BytesType)
		obj = protowire.AppendString(obj, fn)
		in := protowire.AppendTag(nil, 1, protowire.BytesType)
		in = protowire.AppendString(in, name)
		in = protowire.AppendTag(in, 2, protowire.BytesType)
		in = protowire.AppendBytes(in, obj)
		feed := protowire.AppendTag(nil, 1, protowire.BytesType)
		feed = protowire.AppendString(feed, code)
		feed = protowire.AppendTag(feed, 2, protowire.BytesType)
		feed = protowire.AppendBytes(feed, in)
		b := protowire.AppendTag(nil, 3, protowire.BytesType)
		b = protowire.AppendBytes(b, feed)
		return req(&rawRequest{kind: message.KindFeed, b: b})
	}
}

// vHost is a host instance of class name (a dataclass when dc), with the
// given attributes (name, value, ...); ids are fixed so that the sessions
// replay alike.
func vHost(name string, dc bool, inst byte, attrs ...any) build {
	return func(g *value.Graph) value.NodeID {
		var tid, iid value.UUID
		for i := range tid {
			tid[i] = name[i%len(name)] + byte(i)
			iid[i] = inst + byte(i)*3
		}
		cls := g.Add(value.TypeNode(value.Type{Name: name, ID: tid, Origin: value.OriginHost, IsDataclass: dc}))
		var ps []value.Pair
		for i := 0; i+1 < len(attrs); i += 2 {
			k := g.Add(value.Str(attrs[i].(string)))
			ps = append(ps, value.Pair{Key: k, Value: attrs[i+1].(build)(g)})
		}
		return g.Add(value.ClassInstanceNode(value.ClassInstance{Class: cls, InstanceID: iid, Attrs: ps}))
	}
}

// hostCases are the sessions with host instances.
func hostCases() []kase {
	var out kases
	add := out.add
	w := vHost("Widget", false, 1, "size", vInt(3), "tags", vList(vStr("a"), vStr("é")))
	d := vHost("Point", true, 2, "x", vInt(1), "y", vFloat(2.5))
	nested := vHost("Outer", true, 3, "inner", vHost("Inner", true, 4, "v", vBig("-"+strings.Repeat("3", 30))), "m", vDict(vStr("k"), vSet(true, vInt(1))))
	emptyDC := vHost("Empty", true, 5)
	echo := "(v, repr(v))"
	add("hostinst_repr_plain", "A host instance (not a dataclass) and its repr", echo, feedWith(echo, []string{"v"}, w))
	add("hostinst_repr_dataclass", "A host dataclass instance and its repr", echo, feedWith(echo, []string{"v"}, d))
	add("hostinst_repr_nested", "Host dataclasses nested, and their repr", echo, feedWith(echo, []string{"v"}, nested))
	add("hostinst_repr_empty_dataclass", "A host dataclass with no attributes", echo, feedWith(echo, []string{"v"}, emptyDC))
	add("hostinst_in_list_twice", "One host instance twice in a list", "[v, v]", feedWith("[v, v]", []string{"v"}, d))
	add("hostinst_str_fstring", "str() and an f-string of a host dataclass", "(str(v), f'{v}')",
		feedWith("(str(v), f'{v!r}', f'{v}')", []string{"v"}, d))
	add("hostinst_eq_and_hash", "Host instances compared and hashed", "...",
		feedWith("(v == v, v == w, len({v, w}))", []string{"v", "w"}, d, w))
	add("hostinst_attr_read", "Attributes of a host instance read in the sandbox", "(v.x, v.y)",
		feedWith("(v.x, v.y, v.x + v.y)", []string{"v"}, d))
	add("hostinst_attr_missing_error", "A missing attribute, answered with an AttributeError", "v.nope",
		feedWith("def f():\n    return v.nope\nf()", []string{"v"}, w),
		fixed(&message.ResumeNameLookup{Kind: message.LookupError, Error: exc("AttributeError", value.Ptr("'Widget' object has no attribute 'nope'"))}))
	add("hostinst_attr_missing_undefined", "A missing attribute, answered as undefined", "v.nope",
		feedWith("v.nope", []string{"v"}, w), fixed(&message.ResumeNameLookup{Kind: message.LookupUndefined}))
	add("hostinst_method_raises", "A host method raises; the traceback shows the call", "v.grow(1)",
		feedWith("def go():\n    return v.grow(1, by=2)\ngo()", []string{"v"}, w),
		raise(exc("OverflowError", value.Ptr("too big"))))
	add("hostinst_method_returns_dataclass", "A host method returns a host dataclass", "v.move()",
		feedWith("r = v.move()\n(r, repr(r), r.x)", []string{"v"}, w), ret(d))
	add("hostinst_setattr", "Setting an attribute on a host instance", "v.size = 5",
		feedWith("v.size = 5\nv.size", []string{"v"}, w))
	add("hostinst_passed_back", "A host instance passed to a host function", "ext(v)",
		feedWith("ext(v, k=[v])", []string{"v"}, w), ret(vNone()))
	return out
}

// stateCases walk the worker's state machine through less common paths.
func stateCases() []kase {
	var out kases
	add := out.add
	cfg := fixed(mainPy())
	abort := fixed(&message.AbortFeed{Exception: exc("KeyboardInterrupt", nil)})
	add("statex_dump_suspended_call_load_resume", "Dump while suspended in a host call, reset, load, answer the call",
		"r = ext(1) + 1", feed("r = ext(1) + 1\nr * 2"), fixed(&message.Dump{}), fixed(&message.Reset{}), cfg, load, ret(vInt(20)))
	add("statex_load_suspended_then_abort", "Load a suspended dump, then abort it",
		"ext()", feed("try:\n    ext()\nfinally:\n    print('cleanup')"), fixed(&message.Dump{}), fixed(&message.Reset{}), cfg, load, abort, feed("1"))
	add("statex_load_while_suspended", "Load while suspended in a host call", "ext()",
		feed("ext()"), fixed(&message.Dump{}), load, ret(vInt(1)))
	add("statex_dump_twice_same_state", "Two dumps in a row while idle", "x = 1",
		feed("x = 1"), fixed(&message.Dump{}), fixed(&message.Dump{}), feed("x"))
	add("statex_reset_during_lookup", "Reset while suspended on a name lookup, then feed", "missing",
		feed("missing"), fixed(&message.Reset{}), cfg, feed("1 + 1"))
	add("statex_feed_while_suspended", "A Feed while suspended in a host call", "ext()",
		feed("ext()"), feed("2"), ret(vInt(3)))
	add("statex_dump_while_suspended_feed_after", "A Dump while suspended, then the answer", "ext()",
		feed("a = ext()\na"), fixed(&message.Dump{}), ret(vStr("x")))
	add("statex_abort_while_idle_after_error", "AbortFeed after a feed ended with an error", "1/0",
		feed("1/0"), abort, feed("2"))
	add("statex_abort_during_lookup_caught", "AbortFeed during a name lookup, caught by except BaseException", "try: missing",
		feed("try:\n    missing\nexcept BaseException as e:\n    r = type(e).__name__\nr"), abort)
	add("statex_abort_twice", "AbortFeed twice while suspended: the second finds the session idle", "ext()",
		feed("ext()"), abort, abort)
	add("statex_resume_futures_partial", "Resolve one of two pending futures, then the other",
		"await gather(ext(1), ext(2))",
		feed("import asyncio\nawait asyncio.gather(ext(1), ext(2))"), future(), future(),
		resumeFuturesAll(func(ids []uint32, g *value.Graph) []message.FutureResult {
			if len(ids) == 0 {
				return nil
			}
			return []message.FutureResult{{CallID: ids[len(ids)-1], Result: &message.ExtResult{Kind: message.ResultReturn, Value: g.Add(value.Str("first"))}}}
		}),
		resumeFuturesAll(func(ids []uint32, g *value.Graph) []message.FutureResult {
			var rs []message.FutureResult
			for _, id := range ids {
				rs = append(rs, message.FutureResult{CallID: id, Result: &message.ExtResult{Kind: message.ResultError, Error: exc("ValueError", value.Ptr("second"))}})
			}
			return rs
		}))
	add("statex_future_awaited_after_other_work", "A future created, other host calls, then awaited",
		"t = ext(1); ext2(); await t",
		feed("async def main():\n    t = ext(1)\n    other(2)\n    return await t\nawait main()"), future(), ret(vInt(5)),
		resumeFuturesAll(func(ids []uint32, g *value.Graph) []message.FutureResult {
			var rs []message.FutureResult
			for _, id := range ids {
				r := message.FutureResult{CallID: id, Result: &message.ExtResult{Kind: message.ResultReturn, Value: g.Add(value.Int(int64(id) * 7))}}
				rs = append(rs, r)
			}
			return rs
		}))
	out.addCfg("statex_typecheck_then_feed_skip", "Type checking on, a feed that fails it, then one that passes", "x: int = 'a'",
		&message.Configure{ScriptName: "main.py", ProtocolVersion: 2, TypeCheck: true}, feed("x: int = 'a'"), feed("y: int = 1\ny"))
	add("statex_install_deps_after_feed", "InstallDependencies after a feed", "1",
		feed("1"), fixed(&message.InstallDependencies{Requirements: []string{"numpy>=1", "é"}}), feed("2"))
	add("statex_shutdown_during_os_call", "Shutdown while suspended in an OS call", "Path.read_text",
		feed("from pathlib import Path\nPath('/a').read_text()"))
	add("statex_many_feeds_counter", "Ten feeds, the tenth raising: <python-input-9>", "...",
		feed("a = 0"), feed("a += 1"), feed("a += 1"), feed("a += 1"), feed("a += 1"), feed("a += 1"), feed("a += 1"), feed("a += 1"), feed("a += 1"),
		feed("def f():\n    return a / 0\nf()"))
	add("statex_error_in_function_from_earlier_feed", "A function defined in feed 0 raises when called from feed 2", "f()",
		feed("def f(x):\n    return 10 // x"), feed("y = 0"), feed("f(y)"))
	add("statex_lambda_from_earlier_feed", "A lambda from feed 0 raises when called in feed 1", "g(0)",
		feed("g = lambda v: [1][v + 5]"), feed("g(0)"))
	return out
}

// deepCases feed sources nested near and past the parser's limit, then a
// plain feed.
func deepCases() []kase {
	var out []kase
	add := func(name, code string) {
		summary := code
		if len(summary) > 80 {
			summary = summary[:80] + "..."
		}
		out = append(out, kase{name: name, desc: "Deeply nested source: " + name, code: summary,
			steps: []step{feed(code), feed("1")}})
	}
	rep := strings.Repeat
	for _, n := range []int{200, 205, 206, 210} {
		add(fmt.Sprintf("deepx_parens_%d", n), rep("(", n)+"1"+rep(")", n))
	}
	add("deepx_dict_literal_250", rep("{1: ", 250)+"1"+rep("}", 250))
	add("deepx_tuple_literal_250", rep("(1, ", 250)+"1"+rep(")", 250))
	add("deepx_not_chain_400", rep("not ", 400)+"1")
	add("deepx_minus_chain_300", rep("-", 300)+"1")
	add("deepx_call_chain_400", "f = lambda: f\nf"+rep("()", 400))
	add("deepx_subscript_chain_400", "l = []\nl.append(l)\nl"+rep("[0]", 400))
	add("deepx_attribute_chain_400", "x"+rep(".a", 400))
	add("deepx_lambda_nesting_250", rep("lambda: ", 250)+"1")
	add("deepx_binop_chain_3000", rep("1 + ", 3000)+"1")
	add("deepx_power_chain_300", rep("2 ** ", 300)+"1")
	add("deepx_ternary_nesting_250", rep("1 if True else (", 250)+"1"+rep(")", 250))
	add("deepx_fstring_nesting", "f'{"+rep("f'{", 3)+"1"+rep("}'", 3)+"}'")
	var ifs []string
	for i := range 200 {
		ifs = append(ifs, rep(" ", i)+"if True:")
	}
	add("deepx_if_nesting_200", strings.Join(ifs, "\n")+"\n"+rep(" ", 200)+"x = 1")
	add("deepx_if_nesting_150_error", strings.Join(ifs[:150], "\n")+"\n"+rep(" ", 150)+"x = 1 / 0")
	add("deepx_parens_then_error", rep("(", 100)+"1 / 0"+rep(")", 100))
	add("deepx_list_comprehension_nesting_120", rep("[", 120)+"x for x in [1]"+rep("]", 120))
	return out
}

// osCases answer OS calls with values of many shapes.
func osCases() []kase {
	var out kases
	add := out.add
	statFields := []string{"st_mode", "st_ino", "st_dev", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime", "st_mtime", "st_ctime"}
	stat := func(g *value.Graph) value.NodeID {
		vals := []value.NodeID{g.Add(value.Int(0o100644)), g.Add(value.Int(1 << 40)), g.Add(value.Int(2)), g.Add(value.Int(1)),
			g.Add(value.Int(1000)), g.Add(value.Int(1000)), g.Add(value.Int(12345)), g.Add(value.Float(1.7e9 + 0.25)),
			g.Add(value.Float(1.7e9)), g.Add(value.Float(-1.5))}
		return g.Add(value.NamedTupleNode("os.stat_result", statFields, vals...))
	}
	add("oscallx_stat_full", "Path.stat answered with a full os.stat_result", "p.stat()",
		feed("from pathlib import Path\ns = Path('/data/f').stat()\n(s.st_size, s.st_mtime, s[0], repr(s))"), ret(stat))
	add("oscallx_iterdir_unicode", "Path.iterdir answered with unicode names", "list(p.iterdir())",
		feed("from pathlib import Path\n[(p.name, str(p)) for p in Path('/d').iterdir()]"),
		ret(vList(vNode(value.Path("/d/é 1.txt")), vNode(value.Path("/d/日本")), vNode(value.Path("/d/🎉")))))
	add("oscallx_exists_non_bool", "Path.exists answered with an int", "p.exists()",
		feed("from pathlib import Path\nPath('/x').exists()"), ret(vInt(2)))
	add("oscallx_read_text_answered_none", "Path.read_text answered with None", "p.read_text()",
		feed("from pathlib import Path\nPath('/x').read_text()"), ret(vNone()))
	add("oscallx_datetime_now_aware_odd", "datetime.now(timezone) answered with an aware datetime at an odd offset", "now(tz)",
		feed("from datetime import datetime, timezone, timedelta\nd = datetime.now(timezone(timedelta(hours=5, minutes=45)))\n(d, repr(d), d.isoformat())"),
		ret(vNode(value.DateTimeNode(value.DateTime{Year: 2024, Month: 12, Day: 31, Hour: 23, Minute: 59, Second: 59, Microsecond: 999999, Offset: value.Ptr[int32](20700)}))))
	add("oscallx_getenv_bigint", "os.getenv answered with a big int", "os.getenv('N')",
		feed("import os\nos.getenv('N')"), ret(vBig("1"+strings.Repeat("0", 30))))
	add("oscallx_environ_unicode", "os.environ answered with unicode keys and values", "dict(os.environ)",
		feed("import os\nsorted(os.environ.items())"), ret(vDict(vStr("É"), vStr("日本"), vStr("A B"), vStr(""), vStr("Z"), vStr("\x00"))))
	add("oscallx_write_text_unicode_path", "Path.write_text to a unicode path, answered with the count", "p.write_text(...)",
		feed("from pathlib import Path\nPath('/d/é 日.txt').write_text('héllo 🎉\\n')"), ret(vInt(10)))
	add("oscallx_mkdir_error_exists", "Path.mkdir answered with FileExistsError", "p.mkdir()",
		feed("from pathlib import Path\ndef mk():\n    Path('/d/x').mkdir()\nmk()"), raise(exc("FileExistsError", value.Ptr("[Errno 17] File exists: '/d/x'"))))
	add("oscallx_open_read_lines_unicode", "open().readlines answered with unicode lines", "open(...).readlines()",
		feed("with open('/d/f.txt') as f:\n    lines = f.readlines()\nlines"), ret(vStr("é\r\n日本\n\n🎉")))
	add("oscallx_two_calls_second_error", "Two OS calls in a feed; the second fails", "exists(); read_text()",
		feed("from pathlib import Path\np = Path('/a')\nif p.exists():\n    t = p.read_text()"), ret(vNode(value.Bool(true))),
		raise(exc("PermissionError", value.Ptr("denied"))))
	return out
}

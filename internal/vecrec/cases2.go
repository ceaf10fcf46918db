//go:build unix

package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// answer answers the last suspension (a host call or an OS call) with a
// result of the given kind and no value.
func answer(kind message.ResultKind) step {
	return func(last *message.ChildEvent) *message.ParentRequest {
		return req(&message.ResumeCall{CallID: callID(last), Result: &message.ExtResult{Kind: kind}})
	}
}

// moreCases are the session shapes added after the first recording: limit
// errors at their configured values, tracebacks through host calls from
// nested scopes, every OS call answered with every result kind, name
// lookups, dumps at each state, print interleaved with suspensions,
// cancellations and the requests the state machine refuses.
func moreCases() []kase {
	s := value.Ptr[string]
	var out []kase
	add := func(name, desc, code string, steps ...step) {
		out = append(out, kase{name: name, desc: desc, code: code, steps: steps})
	}
	addCfg := func(name, desc, code string, cf *message.Configure, steps ...step) {
		out = append(out, kase{name: name, desc: desc, code: code, configure: cf, steps: steps})
	}
	lim := func(l message.ResourceLimits) *message.Configure {
		return &message.Configure{ScriptName: "main.py", ProtocolVersion: 2, Limits: &l}
	}
	u64 := value.Ptr[uint64]
	cfg := fixed(&message.Configure{ScriptName: "main.py", ProtocolVersion: 2})

	// Recursion limits reached through each kind of frame.
	recursion := []struct{ name, code string }{
		{"function", "def f(n):\n    return f(n + 1)\nf(0)"},
		{"method", "class A:\n    def go(self, n):\n        return self.go(n + 1)\nA().go(0)"},
		{"lambda", "f = lambda n: f(n + 1)\nf(0)"},
		{"mutual_three", "def a(n):\n    return b(n)\ndef b(n):\n    return c(n)\ndef c(n):\n    return a(n + 1)\na(0)"},
		{"generator", "def g(n):\n    yield from g(n + 1)\nlist(g(0))"},
		{"class_body", "def f():\n    class C:\n        v = f()\n    return C\nf()"},
		{"dunder_init", "class A:\n    def __init__(self):\n        self.a = A()\nA()"},
		{"property", "class A:\n    @property\n    def p(self):\n        return self.p\nA().p"},
		{"decorator_wrapper", "def deco(f):\n    def w(*a):\n        return f(*a)\n    return w\n@deco\ndef r(n):\n    return r(n + 1)\nr(0)"},
		{"async", "async def f(n):\n    return await f(n + 1)\nawait f(0)"},
		{"sorted_key", "def k(x):\n    return sorted([1, 2], key=k)\nk(0)"},
		{"then_feed_again", "def f():\n    return f()\nf()"},
	}
	for _, r := range recursion {
		steps := []step{feed(r.code)}
		if r.name == "then_feed_again" {
			steps = append(steps, feed("def g(n):\n    return n if n == 0 else g(n - 1)\ng(10)"), feed("g(100)"))
		}
		addCfg("limitcfg_recursion_"+r.name, "Recursion limit 25 reached through "+r.name, r.code,
			lim(message.ResourceLimits{MaxRecursionDepth: u64(25)}), steps...)
	}
	addCfg("limitcfg_recursion_2_module_only", "Recursion limit 2: a module-level call of one function", "f()",
		lim(message.ResourceLimits{MaxRecursionDepth: u64(2)}), feed("def f():\n    return 1\nf()"), feed("def g():\n    return f()\ng()"))

	// Memory limits in several places.
	mem := []struct{ name, code string }{
		{"list_append_loop", "l = []\nwhile True:\n    l.append('x' * 100)"},
		{"str_repeat", "'x' * (10 ** 8)"},
		{"in_nested_function", "def outer():\n    def inner():\n        return [0] * (10 ** 8)\n    return inner()\nouter()"},
		{"in_comprehension", "[str(i) * 10 for i in range(10 ** 6)]"},
		{"in_lambda", "(lambda n: bytes(n))(10 ** 8)"},
		{"int_pow", "x = 7 ** (10 ** 8)"},
		{"caught", "try:\n    x = [0] * (10 ** 8)\nexcept MemoryError as e:\n    r = (type(e).__name__, str(e))\nr"},
		{"dict_update", "d = {}\nfor i in range(10 ** 7):\n    d[i] = i"},
		{"set_build", "set(range(10 ** 7))"},
		{"tuple_concat", "t = ()\nwhile True:\n    t = t + (1,) * 1000"},
		{"pow_huge", "10 ** (10 ** 12)"},
		{"range_huge_list", "list(range(2 ** 62))"},
		{"shift_huge", "1 << (2 ** 62)"},
		{"str_repeat_overflow", "'ab' * (2 ** 62)"},
		{"list_repeat_overflow", "[0] * (2 ** 62)"},
	}
	for _, m := range mem {
		addCfg("limitcfg_memory_"+m.name, "Memory limit 1 MB: "+m.name, m.code,
			lim(message.ResourceLimits{MaxMemoryBytes: u64(1000000)}), feed(m.code), feed("1 + 1"))
	}
	addCfg("limitcfg_memory_host_result_too_big", "Memory limit 50 kB (the session starts near 31 kB): a host function returns a 30 kB str", "x = ext()",
		lim(message.ResourceLimits{MaxMemoryBytes: u64(50000)}), feed("x = ext()\nlen(x)"), ret(vStr(strings.Repeat("x", 30000))), feed("1"))
	addCfg("limitcfg_memory_input_too_big", "Memory limit 50 kB (the session starts near 31 kB): a Feed input of 30 kB", "len(v)",
		lim(message.ResourceLimits{MaxMemoryBytes: u64(50000)}), feedWith("len(v)", []string{"v"}, vStr(strings.Repeat("x", 30000))), feed("1"))

	// Duration limits.
	dur := []struct{ name, code string }{
		{"while_true", "while True:\n    pass"},
		{"in_function", "def spin():\n    while True:\n        pass\nspin()"},
		{"in_comprehension", "[i for i in range(10 ** 9)]"},
		{"caught", "try:\n    while True:\n        pass\nexcept TimeoutError as e:\n    r = repr(e)\nr"},
		{"in_finally", "try:\n    while True:\n        pass\nfinally:\n    print('finally ran')"},
	}
	for _, d := range dur {
		addCfg("limitcfg_duration_"+d.name, "Duration limit 20 ms: "+d.name, d.code,
			lim(message.ResourceLimits{MaxDurationMicros: u64(20000)}), feed(d.code), feed("1 + 1"))
	}
	// 200 ms, so that a loaded machine still reaches the host call in time.
	addCfg("limitcfg_duration_over_host_call", "Duration limit 200 ms spent before and after a host call", "ext(); spin",
		lim(message.ResourceLimits{MaxDurationMicros: u64(200000)}),
		feed("ext()\nwhile True:\n    pass"), ret(vNone()), feed("2"))
	addCfg("limitcfg_suspensions_os_and_lookup", "max_suspensions 2 with an OS call, a name lookup and a host call", "exists(); missing; ext()",
		lim(message.ResourceLimits{MaxSuspensions: u64(2)}),
		feed("from pathlib import Path\nPath('/a').exists()\nmissing_name\next()"), ret(vNode(value.Bool(false))), lookup(vInt(1)), ret(vNone()))
	addCfg("limitcfg_suspensions_0", "max_suspensions 0: the first host call", "ext()",
		lim(message.ResourceLimits{MaxSuspensions: u64(0)}), feed("ext()"), feed("1"))
	// The duration stays long: at 1 µs which limit trips first would
	// depend on the machine's speed.
	addCfg("limitcfg_all_limits_tiny", "Every limit at 1 but the duration (10 s)", "1 + 1",
		lim(message.ResourceLimits{MaxRecursionDepth: u64(1), MaxMemoryBytes: u64(1), MaxDurationMicros: u64(10000000), MaxSuspensions: u64(1), GCInterval: u64(1)}),
		feed("1 + 1"), feed("x = [1, 2, 3]"))

	// Tracebacks through host calls from nested scopes.
	hostErr := raise(exc("ValueError", s("from host é")))
	hostFramed := raise(exc("KeyError", s("'k'"),
		message.StackFrame{Filename: "/srv/app/handlers.py", Start: message.CodeLoc{Line: 120, Column: 9}, End: message.CodeLoc{Line: 120, Column: 25}, FrameName: s("lookup"), PreviewLine: s("        return table[key]")},
		message.StackFrame{Filename: "<host>", Start: message.CodeLoc{Line: 1, Column: 1}, End: message.CodeLoc{Line: 1, Column: 1}, HideCaret: true},
		message.StackFrame{Filename: "x.py", Start: message.CodeLoc{Line: 3, Column: 2}, End: message.CodeLoc{Line: 4, Column: 7}, FrameName: s("multi"), PreviewLine: s("a(\n  b)"), HideFrameName: true}))
	nested := []struct{ name, code string }{
		{"nested_function", "def outer():\n    def inner():\n        return ext(1)\n    return inner()\nouter()"},
		{"lambda", "f = lambda: ext(1)\nf()"},
		{"list_comprehension", "[ext(i) for i in range(1)]"},
		{"generator", "def g():\n    yield ext(1)\nlist(g())"},
		{"class_body", "class C:\n    v = ext(1)"},
		{"method", "class C:\n    def m(self):\n        return ext(1)\nC().m()"},
		{"dunder", "class C:\n    def __add__(self, o):\n        return ext(o)\nC() + 1"},
		{"decorator", "def deco(f):\n    ext(f.__name__)\n    return f\n@deco\ndef g():\n    pass"},
		{"default_arg", "def f(a=ext(1)):\n    return a"},
		{"finally", "try:\n    pass\nfinally:\n    ext(1)"},
		{"except_handler", "try:\n    1 / 0\nexcept ZeroDivisionError:\n    ext(1)"},
		{"with_block", "class M:\n    def __enter__(self):\n        return self\n    def __exit__(self, *a):\n        return False\nwith M():\n    ext(1)"},
		{"fstring", "f'{ext(1)}'"},
		{"kwargs_star", "args = [1, 2]\nkw = {'a': 3}\next(*args, **kw)"},
		{"sorted_key", "sorted([2, 1], key=lambda v: ext(v))"},
	}
	for _, n := range nested {
		add("hosttb_"+n.name, "A host function called from "+n.name+" raises", n.code, feed(n.code), hostErr)
	}
	add("hosttb_framed_in_method", "A host error carrying host frames, raised in a method", "C().m()",
		feed("class C:\n    def m(self):\n        return ext(1)\nC().m()"), hostFramed)
	add("hosttb_caught_then_reraised_nested", "A host error caught in an inner function and re-raised bare in the outer", "...",
		feed("def inner():\n    return ext(1)\ndef outer():\n    try:\n        return inner()\n    except ValueError:\n        raise\nouter()"), hostErr)
	add("hosttb_in_handler_context", "A host error raised while handling another exception", "...",
		feed("try:\n    {}['a']\nexcept KeyError:\n    ext(1)"), hostErr)
	add("hosttb_two_host_errors_chained", "Two host errors chained by raise from", "...",
		feed("try:\n    ext(1)\nexcept Exception as e:\n    raise RuntimeError('wrapped') from e\n"), hostFramed)
	add("hosttb_host_error_with_note_attr", "A host error whose args and notes are read", "...",
		feed("try:\n    ext(1)\nexcept ValueError as e:\n    r = (e.args, str(e), getattr(e, '__notes__', None))\nr"), hostErr)
	add("hosttb_host_error_after_several_returns", "Three host calls; the third raises from a nested function", "...",
		feed("def f(i):\n    return ext(i)\n[f(i) for i in range(3)]"), ret(vInt(1)), ret(vInt(2)), hostErr)
	add("hosttb_not_found_nested", "A host function not found, called from a nested function", "...",
		feed("def f():\n    def g():\n        return unknown_fn(1)\n    return g()\nf()"), answer(message.ResultNotFound))
	add("hosttb_not_handled_lambda", "A host call answered not handled, from a lambda", "...",
		feed("(lambda: ext(1))()"), answer(message.ResultNotHandled))
	add("hosttb_not_found_caught", "A not-found answer caught as NameError", "...",
		feed("try:\n    ext(1)\nexcept NameError as e:\n    r = str(e)\nr"), answer(message.ResultNotFound))
	add("hosttb_unicode_error_data", "A host error with UnicodeDecodeError data, uncaught", "ext()",
		feed("def f():\n    return ext()\nf()"),
		raise(&message.RaisedException{Type: "UnicodeDecodeError", Message: s("'utf-8' codec can't decode byte 0xff in position 1: invalid start byte"),
			Data: &message.UnicodeErrorData{Encoding: "utf-8", ObjectBytes: []byte("a\xffb"), Start: 1, End: 2, Reason: "invalid start byte"}}))
	add("hosttb_json_error_data", "A host error with JSONDecodeError data, caught and read", "ext()",
		feed("import json\ntry:\n    ext()\nexcept json.JSONDecodeError as e:\n    r = (e.msg, e.pos, e.lineno, e.colno)\nr"),
		raise(&message.RaisedException{Type: "JSONDecodeError", Message: s("Expecting value: line 2 column 3 (char 5)"),
			Data: &message.JSONErrorData{Msg: "Expecting value", Doc: s("[1,\n  x]"), Pos: 5, Lineno: 2, Colno: 3}}))
	var many []message.StackFrame
	for i := range 40 {
		many = append(many, message.StackFrame{Filename: "host.py", Start: message.CodeLoc{Line: uint32(i + 1), Column: 1}, End: message.CodeLoc{Line: uint32(i + 1), Column: 5}, FrameName: s("h"), PreviewLine: s("h()")})
	}
	add("hosttb_many_repeated_host_frames", "A host error with 40 identical host frames", "ext()",
		feed("ext()"), raise(exc("RecursionError", s("maximum recursion depth exceeded"), many...)))

	// Futures from nested scopes.
	futErr := resumeFuturesAll(func(ids []uint32, g *value.Graph) []message.FutureResult {
		var rs []message.FutureResult
		for _, id := range ids {
			rs = append(rs, message.FutureResult{CallID: id, Result: &message.ExtResult{Kind: message.ResultError, Error: exc("TimeoutError", s("host timed out"))}})
		}
		return rs
	})
	futRet := resumeFuturesAll(func(ids []uint32, g *value.Graph) []message.FutureResult {
		var rs []message.FutureResult
		for _, id := range ids {
			rs = append(rs, message.FutureResult{CallID: id, Result: &message.ExtResult{Kind: message.ResultReturn, Value: g.Add(value.Int(int64(id)))}})
		}
		return rs
	})
	add("futtb_nested_coroutine_error", "A future answered with an error, awaited three coroutines deep", "...",
		feed("async def a():\n    return await ext(1)\nasync def b():\n    return await a()\nasync def c():\n    return await b()\nawait c()"), future(), futErr)
	add("futtb_lambda_coroutine", "A future awaited through a lambda returning the coroutine", "...",
		feed("f = lambda: ext(1)\nawait f()"), future(), futErr)
	add("futtb_gather_in_function_mixed", "gather of three futures in a function: returns and an error", "...",
		feed("import asyncio\nasync def main():\n    return await asyncio.gather(ext(1), ext(2), ext(3))\nawait main()"), future(), future(), future(),
		resumeFuturesAll(func(ids []uint32, g *value.Graph) []message.FutureResult {
			var rs []message.FutureResult
			for i, id := range ids {
				r := &message.ExtResult{Kind: message.ResultReturn, Value: g.Add(value.Str(fmt.Sprint("ok", i)))}
				if i == 1 {
					r = &message.ExtResult{Kind: message.ResultError, Error: exc("ConnectionResetError", s("reset"))}
				}
				rs = append(rs, message.FutureResult{CallID: id, Result: r})
			}
			return rs
		}))
	add("futtb_comprehension_awaits", "Awaits inside a list comprehension in a coroutine", "...",
		feed("async def main():\n    return [await ext(i) for i in range(2)]\nawait main()"), future(), futRet, future(), futRet)
	add("futtb_error_caught_in_coroutine", "A future's error caught inside the coroutine", "...",
		feed("async def main():\n    try:\n        return await ext(1)\n    except TimeoutError as e:\n        return ('caught', str(e))\nawait main()"), future(), futErr)
	add("futtb_future_not_found", "A future resolved as not found", "...",
		feed("async def main():\n    return await ext(1)\nawait main()"), future(),
		resumeFuturesAll(func(ids []uint32, g *value.Graph) []message.FutureResult {
			var rs []message.FutureResult
			for _, id := range ids {
				rs = append(rs, message.FutureResult{CallID: id, Result: &message.ExtResult{Kind: message.ResultNotFound}})
			}
			return rs
		}))
	add("futtb_future_value_extreme", "A future resolved with a big nested value", "...",
		feed("r = await ext(1)\n(type(r).__name__, len(r))"), future(),
		resumeFuturesAll(func(ids []uint32, g *value.Graph) []message.FutureResult {
			var rs []message.FutureResult
			for _, id := range ids {
				items := make([]value.NodeID, 50)
				for i := range items {
					items[i] = g.Add(value.Tuple(g.Add(value.Int(int64(i))), g.Add(value.Str(strings.Repeat("é", i)))))
				}
				rs = append(rs, message.FutureResult{CallID: id, Result: &message.ExtResult{Kind: message.ResultReturn, Value: g.Add(value.List(items...))}})
			}
			return rs
		}))

	// Every OS call answered with an error, as not found and with a value
	// of the wrong type.
	osOps := []struct{ name, code string }{
		{"exists", "from pathlib import Path\nPath('/data/x').exists()"},
		{"is_file", "from pathlib import Path\nPath('/data/x').is_file()"},
		{"is_dir", "from pathlib import Path\nPath('/data/x').is_dir()"},
		{"is_symlink", "from pathlib import Path\nPath('/data/x').is_symlink()"},
		{"read_text", "from pathlib import Path\nPath('/data/x').read_text()"},
		{"read_bytes", "from pathlib import Path\nPath('/data/x').read_bytes()"},
		{"stat", "from pathlib import Path\nPath('/data/x').stat()"},
		{"iterdir", "from pathlib import Path\nlist(Path('/data').iterdir())"},
		{"resolve", "from pathlib import Path\nPath('/data/../x').resolve()"},
		{"absolute", "from pathlib import Path\nPath('x').absolute()"},
		{"unlink", "from pathlib import Path\nPath('/data/x').unlink()"},
		{"rmdir", "from pathlib import Path\nPath('/data/d').rmdir()"},
		{"write_text", "from pathlib import Path\nPath('/data/x').write_text('t')"},
		{"write_bytes", "from pathlib import Path\nPath('/data/x').write_bytes(b'b')"},
		{"open_read", "open('/data/x').read()"},
		{"open_append", "open('/data/x', 'a').write('t')"},
		{"open_append_bytes", "open('/data/x', 'ab').write(b'b')"},
		{"mkdir", "from pathlib import Path\nPath('/data/d').mkdir(parents=True, exist_ok=True)"},
		{"rename", "from pathlib import Path\nPath('/data/a').rename('/data/b')"},
		{"getenv", "import os\nos.getenv('K', 'default')"},
		{"environ", "import os\nos.environ['K']"},
		{"date_today", "from datetime import date\ndate.today()"},
		{"datetime_now", "from datetime import datetime\ndatetime.now()"},
	}
	for _, o := range osOps {
		code := "def op():\n    " + strings.ReplaceAll(o.code, "\n", "\n    ") + "\nop()"
		add("osans_"+o.name+"_error", "OS call "+o.name+" answered with OSError", code, feed(code),
			raise(exc("OSError", s("[Errno 5] Input/output error"))))
		add("osans_"+o.name+"_not_found", "OS call "+o.name+" answered as not found", code, feed(code), answer(message.ResultNotFound))
		add("osans_"+o.name+"_wrong_type", "OS call "+o.name+" answered with a value of the wrong type", code, feed(code),
			ret(vList(vTuple(vInt(1)))))
	}
	for _, o := range osOps {
		code := "def op():\n    " + strings.ReplaceAll(o.code, "\n", "\n    ") + "\nop()"
		add("osans_"+o.name+"_not_handled", "OS call "+o.name+" answered not handled, from a function", code, feed(code), answer(message.ResultNotHandled))
	}
	add("osans_read_text_unicode_error_data", "Path.read_text answered with a UnicodeDecodeError carrying its data", "...",
		feed("from pathlib import Path\ntry:\n    Path('/x').read_text()\nexcept UnicodeDecodeError as e:\n    r = (e.encoding, e.object, e.start, e.end, e.reason, str(e))\nr"),
		raise(&message.RaisedException{Type: "UnicodeDecodeError", Message: s("'utf-8' codec can't decode byte 0xff in position 2: invalid start byte"),
			Data: &message.UnicodeErrorData{Encoding: "utf-8", ObjectBytes: []byte("ab\xffcd"), Start: 2, End: 3, Reason: "invalid start byte"}}))
	add("osans_read_text_error_with_frames", "Path.read_text answered with an error carrying host frames, uncaught", "...",
		feed("from pathlib import Path\ndef load():\n    return Path('/x').read_text()\nload()"),
		raise(exc("PermissionError", s("[Errno 13] Permission denied: '/x'"),
			message.StackFrame{Filename: "/host/mount.go", Start: message.CodeLoc{Line: 88, Column: 3}, End: message.CodeLoc{Line: 88, Column: 40}, FrameName: s("open"), PreviewLine: s("\tf, err := root.Open(name)")})))
	add("osans_open_then_read_error", "open() answered, then its read answered with an error", "...",
		feed("f = open('/x')\nf.read()"), ret(vNode(value.FileHandleNode(value.FileHandle{Path: "/x", Mode: "r"}))), raise(exc("IsADirectoryError", s("[Errno 21] Is a directory: '/x'"))))

	// Unicode names crossing to the host.
	add("uhost_function_name", "A host function with a unicode name, keyword arguments with unicode names", "函数(ключ=1)",
		feed("函数(1, ключ='é', ñ=None)"), ret(vStr("ok")))
	add("uhost_function_name_nfkc", "A host function whose name NFKC folds", "ﬁnd()",
		feed("ﬁnd()"), ret(vInt(1)))
	add("uhost_function_error_traceback", "A host function with a unicode name raises, uncaught, from a unicode function", "...",
		feed("def 外側():\n    return 内側(1)\n外側()"), raise(exc("ValueError", s("ñ"))))
	add("uhost_lookup_then_call", "A unicode name looked up, answered with a value", "ñame",
		feed("ñame * 2"), lookup(vStr("é")))

	for _, e := range []string{"FileNotFoundError", "FileExistsError", "NotADirectoryError", "InterruptedError", "BlockingIOError",
		"ChildProcessError", "BrokenPipeError", "ConnectionAbortedError", "ProcessLookupError", "ValueError", "TypeError",
		"KeyboardInterrupt", "SystemExit", "MemoryError", "RecursionError", "NotImplementedError", "StopIteration", "GeneratorExit", "BaseException", "Exception", "UnknownHostError"} {
		add("osexc_read_text_"+strings.ToLower(e), "Path.read_text answered with "+e+", caught by except BaseException",
			"try: Path(...).read_text() except BaseException",
			feed("from pathlib import Path\ntry:\n    Path('/data/x').read_text()\nexcept BaseException as e:\n    r = (type(e).__name__, str(e), isinstance(e, OSError), isinstance(e, Exception))\nr"),
			raise(exc(e, s("host said no"))))
	}
	add("osexc_stat_uncaught_filenotfound_in_lambda", "Path.stat raising FileNotFoundError through a lambda", "...",
		feed("from pathlib import Path\nsize = lambda p: p.stat().st_size\nsize(Path('/nope'))"),
		raise(exc("FileNotFoundError", s("[Errno 2] No such file or directory: '/nope'"))))

	// Name lookups answered in every way from every scope.
	lookups := []struct{ name, code string }{
		{"module", "missing_name"},
		{"function", "def f():\n    return missing_name\nf()"},
		{"lambda", "(lambda: missing_name)()"},
		{"comprehension", "[missing_name for _ in range(1)]"},
		{"class_body", "class C:\n    v = missing_name"},
		{"call", "missing_name(1, k=2)"},
		{"attribute", "missing_name.attr"},
		{"augassign", "def f():\n    global missing_name\n    missing_name += 1\n    return missing_name\nf()"},
	}
	for _, l := range lookups {
		add("lookans_"+l.name+"_undefined", "A name lookup from "+l.name+" answered undefined", l.code, feed(l.code),
			fixed(&message.ResumeNameLookup{Kind: message.LookupUndefined}))
		add("lookans_"+l.name+"_error", "A name lookup from "+l.name+" answered with an error", l.code, feed(l.code),
			fixed(&message.ResumeNameLookup{Kind: message.LookupError, Error: exc("PermissionError", s("no access to that name"))}))
		add("lookans_"+l.name+"_value", "A name lookup from "+l.name+" answered with a value", l.code, feed(l.code),
			lookup(vInt(41)), lookup(vInt(41)))
	}
	add("lookans_unicode_name", "A name lookup of a unicode identifier answered undefined", "ñame_日本",
		feed("ñame_日本 + 1"), fixed(&message.ResumeNameLookup{Kind: message.LookupUndefined}))
	add("lookans_nfkc_name", "A name lookup of an identifier that NFKC folds", "ﬁle",
		feed("ﬁle"), fixed(&message.ResumeNameLookup{Kind: message.LookupUndefined}))
	add("lookans_value_builtin_function", "A name lookup answered with a builtin function value", "f([1, 2])",
		feed("f([1, 2])"), lookup(vNode(value.BuiltinFunction("len"))))
	add("lookans_value_exception_raised", "A name lookup answered with an exception value, then raised", "raise E",
		feed("raise missing_exc"), lookup(vNode(value.ExceptionNode(value.Exception{Type: "ValueError", Arg: s("looked up")}))))
	add("lookans_error_with_frames", "A name lookup answered with an error that carries host frames", "x",
		feed("def f():\n    return x\nf()"),
		fixed(&message.ResumeNameLookup{Kind: message.LookupError, Error: exc("LookupError", s("x is gone"),
			message.StackFrame{Filename: "resolver.py", Start: message.CodeLoc{Line: 7, Column: 5}, End: message.CodeLoc{Line: 7, Column: 9}, FrameName: s("resolve"), PreviewLine: s("    boom")})}))

	// Dumps at each state.
	dumps := []struct {
		name  string
		steps []step
	}{
		{"before_configure", nil},
		{"after_error", []step{feed("1 / 0")}},
		{"after_syntax_error", []step{feed("def (")}},
		{"in_name_lookup", []step{feed("missing + 1")}},
		{"in_os_call", []step{feed("from pathlib import Path\nPath('/x').read_text()")}},
		{"in_futures", []step{feed("import asyncio\nawait asyncio.gather(ext(1), ext(2))"), future(), future()}},
		{"after_abort", []step{feed("ext()"), fixed(&message.AbortFeed{Exception: exc("KeyboardInterrupt", nil)})}},
		{"after_reset", []step{feed("x = 1"), fixed(&message.Reset{})}},
	}
	for _, d := range dumps {
		k := kase{name: "dumpat_" + d.name, desc: "Dump, reset, configure and load " + d.name + ", then go on", code: "..."}
		if d.name == "before_configure" {
			k.steps = []step{fixed(&message.Dump{}), cfg, feed("'after dump'")}
			k.noConfigure = true
			out = append(out, k)
			continue
		}
		k.steps = append(append([]step{}, d.steps...), fixed(&message.Dump{}), fixed(&message.Reset{}), cfg, load)
		switch d.name {
		case "in_name_lookup":
			k.steps = append(k.steps, lookup(vInt(1)))
		case "in_os_call":
			k.steps = append(k.steps, ret(vStr("text")))
		case "in_futures":
			k.steps = append(k.steps, futRet)
		case "after_reset":
			k.steps = append(k.steps, cfg)
		}
		k.steps = append(k.steps, feed("'after load'"))
		out = append(out, k)
	}
	add("dumpat_load_twice", "Load the same dump twice in a row", "x = 1",
		feed("x = 5"), fixed(&message.Dump{}), fixed(&message.Reset{}), cfg, load, load, feed("x"))
	add("dumpat_dump_after_load", "Dump a loaded session, load that dump", "x = [1]",
		feed("x = [1]"), fixed(&message.Dump{}), fixed(&message.Reset{}), cfg, load, feed("x.append(2)"), fixed(&message.Dump{}), fixed(&message.Reset{}), cfg, load, feed("x"))
	add("dumpat_load_other_script_name", "Load a dump under a different script name, then raise", "f()",
		feed("def f():\n    return 1 / 0"), fixed(&message.Dump{}), fixed(&message.Reset{}),
		fixed(&message.Configure{ScriptName: "other.py", ProtocolVersion: 2}), load, feed("f()"))
	add("dumpat_load_garbage", "Load bytes that are no dump", "...",
		feed("x = 1"), fixed(&message.Reset{}), cfg, fixed(&message.Load{State: []byte("not a dump at all \xff")}), feed("1"))
	add("dumpat_load_empty", "Load an empty state", "...",
		fixed(&message.Load{State: []byte{}}), feed("1"))
	add("dumpat_load_limits_kept", "Dump under a recursion limit, load without one", "...",
		feed("def f(n):\n    return f(n + 1)"), fixed(&message.Dump{}), fixed(&message.Reset{}), cfg, load, feed("f(0)"))
	out[len(out)-1].configure = lim(message.ResourceLimits{MaxRecursionDepth: u64(20)})

	// Print interleaved with suspensions.
	add("printsus_partial_then_host_call", "A partial line printed, then a host call, then the rest", "...",
		feed("print('a', end='')\nx = ext()\nprint('b', x)"), ret(vStr("c")))
	add("printsus_stderr_then_os_call", "stderr printed before an OS call", "...",
		feed("import sys\nfrom pathlib import Path\nprint('to err', file=sys.stderr, end='')\nPath('/x').exists()"), ret(vNode(value.Bool(true))))
	add("printsus_before_name_lookup", "Print before a name lookup", "...",
		feed("print('before')\nmissing\nprint('after')"), lookup(vInt(1)))
	add("printsus_huge_before_call", "A 20 kB print before a host call", "...",
		feed("print('y' * 9000)\next()"), ret(vNone()))
	add("printsus_in_futures", "Prints between future awaits", "...",
		feed("async def main():\n    print('start')\n    a = await ext(1)\n    print('got', a)\n    return a\nawait main()"), future(), futRet)
	add("printsus_before_abort", "Print, host call, abort", "...",
		feed("print('x', end='')\ntry:\n    ext()\nfinally:\n    print('fin')"), fixed(&message.AbortFeed{Exception: exc("KeyboardInterrupt", nil)}))
	addCfg("printsus_interval0_alternate_suspension", "Flush interval 0: stdout and stderr alternate around host calls", "...",
		&message.Configure{ScriptName: "main.py", ProtocolVersion: 2, PrintFlushIntervalMs: value.Ptr[uint32](0)},
		feed("import sys\nfor i in range(3):\n    print(i, end='')\n    print('e', i, file=sys.stderr)\n    ext(i)"), ret(vNone()), ret(vNone()), ret(vNone()))

	// Cancellations.
	aborts := []struct {
		name string
		pre  []step
	}{
		{"os_call", []step{feed("from pathlib import Path\ntry:\n    Path('/x').read_text()\nexcept KeyboardInterrupt:\n    print('caught')\n    raise")}},
		{"name_lookup_finally", []step{feed("try:\n    missing\nfinally:\n    print('finally')")}},
		{"futures", []step{feed("import asyncio\nawait asyncio.gather(ext(1), ext(2))"), future(), future()}},
		{"nested_function", []step{feed("def a():\n    return b()\ndef b():\n    return ext()\na()")}},
		{"caught_and_swallowed", []step{feed("try:\n    ext()\nexcept BaseException as e:\n    r = ('swallowed', type(e).__name__)\nr")}},
	}
	for _, a := range aborts {
		for _, e := range []*message.RaisedException{exc("KeyboardInterrupt", nil), exc("CancelledError", s("cancelled by host"))} {
			steps := append(append([]step{}, a.pre...), fixed(&message.AbortFeed{Exception: e}), feed("'next'"))
			add("cancel_"+a.name+"_"+strings.ToLower(e.Type), "AbortFeed with "+e.Type+" during "+a.name, "...", steps...)
		}
	}
	add("cancel_abort_generator_exit", "AbortFeed with GeneratorExit in a generator", "...",
		feed("def g():\n    try:\n        yield ext()\n    finally:\n        print('closed')\nlist(g())"), fixed(&message.AbortFeed{Exception: exc("GeneratorExit", nil)}))
	add("cancel_abort_with_frames", "AbortFeed with an exception carrying host frames", "...",
		feed("ext()"), fixed(&message.AbortFeed{Exception: exc("KeyboardInterrupt", s("^C"),
			message.StackFrame{Filename: "host.py", Start: message.CodeLoc{Line: 3, Column: 1}, End: message.CodeLoc{Line: 3, Column: 4}, FrameName: s("wait"), PreviewLine: s("wait()")})}))

	// Requests the state machine refuses.
	add("refuse_resume_lookup_during_call", "ResumeNameLookup while suspended in a host call", "ext()",
		feed("ext()"), lookup(vInt(1)), ret(vInt(2)))
	add("refuse_resume_call_during_lookup_value", "ResumeCall while suspended on a name lookup", "missing",
		feed("missing"), ret(vInt(1)), lookup(vInt(2)))
	add("refuse_resume_futures_during_os_call", "ResumeFutures while suspended in an OS call", "...",
		feed("from pathlib import Path\nPath('/x').exists()"), fixed(&message.ResumeFutures{}), ret(vNode(value.Bool(true))))
	add("refuse_resume_call_wrong_id_os_call", "ResumeCall with a wrong call id during an OS call", "...",
		feed("from pathlib import Path\nPath('/x').exists()"),
		func(*message.ChildEvent) *message.ParentRequest {
			r := &message.ResumeCall{CallID: 999}
			r.Result = &message.ExtResult{Kind: message.ResultReturn, Value: r.Values.Add(value.Bool(true))}
			return req(r)
		}, ret(vNode(value.Bool(false))))
	add("refuse_configure_while_suspended", "Configure while suspended in a host call", "ext()",
		feed("ext()"), cfg, ret(vInt(1)))
	add("refuse_configure_during_futures", "Configure while resolving futures", "...",
		feed("import asyncio\nawait asyncio.gather(ext(1), ext(2))"), future(), future(), cfg, futRet)
	add("refuse_install_deps_while_suspended", "InstallDependencies while suspended", "ext()",
		feed("ext()"), fixed(&message.InstallDependencies{Requirements: []string{"x"}}), ret(vInt(1)))
	add("refuse_feed_during_lookup", "Feed while suspended on a name lookup", "missing",
		feed("missing"), feed("1"), lookup(vInt(1)))
	add("refuse_feed_during_futures", "Feed while resolving futures", "...",
		feed("import asyncio\nawait asyncio.gather(ext(1), ext(2))"), future(), future(), feed("1"), futRet)
	add("refuse_resume_call_after_complete", "ResumeCall after the feed completed", "1",
		feed("1"), ret(vInt(1)), feed("2"))
	add("refuse_resume_futures_empty_results", "ResumeFutures with no results while resolving", "...",
		feed("import asyncio\nawait asyncio.gather(ext(1), ext(2))"), future(), future(), fixed(&message.ResumeFutures{}), futRet)
	add("refuse_reset_twice", "Reset twice, then feed before configure", "...",
		feed("1"), fixed(&message.Reset{}), fixed(&message.Reset{}), feed("2"), cfg, feed("3"))
	add("refuse_load_while_lookup", "Load while suspended on a name lookup", "...",
		feed("x = 1"), fixed(&message.Dump{}), feed("missing"), load, lookup(vInt(1)))
	add("refuse_dump_during_futures_then_resolve", "Dump while resolving futures, then resolve", "...",
		feed("import asyncio\nawait asyncio.gather(ext(1), ext(2))"), future(), future(), fixed(&message.Dump{}), futRet)
	add("refuse_abort_during_futures_then_resume", "AbortFeed while resolving futures, then ResumeFutures", "...",
		feed("import asyncio\nawait asyncio.gather(ext(1), ext(2))"), future(), future(),
		fixed(&message.AbortFeed{Exception: exc("KeyboardInterrupt", nil)}), futRet, feed("'after'"))
	add("refuse_future_answer_to_os_call", "An OS call answered with a future", "...",
		feed("from pathlib import Path\nPath('/x').exists()"), future(), feed("1"))
	add("refuse_future_answer_sync_context", "A host call in sync code answered with a future, then used", "...",
		feed("x = ext()\nx + 1"), future(), feed("1"))

	// Values at their extremes, returned by a host function and given as
	// a Feed input, with the sandbox's repr of them.
	i32 := value.Ptr[int32]
	ctrl := make([]rune, 0, 0xa1)
	for r := rune(0); r < 0xa1; r++ {
		if r < 0x20 || r >= 0x7f {
			ctrl = append(ctrl, r)
		}
	}
	extremes := []struct {
		name string
		b    build
	}{
		{"int_i64_max", vInt(math.MaxInt64)},
		{"int_i64_min", vInt(math.MinInt64)},
		{"bigint_2_63", vBig("0x8000000000000000")},
		{"bigint_neg_2_63_minus_1", vBig("-0x8000000000000001")},
		{"bigint_4300_digits", vBig("1" + strings.Repeat("0", 4299))},
		{"float_max", vFloat(math.MaxFloat64)},
		{"float_min_normal", vFloat(2.2250738585072014e-308)},
		{"float_neg_inf", vFloat(math.Inf(-1))},
		{"float_1e16", vFloat(1e16)},
		{"float_1e_minus_5", vFloat(1e-5)},
		{"str_controls", vStr(string(ctrl))},
		{"str_max_rune", vStr("􏿿󠀀￾")},
		{"str_empty", vStr("")},
		{"bytes_empty", vBytes(nil)},
		{"date_max", vNode(value.DateNode(value.Date{Year: 9999, Month: 12, Day: 31}))},
		{"datetime_min_naive", vNode(value.DateTimeNode(value.DateTime{Year: 1, Month: 1, Day: 1}))},
		{"datetime_max", vNode(value.DateTimeNode(value.DateTime{Year: 9999, Month: 12, Day: 31, Hour: 23, Minute: 59, Second: 59, Microsecond: 999999}))},
		{"datetime_offset_max", vNode(value.DateTimeNode(value.DateTime{Year: 2000, Month: 1, Day: 1, Offset: i32(86399)}))},
		{"datetime_offset_seconds", vNode(value.DateTimeNode(value.DateTime{Year: 2000, Month: 1, Day: 1, Offset: i32(-1)}))},
		{"time_max_aware", vNode(value.TimeNode(value.Time{Hour: 23, Minute: 59, Second: 59, Microsecond: 999999, Offset: i32(-86399), TZName: s("é\"'")}))},
		{"time_min", vNode(value.TimeNode(value.Time{}))},
		{"timedelta_min", vNode(value.TimeDeltaNode(value.TimeDelta{Days: -999999999}))},
		{"timedelta_neg_micro", vNode(value.TimeDeltaNode(value.TimeDelta{Days: -1, Seconds: 86399, Microseconds: 999999}))},
		{"timezone_max_seconds", vNode(value.TimeZoneNode(value.TimeZone{Offset: 86399}))},
		{"timezone_neg_seconds", vNode(value.TimeZoneNode(value.TimeZone{Offset: -1}))},
		{"timezone_utc_named", vNode(value.TimeZoneNode(value.TimeZone{Offset: 0, Name: s("UTC")}))},
		{"exception_empty_arg", vNode(value.ExceptionNode(value.Exception{Type: "ValueError", Arg: s("")}))},
		{"exception_multiline_arg", vNode(value.ExceptionNode(value.Exception{Type: "KeyError", Arg: s("a\nb'\"")}))},
		{"path_root", vNode(value.Path("/"))},
		{"path_relative_dots", vNode(value.Path("../a/./b"))},
		{"filehandle_binary", vNode(value.FileHandleNode(value.FileHandle{Path: "/d/é.bin", Mode: "rb", Position: 3}))},
		{"list_deep_40", func(g *value.Graph) value.NodeID {
			id := g.Add(value.List())
			for range 40 {
				id = g.Add(value.List(id))
			}
			return id
		}},
		{"dict_500_keys", func(g *value.Graph) value.NodeID {
			var ps []value.Pair
			for i := range 500 {
				k := g.Add(value.Int(int64(i*7919) % 1000))
				ps = append(ps, value.Pair{Key: k, Value: g.Add(value.Str(fmt.Sprint(i)))})
			}
			return g.Add(value.Dict(ps...))
		}},
		{"shared_string_many", func(g *value.Graph) value.NodeID {
			s := g.Add(value.Str("shared é"))
			ids := make([]value.NodeID, 20)
			for i := range ids {
				ids[i] = s
			}
			return g.Add(value.Tuple(ids...))
		}},
	}
	excNames := []string{"ArithmeticError", "AssertionError", "AttributeError", "BaseException", "Exception", "FileExistsError",
		"FileNotFoundError", "FrozenInstanceError", "ImportError", "IndexError", "IsADirectoryError", "KeyError", "KeyboardInterrupt",
		"LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "NotADirectoryError", "NotImplementedError", "OSError",
		"OverflowError", "PermissionError", "RecursionError", "RuntimeError", "StopIteration", "SyntaxError", "SystemExit",
		"TimeoutError", "TypeError", "UnboundLocalError", "UnicodeDecodeError", "UnicodeEncodeError", "ValueError",
		"ZeroDivisionError", "binascii.Error", "io.UnsupportedOperation", "json.JSONDecodeError", "re.PatternError"}
	extremes = append(extremes, []struct {
		name string
		b    build
	}{
		{"every_exception_type", func(g *value.Graph) value.NodeID {
			var ids []value.NodeID
			for i, n := range excNames {
				e := value.Exception{Type: n}
				if i%2 == 0 {
					e.Arg = s("m " + n)
				}
				ids = append(ids, g.Add(value.ExceptionNode(e)))
			}
			return g.Add(value.List(ids...))
		}},
		{"builtin_types", vList(vNode(value.BuiltinType("int")), vNode(value.BuiltinType("datetime.date")), vNode(value.BuiltinType("NoneType")),
			vNode(value.BuiltinType("ellipsis")), vNode(value.BuiltinType("PosixPath")), vNode(value.BuiltinType("KeyError")))},
		{"builtin_functions", vList(vNode(value.BuiltinFunction("len")), vNode(value.BuiltinFunction("sorted")), vNode(value.BuiltinFunction("zip")),
			vNode(value.BuiltinFunction("type")), vNode(value.BuiltinFunction("print")))},
		{"namedtuple_many_fields", func(g *value.Graph) value.NodeID {
			var names []string
			var ids []value.NodeID
			for i := range 12 {
				names = append(names, fmt.Sprintf("f%d", i))
				ids = append(ids, g.Add(value.Int(int64(i))))
			}
			return g.Add(value.NamedTupleNode("mod.Rec", names, ids...))
		}},
		{"host_dataclass_many_attrs", func(g *value.Graph) value.NodeID {
			var attrs []any
			for i := range 30 {
				attrs = append(attrs, fmt.Sprintf("a%02d", i), vInt(int64(i)))
			}
			return vHost("Wide", true, 9, attrs...)(g)
		}},
		{"host_dataclass_unicode", vHost("Ñandú", true, 10, "名前", vStr("é"), "ß", vNone())},
	}...)
	for _, x := range extremes {
		code := "x = ext()\n(x, repr(x))"
		add("xhostret_"+x.name, "A host function returns "+x.name+"; the sandbox returns it with its repr", code, feed(code), ret(x.b))
		add("xinput_"+x.name, "A Feed input of "+x.name+", echoed with its repr", "(v, repr(v))",
			feedWith("(v, repr(v))", []string{"v"}, x.b))
	}

	// Configure variants seen in tracebacks and assertion messages.
	raiser := "def f():\n    return 1 / 0\nf()"
	for _, sn := range []struct{ name, script string }{
		{"newline", "a\nb.py"},
		{"quotes", "it's \"x\".py"},
		{"relative_dir", "pkg/sub/mod.py"},
		{"long", strings.Repeat("d/", 100) + "m.py"},
		{"angle", "<stdin>"},
		{"spaces_only", "   "},
		{"tab_cr", "a\tb\rc.py"},
	} {
		addCfg("configy_script_"+sn.name, "Script name "+sn.name+" in a traceback", raiser,
			&message.Configure{ScriptName: sn.script, ProtocolVersion: 2}, feed(raiser))
	}
	assertCode := "a = {'k': [1, 2, 3], 'é': 'x' * 30}\nb = {'k': [1, 2]}\nassert a == b"
	for _, n := range []uint32{0, 1, 3, 1000, math.MaxUint32} {
		addCfg(fmt.Sprintf("configy_assert_annotations_%d", n), fmt.Sprintf("Assert annotations at %d", n), assertCode,
			&message.Configure{ScriptName: "main.py", ProtocolVersion: 2, AssertMessageAnnotations: value.Ptr(n)}, feed(assertCode))
	}
	addCfg("configy_flush_interval_max", "The largest print flush interval, prints then a host call", "...",
		&message.Configure{ScriptName: "main.py", ProtocolVersion: 2, PrintFlushIntervalMs: value.Ptr[uint32](math.MaxUint32)},
		feed("print('a')\nprint('b', end='')\next()\nprint('c')"), ret(vNone()))
	addCfg("configy_monty_version_odd", "A Configure naming an odd monty_version", "1",
		&message.Configure{ScriptName: "main.py", ProtocolVersion: 2, MontyVersion: "99.0.0-é"}, feed("1"))

	// Feed input names of many kinds.
	for _, in := range []struct{ name, ident, code string }{
		{"unicode", "ñame_日本", "ñame_日本 * 2"},
		{"nfkc", "ﬁle", "file * 2"},
		{"shadows_builtin", "len", "len"},
		{"underscore", "_", "_ * 2"},
		{"dunder", "__name__", "__name__"},
		{"soft_keyword", "match", "match * 2"},
		{"builtin_type_name", "int", "int * 2"},
	} {
		add("inputname_"+in.name, "A Feed input named "+in.ident, in.code, feedWith(in.code, []string{in.ident}, vInt(21)))
	}
	add("inputname_two_inputs_same_nfkc", "Two Feed inputs whose names fold to one under NFKC", "file",
		feedWith("file", []string{"ﬁle", "file"}, vInt(1), vInt(2)))

	// Requests that fail their conversion, sent in a state that refuses
	// them: which check the worker makes first.
	badExc := exc("NoSuchHostError", s("x"))
	badInput := rawFeedBuiltin("v", "v", "no_such_builtin")
	add("order_abort_bad_type_idle", "AbortFeed with an unknown exception type while idle", "1",
		feed("1"), fixed(&message.AbortFeed{Exception: badExc}), feed("2"))
	add("order_abort_bad_type_before_configure", "AbortFeed with an unknown exception type before Configure", "-",
		fixed(&message.AbortFeed{Exception: badExc}), cfg, feed("2"))
	out[len(out)-1].noConfigure = true
	add("order_abort_bad_type_suspended", "AbortFeed with an unknown exception type while suspended", "ext()",
		feed("ext()"), fixed(&message.AbortFeed{Exception: badExc}), ret(vInt(1)))
	add("order_resume_call_bad_type_idle", "ResumeCall raising an unknown exception type while idle", "1",
		feed("1"), raise(badExc), feed("2"))
	add("order_resume_call_bad_type_in_lookup", "ResumeCall raising an unknown exception type during a name lookup", "missing",
		feed("missing"), raise(badExc), lookup(vInt(1)))
	add("order_resume_call_bad_type_futures", "ResumeCall raising an unknown exception type while resolving futures", "...",
		feed("import asyncio\nawait asyncio.gather(ext(1), ext(2))"), future(), future(), raise(badExc), futRet)
	add("order_lookup_bad_type_in_call", "ResumeNameLookup raising an unknown exception type during a host call", "ext()",
		feed("ext()"), fixed(&message.ResumeNameLookup{Kind: message.LookupError, Error: badExc}), ret(vInt(1)))
	add("order_lookup_bad_type_idle", "ResumeNameLookup raising an unknown exception type while idle", "1",
		feed("1"), fixed(&message.ResumeNameLookup{Kind: message.LookupError, Error: badExc}), feed("2"))
	add("order_futures_bad_type_in_call", "ResumeFutures with an unknown exception type during a host call", "ext()",
		feed("ext()"), resumeFuturesAll(func(_ []uint32, g *value.Graph) []message.FutureResult {
			return []message.FutureResult{{CallID: 0, Result: &message.ExtResult{Kind: message.ResultError, Error: badExc}}}
		}), ret(vInt(1)))
	add("order_futures_bad_type_idle", "ResumeFutures with an unknown exception type while idle", "1",
		feed("1"), resumeFuturesAll(func(_ []uint32, g *value.Graph) []message.FutureResult {
			return []message.FutureResult{{CallID: 0, Result: &message.ExtResult{Kind: message.ResultError, Error: badExc}}}
		}), feed("2"))
	add("order_futures_bad_type_resolving", "ResumeFutures with an unknown exception type while resolving", "...",
		feed("import asyncio\nawait asyncio.gather(ext(1), ext(2))"), future(), future(),
		resumeFuturesAll(func(ids []uint32, g *value.Graph) []message.FutureResult {
			var rs []message.FutureResult
			for _, id := range ids {
				rs = append(rs, message.FutureResult{CallID: id, Result: &message.ExtResult{Kind: message.ResultError, Error: badExc}})
			}
			return rs
		}), futRet)
	add("order_feed_bad_input_suspended", "A Feed with an invalid input while suspended", "ext()",
		feed("ext()"), badInput, ret(vInt(1)))
	add("order_feed_bad_input_before_configure", "A Feed with an invalid input before Configure", "-",
		badInput, cfg, feed("1"))
	out[len(out)-1].noConfigure = true
	add("order_feed_bad_input_in_futures", "A Feed with an invalid input while resolving futures", "...",
		feed("import asyncio\nawait asyncio.gather(ext(1), ext(2))"), future(), future(), badInput, futRet)
	add("order_resume_call_wrong_id_and_bad_type", "ResumeCall with a wrong call id and an unknown exception type", "ext()",
		feed("ext()"), fixed(&message.ResumeCall{CallID: 77, Result: &message.ExtResult{Kind: message.ResultError, Error: badExc}}), ret(vInt(1)))
	add("order_resume_call_not_handled_bad_type", "ResumeCall not handled for a host call, then an unknown type", "ext()",
		feed("ext()"), answer(message.ResultNotHandled), raise(badExc), ret(vInt(1)))
	emptyInput := rawFeedObj("v", nil)
	add("order_feed_empty_input_suspended", "A Feed whose input has no kind, while suspended", "ext()",
		feed("ext()"), emptyInput, ret(vInt(1)))
	add("order_feed_empty_input_before_configure", "A Feed whose input has no kind, before Configure", "-",
		emptyInput, cfg, emptyInput, feed("1"))
	out[len(out)-1].noConfigure = true
	add("order_feed_empty_input_in_lookup", "A Feed whose input has no kind, during a name lookup", "missing",
		feed("missing"), emptyInput, lookup(vInt(1)))
	add("order_feed_empty_input_after_dump_load", "A Feed whose input has no kind, right after a Load", "x = 1",
		feed("x = 1"), fixed(&message.Dump{}), fixed(&message.Reset{}), cfg, load, emptyInput, feed("x"))
	badFrames := exc("ValueError", s("v"), message.StackFrame{Filename: "h.py", Start: message.CodeLoc{Line: 1, Column: 1},
		End: message.CodeLoc{Line: 1, Column: 50}, FrameName: s("h"), PreviewLine: s("short")})
	add("order_abort_bad_frames_idle", "AbortFeed whose exception has a frame past its preview line, while idle", "1",
		feed("1"), fixed(&message.AbortFeed{Exception: badFrames}), feed("2"))
	add("order_abort_bad_frames_suspended", "AbortFeed whose exception has a frame past its preview line, while suspended", "ext()",
		feed("ext()"), fixed(&message.AbortFeed{Exception: badFrames}), ret(vInt(1)))
	add("order_resume_call_bad_frames_wrong_id", "ResumeCall with a bad frame and a wrong call id", "ext()",
		feed("ext()"), fixed(&message.ResumeCall{CallID: 5, Result: &message.ExtResult{Kind: message.ResultError, Error: badFrames}}), ret(vInt(1)))
	add("order_resume_call_bad_frames_os_call", "ResumeCall with a bad frame during an OS call", "exists()",
		feed("from pathlib import Path\nPath('/x').exists()"), raise(badFrames), ret(vNode(value.Bool(true))))
	add("order_lookup_bad_frames_in_lookup", "ResumeNameLookup with a bad frame during a lookup", "missing",
		feed("missing"), fixed(&message.ResumeNameLookup{Kind: message.LookupError, Error: badFrames}), lookup(vInt(1)))
	add("order_futures_not_handled_idle", "ResumeFutures answering not handled while idle", "1",
		feed("1"), resumeFuturesAll(func(_ []uint32, g *value.Graph) []message.FutureResult {
			return []message.FutureResult{{CallID: 0, Result: &message.ExtResult{Kind: message.ResultNotHandled}}}
		}), feed("2"))
	add("order_futures_not_handled_resolving", "ResumeFutures answering not handled while resolving", "...",
		feed("import asyncio\nawait asyncio.gather(ext(1), ext(2))"), future(), future(),
		resumeFuturesAll(func(ids []uint32, g *value.Graph) []message.FutureResult {
			var rs []message.FutureResult
			for _, id := range ids {
				rs = append(rs, message.FutureResult{CallID: id, Result: &message.ExtResult{Kind: message.ResultNotHandled}})
			}
			return rs
		}), futRet)

	// What a refused or failed first request does to a configured session
	// that has not started: a Load after it is accepted only while the
	// session has not started.
	prep := []step{feed("x = 'dumped'"), fixed(&message.Dump{}), fixed(&message.Reset{}), cfg}
	for _, f := range []struct {
		name string
		st   []step
	}{
		{"empty_input", []step{emptyInput}},
		{"bad_builtin_input", []step{badInput}},
		{"syntax_error", []step{feed("def (")}},
		{"runtime_error", []step{feed("1 / 0")}},
		{"dump", []step{fixed(&message.Dump{})}},
		{"abort", []step{fixed(&message.AbortFeed{Exception: exc("KeyboardInterrupt", nil)})}},
		{"resume_call", []step{ret(vInt(1))}},
		{"install_deps", []step{fixed(&message.InstallDependencies{Requirements: []string{"x"}})}},
		{"configure_again", []step{cfg}},
		{"load_garbage", []step{fixed(&message.Load{State: []byte("garbage")})}},
		{"empty_code", []step{feed("")}},
		{"duplicate_inputs", []step{feedWith("a", []string{"a", "a"}, vInt(1), vInt(2))}},
	} {
		steps := append(append(append([]step{}, prep...), f.st...), load, feed("x"))
		add("s1_"+f.name+"_then_load", "In a configured, unstarted session: "+f.name+", then Load", "...", steps...)
	}
	addCfg("s1_typing_error_then_load", "In a configured, unstarted session with type checking: a typing error, then Load", "...",
		&message.Configure{ScriptName: "main.py", ProtocolVersion: 2, TypeCheck: true},
		feed("x = 'dumped'"), fixed(&message.Dump{}), fixed(&message.Reset{}),
		fixed(&message.Configure{ScriptName: "main.py", ProtocolVersion: 2, TypeCheck: true}), feed("y: int = 'a'"), load, feed("x"))

	// Type checking around host calls, inputs, lookups and loads.
	tc := func(stubs *string, f message.TypeCheckFormat) *message.Configure {
		return &message.Configure{ScriptName: "main.py", ProtocolVersion: 2, TypeCheck: true, TypeCheckStubs: stubs, TypeCheckFormat: f}
	}
	addCfg("tcx_host_call_unknown", "Type checking on: a call of an undefined host function", "ext(1)",
		tc(nil, 0), feed("ext(1)"), ret(vInt(1)))
	addCfg("tcx_host_call_stubbed", "Type checking with a stub for the host function, then a wrong argument", "ext('a')",
		tc(s("def ext(x: int) -> int: ..."), 0), feed("ext(1) + 1"), ret(vInt(1)), feed("ext('a')"))
	addCfg("tcx_stub_unicode_error", "Type checking with a unicode stub that has an error", "名前(1)",
		tc(s("def 名前(x: str) -> str: ...\nbad: int = 'é'"), 0), feed("名前(1)"))
	addCfg("tcx_input_typed", "Type checking on: a Feed input used with the wrong type", "v + 'a'",
		tc(nil, 0), feedWith("v + 'a'", []string{"v"}, vInt(1)))
	addCfg("tcx_after_load", "Type checking on: a dump loaded, then a feed using its names wrongly", "f('x')",
		tc(nil, 0), feed("def f(n: int) -> int:\n    return n"), fixed(&message.Dump{}), fixed(&message.Reset{}),
		fixed(tc(nil, 0)), load, feed("f('x')"), feed("f(2)"))
	addCfg("tcx_lookup_name", "Type checking on: an undefined name answered by a lookup", "missing + 1",
		tc(nil, 0), feed("missing + 1"), lookup(vInt(1)))
	addCfg("tcx_concise_multiline_error", "Concise type check output for an error spanning lines", "...",
		tc(nil, message.FormatConcise), feed("x: int = (\n    'a'\n    'b'\n)"))
	addCfg("tcx_long_line_error", "Type check error on a very long line", "...",
		tc(nil, 0), feed("x: int = '"+strings.Repeat("é", 300)+"'"))
	return out
}

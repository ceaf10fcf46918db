package codecv2

import (
	"strings"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// events decodes every response of a vector.
func events(t *testing.T, v *vector) []*message.ChildEvent {
	t.Helper()
	var out []*message.ChildEvent
	for i, h := range v.Responses {
		ev, err := DecodeEvent(unhex(t, h), codec.Limits{})
		if err != nil {
			t.Fatalf("%s: response %d: %v", v.Name, i, err)
		}
		out = append(out, ev)
	}
	return out
}

// lastComplete returns the last Complete event of a vector.
func lastComplete(t *testing.T, v *vector) *message.Complete {
	t.Helper()
	var c *message.Complete
	for _, ev := range events(t, v) {
		if x, ok := ev.Body.(*message.Complete); ok {
			c = x
		}
	}
	if c == nil {
		t.Fatalf("%s: no Complete event", v.Name)
	}
	return c
}

func lastError(t *testing.T, v *vector) *message.RaisedException {
	t.Helper()
	var e *message.RaisedException
	for _, ev := range events(t, v) {
		if x, ok := ev.Body.(*message.Error); ok {
			e = x.Exception
		}
	}
	if e == nil {
		t.Fatalf("%s: no Error event", v.Name)
	}
	return e
}

// TestVectorValues checks the decoded Complete value of a few dozen
// sessions against values written by hand from each snippet (quoted in the
// comments; see python_code in the vector).
func TestVectorValues(t *testing.T) {
	cases := map[string]string{
		"value_nested":                   `[{'k': (1, [2, {3}])}]`,                                            // [{'k': (1, [2, {3}])}]
		"value_list":                     `[1, 'a', None]`,                                                    // [1, 'a', None]
		"value_list_empty":               `[]`,                                                                // []
		"value_tuple":                    `(1, 2.5, 'x')`,                                                     // (1, 2.5, 'x')
		"value_tuple_empty":              `()`,                                                                // ()
		"value_dict":                     `{'a': 1, 2: 'b', (1, 2): [3]}`,                                     // {'a': 1, 2: 'b', (1, 2): [3]}
		"value_dict_insertion_order":     `{'z': 1, 'a': 2, 'm': 3}`,                                          // {'z': 1, 'a': 2, 'm': 3}
		"value_none_in_dict_key":         `{None: 1, (): 2, 1.5: 3, b'k': 4}`,                                 // {None: 1, (): 2, 1.5: 3, b"k": 4}
		"value_set":                      `{1, 2, 3}`,                                                         // {1, 2, 3}
		"value_set_order_strings":        `{'b', 'a', 'c'}`,                                                   // {'b', 'a', 'c'}
		"value_frozenset_in_set":         `{frozenset({1}), 2}`,                                               // {frozenset({1}), 2}
		"value_bool_in_containers":       `[True, False, 0, 1]`,                                               // [True, False, 0, 1]
		"value_bool_false":               `False`,                                                             // False
		"value_int_small":                `42`,                                                                // 42
		"value_int_negative":             `-7`,                                                                // -7
		"value_int_min_i64":              `-9223372036854775808`,                                              // -2**63 (still a plain int)
		"value_negative_zero_int":        `0`,                                                                 // -0
		"value_bigint_2_64":              `big:18446744073709551616`,                                          // 2**64
		"value_bigint_neg":               `big:-9223372036854775809`,                                          // -(2**63) - 1
		"value_bigint_big":               `big:1606938044258990275541962092341162602522202993782792835313721`, // 2**200 + 12345
		"value_float":                    `1.5`,                                                               // 1.5
		"value_float_inf":                `inf`,                                                               // float('inf')
		"value_float_neg_inf":            `-inf`,                                                              // float('-inf')
		"value_float_neg_zero":           `-0.0`,                                                              // -0.0
		"value_float_tiny":               `5e-324`,                                                            // 5e-324
		"value_str_empty":                `''`,                                                                // ''
		"value_unicode_surrogate_escape": `"\ufffd"`,                                                          // '\udc80' arrives as U+FFFD
		"value_bytes":                    `b"\x00\x01ab"`,                                                     // b'\x00\x01ab'
		"value_bytes_empty":              `b''`,                                                               // b''
		"value_none":                     `None`,                                                              // None
		"value_ellipsis":                 `Ellipsis`,                                                          // ...
		"value_not_implemented":          `NotImplemented`,                                                    // NotImplemented
		"value_empty_code":               `None`,                                                              // (no code)
		"value_deque":                    `[1, 2]`,                                                            // deque([1, 2]) is sent as a list
		"value_defaultdict":              `{'a': 1}`,                                                          // defaultdict(int, {'a': 1})
		"value_generator":                `[1]`,                                                               // (x for x in [1]) is consumed
		"value_enumerate_obj":            `[(0, 1)]`,                                                          // enumerate([1])
		"value_zip_obj":                  `[(1, 2)]`,                                                          // zip([1], [2])
		"value_map_obj":                  `['1']`,                                                             // map(str, [1])
		"value_namedtuple_collections":   `P(x=1, y=2)`,                                                       // P(1, 2)
		"value_namedtuple_sys_version":   `sys.version_info(major=3, minor=14, micro=0, releaselevel='final', serial=0)`,
		"value_date":                     `date(2024, 2, 29)`,                                 // date(2024, 2, 29)
		"value_date_min":                 `date(1, 1, 1)`,                                     // date(1, 1, 1)
		"value_datetime_naive":           `datetime(2024, 1, 2, 3, 4, 5, 6, off=naive, tz=-)`, // datetime(2024, 1, 2, 3, 4, 5, 6)
		"value_datetime_max":             `datetime(9999, 12, 31, 23, 59, 59, 999999, off=naive, tz=-)`,
		"value_datetime_aware_neg":       `datetime(2024, 1, 2, 0, 0, 0, 0, off=-12600, tz=-)`, // tzinfo=timezone(-timedelta(hours=3, minutes=30))
		"value_time":                     `time(13, 45, 30, 123456, off=naive, tz=-, fold=0)`,
		"value_time_aware_named":         `time(1, 2, 0, 0, off=3600, tz='X', fold=0)`, // time(1, 2, tzinfo=timezone(timedelta(hours=1), 'X'))
		"value_time_fold":                `time(1, 2, 3, 0, off=naive, tz=-, fold=1)`,
		"value_timedelta":                `timedelta(1, 2, 3)`,           // timedelta(days=1, seconds=2, microseconds=3)
		"value_timedelta_neg":            `timedelta(-1, 86399, 999999)`, // timedelta(microseconds=-1)
		"value_timedelta_zero":           `timedelta(0, 0, 0)`,
		"value_timezone_named":           `timezone(7200, 'CEST')`, // timezone(timedelta(hours=2), 'CEST')
		"value_timezone_utc":             `timezone(0, -)`,         // timezone.utc is an empty TimeZone
		"value_exception_value":          `ValueError('bad')`,
		"value_exception_noarg":          `KeyError()`,
		"value_exception_oserror":        `OSError('disk')`,
		"value_type_valueerror":          `<class 'ValueError'>`,
		"value_type_none_type":           `<class 'NoneType'>`,
		"value_type_path":                `<class 'PosixPath'>`,
		"value_type_list_dict":           `[<class 'list'>, <class 'dict'>, <class 'tuple'>, <class 'set'>, <class 'frozenset'>, <class 'str'>, <class 'bytes'>, <class 'float'>, <class 'range'>]`,
		"value_builtin_len":              `<built-in len>`,
		"value_builtin_functions_list":   `[<built-in len>, <built-in print>, <built-in isinstance>, <built-in sorted>, <built-in abs>]`,
		"value_path":                     `Path('/a/b.txt')`,
		"value_path_relative":            `Path('rel/x')`,
		"value_range":                    `repr<range(0, 3)>`,
		"value_type_sandbox_class":       `repr<<class 'Point'>>`, // a sandbox class object is sent as a repr
		"value_dataclass_instance":       `sandbox:P@dataclass(x=3, y='d')`,
		"sandbox_dataclass_frozen":       `sandbox:F@dataclass(a=1)`,
		"sandbox_instance_no_init_attrs": `sandbox:P()`,
		"sandbox_instance_nested_attrs":  `sandbox:P(me=cycle#2<...>, l=[1])`,
		"value_cycle_list":               `[cycle#1<[...]>]`, // a = []; a.append(a); a
		"value_cycle_dict":               `{'self': cycle#1<{...}>}`,
		"cycle_tuple":                    `([cycle#2<(...)>],)`, // l = []; t = (l,); l.append(t); t
		"cycle_instance":                 `sandbox:N(n=cycle#2<...>)`,
		"value_shared_subobject":         `[[1], [1]]`, // s = [1]; [s, s]
		"input_file_handle":              `<file '/x.txt' r 0>`,
		"input_function":                 `<function ext>`,
		"input_class_instance_host":      `(1, host:Widget(a=1))`,
		"input_named_tuple":              `(1, 2, os.stat_result(a=1, b=2))`,
		"host_type_eager_attrs":          `('w', <host class 'Widget' attrs(KIND='w')>)`,
	}
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	for name, want := range cases {
		c := lastComplete(t, vectorByName(t, name))
		if got := show(&c.Values, c.Value); got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}

// TestVectorShapes checks graph shape where rendering alone would not:
// sharing, identities and class nodes.
func TestVectorShapes(t *testing.T) {
	// s = [1]; [s, s]: protocol 2 writes the shared list twice, so it
	// decodes to two distinct (equal) nodes.
	c := lastComplete(t, vectorByName(t, "value_shared_subobject"))
	outer := c.Values.Node(c.Value)
	if outer.Kind != value.KindList || len(outer.Refs()) != 2 || outer.Refs()[0] == outer.Refs()[1] {
		t.Errorf("shared sub-object: %+v", outer)
	}

	// p = P(); [p, p]: one instance sent twice, with one instance id; the
	// two copies share one class node.
	c = lastComplete(t, vectorByName(t, "sandbox_instance_identity"))
	l := c.Values.Node(c.Value)
	a := c.Values.Node(l.Refs()[0]).Ext().(*value.ClassInstance)
	b := c.Values.Node(l.Refs()[1]).Ext().(*value.ClassInstance)
	if a.InstanceID != b.InstanceID || a.InstanceID.IsZero() || a.Class != b.Class {
		t.Errorf("instance identity: %+v %+v", a, b)
	}
	typ := c.Values.Node(a.Class).Ext().(*value.Type)
	if typ.Name != "P" || typ.Origin != value.OriginSandbox || typ.ID.IsZero() || typ.Attrs != nil {
		t.Errorf("class node: %+v", typ)
	}
	if err := c.Values.CheckStructure(c.Value); err != nil {
		t.Error(err)
	}

	// n.n = n: the cycle leaf carries the instance placeholder and the
	// worker's identity.
	c = lastComplete(t, vectorByName(t, "cycle_instance"))
	ci := c.Values.Node(c.Value).Ext().(*value.ClassInstance)
	cyc := c.Values.Node(ci.Attrs[0].Value)
	if cyc.Kind != value.KindCycle || cyc.Text() != "..." || cyc.Num != 2 {
		t.Errorf("cycle: %+v", cyc)
	}

	// Every decoded graph is in post-order with valid class references.
	for _, v := range loadVectors(t) {
		for _, ev := range events(t, v) {
			g, roots := valueRoots(ev.Body)
			if g == nil {
				continue
			}
			ids := make([]value.NodeID, len(roots))
			for i, r := range roots {
				ids[i] = *r
			}
			if err := g.Check(ids...); err != nil {
				t.Errorf("%s: %v", v.Name, err)
			}
		}
	}
}

// TestVectorErrors checks decoded exceptions: type, message, structured
// data and traceback frames.
func TestVectorErrors(t *testing.T) {
	cases := []struct {
		name, typ, msg string
		frames         int
	}{
		{"error_zero_division", "ZeroDivisionError", "division by zero", 1},
		{"error_key_error", "KeyError", "k", 1},
		{"error_assert", "AssertionError", "assert 1 == 2", 1},
		{"error_assert_annotations_5", "AssertionError", "assert 'abcd… == 'zzzz…", 1},
		{"error_base_exception", "BaseException", "b", 1},
		{"error_chained", "ValueError", "wrapped", 1},
		{"error_file_not_found", "FileNotFoundError", "nf", 1},
		{"error_nested_traceback", "ValueError", "deep", 3},
		{"error_method_frame", "RuntimeError", "in method", 2},
		{"error_lambda_frame", "ZeroDivisionError", "division by zero", 2},
		{"error_syntax", "SyntaxError", "unexpected EOF while parsing", 1},
		{"error_syntax_second_line", "SyntaxError", "Expected an expression", 1},
		{"error_unsupported_syntax", "NotImplementedError", "The monty syntax parser does not yet support pattern matching (match statements)", 1},
		{"error_system_exit", "RuntimeError", "Internal error in monty: exceptions can only be called with zero or one string argument", 0},
		{"error_json_decode", "json.JSONDecodeError", "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)", 1},
		{"error_unicode_decode", "UnicodeDecodeError", "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte", 1},
		{"presence_raised_empty_message", "ValueError", "", 1},
		{"print_stderr", "TypeError", "print() 'file' argument is not supported", 1},
		{"value_str_method", "AttributeError", "'str' object has no attribute 'upper'", 1},
		{"input_cycle_rejected", "RuntimeError", "invalid input type: 'Cycle' is not a valid input value", 0},
	}
	for _, tc := range cases {
		e := lastError(t, vectorByName(t, tc.name))
		if e.Type != tc.typ || e.Message == nil || *e.Message != tc.msg || len(e.Traceback) != tc.frames {
			t.Errorf("%s: got %s %q with %d frames", tc.name, e.Type, e.Msg(), len(e.Traceback))
		}
	}

	// Details of a few.
	e := lastError(t, vectorByName(t, "error_nested_traceback"))
	names := []string{}
	for _, f := range e.Traceback {
		names = append(names, *f.FrameName)
	}
	if strings.Join(names, ",") != "<module>,a,b" || *e.Traceback[2].PreviewLine != "    raise ValueError('deep')" ||
		e.Traceback[2].Start != (message.CodeLoc{Line: 4, Column: 11}) || !e.Traceback[2].HideCaret {
		t.Errorf("nested traceback: %+v", e.Traceback)
	}
	e = lastError(t, vectorByName(t, "error_syntax"))
	if f := e.Traceback[0]; f.FrameName != nil || !f.HideFrameName || f.Filename != "<python-input-0>" {
		t.Errorf("syntax error frame: %+v", f)
	}
	if e := lastError(t, vectorByName(t, "error_assert_annotations_off")); e.Message != nil {
		t.Errorf("assert with annotations off has a message: %q", *e.Message)
	}
	e = lastError(t, vectorByName(t, "error_unicode_decode_offset"))
	if u, ok := e.Data.(*message.UnicodeErrorData); !ok || u.Encoding != "utf-8" || string(u.ObjectBytes) != "ab\xff\xfe" ||
		u.ObjectStr != nil || u.Start != 2 || u.End != 3 || u.Reason != "invalid start byte" {
		t.Errorf("unicode data: %#v", e.Data)
	}
	e = lastError(t, vectorByName(t, "error_unicode_encode"))
	if u, ok := e.Data.(*message.UnicodeErrorData); !ok || u.ObjectStr == nil || *u.ObjectStr != "é" || u.ObjectBytes != nil {
		t.Errorf("unicode encode data: %#v", e.Data)
	}
	e = lastError(t, vectorByName(t, "error_json_decode"))
	if j, ok := e.Data.(*message.JSONErrorData); !ok || j.Doc == nil || *j.Doc != "{bad" || j.Pos != 1 || j.Lineno != 1 || j.Colno != 2 {
		t.Errorf("json data: %#v", e.Data)
	}
	e = lastError(t, vectorByName(t, "presence_json_error_empty_doc"))
	if j, ok := e.Data.(*message.JSONErrorData); !ok || j.Doc == nil || *j.Doc != "" {
		t.Errorf("empty json doc lost its presence: %#v", e.Data)
	}
}

// TestVectorPrints checks Print events: one segment each, on stdout.
func TestVectorPrints(t *testing.T) {
	cases := map[string][]string{
		"print_two_lines":         {"a\nb\n"},
		"print_empty":             {"\n"},
		"print_multi_args":        {"1-x-None\n"},
		"print_no_newline":        {"a"},
		"print_partial_then_line": {"ab\n"},
		"print_flush_interval_0":  {"a\n", "b\n", "c"},
		"print_before_error":      {"before\n"},
		"print_before_suspension": {"before\n", "after\n"},
		"print_unicode":           {"hé \U0001F600\n"},
		"print_flush_param":       {"a\nb\n"},
	}
	for name, want := range cases {
		var got []string
		for _, ev := range events(t, vectorByName(t, name)) {
			p, ok := ev.Body.(*message.Print)
			if !ok {
				continue
			}
			if len(p.Segments) != 1 || p.Segments[0].Stream != message.StreamStdout {
				t.Errorf("%s: segments %+v", name, p.Segments)
			}
			if ev.TotalExecutionMicros != 0 || ev.MaxSuspensions != nil {
				t.Errorf("%s: Print carries metadata", name)
			}
			got = append(got, p.Segments[0].Text)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
	// 20000 x's and a newline in chunks of at most 8192 bytes.
	var total int
	for _, ev := range events(t, vectorByName(t, "print_chunking_8192")) {
		if p, ok := ev.Body.(*message.Print); ok {
			if n := len(p.Segments[0].Text); n > 8192 {
				t.Errorf("chunk of %d bytes", n)
			}
			total += len(p.Segments[0].Text)
		}
	}
	if total != 20001 {
		t.Errorf("chunked print: %d bytes", total)
	}
}

// TestVectorMetadata checks the ChildEvent fields 20-23.
func TestVectorMetadata(t *testing.T) {
	evs := events(t, vectorByName(t, "value_nested"))
	c := evs[1]
	if c.TotalExecutionMicros == 0 || c.MaxSuspensions == nil || *c.MaxSuspensions != 1000 ||
		c.MaxDurationMicros != nil || c.RestoredScriptName != nil {
		t.Errorf("Complete metadata: %+v", c)
	}
	// Load of an unfed dump: restored_script_name present even though empty.
	var found bool
	for _, ev := range events(t, vectorByName(t, "presence_load_unfed_empty_script_name")) {
		if _, ok := ev.Body.(*message.Ok); ok && ev.RestoredScriptName != nil {
			found = *ev.RestoredScriptName == ""
		}
	}
	if !found {
		t.Error("presence_load_unfed_empty_script_name: no Ok with an empty restored_script_name")
	}
}

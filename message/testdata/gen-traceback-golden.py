#!/usr/bin/env python3
"""Generates message/testdata/traceback_golden.json for traceback_test.go.

Each case pairs the RaisedException the worker sends (its StackFrames) with
the traceback text the worker's CLI prints for the same code. Run from the
repository root:

    python3 message/testdata/gen-traceback-golden.py [MONTY] [VECTORS_DIR] \
        > message/testdata/traceback_golden.json

MONTY defaults to .monty/bin/monty (the released worker) and VECTORS_DIR to
the recorded protocol-2 vectors. The tests read only the JSON this writes.
Running it needs Python 3 and the worker; it takes about half a minute.

Frames come from two sources:
  - "vector:NAME": the Error event recorded in VECTORS_DIR/NAME.json
    (decoded from its response_frames_hex);
  - "probe": the Error event of a fresh `monty subprocess` run of the code.
The expected text is what `monty -c CODE` prints on stderr after the timing
prefix ("12.3ms ❯ error: ", or "error:\\n" for a SyntaxError). The worker
names the fed code "<python-input-0>" and the CLI names it "<string>"; the
frames here have their filename replaced by "<string>" to match.
"""

import json
import os
import re
import struct
import subprocess
import sys

MONTY = sys.argv[1] if len(sys.argv) > 1 else '.monty/bin/monty'
VECTORS = sys.argv[2] if len(sys.argv) > 2 else '/work/shared/vectors/v2'

VECTOR_CASES = [
    'error_nested_traceback',
    'limit_recursion_default',
    'error_syntax',
    'error_syntax_second_line',
    'presence_syntax_error_empty_code_line',
    'error_custom_exception_class',
    'error_unsupported_syntax',
    'error_lambda_frame',
    'error_method_frame',
    'error_assert',
    'error_key_error',
    'error_json_decode',
    'error_reraise',
    'error_chained',
    'error_zero_division',
    'presence_raised_empty_message',
    'error_unicode_decode',
    'error_stop_iteration',
    'print_before_error',
]

PROBES = [
    ('probe_no_message', "raise ValueError()"),
    ('probe_multiline_message', "raise ValueError('a\\nb')"),
    ('probe_repeat_once', "def r(n):\n    if n == 0:\n        raise ValueError('x')\n    return r(n - 1)\nr(4)"),
    ('probe_repeat_three', "def r(n):\n    if n == 0:\n        raise ValueError('x')\n    return r(n - 1)\nr(3)"),
    ('probe_mutual_recursion', "def a(n):\n    return b(n - 1)\ndef b(n):\n    if n < 0:\n        1/0\n    return a(n)\na(3)"),
    ('probe_multiline_binop', "x = (1 +\n     2 +\n     None)"),
    ('probe_multiline_call_elided', "def f(a, b):\n    return a / b\nf(\n    1,\n    0,\n)"),
    ('probe_backslash_continuation', "x = 1 +\\\n  None"),
    ('probe_continuation_line', "x = [\n  1/0]"),
    ('probe_tab_indent', "if True:\n\t1/0"),
    ('probe_form_feed', "\x0c1/0"),
    ('probe_trailing_space', "1/0 "),
    ('probe_non_ascii_column', "s = '\u00e9\u00e9\u00e9'; s + 1"),
    ('probe_cjk_identifier', "\u53d8\u91cf = 1/0"),
    ('probe_unexpected_indent', "\tx = 1"),
    ('probe_nbsp_syntax', "x = (\n\u00a01/0)"),
    ('probe_import_error', "import nosuchmod"),
    ('probe_attribute_error', "x = 1\nx.foo"),
    ('probe_assert_message', "assert 1 == 2, 'msg'"),
    ('probe_deep_function', "def f():\n    return (\n        1/0\n    )\nf()"),
    ('probe_crlf', "x = 1\r\ny = x +\\\r\n  None"),
    # Shapes of cmd/montygo/testdata/tracebacks/14-probe.py (but its
    # 1000-frame recursions, which limit_recursion_default and
    # probe_recursion_two_lines stand for).
    ('probe_nested_func', "def a():\n    def b():\n        raise ValueError('x')\n    b()\na()"),
    ('probe_class_method', 'class C:\n    def m(self):\n        return 1/0\nC().m()'),
    ('probe_staticmethod', "class C:\n    @staticmethod\n    def m():\n        return {}['k']\nC.m()"),
    ('probe_lambda', 'f = lambda x: x / 0\nf(1)'),
    ('probe_lambda_inline', '(lambda: 1/0)()'),
    ('probe_listcomp', '[1/x for x in [1, 0]]'),
    ('probe_dictcomp', '{x: 1/x for x in [0]}'),
    ('probe_genexp', 'list(1/x for x in [0])'),
    ('probe_generator', "def g():\n    yield 1\n    raise KeyError('k')\nfor x in g():\n    pass"),
    ('probe_generator_next', 'def g():\n    yield 1/0\nnext(g())'),
    ('probe_decorator', 'def d(f):\n    def w(*a):\n        return f(*a)\n    return w\n@d\ndef h(x):\n    return x + None\nh(1)'),
    ('probe_closure', 'def outer():\n    y = 0\n    def inner():\n        return 1 / y\n    return inner\nouter()()'),
    ('probe_raise_from', "try:\n    1/0\nexcept ZeroDivisionError as e:\n    raise ValueError('v') from e"),
    ('probe_raise_from_none', "try:\n    1/0\nexcept ZeroDivisionError:\n    raise ValueError('v') from None"),
    ('probe_implicit_chain', "try:\n    1/0\nexcept ZeroDivisionError:\n    raise ValueError('v')"),
    ('probe_bare_raise', 'try:\n    1/0\nexcept ZeroDivisionError:\n    raise'),
    ('probe_bare_raise_no_active', 'raise'),
    ('probe_bare_raise_in_func', 'def f():\n    raise\nf()'),
    ('probe_nonstr_args_int', 'raise ValueError(42)'),
    ('probe_nonstr_args_tuple', "raise ValueError(1, 'a')"),
    ('probe_nonstr_args_none', 'raise ValueError(None)'),
    ('probe_nonstr_args_list', "raise ValueError([1, 'x'])"),
    ('probe_exception_empty_str', "raise ValueError('')"),
    ('probe_custom_exc', "class MyErr(Exception):\n    pass\nraise MyErr('boom')"),
    ('probe_custom_exc_noarg', 'class MyErr(Exception):\n    pass\nraise MyErr'),
    ('probe_custom_exc_str', "class MyErr(Exception):\n    def __str__(self):\n        return 'custom'\nraise MyErr('boom')"),
    ('probe_custom_exc_subclass', 'class A(ValueError):\n    pass\nclass B(A):\n    pass\nraise B(1, 2)'),
    ('probe_keyerror_str', "{}['a']"),
    ('probe_keyerror_int', '{}[1]'),
    ('probe_keyerror_tuple', '{}[(1, 2)]'),
    ('probe_keyerror_empty', "raise KeyError('')"),
    ('probe_keyerror_noargs', 'raise KeyError()'),
    ('probe_keyerror_quote', '{}["it\'s"]'),
    ('probe_keyerror_two', "raise KeyError('a', 'b')"),
    ('probe_fstring_err', "x = f'{1/0}'"),
    ('probe_fstring_nested', "y = 5\nx = f'a{y + None}b'"),
    ('probe_fstring_name', "x = f'{undefined_var}'"),
    ('probe_multiline_call', 'def f(a, b):\n    return a + b\nf(\n    1,\n    None,\n)'),
    ('probe_multiline_subscript', "d = {}\nx = d[\n    'k'\n]"),
    ('probe_attr_chain', 'class A:\n    pass\na = A()\na.b.c.d'),
    ('probe_attr_chain_multiline', 'class A:\n    pass\na = A()\nx = (a\n    .b\n    .c)'),
    ('probe_method_call_chain', "'abc'.upper().nope()"),
    ('probe_unicode_ident', "变量 = 1\n变量 + 'a'"),
    ('probe_wide_chars_before', "s = '日本語'; t = s + 1"),
    ('probe_combining_before', "s = 'éé'; t = s + 1"),
    ('probe_emoji_before', "s = '😀😀'; t = s + 1"),
    ('probe_tab_inside', "x = 1\ny =\t'a' +\t1"),
    ('probe_tab_indent_func', 'def f():\n\treturn 1/0\nf()'),
    ('probe_long_line', 'x = 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + None'),
    ('probe_very_long_line', "x = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' + 1"),
    ('probe_name_err', 'print(undefined_thing)'),
    ('probe_name_err_suggest', 'values = 1\nprint(valuse)'),
    ('probe_name_err_suggest_call', 'def compute():\n    pass\ncomptue()'),
    ('probe_name_err_builtin_suggest', "pritn('x')"),
    ('probe_attr_err_suggest', 'x = [1]\nx.apend(2)'),
    ('probe_attr_err_module', 'import json\njson.dumsp(1)'),
    ('probe_unbound_local', 'def f():\n    print(x)\n    x = 1\nf()'),
    ('probe_syntax_unterminated_str', "x = 'abc"),
    ('probe_syntax_unterminated_triple', "x = '''abc\ndef"),
    ('probe_syntax_eof_paren', 'x = (1,\n2'),
    ('probe_syntax_unmatched', 'x = 1)'),
    ('probe_syntax_indent_expected', 'def f():\nreturn 1'),
    ('probe_syntax_unindent', 'if True:\n        x = 1\n    y = 2'),
    ('probe_syntax_invalid', 'x = = 1'),
    ('probe_syntax_col0', '= 1'),
    ('probe_syntax_eof_colon', 'if True:'),
    ('probe_syntax_eof_colon_nl', 'if True:'),
    ('probe_syntax_keyword', 'class = 1'),
    ('probe_syntax_bad_token', 'x = 1 $ 2'),
    ('probe_syntax_fstring', "x = f'{'"),
    ('probe_syntax_missing_comma', 'x = [1 2]'),
    ('probe_syntax_assign_literal', '1 = x'),
    ('probe_syntax_unicode_line', 'é = (1 +'),
    ('probe_syntax_tab_line', 'x =\t(1 +'),
    ('probe_error_line1_col0', 'undefined'),
    ('probe_error_eof', 'x = 1\ny = 2\n1/0'),
    ('probe_error_eof_newline', 'x = 1\ny = 2\n1/0'),
    ('probe_error_eof_comment', '1/0\n# comment'),
    ('probe_int_parse', "int('abc')"),
    ('probe_type_error_call', 'def f(a):\n    pass\nf(1, 2)'),
    ('probe_type_error_missing_arg', 'def f(a, b):\n    pass\nf(1)'),
    ('probe_type_error_kw', 'def f(a):\n    pass\nf(b=1)'),
    ('probe_index_error', '[][0]'),
    ('probe_assert_plain', 'assert False'),
    ('probe_assert_tuple_msg', 'assert False, (1, 2)'),
    ('probe_not_implemented', 'raise NotImplementedError'),
    ('probe_raise_class', 'raise ValueError'),
    ('probe_raise_instance_in_func', "def f():\n    e = ValueError('x')\n    raise e\nf()"),
    ('probe_reraise_in_func', 'def f():\n    try:\n        1/0\n    except Exception:\n        raise\nf()'),
    ('probe_finally_error', 'try:\n    pass\nfinally:\n    1/0'),
    ('probe_with_error', 'class C:\n    def __enter__(self):\n        return self\n    def __exit__(self, *a):\n        return False\nwith C():\n    1/0'),
    ('probe_error_in_except', 'try:\n    1/0\nexcept Exception:\n    undefined_y'),
    ('probe_exc_in_default_arg', 'def f(a=1/0):\n    pass'),
    ('probe_exc_class_body', 'class C:\n    x = 1/0'),
    ('probe_sort_key', 'sorted([1, 2], key=lambda x: x / 0)'),
    ('probe_map_lambda', 'list(map(lambda x: x.foo, [1]))'),
    ('probe_str_method_err', "'a'.join([1])"),
    ('probe_unicode_message', "raise ValueError('ünïcödé 日本')"),
    ('probe_message_newline_trailing', "raise ValueError('a\\n')"),
    ('probe_message_crlf', "raise ValueError('a\\r\\nb')"),
    ('probe_nested_call_args', 'def f(x):\n    return x\nf(f(f(1/0)))'),
    ('probe_binop_caret', 'a = 1\nb = 0\nc = a / b'),
    ('probe_subscript_caret', 'x = [1, 2]\ny = x[5]'),
    ('probe_mutual_multi', 'def a(n):\n    if n: return b(n-1)\n    raise ValueError(n)\ndef b(n):\n    return a(n)\na(5)'),
    ('probe_stop_iteration', 'next(iter([]))'),
    ('probe_exception_group_like', "raise Exception('a', 'b')"),
    ('probe_base_exception', "raise BaseException('x')"),
    ('probe_system_exit', 'raise SystemExit(3)'),
    ('probe_keyboard_int', 'raise KeyboardInterrupt'),
    ('probe_timeout_err', "raise TimeoutError('t')"),
    ('probe_exc_repr_str_quotes', 'raise ValueError("it\'s")'),
    ('probe_lookup_attr_none', 'None.x'),
    ('probe_call_none', 'x = None\nx()'),
    ('probe_deep_indent', 'if True:\n    if True:\n        if True:\n            1/0'),
    ('probe_multi_stmt_line', 'x = 1; y = 0; z = x / y'),
    ('probe_semicolon_later', 'a = 1; b = a + None'),
    ('probe_trailing_ws_lines', 'x = 1   \ny = x / 0   '),
    ('probe_blank_lines_before', '\n\n\n1/0'),
    ('probe_comment_line_after_expr', 'x = (1 +  # c\n     None)'),
    ('probe_multiline_string_before', "s = '''a\nb'''\n1/0"),
    ('probe_walrus', 'if (n := 1/0):\n    pass'),
    ('probe_ternary', 'x = 1 if 1/0 else 2'),
    ('probe_starred', 'f = lambda a: a\nf(*None)'),
    ('probe_kwargs_none', 'f = lambda **k: k\nf(**None)'),
    ('probe_unpack_err', 'a, b = [1]'),
    ('probe_unpack_err2', 'a, b = [1, 2, 3]'),
    ('probe_augassign', "x = 'a'\nx += 1"),
    ('probe_compare_err', "1 < 'a'"),
    ('probe_hash_list', '{[1]: 1}'),
    ('probe_getattr_builtin', "getattr(1, 'x')"),
    ('probe_int_huge', "int('9' * 5000)"),
    ('probe_name_in_except', 'try:\n    1/0\nexcept Exception:\n    undefined_y'),
    ('probe_name_in_fstring_call', "x = f'{missing(1)}'"),
    ('probe_name_in_lambda_call', 'f = lambda: missing(2)\nf()'),
    ('probe_name_in_comp_call', '[missing(x) for x in [1]]'),
    ('probe_name_in_genexp_call', 'list(missing(x) for x in [1])'),
    ('probe_name_in_decorator', '@missing\ndef f():\n    pass'),
    ('probe_name_in_decorator_call', '@missing(1)\ndef f():\n    pass'),
    ('probe_name_in_default', 'def f(a=missing(1)):\n    pass'),
    ('probe_name_attr_call', 'missing.attr(1)'),
    ('probe_name_subscript_call', 'missing[0](1)'),
    ('probe_name_call_call', 'missing(1)(2)'),
    ('probe_name_kwarg_call', 'print(sep=missing(1))'),
    ('probe_name_tab_before_call', 'if True:\n\tx = missing(1)'),
    ('probe_name_wide_before_call', "s = '日本'; missing(1)"),
    ('probe_name_emoji_before_call', "s = '😀'; missing(1)"),
    ('probe_name_combining_before_call', "s = 'é'; missing(1)"),
    ('probe_name_unicode_call', '变量(1)'),
    ('probe_name_unicode_read', 'x = 变量'),
    ('probe_name_nfkc_read', 'x = ﬁle'),
    ('probe_name_method_self', 'class C:\n    def m(self):\n        return missing(self)\nC().m()'),
    ('probe_name_in_generator_call', 'def g():\n    yield missing(1)\nnext(g())'),
    ('probe_name_in_closure', 'def o():\n    def i():\n        return missing(1)\n    return i\no()()'),
    ('probe_name_walrus', 'if (y := missing(1)):\n    pass'),
    ('probe_name_starred_call', 'print(*missing(1))'),
    ('probe_name_await_less', 'x = [missing\n(1)]'),
    ('probe_name_long_line', 'x = 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + missing(1)'),
    ('probe_name_in_assert', 'assert missing(1)'),
    ('probe_name_in_raise', 'raise missing(1)'),
    ('probe_name_in_raise_from', "raise ValueError('x') from missing(1)"),
    ('probe_name_in_with', 'with missing(1):\n    pass'),
    ('probe_name_in_for', 'for x in missing(1):\n    pass'),
    ('probe_name_in_slice', '[1][missing(1):]'),
    ('probe_name_in_dict_key', '{missing(1): 1}'),
    ('probe_name_in_ternary', 'x = 1 if missing(1) else 2'),
    ('probe_name_in_and', 'x = True and missing(1)'),
    ('probe_name_in_not', 'x = not missing(1)'),
    ('probe_name_in_comparison', 'x = 1 < missing(1) < 3'),
    ('probe_name_in_del', 'del missing'),
    ('probe_name_global', 'def f():\n    global g\n    return g\nf()'),
    ('probe_name_nonlocal_unbound', 'def o():\n    x = 1\n    def i():\n        nonlocal x\n        del x\n        return x\n    return i()\no()'),
    ('probe_long_traceback_distinct', 'def f0():\n    return f1()\ndef f1():\n    return f2()\ndef f2():\n    return f3()\ndef f3():\n    return f4()\ndef f4():\n    return f5()\ndef f5():\n    return f6()\ndef f6():\n    return f7()\ndef f7():\n    return f8()\ndef f8():\n    return f9()\ndef f9():\n    return f10()\ndef f10():\n    return f11()\ndef f11():\n    return f12()\ndef f12():\n    return f13()\ndef f13():\n    return f14()\ndef f14():\n    return f15()\ndef f15():\n    return f16()\ndef f16():\n    return f17()\ndef f17():\n    return f18()\ndef f18():\n    return f19()\ndef f19():\n    return f20()\ndef f20():\n    return f21()\ndef f21():\n    return f22()\ndef f22():\n    return f23()\ndef f23():\n    return f24()\ndef f24():\n    return f25()\ndef f25():\n    return f26()\ndef f26():\n    return f27()\ndef f27():\n    return f28()\ndef f28():\n    return f29()\ndef f29():\n    return f30()\ndef f30():\n    1/0\nf0()'),
    ('probe_recursion_two_lines', 'def f(n):\n    if n % 2:\n        return f(n + 1)\n    return f(n + 1)\nf(0)'),
    ('probe_recursion_method', 'class C:\n    def __repr__(self):\n        return repr(self)\nrepr(C())'),
    ('probe_repeat_exactly_four', "def r(n):\n    if n == 0:\n        raise ValueError('x')\n    return r(n - 1)\nr(5)"),
    ('probe_error_in_str_dunder', 'class C:\n    def __str__(self):\n        return 1/0\nstr(C())'),
    ('probe_error_in_eq', 'class C:\n    def __eq__(self, o):\n        return 1/0\nC() == 1'),
    ('probe_error_in_getitem', "class C:\n    def __getitem__(self, k):\n        raise KeyError(k)\nC()['zz']"),
    ('probe_error_in_init', 'class C:\n    def __init__(self):\n        self.x = 1/0\nC()'),
    ('probe_error_in_property', 'class C:\n    @property\n    def p(self):\n        return 1/0\nC().p'),
    ('probe_error_in_iter', "class C:\n    def __iter__(self):\n        raise TypeError('no')\nlist(C())"),
    ('probe_error_in_len', 'class C:\n    def __len__(self):\n        return -1\nlen(C())'),
    ('probe_error_in_hash', 'class C:\n    def __hash__(self):\n        return 1/0\n{C()}'),
    ('probe_exc_args_dict', "raise ValueError({'a': 1})"),
    ('probe_exc_args_bytes', "raise ValueError(b'x\\x00')"),
    ('probe_exc_args_float', 'raise ValueError(1.5)'),
    ('probe_exc_args_exc', "raise ValueError(KeyError('k'))"),
    ('probe_keyerror_nested_quote', 'raise KeyError(\'a"b\\\'c\')'),
    ('probe_keyerror_newline', "raise KeyError('a\\nb')"),
    ('probe_keyerror_none', 'raise KeyError(None)'),
    ('probe_keyerror_unicode', "{}['日本']"),
    ('probe_str_with_tab_message', "raise ValueError('a\\tb')"),
    ('probe_message_only_spaces', "raise ValueError('   ')"),
    ('probe_custom_exc_repr_args', "class E(Exception):\n    def __init__(self, a, b):\n        super().__init__(a, b)\nraise E(1, 'two')"),
    ('probe_custom_exc_module_name', "class E(Exception):\n    pass\nclass F(E):\n    pass\ntry:\n    raise F('x')\nexcept E as e:\n    raise"),
    ('probe_raise_non_exception', 'raise 1'),
    ('probe_raise_from_non_exception', 'raise ValueError from 1'),
    ('probe_raise_type_not_exc', 'raise int'),
    ('probe_exception_in_nested_try', 'try:\n    try:\n        1/0\n    finally:\n        pass\nexcept KeyError:\n    pass'),
    ('probe_reraise_after_handling', 'try:\n    1/0\nexcept ZeroDivisionError as e:\n    err = e\nraise err'),
    ('probe_reraise_in_nested_func', 'def f():\n    try:\n        1/0\n    except Exception:\n        g()\ndef g():\n    raise\nf()'),
    ('probe_multiline_def_call', 'def f(\n    a,\n    b,\n):\n    return a / b\nf(\n    1,\n    0)'),
    ('probe_multiline_dict_lit', "x = {\n    'a': 1,\n    'b': 1/0,\n}"),
    ('probe_multiline_list_lit_long', 'x = [\n    1,\n    2,\n    3,\n    4,\n    1/0,\n]'),
    ('probe_multiline_binop_long', "x = (1 +\n     2 +\n     3 +\n     4 +\n     'a')"),
    ('probe_multiline_call_nested', 'def f(*a):\n    return 1/0\nf(f(\n    1),\n  2)'),
    ('probe_multiline_string_concat', "x = ('a'\n     'b') + 1"),
    ('probe_multiline_subscript_chain', 'x = [[1]]\ny = x[0][\n    5]'),
    ('probe_multiline_attr_method', "x = 'a'\ny = (x\n     .upper()\n     .nope())"),
    ('probe_multiline_indented_func', 'def f():\n    x = (1 +\n         None)\nf()'),
    ('probe_multiline_tab_indent', 'def f():\n\tx = (1 +\n\t\tNone)\nf()'),
    ('probe_multiline_mixed_indent', 'def f():\n    x = (1 +\n\tNone)\nf()'),
    ('probe_multiline_in_class', 'class C:\n    def m(self):\n        return (\n            1 /\n            0)\nC().m()'),
    ('probe_deep_indent_caret', 'if True:\n    if True:\n        if True:\n            if True:\n                x = 1 + None'),
    ('probe_tab_then_spaces', 'if True:\n\t    x = 1 + None'),
    ('probe_tab_in_middle', 'x = 1\t+ None'),
    ('probe_tabs_before_caret', "x = '\t\t' + 1"),
    ('probe_fullwidth_space_string', "x = '\u3000' + 1"),
    ('probe_zwj_string', "x = '\u200d' + 1"),
    ('probe_rtl_string', "x = 'שלום' + 1"),
    ('probe_astral_ident', "𝑥 = 1\n𝑥 + 'a'"),
    ('probe_cr_in_string', "x = 'a\\rb' + 1"),
    ('probe_formfeed_indent', 'if True:\n    \x0cx = 1 + None'),
    ('probe_unicode_in_comment_before', 'x = 1 + None  # ünïcödé'),
    ('probe_fstring_format_spec', "x = f'{1:{None}}'"),
    ('probe_fstring_conversion', "class C:\n    def __repr__(self):\n        return 1/0\nx = f'{C()!r}'"),
    ('probe_fstring_multiline', "x = f'''a\n{1/0}\nb'''"),
    ('probe_fstring_nested_quotes', 'x = f"{\'a\' + 1}"'),
    ('probe_fstring_debug', "x = f'{1/0=}'"),
    ('probe_fstring_bad_spec', "x = f'{1:zz}'"),
    ('probe_syntax_unterminated_dq', 'x = "abc'),
    ('probe_syntax_unterminated_line2', "x = 1\ny = 'abc"),
    ('probe_syntax_unterminated_fstring', "x = f'abc"),
    ('probe_syntax_eof_bracket', 'x = [1,'),
    ('probe_syntax_eof_brace', 'x = {'),
    ('probe_syntax_mismatch', 'x = (1]'),
    ('probe_syntax_indent_tab', 'if True:\n\tx = 1\n        y = 2'),
    ('probe_syntax_unexpected_indent_line2', 'x = 1\n    y = 2'),
    ('probe_syntax_dedent_eof', 'def f():\n    pass\n  x'),
    ('probe_syntax_empty_body', 'def f():\n\nx = 1'),
    ('probe_syntax_lambda_stmt', 'f = lambda: return 1'),
    ('probe_syntax_walrus_bad', 'x := 1'),
    ('probe_syntax_star_assign', '*a = 1'),
    ('probe_syntax_double_star', 'x = **y'),
    ('probe_syntax_unicode_bad_char', 'x = 1 € 2'),
    ('probe_syntax_unicode_line_col', "é = '日本' +"),
    ('probe_syntax_backslash_eof', 'x = 1 + \\'),
    ('probe_syntax_invalid_decimal', 'x = 1_'),
    ('probe_syntax_leading_zero', 'x = 01'),
    ('probe_syntax_invalid_escape_bytes', "x = b'é'"),
    ('probe_syntax_async_outside', 'await x'),
    ('probe_syntax_yield_outside', 'yield 1'),
    ('probe_syntax_break_outside', 'break'),
    ('probe_syntax_continue_outside', 'continue'),
    ('probe_syntax_nonlocal_module', 'nonlocal x'),
    ('probe_syntax_dup_arg', 'def f(a, a):\n    pass'),
    ('probe_syntax_kw_repeat', 'f(a=1, a=2)'),
    ('probe_syntax_pos_after_kw', 'f(a=1, 2)'),
    ('probe_syntax_long_line', 'x = 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + +'),
    ('probe_syntax_line_1_col_0', ')'),
    ('probe_syntax_only_comment_then_err', '# c\n)'),
    ('probe_syntax_crlf', 'x = 1\ny = )'),
    ('probe_syntax_tab_col', '\tx = 1'),
    ('probe_syntax_tab_mid', 'x =\t)'),
    ('probe_syntax_fullwidth', 'x = （1）'),
    ('probe_syntax_zero_width', 'x\u200b = 1'),
    ('probe_syntax_triple_eof', "'''abc"),
    ('probe_syntax_if_no_colon', 'if True\n    pass'),
    ('probe_syntax_else_alone', 'else:\n    pass'),
    ('probe_syntax_match_bad', 'match x:\n    case 1 +:\n        pass'),
    ('probe_syntax_class_no_body', 'class C:'),
    ('probe_syntax_def_eof_nl', 'def f():'),
    ('probe_syntax_trailing_op', 'x = 1 +'),
    ('probe_syntax_del_literal', 'del 1'),
    ('probe_syntax_aug_literal', '1 += 1'),
    ('probe_syntax_fstring_empty', "x = f'{}'"),
    ('probe_syntax_fstring_backslash', 'x = f\'{"\\n"}\' + 1'),
    ('probe_error_last_line_no_newline', 'x = 1\n\n\n\nx + None'),
    ('probe_error_after_blank_crlf', '\n\n1/0'),
    ('probe_error_first_of_many', '1/0\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1\nx = 1'),
    ('probe_error_line_1000', '\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n1/0'),
    ('probe_error_indent_eof', 'if True:\n    1/0'),
]


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return r, i


def fields(b):
    i, out = 0, []
    while i < len(b):
        k, i = varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError('wire type %d' % w)
        out.append((f, v))
    return out


def loc(b):
    d = dict(fields(b))
    return [d.get(1, 0), d.get(2, 0)]


def frame(b):
    fr = {'filename': '', 'start': [0, 0], 'end': [0, 0]}
    for f, v in fields(b):
        if f == 1:
            fr['filename'] = v.decode()
        elif f == 2:
            fr['start'] = loc(v)
        elif f == 3:
            fr['end'] = loc(v)
        elif f == 4:
            fr['frame_name'] = v.decode()
        elif f == 5:
            fr['preview_line'] = v.decode()
        elif f == 6:
            fr['hide_caret'] = bool(v)
        elif f == 7:
            fr['hide_frame_name'] = bool(v)
    return fr


def exception(b):
    e = {'type': '', 'traceback': []}
    for f, v in fields(b):
        if f == 1:
            e['type'] = v.decode()
        elif f == 2:
            e['message'] = v.decode()
        elif f == 3:
            e['traceback'].append(frame(v))
    return e


def error_of_event(b):
    """The RaisedException of a ChildEvent.error(7).exception(1), or None."""
    for f, v in fields(b):
        if f == 7:
            for f2, v2 in fields(v):
                if f2 == 1:
                    return exception(v2)
    return None


def ld(field, data):
    def uv(n):
        o = b''
        while True:
            c, n = n & 0x7f, n >> 7
            if n:
                o += bytes([c | 0x80])
            else:
                return o + bytes([c])
    return uv(field << 3 | 2) + uv(len(data)) + data


def frame_bytes(m):
    return struct.pack('<I', len(m)) + m


def read_frame(p):
    h = p.stdout.read(4)
    if len(h) < 4:
        raise RuntimeError('the worker closed its output')
    return p.stdout.read(struct.unpack('<I', h)[0])


def run_subprocess(code):
    """Feeds code to a fresh `monty subprocess` and returns its Error event.

    Undefined names are answered as the session answers them: a NameLookup
    with ResumeNameLookup.undefined, a FunctionCall with
    ExtFunctionResult.not_found (the NameError then spans the whole call).
    """
    configure = ld(1, ld(1, b'main.py') + bytes([0x48, 2]))  # script_name, protocol_version 2
    p = subprocess.Popen([MONTY, 'subprocess'], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        p.stdin.write(frame_bytes(configure) + frame_bytes(ld(3, ld(1, code.encode()))))
        p.stdin.flush()
        read_frame(p)  # the Configure's Ok
        while True:
            ev = read_frame(p)
            e = error_of_event(ev)
            if e:
                return e
            kind = dict(fields(ev))
            if 4 in kind:  # NameLookup: undefined
                reply = ld(5, ld(2, b''))
            elif 2 in kind:  # FunctionCall: not found
                fc = dict(fields(kind[2]))
                call_id = fc.get(4, 0)
                reply = ld(4, bytes([0x08]) + varint_bytes(call_id) + ld(2, ld(4, fc[1])))
            elif 1 in kind:  # Print
                continue
            else:
                raise RuntimeError('no Error event for %r' % code)
            p.stdin.write(frame_bytes(reply))
            p.stdin.flush()
    finally:
        p.kill()
        p.wait()


def varint_bytes(n):
    o = b''
    while True:
        c, n = n & 0x7f, n >> 7
        if n:
            o += bytes([c | 0x80])
        else:
            return o + bytes([c])


def run_cli(code):
    p = subprocess.run([MONTY, '-c', code], capture_output=True, timeout=120)
    s = p.stderr.decode()
    if s.startswith('error:\n'):
        return s[len('error:\n'):]
    m = re.search('\u276f error: ', s)
    if not m:
        raise RuntimeError('no error printed for %r: %r' % (code, s))
    return s[m.end():]


def vector_case(name):
    d = json.load(open(os.path.join(VECTORS, name + '.json')))
    for ex in d['exchanges']:
        if not ex['request_decoded'].startswith('feed'):
            continue
        for h in ex['response_frames_hex']:
            e = error_of_event(bytes.fromhex(h))
            if e:
                return d['python_code'], e
    raise RuntimeError('no error in vector ' + name)


def compact(case):
    """One frame per line keeps the 1000-frame recursion case readable."""
    head = json.dumps({k: v for k, v in case.items() if k != 'exception'}, ensure_ascii=False)[:-1]
    exc = case['exception']
    frames = ',\n'.join('    ' + json.dumps(f, ensure_ascii=False) for f in exc['traceback'])
    meta = {k: v for k, v in exc.items() if k != 'traceback'}
    return (head + ', "exception": ' + json.dumps(meta, ensure_ascii=False)[:-1] +
            (', "traceback": [\n' + frames + '\n  ]}}' if frames else ', "traceback": []}}'))


def main():
    cases = []
    for name in VECTOR_CASES:
        code, e = vector_case(name)
        cases.append(('vector:' + name, name, code, e))
    for name, code in PROBES:
        cases.append(('probe', name, code, run_subprocess(code)))
    out = []
    for source, name, code, e in cases:
        for fr in e['traceback']:
            if re.fullmatch(r'<python-input-\d+>', fr['filename']):
                fr['filename'] = '<string>'
        out.append(compact({'name': name, 'source': source, 'python_code': code,
                            'want': run_cli(code), 'exception': e}))
    version = subprocess.run([MONTY, '--version'], capture_output=True).stdout.decode().strip()
    sys.stdout.write('{"generator": "message/testdata/gen-traceback-golden.py", "worker": %s, "cases": [\n'
                     % json.dumps(version))
    sys.stdout.write(',\n'.join(out))
    sys.stdout.write('\n]}\n')


if __name__ == '__main__':
    main()

# The error snippets of internal/vecrec/snippets (recorded in testdata/v2-more),
# so that their tracebacks are compared with the worker CLI's too.
#### exc_type_error_call
len(1, 2)
#### exc_index_error
[1, 2][5]
#### exc_index_error_str
'abc'[10]
#### exc_index_error_tuple_neg
(1,)[-3]
#### exc_key_error_tuple
{}[(1, 'a')]
#### exc_key_error_empty_str
{}['']
#### exc_key_error_int
d = {1: 2}
d[3]
#### exc_key_error_none
{}[None]
#### exc_key_error_quote
{}["it's"]
#### exc_attribute_none
None.foo
#### exc_attribute_int
(1).bar()
#### exc_attribute_module
import math
math.nope
#### exc_unbound_local
def f():
    x += 1
    return x
f()
#### exc_value_int_parse
int('12a')
#### exc_value_int_empty
int('')
#### exc_value_int_base
int('z', 36) + int('g', 16)
#### exc_value_float_parse
float('abc')
#### exc_zero_mod
5 % 0
#### exc_zero_float
1.0 / 0.0
#### exc_zero_floordiv
7 // 0
#### exc_zero_divmod
divmod(1, 0)
#### exc_zero_pow
0.0 ** -1
#### exc_overflow_int_to_float
float(10 ** 400)
#### exc_math_domain
import math
math.sqrt(-1)
#### exc_math_log_zero
import math
math.log(0)
#### exc_type_unhashable
{[1]: 2}
#### exc_type_unhashable_set
{{1}}
#### exc_type_not_callable
x = 5
x()
#### exc_type_not_subscriptable
None[0]
#### exc_type_not_iterable
for i in 5:
    pass
#### exc_type_unsupported_operand
[] - {}
#### exc_type_compare
1 < 'a'
#### exc_type_missing_arg
def f(a, b):
    return a
f(1)
#### exc_type_extra_arg
def f(a):
    return a
f(1, 2, 3)
#### exc_type_unexpected_kwarg
def f(a):
    return a
f(a=1, z=2)
#### exc_type_multiple_values
def f(a):
    return a
f(1, a=2)
#### exc_stop_iteration_next
next(iter([]))
#### exc_runtime_plain
raise RuntimeError
#### exc_runtime_empty_msg
raise RuntimeError('')
#### exc_not_implemented_msg
raise NotImplementedError('later')
#### exc_lookup_error
raise LookupError('lk')
#### exc_arithmetic_error
raise ArithmeticError('ar')
#### exc_timeout_error
raise TimeoutError('slow')
#### exc_permission_error
raise PermissionError('perm')
#### exc_is_a_directory
raise IsADirectoryError('dir')
#### exc_recursion_error_raised
raise RecursionError('deep')
#### exc_memory_error_raised
raise MemoryError('mem')
#### exc_keyboard_interrupt
raise KeyboardInterrupt('ki')
#### exc_system_exit_noarg
raise SystemExit()
#### exc_assertion_message
assert False, 'custom message'
#### exc_assertion_int_message
assert 1 > 2, 42
#### exc_assertion_fstring
x = 3
assert x == 4, f'x was {x}'
#### exc_assertion_compare_list
assert [1, 2] == [1, 3]
#### exc_assertion_no_message_expr
def ok():
    return False
assert ok()
#### exc_message_newline
raise ValueError('line one\nline two')
#### exc_message_unicode
raise ValueError('héllo wörld 🎉 日本')
#### exc_message_quotes
raise ValueError('it\'s "quoted"')
#### exc_message_tab_cr
raise ValueError('a\tb\rc')
#### exc_message_long_3000
raise ValueError('x' * 3000)
#### exc_message_int
raise ValueError(42)
#### exc_message_none
raise ValueError(None)
#### exc_key_error_noarg
raise KeyError
#### exc_custom_subclass
class MyErr(ValueError):
    pass
raise MyErr('mine')
#### exc_custom_deep_hierarchy
class A(Exception):
    pass
class B(A):
    pass
class C(B):
    pass
raise C('c')
#### exc_custom_no_message
class Quiet(Exception):
    pass
raise Quiet()
#### exc_custom_caught_by_base
class MyErr(KeyError):
    pass
try:
    raise MyErr('k')
except LookupError as e:
    r = repr(e)
r
#### exc_raise_from_none
try:
    {}['a']
except KeyError:
    raise ValueError('clean') from None
#### exc_implicit_context
try:
    1 / 0
except ZeroDivisionError:
    raise KeyError('during handling')
#### exc_raise_from_cause_function
def inner():
    raise OSError('io')
def outer():
    try:
        inner()
    except OSError as e:
        raise RuntimeError('outer') from e
outer()
#### exc_reraise_bare
try:
    int('x')
except ValueError:
    raise
#### exc_reraise_named
def f():
    try:
        [][0]
    except IndexError as e:
        raise e
f()
#### exc_in_finally
try:
    pass
finally:
    raise ValueError('from finally')
#### exc_finally_overrides
try:
    raise KeyError('first')
finally:
    raise ValueError('second')
#### exc_in_else
try:
    pass
except Exception:
    pass
else:
    raise TypeError('in else')
#### exc_nested_handlers
try:
    try:
        raise ValueError('inner')
    except ValueError:
        raise TypeError('middle')
except TypeError:
    raise KeyError('outer')
#### exc_getattr_builtin_type
int.nope
#### exc_str_index_method
'abc'.index('z')
#### exc_list_remove
[1].remove(2)
#### exc_dict_popitem_empty
{}.popitem()
#### exc_pop_empty_list
[].pop()
#### exc_max_empty
max([])
#### exc_int_too_many_digits
int('1' * 5000)
#### exc_str_of_huge_int
str(10 ** 5000)
#### exc_chr_out_of_range
chr(0x110000)
#### exc_ord_two_chars
ord('ab')
#### exc_json_loads_trailing
import json
json.loads('[1, 2] x')
#### exc_json_loads_empty
import json
json.loads('')
#### exc_json_loads_unicode
import json
json.loads('{"é": }')
#### exc_decode_utf8_mid
b'ab\xe2\x82'.decode()
#### exc_decode_ascii
b'\xc3\xa9'.decode('ascii')
#### exc_encode_ascii
'é日'.encode('ascii')
#### exc_decode_bad_continuation
b'a\xc3(b'.decode('utf-8')
#### tb_deep_10
def f0(): return f1()
def f1(): return f2()
def f2(): return f3()
def f3(): return f4()
def f4(): return f5()
def f5(): return f6()
def f6(): return f7()
def f7(): return f8()
def f8(): return f9()
def f9(): return 1 / 0
f0()
#### tb_recursion_repeated
def f(n):
    if n == 0:
        raise ValueError('bottom')
    return f(n - 1)
f(25)
#### tb_recursion_limit_hit
def f(n):
    return f(n + 1)
f(0)
#### tb_mutual_recursion
def even(n):
    if n == 0:
        raise KeyError('even')
    return odd(n - 1)
def odd(n):
    return even(n - 1)
even(10)
#### tb_list_comprehension
def f(xs):
    return [10 // x for x in xs]
f([1, 2, 0])
#### tb_dict_comprehension
{k: 1 / k for k in range(-1, 2)}
#### tb_set_comprehension
{int(s) for s in ['1', 'x']}
#### tb_generator_expression
sum(1 / x for x in [1, 0])
#### tb_nested_comprehension
[[y / x for y in range(2)] for x in range(2)]
#### tb_lambda_in_map
list(map(lambda x: x['k'], [{'k': 1}, {}]))
#### tb_lambda_nested
f = lambda x: (lambda y: y / x)(1)
f(0)
#### tb_sorted_key
sorted([1, 'a', 2], key=lambda v: v + 1)
#### tb_class_method
class K:
    def m(self, x):
        return self.n(x)
    def n(self, x):
        return x.missing
K().m(3)
#### tb_staticmethod
class K:
    @staticmethod
    def s(x):
        return x[5]
K.s([1])
#### tb_classmethod
class K:
    @classmethod
    def c(cls):
        raise TypeError(cls.__name__)
K.c()
#### tb_init_raises
class K:
    def __init__(self, v):
        if v < 0:
            raise ValueError('negative')
        self.v = v
K(-1)
#### tb_property_raises
class K:
    @property
    def p(self):
        return 1 / 0
K().p
#### tb_dunder_add
class V:
    def __add__(self, other):
        raise NotImplementedError('no add')
V() + V()
#### tb_dunder_repr
class A:
    def __repr__(self):
        raise ValueError('r')
repr(A())
#### tb_generator_body
def gen():
    yield 1
    raise RuntimeError('in generator')
list(gen())
#### tb_generator_next
def gen():
    yield 1 / 0
g = gen()
next(g)
#### tb_closure
def outer():
    k = 0
    def inner():
        return 5 // k
    return inner
outer()()
#### tb_decorator
def deco(fn):
    def wrap(*a):
        return fn(*a)
    return wrap
@deco
def target(x):
    raise KeyError(x)
target('dk')
#### tb_async_chain
async def a():
    raise ValueError('async deep')
async def b():
    return await a()
async def c():
    return await b()
await c()
#### tb_asyncio_gather
import asyncio
async def bad():
    raise TypeError('gathered')
async def good():
    return 1
await asyncio.gather(good(), bad())
#### tb_asyncio_run
import asyncio
async def main():
    raise KeyError('run')
asyncio.run(main())
#### tb_kwargs_call
def f(*, a, b):
    return a + b
f(a=1, b='x')
#### tb_multiline_call
def f(a, b, c):
    return a + b + c
f(
    1,
    2,
    'c',
)
#### tb_multiline_expression
x = (1 +
     2 +
     'three')
#### tb_long_line
values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]; total = sum(values) + values[100]
#### tb_tabs_in_line
if True:
	x = 1 +	'a'
#### tb_wide_chars
名前 = '日本語' + 1
#### tb_emoji_line
s = '🎉🎉🎉'; n = s + 5
#### tb_combining_chars
s = 'e\u0301e\u0301'; t = 'ée\u0301' - 1
#### tb_unicode_function_names
def größe(x):
    return x / 0
größe(1)
#### tb_unicode_identifier_nfkc
ﬁle = 1
file + 'a'
#### tb_after_blank_lines
x = 1



y = x / 0
#### tb_crlf_source
x = 1
y = x / 0
#### tb_in_while
i = 0
while True:
    i += 1
    if i == 5:
        raise StopIteration('five')
#### tb_with_statement
class CM:
    def __enter__(self):
        return self
    def __exit__(self, *a):
        return False
with CM():
    raise ValueError('in with')
#### tb_getattr_chain
class A:
    pass
a = A()
a.b.c.d
#### tb_subscript_chain
d = {'a': {'b': {}}}
d['a']['b']['c']
#### tb_fstring_error
x = None
f'{x.upper()}'
#### tb_default_arg_eval
def f(x=[]):
    return x[0]
f()
#### tb_ternary
x = 1 if (1 / 0) else 2
#### tb_walrus
if (n := len([])) == 0:
    raise ValueError(f'n={n}')
#### tb_star_unpack
a, b = [1, 2, 3]
#### tb_star_unpack_few
a, b, c = (1, 2)
#### tb_second_expression_stmt
x = 1
x.y = 2
#### tb_global_then_error
g = 1
def f():
    global g
    g = g + 'a'
f()
#### tb_nonlocal
def f():
    x = 1
    def g():
        nonlocal x
        x = x + None
    g()
f()
#### syntax_unclosed_paren_multiline
x = (1,
     2,
#### syntax_unclosed_bracket
[1, 2
#### syntax_unclosed_brace
{'a': 1
#### syntax_unclosed_string
s = 'abc
#### syntax_unclosed_triple_string
s = """abc
def
#### syntax_unexpected_indent_second
x = 1
    y = 2
#### syntax_unindent_mismatch
if True:
        x = 1
    y = 2
#### syntax_expected_indent
if True:
x = 1
#### syntax_assign_literal
1 = x
#### syntax_assign_call
f() = 1
#### syntax_augassign_literal
1 += 1
#### syntax_del_literal
del 1
#### syntax_trailing_operator
x = 1 +
#### syntax_double_operator
x = 1 +* 2
#### syntax_break_outside
break
#### syntax_continue_outside
continue
#### syntax_yield_outside
yield 1
#### syntax_nonlocal_module
nonlocal x
#### syntax_duplicate_kwarg
f(a=1, a=2)
#### syntax_positional_after_keyword
f(a=1, 2)
#### syntax_default_before_nondefault
def f(a=1, b):
    pass
#### syntax_invalid_character
x = 1 $ 2
#### syntax_invalid_unicode_character
x = 1 → 2
#### syntax_print_statement
print 'hello'
#### syntax_else_without_if
else:
    pass
#### syntax_invalid_decimal_literal
x = 1abc
#### syntax_leading_zero
x = 0777
#### syntax_missing_colon
if True
    pass
#### syntax_def_missing_parens
def f:
    pass
#### syntax_lambda_default_order
lambda a=1, b: a
#### syntax_star_in_index_assign
*a = [1]
#### syntax_walrus_invalid_target
(a.b := 1)
#### syntax_fstring_unclosed_brace
f'{1'
#### syntax_fstring_empty_expression
f'{}'
#### syntax_fstring_single_close
f'}'
#### syntax_bad_escape_bytes
b'é'
#### syntax_unmatched_close
x = 1)
#### syntax_mismatched_brackets
x = (1]
#### syntax_keyword_as_name
class = 1
#### syntax_error_after_unicode
s = '日本語🎉'; x = (
#### syntax_error_on_wide_line
x = '日本語' +
#### syntax_error_tab_indented
if True:
	x = 1 +
#### syntax_error_line_five
a = 1
b = 2
c = 3
d = 4
e = = 5
#### syntax_only_whitespace_and_error
   
)
#### syntax_import_star_in_function
def f():
    from math import *
#### syntax_try_without_except
try:
    pass
x = 1
#### syntax_match_statement
match x:
    case 1:
        pass
#### syntax_global_after_use
def f():
    x = 1
    global x
#### syntax_unsupported_class_inheritance
class A(Exception):
    pass
#### syntax_unsupported_yield
def g():
    yield 1
#### syntax_unsupported_import_module
import os.path as p
#### syntax_assign_to_keyword_none
None = 1
#### syntax_comprehension_target_literal
[x for 1 in y]
#### syntax_dict_missing_value
{'a': }
#### syntax_very_long_line_error
x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40 41]
#### repr_int_bool_mix
x = [True + 1, -True, 0, -0, ~0]
(x, repr(x))
#### repr_dataclass_field_repr_false
from dataclasses import dataclass, field
@dataclass
class P:
    a: int
    b: int = field(default=2, repr=False)
x = P(1)
(x, repr(x))
#### repr_namedtuple_typing
from typing import NamedTuple
class Pt(NamedTuple):
    x: int
    y: str = 'q'
x = Pt(1)
(x, repr(x))
#### repr_date_edges
from datetime import date
x = [date.min, date.max, date(2000, 2, 29)]
(x, repr(x))
#### repr_datetime_edges
from datetime import datetime
x = [datetime.min, datetime.max, datetime(2024, 1, 1), datetime(2024, 1, 1, 0, 0, 0, 1)]
(x, repr(x))
#### repr_datetime_offset_micros
from datetime import datetime, timezone, timedelta
x = datetime(2024, 1, 1, tzinfo=timezone(timedelta(microseconds=-1)))
(x, repr(x))
#### repr_timedelta_edges
from datetime import timedelta
x = [timedelta.max, timedelta.min, timedelta.resolution, timedelta(days=-1), timedelta(seconds=-1), timedelta(microseconds=999999), timedelta(days=1, microseconds=1)]
(x, repr(x))
#### repr_timezone_edges
from datetime import timezone, timedelta
x = [timezone.utc, timezone.min, timezone.max, timezone(timedelta(0)), timezone(timedelta(hours=1), 'CET'), timezone(timedelta(minutes=-90)), timezone(timedelta(0), 'Z')]
(x, repr(x))
#### repr_dict_insertion_after_delete
x = {'a': 1, 'b': 2, 'c': 3}
del x['b']
x['b'] = 4
(x, repr(x))
#### repr_complex_number
x = 1 + 2j
(x, repr(x))
#### printx_file_stdout
import sys
print('to stdout', file=sys.stdout)
#### printx_then_exception
print('before')
print('still', end='')
raise ValueError('after print')
#### printx_in_function_then_error
def f():
    print('in f')
    return 1 / 0
f()
#### printx_sep_non_str
print('a', 'b', sep=1)
#### printx_end_non_str
print('a', end=[])
#### printx_unknown_kwarg
print('a', color='red')

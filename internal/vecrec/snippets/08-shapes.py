# Session shapes added after the first recording: notes, groups, limit
# errors raised by the sandbox, tracebacks through nested scopes, long and
# repeated tracebacks, unicode identifiers, name lookups of every kind,
# print interleaving and values at their extremes.
#### note_add_note_uncaught
e = ValueError('x')
e.add_note('note é')
raise e
#### note_notes_attribute
e = ValueError('x')
e.__notes__ = ['a']
raise e
#### group_exception_group_uncaught
raise ExceptionGroup('many', [ValueError(1), KeyError('k')])
#### group_base_exception_group
raise BaseExceptionGroup('b', [KeyboardInterrupt()])
#### group_except_star
try:
    raise ValueError(1)
except* ValueError:
    pass
#### group_exception_group_caught_repr
try:
    raise ExceptionGroup('g', [ValueError(1)])
except Exception as e:
    r = (type(e).__name__, repr(e))
r
#### limitraise_recursion_dunder_eq
class E:
    def __eq__(self, o):
        return self == o
E() == 1
#### limitraise_recursion_str
class S:
    def __str__(self):
        return str(self)
str(S())
#### limitraise_recursion_generator
def g(n):
    yield from g(n + 1)
list(g(0))
#### limitraise_recursion_caught_message
def f():
    return f()
try:
    f()
except RecursionError as e:
    r = (str(e), e.args)
r
#### limitraise_recursion_in_finally
def f(n):
    try:
        return f(n + 1)
    finally:
        pass
f(0)
#### limitraise_memory_error_caught
try:
    raise MemoryError('custom')
except MemoryError as e:
    r = repr(e)
r
#### limitraise_overflow_repeat
'ab' * (2 ** 62)
#### limitraise_overflow_list_repeat
[0] * (2 ** 62)
#### limitraise_int_shift_huge
1 << (2 ** 62)
#### scope_nested_function_three
def outer():
    def middle():
        def inner():
            return {}['missing']
        return inner()
    return middle()
outer()
#### scope_lambda_in_lambda
f = lambda x: (lambda y: y / 0)(x)
f(1)
#### scope_comprehension_in_function
def f(xs):
    return [1 / x for x in xs]
f([1, 0])
#### scope_generator_in_comprehension
def f():
    return sum(x for x in [1, 'a'])
f()
#### scope_comprehension_calls_function
def g(x):
    return x.missing
[g(i) for i in range(3)]
#### scope_class_body_error
class C:
    x = 1
    y = x / 0
#### scope_class_body_nested_call
def helper():
    raise KeyError('from class body')
class C:
    v = helper()
#### scope_nested_class_method
class Outer:
    class Inner:
        def m(self):
            return [][0]
Outer.Inner().m()
#### scope_closure_three_levels
def a():
    x = 0
    def b():
        def c():
            return 1 / x
        return c()
    return b()
a()
#### scope_decorated_nested
def deco(f):
    def wrapper(*a):
        return f(*a)
    return wrapper
@deco
def target(v):
    return v['k']
target({})
#### scope_dict_comprehension_lambda
{k: (lambda: k / 0)() for k in [1]}
#### scope_async_nested
import asyncio
async def inner():
    raise ValueError('deep async')
async def middle():
    return await inner()
async def outer():
    return await middle()
await outer()
#### scope_nested_def_in_loop
for i in range(3):
    def f():
        return 10 // (2 - i)
    f()
#### tblong_depth_60
def f(n):
    if n == 0:
        raise ValueError('bottom')
    return f(n - 1)
f(60)
#### tblong_repeated_pair
def a(n):
    if n == 0:
        raise KeyError('x')
    return b(n - 1)
def b(n):
    return a(n)
a(40)
#### tblong_chain_three
try:
    try:
        1 / 0
    except ZeroDivisionError as e:
        raise KeyError('k') from e
except KeyError as e:
    raise ValueError('v') from e
#### tblong_context_in_function
def f():
    try:
        [][1]
    except IndexError:
        return {}['x']
f()
#### tblong_long_message_lines
raise ValueError('\n'.join(str(i) for i in range(200)))
#### tblong_long_source_line
x = [1] * 10
y = x[0] + x[1] + x[2] + x[3] + x[4] + x[5] + x[6] + x[7] + x[8] + x[9] + x[0] + x[1] + x[2] + x[3] + x[4] + x[5] + x[6] + x[7] + x[8] + x[9] + None
#### tblong_many_frames_distinct
def f0():
    return f1()
def f1():
    return f2()
def f2():
    return f3()
def f3():
    return f4()
def f4():
    return f5()
def f5():
    return f6()
def f6():
    return f7()
def f7():
    return f8()
def f8():
    return f9()
def f9():
    raise RuntimeError('ten')
f0()
#### tblong_recursion_then_other
def f(n):
    if n == 0:
        return g()
    return f(n - 1)
def g():
    return None.x
f(30)
#### uident_function_name
def größe(wert):
    return wert / 0
größe(1)
#### uident_class_name
class Ñandú:
    def 飛ぶ(self):
        raise ValueError('no')
Ñandú().飛ぶ()
#### uident_undefined_name
πλάτος + 1
#### uident_nfkc_variable
ﬁ = 1
fi + undefined_ﬃ
#### uident_attribute_missing
class K:
    pass
K().атрибут
#### uident_kwarg
def f(*, ключ):
    return ключ
f(ключ2=1)
#### uident_lambda_param
(lambda 変数: 変数 / 0)(1)
#### lookupkind_builtin_shadowed_then_deleted
len = 5
del len
len([1])
#### lookupkind_global_in_function
def f():
    return undefined_global
f()
#### lookupkind_nonlocal_unbound
def f():
    def g():
        return x
    g()
    x = 1
f()
#### lookupkind_local_unbound
def f():
    y = x
    x = 1
f()
#### lookupkind_class_scope
class C:
    a = undefined_in_class
#### lookupkind_del_then_use
x = 1
del x
x
#### lookupkind_comprehension_var
[y for y in range(2)]
y
#### lookupkind_import_missing
from os import not_a_thing
#### lookupkind_module_attr
import os
os.not_a_thing
#### lookupkind_builtin_call
undefined_call(1, 2)
#### lookupkind_global_decl
def f():
    global gx
    return gx
f()
#### printmix_stdout_stderr_interleave
import sys
print('a')
print('b', file=sys.stderr)
print('c', end='')
print('d', file=sys.stderr, end='')
print('e')
#### printmix_partial_then_error
print('partial', end='')
1 / 0
#### printmix_partial_stderr_then_error
import sys
print('err partial', end='', file=sys.stderr)
{}['k']
#### printmix_huge_print
print('x' * 20000)
#### printmix_many_small_prints
for i in range(500):
    print(i, end=' ')
#### printmix_huge_stderr
import sys
print('é' * 50000, file=sys.stderr)
#### printmix_print_in_loop_error
for i in range(5):
    print(i)
    if i == 3:
        raise ValueError(i)
#### printmix_print_carriage_returns
print('a\rb\r\nc\n\n', end='')
#### printmix_print_nul_and_surrogate_escape
print('\x00', 'a\udcff'.encode('utf-8', 'surrogateescape'))
#### extreme_int_values
(2 ** 63 - 1, -2 ** 63, 2 ** 63, -2 ** 63 - 1, 2 ** 64, -(2 ** 64), 2 ** 1000)
#### extreme_float_values
(1.7976931348623157e308, -1.7976931348623157e308, 2.2250738585072014e-308, 5e-324, -5e-324, 1e16, 1e-5, 0.1 + 0.2)
#### extreme_str_all_bmp_slices
''.join(chr(c) for c in range(0x0, 0x800))
#### extreme_str_astral_planes
''.join(chr(c) for c in [0x10000, 0x1F600, 0x20000, 0xE0001, 0xF0000, 0x10FFFF])
#### extreme_bytes_empty_and_nul
(b'', b'\x00' * 10, bytes(range(256)))
#### extreme_dates
from datetime import date, datetime, time, timedelta, timezone
(date.min, date.max, datetime.min, datetime.max, time.min, time.max, timedelta.min, timedelta.max, timedelta.resolution)
#### extreme_timezones
from datetime import timezone, timedelta
(timezone.min, timezone.max, timezone(timedelta(0)), timezone(timedelta(seconds=-1)), timezone(timedelta(microseconds=1)))
#### extreme_nested_empty
[[], {}, (), set(), frozenset(), '', b'', [[[[]]]], {(): ()}]
#### extreme_dict_many_types_keys
{None: 1, True: 2, 3: 3, 4.5: 4, 'a': 5, b'b': 6, (1, (2,)): 7, frozenset({1}): 8}
#### extreme_long_list_of_strs
['é' * i for i in range(40)]
#### extreme_int_4300_boundary
(10 ** 4299, -(10 ** 4299))
#### extreme_set_of_floats
{0.0, -0.0, 1e308, float('inf'), float('-inf')}
#### extreme_tuple_depth_100
t = ()
for _ in range(100):
    t = (t,)
t
#### extreme_list_depth_300
l = []
for _ in range(300):
    l = [l]
l
#### extreme_dict_depth_300
d = {}
for _ in range(300):
    d = {'k': d}
d
#### printmix_two_byte_char_across_8192
print('x' * 8191 + 'é')
#### printmix_four_byte_char_across_8192_no_newline
print('x' * 8190 + '🎉', end='')
#### printmix_stderr_char_across_8192
import sys
print('x' * 8191 + 'é', file=sys.stderr)
#### printmix_all_two_byte_8193
print('é' * 4096 + 'x')
#### printmix_stdout_then_stderr_across_8192
import sys
print('a' * 8000, end='')
print('b' * 400, file=sys.stderr, end='')
print('c' * 400)
#### printmix_print_then_error_across_8192
print('ü' * 5000)
raise ValueError('after a long print')
#### surrogate_exception_message
raise ValueError('a\udcffb')
#### surrogate_print
print('x\ud800y')
#### surrogate_result_str
'p\udfffq'
#### surrogate_dict_key_result
{'\ud83d': 1, 'k': '\ude00'}
#### surrogate_pair_halves_joined
'\ud83d' + '\ude00'
#### surrogate_in_traceback_line
x = '\ud800' + 1
#### surrogate_key_error
{}['\udc80']

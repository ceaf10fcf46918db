Snippets that end in an exception: unusual types, messages and chaining.
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
#### exc_name_in_function
def f():
    return undefined_thing
f()
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
#### exc_overflow_float_pow
10.0 ** 400
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
#### exc_connection_error
raise ConnectionError('conn')
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
#### exc_generator_exit
raise GeneratorExit()
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
#### exc_caught_repr
try:
    raise ValueError('v')
except ValueError as e:
    x = repr(e)
x
#### exc_caught_str_args
try:
    raise KeyError('k')
except KeyError as e:
    x = (str(e), e.args)
x
#### exc_caught_value_returned
try:
    1 / 0
except ZeroDivisionError as e:
    err = e
err
#### exc_instance_list
[ValueError('a'), TypeError(), KeyError('k'), OSError('o')]
#### exc_type_objects
[ValueError, KeyError, StopIteration, BaseException]
#### exc_exception_group
raise ExceptionGroup('g', [ValueError('a')])
#### exc_isinstance_tuple
try:
    raise PermissionError('p')
except (KeyError, OSError) as e:
    out = type(e).__name__
out
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

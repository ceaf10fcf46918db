Values: each "repr_" snippet ends with (x, repr(x)), so a test can check
our repr of the value the worker sent against the worker's own repr.
#### repr_str_astral
x = '𝔘𝔫𝔦 🎉 \U0001F600'
(x, repr(x))
#### repr_str_combining
x = 'e\u0301 a\u0308 \u0338'
(x, repr(x))
#### repr_str_controls
x = '\x00\x01\x1f\x7f\x80\x9f'
(x, repr(x))
#### repr_str_c1_and_separators
x = '\x85\xa0\u2028\u2029\u200b\u200d\ufeff'
(x, repr(x))
#### repr_str_private_use_and_unassigned
x = '\ue000\U000f0000\u0378\U000e0001\U0010ffff'
(x, repr(x))
#### repr_str_both_quotes
x = 'it\'s "x"'
(x, repr(x))
#### repr_str_only_single_quote
x = "it's"
(x, repr(x))
#### repr_str_only_double_quote
x = 'say "hi"'
(x, repr(x))
#### repr_str_backslashes
x = 'a\\b\\\\c\\'
(x, repr(x))
#### repr_str_whitespace
x = '\t\n\r\x0b\x0c '
(x, repr(x))
#### repr_str_rtl_and_marks
x = 'שלום \u200e\u200f\u202e abc'
(x, repr(x))
#### repr_str_cjk_fullwidth
x = '日本語 ＡＢＣ　全角'
(x, repr(x))
#### repr_str_lone_surrogate
x = '\ud800'
(x, repr(x))
#### repr_str_surrogate_pair_escaped
x = '\ud83d\ude00'
(x, repr(x))
#### repr_str_soft_hyphen_and_format
x = '\xad\u0600\u061c\u180e\u2060\U0001d173'
(x, repr(x))
#### repr_str_noncharacters
x = '\ufdd0\ufffe\uffff\U0001fffe'
(x, repr(x))
#### repr_str_variation_selectors
x = '\ufe0f\U000e0100 #\ufe0f\u20e3'
(x, repr(x))
#### repr_str_latin1_printable
x = ''.join(chr(i) for i in range(0xa1, 0x100))
(x, repr(x))
#### repr_str_ascii_all
x = ''.join(chr(i) for i in range(0, 128))
(x, repr(x))
#### repr_str_newer_unicode
x = '\U0001fae8\U0001fa89\u0c5d\U00011f00\U0001e4d0'
(x, repr(x))
#### repr_bytes_all
x = b'\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x20\x21\x22\x23\x24\x25\x26\x27\x28\x29\x2a\x2b\x2c\x2d\x2e\x2f\x30\x31\x32\x33\x34\x35\x36\x37\x38\x39\x3a\x3b\x3c\x3d\x3e\x3f\x40\x41\x42\x43\x44\x45\x46\x47\x48\x49\x4a\x4b\x4c\x4d\x4e\x4f\x50\x51\x52\x53\x54\x55\x56\x57\x58\x59\x5a\x5b\x5c\x5d\x5e\x5f\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f\x70\x71\x72\x73\x74\x75\x76\x77\x78\x79\x7a\x7b\x7c\x7d\x7e\x7f\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f\xa0\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xab\xac\xad\xae\xaf\xb0\xb1\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xba\xbb\xbc\xbd\xbe\xbf\xc0\xc1\xc2\xc3\xc4\xc5\xc6\xc7\xc8\xc9\xca\xcb\xcc\xcd\xce\xcf\xd0\xd1\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xda\xdb\xdc\xdd\xde\xdf\xe0\xe1\xe2\xe3\xe4\xe5\xe6\xe7\xe8\xe9\xea\xeb\xec\xed\xee\xef\xf0\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9\xfa\xfb\xfc\xfd\xfe\xff'
(x, repr(x))
#### repr_bytes_quotes
x = b'it\'s "x"'
(x, repr(x))
#### repr_bytes_single_quote
x = b"it's"
(x, repr(x))
#### repr_bytes_backslash
x = b'\\\t\n\r'
(x, repr(x))
#### repr_int_big_pos
x = 2 ** 1000
(x, repr(x))
#### repr_int_big_neg
x = -(3 ** 700)
(x, repr(x))
#### repr_int_4300_digits
x = 10 ** 4299
(x, repr(x))
#### repr_int_edges
x = [2 ** 63 - 1, 2 ** 63, -2 ** 63, -2 ** 63 - 1, 2 ** 64 - 1, 2 ** 64, -(2 ** 64)]
(x, repr(x))
#### repr_int_bool_mix
x = [True + 1, -True, 0, -0, ~0]
(x, repr(x))
#### repr_float_specials
x = [float('nan'), float('inf'), -float('inf'), -0.0, 0.0]
(x, repr(x))
#### repr_float_exponent_switch
x = [1e15, 1e16, 1e17, 123456789012345678.0, 1e-4, 1e-5, 0.0001, 0.00001234]
(x, repr(x))
#### repr_float_roundtrip
x = [0.1, 0.2, 0.1 + 0.2, 1 / 3, 2 / 3, 100.0, 1.5e300, 9007199254740993.0]
(x, repr(x))
#### repr_float_extremes
x = [5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308, -1.7976931348623157e308]
(x, repr(x))
#### repr_float_integral_big
x = [1e22, 1e21, 2.0 ** 53, 2.0 ** 64, 1e100, -1e16]
(x, repr(x))
#### repr_float_neg_nan
x = -float('nan')
(x, repr(x))
#### repr_float_nan_in_dict
x = {float('nan'): 1, float('inf'): -0.0}
(x, repr(x))
#### repr_nested_deep_list
x = [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]
(x, repr(x))
#### repr_nested_mixed
x = {'a': [1, (2, {3: {4}})], 'b': ({}, [], (), set())}
(x, repr(x))
#### repr_tuple_single
x = ((1,), ((),), (None,))
(x, repr(x))
#### repr_set_empty_and_frozenset
x = [set(), frozenset(), frozenset({1, 2}), {frozenset()}]
(x, repr(x))
#### repr_set_strings
x = {'b', 'a', 'é', '日'}
(x, repr(x))
#### repr_frozenset_nested
x = frozenset({frozenset({1}), frozenset()})
(x, repr(x))
#### repr_dict_keys_mixed
x = {1: 'a', 1.5: 'b', (1, 2): 'c', None: 'd', True: 'e', b'k': 'f', 'k': 'g', frozenset(): 'h'}
(x, repr(x))
#### repr_dict_nested_empty
x = {'': {'': {'': ''}}}
(x, repr(x))
#### repr_list_self_cycle
x = [1]
x.append(x)
(x, repr(x))
#### repr_dict_self_cycle
x = {}
x['me'] = x
x['l'] = [x]
(x, repr(x))
#### repr_shared_not_cycle
s = [1]
x = [s, s, (s,)]
(x, repr(x))
#### repr_dataclass
from dataclasses import dataclass
@dataclass
class P:
    x: int
    y: str = 'd'
x = P(1)
(x, repr(x))
#### repr_dataclass_nested
from dataclasses import dataclass
@dataclass
class In:
    v: list
@dataclass
class Out:
    a: In
    b: dict
x = Out(In([1, 'é']), {'k': In([])})
(x, repr(x))
#### repr_dataclass_frozen_unicode
from dataclasses import dataclass
@dataclass(frozen=True)
class Größe:
    wert: float
x = Größe(1.5)
(x, repr(x))
#### repr_dataclass_no_fields
from dataclasses import dataclass
@dataclass
class E:
    pass
x = E()
(x, repr(x))
#### repr_dataclass_field_repr_false
from dataclasses import dataclass, field
@dataclass
class P:
    a: int
    b: int = field(default=2, repr=False)
x = P(1)
(x, repr(x))
#### repr_namedtuple
from collections import namedtuple
Pt = namedtuple('Pt', ['x', 'y'])
x = Pt(1, 'b')
(x, repr(x))
#### repr_namedtuple_typing
from typing import NamedTuple
class Pt(NamedTuple):
    x: int
    y: str = 'q'
x = Pt(1)
(x, repr(x))
#### repr_plain_instance
class K:
    def __init__(self):
        self.a = 1
        self.b = [2]
x = K()
(x, repr(x))
#### repr_date_edges
from datetime import date
x = [date.min, date.max, date(2000, 2, 29)]
(x, repr(x))
#### repr_datetime_edges
from datetime import datetime
x = [datetime.min, datetime.max, datetime(2024, 1, 1), datetime(2024, 1, 1, 0, 0, 0, 1)]
(x, repr(x))
#### repr_datetime_aware_various
from datetime import datetime, timezone, timedelta
x = [datetime(2024, 1, 1, tzinfo=timezone.utc), datetime(2024, 1, 1, 12, tzinfo=timezone(timedelta(hours=-5))), datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=5, minutes=30), 'IST'))]
(x, repr(x))
#### repr_datetime_offset_seconds
from datetime import datetime, timezone, timedelta
x = datetime(2024, 1, 1, tzinfo=timezone(timedelta(seconds=1)))
(x, repr(x))
#### repr_datetime_offset_micros
from datetime import datetime, timezone, timedelta
x = datetime(2024, 1, 1, tzinfo=timezone(timedelta(microseconds=-1)))
(x, repr(x))
#### repr_time_edges
from datetime import time
x = [time(), time(23, 59, 59, 999999), time(0, 0, 0, 1), time(12, 30)]
(x, repr(x))
#### repr_time_fold_aware
from datetime import time, timezone, timedelta
x = time(1, 2, 3, fold=1, tzinfo=timezone(timedelta(hours=-3)))
(x, repr(x))
#### repr_timedelta_edges
from datetime import timedelta
x = [timedelta.max, timedelta.min, timedelta.resolution, timedelta(days=-1), timedelta(seconds=-1), timedelta(microseconds=999999), timedelta(days=1, microseconds=1)]
(x, repr(x))
#### repr_timezone_edges
from datetime import timezone, timedelta
x = [timezone.utc, timezone.min, timezone.max, timezone(timedelta(0)), timezone(timedelta(hours=1), 'CET'), timezone(timedelta(minutes=-90)), timezone(timedelta(0), 'Z')]
(x, repr(x))
#### repr_timezone_name_quotes
from datetime import timezone, timedelta
x = timezone(timedelta(hours=2), "it's")
(x, repr(x))
#### repr_exceptions_various
x = [ValueError('é\n'), KeyError('k'), OSError('o'), TypeError(''), ZeroDivisionError('division by zero'), StopIteration()]
(x, repr(x))
#### repr_exception_quotes
x = [ValueError("it's"), ValueError('say "x"'), ValueError('both \' "')]
(x, repr(x))
#### repr_types_various
x = [int, str, type(None), type(...), bool, bytes, object, type]
(x, repr(x))
#### repr_builtin_functions
x = [len, print, repr, sorted, min, max, isinstance, getattr]
(x, repr(x))
#### repr_ellipsis_notimpl
x = [..., NotImplemented, None, True, False]
(x, repr(x))
#### repr_path_various
from pathlib import Path
x = [Path('/'), Path('.'), Path('a/b/../c'), Path('/tmp/é 日'), Path("it's")]
(x, repr(x))
#### repr_range_slice
x = [range(0), range(1, 10, 3), range(-5, 5, -1), slice(1, None, -1)]
(x, repr(x))
#### repr_str_long_unicode
x = 'é' * 5000 + '🎉' * 100
(x, repr(x))
#### repr_bytes_large_mixed
x = b'\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x20\x21\x22\x23\x24\x25\x26\x27\x28\x29\x2a\x2b\x2c\x2d\x2e\x2f\x30\x31\x32\x33\x34\x35\x36\x37\x38\x39\x3a\x3b\x3c\x3d\x3e\x3f\x40\x41\x42\x43\x44\x45\x46\x47\x48\x49\x4a\x4b\x4c\x4d\x4e\x4f\x50\x51\x52\x53\x54\x55\x56\x57\x58\x59\x5a\x5b\x5c\x5d\x5e\x5f\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f\x70\x71\x72\x73\x74\x75\x76\x77\x78\x79\x7a\x7b\x7c\x7d\x7e\x7f\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f\xa0\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xab\xac\xad\xae\xaf\xb0\xb1\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xba\xbb\xbc\xbd\xbe\xbf\xc0\xc1\xc2\xc3\xc4\xc5\xc6\xc7\xc8\xc9\xca\xcb\xcc\xcd\xce\xcf\xd0\xd1\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xda\xdb\xdc\xdd\xde\xdf\xe0\xe1\xe2\xe3\xe4\xe5\xe6\xe7\xe8\xe9\xea\xeb\xec\xed\xee\xef\xf0\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9\xfa\xfb\xfc\xfd\xfe\xff' * 40
(x, repr(x))
#### repr_list_of_huge_ints
x = [2 ** 200, -(2 ** 300), 10 ** 50 + 1]
(x, repr(x))
#### repr_dict_insertion_after_delete
x = {'a': 1, 'b': 2, 'c': 3}
del x['b']
x['b'] = 4
(x, repr(x))
#### repr_set_ints_order
x = {100, 3, -1, 2 ** 40, 7}
(x, repr(x))
#### repr_bool_subclass_keys
x = {True: 'a', 1: 'b', 1.0: 'c'}
(x, repr(x))
#### repr_sandbox_function
def f(a, b=1):
    return a
x = f
(x, repr(x))
#### repr_lambda
x = lambda: 0
(x, repr(x))
#### repr_bound_method
class K:
    def m(self):
        return 1
x = K().m
(x, repr(x))
#### repr_module
import math
x = math
(x, repr(x))
#### repr_json_roundtrip
import json
x = json.loads('{"a": [1, 2.5, null, true, "é\\u0000"], "b": {}}')
(x, repr(x))
#### repr_complex_number
x = 1 + 2j
(x, repr(x))
#### repr_bytearray
x = bytearray(b'ab')
(x, repr(x))
#### value_str_100k
'x' * (100 * 1024)
#### value_list_5k_ints
list(range(-2500, 2500))
#### value_dict_1k
{str(i): i for i in range(1000)}
#### value_bytes_every_value
b'\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x20\x21\x22\x23\x24\x25\x26\x27\x28\x29\x2a\x2b\x2c\x2d\x2e\x2f\x30\x31\x32\x33\x34\x35\x36\x37\x38\x39\x3a\x3b\x3c\x3d\x3e\x3f\x40\x41\x42\x43\x44\x45\x46\x47\x48\x49\x4a\x4b\x4c\x4d\x4e\x4f\x50\x51\x52\x53\x54\x55\x56\x57\x58\x59\x5a\x5b\x5c\x5d\x5e\x5f\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f\x70\x71\x72\x73\x74\x75\x76\x77\x78\x79\x7a\x7b\x7c\x7d\x7e\x7f\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f\xa0\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xab\xac\xad\xae\xaf\xb0\xb1\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xba\xbb\xbc\xbd\xbe\xbf\xc0\xc1\xc2\xc3\xc4\xc5\xc6\xc7\xc8\xc9\xca\xcb\xcc\xcd\xce\xcf\xd0\xd1\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xda\xdb\xdc\xdd\xde\xdf\xe0\xe1\xe2\xe3\xe4\xe5\xe6\xe7\xe8\xe9\xea\xeb\xec\xed\xee\xef\xf0\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9\xfa\xfb\xfc\xfd\xfe\xff'
#### value_tuple_of_sets
({1}, frozenset({2}), set(), frozenset())
#### value_int_neg_big_in_dict_key
{-(2 ** 100): 'neg', 2 ** 100: 'pos'}
#### value_float_list
[float(i) / 7 for i in range(20)]
#### value_nested_depth_40
x = 1
for _ in range(40):
    x = [x]
x
#### value_tuple_depth_30
x = ()
for _ in range(30):
    x = (x,)
x

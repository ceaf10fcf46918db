# Values at their extremes, made in the sandbox and returned beside the
# sandbox's own repr or str of them.
#### xrepr_int_i64_edges
x = [2 ** 63 - 1, -2 ** 63, 2 ** 63, -2 ** 63 - 1, 2 ** 64 - 1, 2 ** 64, -(2 ** 64), 0, -1]
(x, repr(x))
#### xrepr_int_powers_of_ten
x = [10 ** i for i in range(0, 40, 3)] + [-(10 ** 30) - 1]
(x, repr(x))
#### xrepr_int_4299_digits
x = 10 ** 4299 - 1
(x, repr(x))
#### xrepr_float_edges
x = [1.7976931348623157e308, -1.7976931348623157e308, 2.2250738585072014e-308, 2.225073858507201e-308, 5e-324, -5e-324, 1e16, 1e15, 9999999999999998.0, 1e-4, 1e-5, 0.0001, 123456789012345678.0]
(x, repr(x))
#### xrepr_float_roundings
x = [0.1 + 0.2, 1 / 3, 2 / 3, 100.0, 1e22, 1e23, 0.5, 2.5e-7, 1.5e300 * 1.5e300, -(1.5e300 * 1.5e300), 123.456e-300]
(x, repr(x))
#### xstr_float_edges
x = [1e16, 1e-5, 1.7976931348623157e308, 5e-324, -0.0, 1.0]
(x, str(x))
#### xrepr_str_controls_all
x = ''.join(chr(i) for i in range(0, 0x20)) + '\x7f' + ''.join(chr(i) for i in range(0x80, 0xa1))
(x, repr(x))
#### xrepr_str_quotes_mixed
x = ['\'', '"', '\'"', '\\\'', '\\', '"\'\\']
(x, repr(x))
#### xrepr_str_astral_escapes
x = '\U000e0000\U000e0001\U000e007f\U000f0000\U0010fffd\U0010ffff\U0001d400\U0001f9ff\U0002a6df\U00030000'
(x, repr(x))
#### xrepr_str_format_chars
x = '\u200b\u200c\u200d\u200e\u200f\u202a\u202e\u2060\u2066\u2069\ufeff\ufff9\ufffb\ufffc\ufffd'
(x, repr(x))
#### xrepr_str_unassigned_bmp
x = '\u0378\u0379\u0380\u0557\u05ff\u0bff\u2fff\u4dc0\ua4c7\ud7fc\ufdd0\ufffe\uffff'
(x, repr(x))
#### xrepr_str_spaces
x = '\u00a0\u1680\u2000\u2001\u200a\u2028\u2029\u202f\u205f\u3000\u0085\u001c\u001d\u001e\u001f'
(x, repr(x))
#### xrepr_str_long_10k
x = 'é\n' * 5000
(x, repr(x))
#### xrepr_bytes_edges
x = [b'', b'\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x20\x21\x22\x23\x24\x25\x26\x27\x28\x29\x2a\x2b\x2c\x2d\x2e\x2f\x30\x31\x32\x33\x34\x35\x36\x37\x38\x39\x3a\x3b\x3c\x3d\x3e\x3f\x40\x41\x42\x43\x44\x45\x46\x47\x48\x49\x4a\x4b\x4c\x4d\x4e\x4f\x50\x51\x52\x53\x54\x55\x56\x57\x58\x59\x5a\x5b\x5c\x5d\x5e\x5f\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f\x70\x71\x72\x73\x74\x75\x76\x77\x78\x79\x7a\x7b\x7c\x7d\x7e\x7f\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f\xa0\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xab\xac\xad\xae\xaf\xb0\xb1\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xba\xbb\xbc\xbd\xbe\xbf\xc0\xc1\xc2\xc3\xc4\xc5\xc6\xc7\xc8\xc9\xca\xcb\xcc\xcd\xce\xcf\xd0\xd1\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xda\xdb\xdc\xdd\xde\xdf\xe0\xe1\xe2\xe3\xe4\xe5\xe6\xe7\xe8\xe9\xea\xeb\xec\xed\xee\xef\xf0\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9\xfa\xfb\xfc\xfd\xfe\xff', b'\'', b'"', b'\'"', b'\\', b'\x7f\x80\xff']
(x, repr(x))
#### xrepr_containers_empty_nested
x = [[], (), {}, set(), frozenset(), ((),), [[]], {(): frozenset()}, [set()], (frozenset({frozenset()}),)]
(x, repr(x))
#### xrepr_tuple_singletons
x = ((1,), ((1,),), (None,), ('',), ((),))
(x, repr(x))
#### xrepr_dict_float_keys
x = {0.0: 'z', 1e16: 'a', -1e-5: 'b', 1.5: 'c', float('inf'): 'd'}
(x, repr(x))
#### xrepr_set_mixed
x = {None, 1, 'a', b'b', (1, 2), 2.5, frozenset({3})}
(x, repr(x))
#### xrepr_depth_20_list
x = []
for _ in range(20):
    x = [x, 1]
(x, repr(x))
#### xrepr_shared_list_three_times
s = [1, 'é']
x = [s, s, (s, {'k': s})]
(x, repr(x))
#### xrepr_dates_edges
from datetime import date, datetime, time, timedelta, timezone
x = [date(1, 1, 1), date(9999, 12, 31), datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59, 999999), time(0, 0), time(23, 59, 59, 999999)]
(x, repr(x))
#### xrepr_timedelta_edges
from datetime import timedelta
x = [timedelta(days=-999999999), timedelta(days=999999999, seconds=86399, microseconds=999999), timedelta(microseconds=1), timedelta(microseconds=-1), timedelta(0), timedelta(days=1, seconds=1), timedelta(seconds=-1)]
(x, repr(x))
#### xstr_timedelta_edges
from datetime import timedelta
x = [timedelta(days=-999999999), timedelta(days=999999999, seconds=86399, microseconds=999999), timedelta(microseconds=-1), timedelta(days=-1, seconds=86399)]
(x, str(x))
#### xrepr_timezone_edges
from datetime import timezone, timedelta
x = [timezone(timedelta(hours=23, minutes=59)), timezone(-timedelta(hours=23, minutes=59)), timezone(timedelta(seconds=1)), timezone(timedelta(0), 'é"\''), timezone.utc]
(x, repr(x))
#### xstr_timezone_edges
from datetime import timezone, timedelta
x = [timezone(timedelta(hours=23, minutes=59)), timezone(timedelta(seconds=-1)), timezone(timedelta(0), 'é')]
(x, str(x))
#### xrepr_datetime_aware_edges
from datetime import datetime, timezone, timedelta
x = [datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=23))), datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone(-timedelta(hours=23, minutes=59, seconds=59))), datetime(2000, 1, 1, fold=1), datetime(2000, 1, 1, tzinfo=timezone(timedelta(seconds=1), 'N'))]
(x, repr(x))
#### xstr_datetime_aware_edges
from datetime import datetime, timezone, timedelta
x = [datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=23))), datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone(-timedelta(hours=23, minutes=59, seconds=59))), datetime(2000, 1, 1, 0, 0, 0, 1, tzinfo=timezone(timedelta(seconds=1), 'N'))]
(x, str(x))
#### xrepr_time_aware_edges
from datetime import time, timezone, timedelta
x = [time(23, 59, 59, 999999, tzinfo=timezone(timedelta(hours=-23))), time(0, 0, 0, 1, fold=1), time(12, tzinfo=timezone.utc)]
(x, repr(x))
#### xrepr_exceptions_args
x = [ValueError(), ValueError(''), ValueError('a\nb'), KeyError('k'), KeyError(''), OSError('é'), StopIteration(), SystemExit(), RuntimeError('"\'')]
(x, repr(x))
#### xstr_exceptions_args
x = [ValueError(), KeyError('k'), KeyError(''), OSError('é'), RuntimeError('"\'')]
(x, str(x))
#### xrepr_types_and_functions
x = [int, str, type(None), ValueError, len, print, sorted, type, object]
(x, repr(x))
#### xrepr_ranges_slices
x = [range(0), range(-5, 5, 2), range(2 ** 62), slice(None), slice(1, None, -1)]
(x, repr(x))
#### xrepr_dataclass_extremes
from dataclasses import dataclass
@dataclass
class D:
    a: int
    b: str
    c: list
x = [D(2 ** 70, 'é\n"\'', [D(0, '', [])]), D(-1, '\x00', [None])]
(x, repr(x))
#### xrepr_namedtuple_nested
from collections import namedtuple
P = namedtuple('P', ['x', 'y'])
x = P(P(1, 2), [P('a', None)])
(x, repr(x))
#### xrepr_bool_none_mix
x = [True, False, None, ..., NotImplemented, (True,), {True: False}]
(x, repr(x))

Print calls: separators, ends, unicode and interleaving with errors.
#### printx_sep_empty
print('a', 'b', 'c', sep='')
#### printx_sep_multichar
print(1, 2, 3, sep=' <-> ')
#### printx_end_empty_then_more
print('a', end='')
print('b', end='')
print()
#### printx_end_custom
print('x', end='!\n')
#### printx_sep_none_end_none
print('a', 'b', sep=None, end=None)
#### printx_star_args
print(*[1, 'two', 3.0, None, [4]], sep=', ')
#### printx_no_args
print()
print()
#### printx_unicode_mix
print('é', '日本', '🎉', '\u0301', sep='|')
#### printx_reprs_of_containers
print([1, 'a'], {'k': (1,)}, {1}, b'x', 2 ** 70, -0.0, float('nan'))
#### printx_file_stdout
import sys
print('to stdout', file=sys.stdout)
#### printx_flush_true
print('flushed', flush=True)
#### printx_many_lines
for i in range(300):
    print(i, 'line' * 5)
#### printx_then_exception
print('before')
print('still', end='')
raise ValueError('after print')
#### printx_in_function_then_error
def f():
    print('in f')
    return 1 / 0
f()
#### printx_control_chars
print('a\x00b\x1bc\rd\x7f')
#### printx_sep_non_str
print('a', 'b', sep=1)
#### printx_end_non_str
print('a', end=[])
#### printx_unknown_kwarg
print('a', color='red')
#### printx_large_single
print('y' * 20000)
#### printx_dataclass
from dataclasses import dataclass
@dataclass
class P:
    x: int
print(P(1), [P(2)])
#### printx_str_of_exception
try:
    {}['k']
except KeyError as e:
    print(e, repr(e), str(e))
#### printx_datetime
from datetime import datetime, timedelta, timezone, date
print(datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=timezone(timedelta(hours=-1))), date(2020, 1, 1), timedelta(days=-1, seconds=5))

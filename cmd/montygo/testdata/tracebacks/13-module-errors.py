# Exception types that live in modules or need special arguments, raised by
# the operations that raise them and by hand.
#### binascii-error
import binascii
binascii.unhexlify('zz')
#### base64-bad-padding
import base64
base64.b64decode('abc')
#### io-unsupported-operation
import io
s = io.StringIO('x')
s.fileno()
#### json-decode-error-raised-by-hand
import json
raise json.JSONDecodeError('bad', 'doc', 0)
#### json-decode-error-caught-reraised
import json
try:
    json.loads('[1,')
except json.JSONDecodeError as e:
    print(e.msg, e.pos)
    raise
#### re-pattern-error
import re
re.compile('[')
#### re-error-caught
import re
try:
    re.compile('(?')
except re.error:
    print('pattern error caught')
    raise
#### frozen-instance-error-raised
from dataclasses import FrozenInstanceError
raise FrozenInstanceError('frozen')
#### unicode-decode-error-by-hand
raise UnicodeDecodeError('utf-8', b'\xff', 0, 1, 'invalid start byte')
#### unicode-encode-error-by-hand
raise UnicodeEncodeError('ascii', 'é', 0, 1, 'ordinal not in range(128)')
#### unicode-decode-error-in-function
def decode(b):
    return b.decode('utf-8')
decode(b'ok \xc3')
#### systemexit-no-args
raise SystemExit
#### systemexit-in-function
def quit_now():
    raise SystemExit('bye')
quit_now()
#### keyboardinterrupt-in-function
def f():
    raise KeyboardInterrupt('interrupted')
f()
#### memoryerror-by-hand
raise MemoryError('pretend')
#### recursionerror-by-hand
raise RecursionError('pretend')
#### timeouterror-by-hand
raise TimeoutError('pretend')
#### stopiteration-from-next
it = iter([1])
next(it)
next(it)
#### stopiteration-value
raise StopIteration(5)
#### notimplementederror-in-method
class Base:
    def area(self):
        raise NotImplementedError('subclass must implement')
Base().area()
#### lookuperror-catch-keyerror
try:
    {}['k']
except LookupError as e:
    raise RuntimeError('lookup failed') from e
#### arithmeticerror-catch-zerodivision
try:
    1 % 0
except ArithmeticError:
    raise
#### oserror-hierarchy
try:
    raise IsADirectoryError('a dir')
except OSError as e:
    print(type(e).__name__)
    raise NotADirectoryError('not a dir') from e
#### exception-group-unsupported
raise ExceptionGroup('group', [ValueError('a')])
#### importerror-from-module
from json import nosuchname
#### modulenotfound-nested-in-function
def load():
    import not_a_module
load()
#### zoneinfo-or-datetime-error
import datetime
datetime.date(2020, 13, 1)
#### datetime-bad-format
import datetime
datetime.datetime.strptime('x', '%Y')
#### math-isqrt-negative
import math
math.isqrt(-4)
#### int-base-invalid
int('10', 1)
#### bytes-index-out-of-range
b = b'ab'
b[5]
#### bytearray-append-out-of-range
ba = bytearray()
ba.append(300)
#### float-fromhex
float.fromhex('zz')
#### complex-unsupported
x = 1j + 'a'
#### typing-cast-fine-then-fail
from typing import cast
x = cast(int, 'a')
x + 1

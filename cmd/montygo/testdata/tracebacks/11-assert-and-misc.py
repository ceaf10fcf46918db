# assert, stdout before errors, standard modules with deterministic errors.
#### assert-false
assert False
#### assert-compare
assert 1 == 2
#### assert-message
assert 1 == 2, 'custom message'
#### assert-expression
x = [1, 2]
assert len(x) > 5
#### assert-in-function
def check(v):
    assert v > 0, f'v={v}'
check(-1)
#### assert-long-operands
assert 'abcdefghijklmnopqrstuvwxyz' * 3 == 'zyx'
#### assert-message-fails
assert False, 1 / 0
#### assert-not
assert not True
#### assert-in
assert 3 in [1, 2]
#### assert-is-none
x = 1
assert x is None
#### print-then-error
print('hello')
print('world')
1 / 0
#### print-sep-end-then-error
print('a', 'b', sep='-', end='!\n')
[][0]
#### print-many-lines-then-error
for i in range(5):
    print(i)
raise ValueError('after loop')
#### print-unicode-then-error
print('ünïcödé ✓')
{}['k']
#### print-in-function-then-error
def f():
    print('inside f')
    return None + 1
f()
#### print-nothing-to-stdout-no-error
x = 1
print(x)
#### print-empty
print()
raise KeyError('empty line printed')
#### json-decode-error
import json
json.loads('{bad')
#### json-decode-empty
import json
json.loads('')
#### json-dumps-unserializable
import json
json.dumps({1, 2})
#### math-domain
import math
math.sqrt(-1)
#### math-log-zero
import math
math.log(0)
#### math-factorial-negative
import math
math.factorial(-1)
#### math-inf-int
int(float('inf'))
#### re-bad-pattern
import re
re.compile('(')
#### re-no-match-group
import re
re.match('a', 'b').group(0)
#### unicode-decode
b'\xff'.decode('utf-8')
#### unicode-encode
'é'.encode('ascii')
#### bytes-plus-str
b'a' + 'b'
#### int-too-large-float
float(10 ** 400)
#### overflow-pow
x = 2.0 ** 10000
int(x)
#### str-to-int-base
int('z', 10)
#### list-index-large
xs = list(range(3))
xs[3]
#### dict-keys-missing
d = dict(a=1)
d.keys()[0]
#### tuple-immutable-del
t = (1, 2)
del t[0]
#### set-remove-missing
s = {1}
s.remove(2)
#### frozen-dataclass
from dataclasses import dataclass
@dataclass(frozen=True)
class P:
    x: int
p = P(1)
p.x = 2
#### dataclass-missing-field
from dataclasses import dataclass
@dataclass
class P:
    x: int
    y: int
P(1)
#### import-missing-module
import nosuchmodule
#### from-import-missing-name
from math import nosuch
#### type-call-bad
type(1, 2)
#### hash-list
hash([1])
#### getattr-missing
getattr(1, 'nope')
#### setattr-on-int
setattr(1, 'x', 2)
#### issubclass-bad
issubclass(1, int)
#### str-multiply-negative-ok-then-error
s = 'a' * -1
s[0]
#### chained-exception-print
try:
    1 / 0
except ZeroDivisionError as e:
    print(repr(e))
    raise ValueError(str(e)) from e
#### exception-args
e = ValueError('a', 1)
print(e.args)
raise e
#### exception-str-repr
e = KeyError('k')
print(str(e), repr(e))
raise e
#### custom-exception
class MyError(Exception):
    pass
raise MyError('mine')
#### custom-exception-caught-reraise
class MyError(Exception):
    pass
try:
    raise MyError('mine')
except MyError:
    raise
#### while-else-error
n = 0
while n < 1:
    n += 1
else:
    n / 0
#### for-else-error
for i in []:
    pass
else:
    [][i]
#### try-finally-print-order
try:
    print('try')
    1 / 0
finally:
    print('finally')
#### nested-finally
try:
    try:
        print('inner try')
        {}['x']
    finally:
        print('inner finally')
finally:
    print('outer finally')

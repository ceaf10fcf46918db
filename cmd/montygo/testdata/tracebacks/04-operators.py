# Every expression shape that can fail: binary and unary operators,
# comparisons, subscripts, attributes, calls, at module level and inside
# larger expressions.
#### add-int-str
x = 1 + 'a'
#### add-str-int
x = 'a' + 1
#### add-none
x = None + 1
#### sub-str
x = 'a' - 'b'
#### mul-str-str
x = 'a' * 'b'
#### mul-list-float
x = [1] * 1.5
#### truediv-zero
x = 1 / 0
#### truediv-float-zero
x = 1.0 / 0.0
#### floordiv-zero
x = 7 // 0
#### mod-zero
x = 7 % 0
#### mod-str-format
x = '%d' % 'a'
#### pow-zero-negative
x = 0 ** -1
#### pow-str
x = 'a' ** 2
#### matmul
x = 1 @ 2
#### lshift-negative
x = 1 << -1
#### rshift-float
x = 1.0 >> 1
#### bitand-float
x = 1.5 & 1
#### bitor-str
x = 'a' | 1
#### bitxor-list
x = [1] ^ [2]
#### divmod-zero
x = divmod(1, 0)
#### nested-binop-inner
x = (1 + 2) * (3 / 0)
#### nested-binop-outer
x = (1 + 2) + 'x'
#### binop-in-call
print(1 + 'a')
#### binop-in-list
xs = [1, 2, 3 / 0]
#### binop-spaces
x = 10    /    0
#### binop-no-spaces
x=10/0
#### binop-variables
a = 5
b = 0
c = a / b
#### binop-chain-left
x = 1 + 2 + 3 + None
#### binop-chain-middle
x = 1 * 2 + None * 3
#### augassign-add
x = 1
x += 'a'
#### augassign-div
x = 1
x /= 0
#### augassign-list
xs = [1]
xs += 5
#### augassign-subscript
d = {'a': 1}
d['a'] += 'x'
#### augassign-attr
class C:
    def __init__(self):
        self.n = 1
c = C()
c.n -= 'x'
#### unary-neg-str
x = -'a'
#### unary-pos-list
x = +[1]
#### unary-invert-float
x = ~1.5
#### unary-neg-none
x = -None
#### unary-double
x = --'a'
#### unary-in-binop
x = 1 + -'a'
#### not-ok-then-fail
x = not 1
y = x + 'a'
#### compare-lt-int-str
x = 1 < 'a'
#### compare-gt-list-int
x = [1] > 1
#### compare-le-none
x = None <= None
#### compare-ge-dict
x = {} >= {}
#### compare-chain-second
x = 1 < 2 < 'a'
#### compare-chain-first
x = 'a' < 1 < 2
#### compare-in-int
x = 1 in 5
#### compare-not-in
x = 'a' not in 3
#### compare-in-if
if 'a' < 1:
    pass
#### compare-in-sorted
xs = sorted([1, 'a'])
#### compare-in-max
m = max(1, 'a')
#### subscript-list-index
xs = [1, 2, 3]
xs[10]
#### subscript-list-negative
xs = [1, 2, 3]
xs[-10]
#### subscript-str-index
s = 'abc'
s[5]
#### subscript-tuple
t = (1,)
t[1]
#### subscript-dict-missing
d = {'a': 1}
d['b']
#### subscript-dict-int-key
d = {}
d[0]
#### subscript-type
xs = [1]
xs['a']
#### subscript-int
x = 5
x[0]
#### subscript-none
x = None
x[0]
#### subscript-nested
m = [[1, 2], [3]]
m[1][1]
#### subscript-nested-dict
d = {'a': {'b': 1}}
d['a']['c']
#### subscript-unhashable
d = {}
d[[1]] = 2
#### subscript-assign-tuple
t = (1, 2)
t[0] = 5
#### subscript-assign-str
s = 'abc'
s[0] = 'x'
#### subscript-del-missing
d = {}
del d['k']
#### subscript-slice-step-zero
xs = [1, 2, 3]
xs[::0]
#### subscript-in-expression
xs = [1, 2]
y = xs[0] + xs[5]
#### subscript-in-call
xs = [1]
print(xs[3])
#### subscript-spaces
xs = [1]
xs [ 3 ]
#### attr-int
x = 1
x.foo
#### attr-none-call
x = None
x.append(1)
#### attr-str-method
'abc'.nosuch()
#### attr-list
[].push(1)
#### attr-module
import math
math.nosuch
#### attr-instance
class C:
    pass
C().missing
#### attr-chain
class C:
    pass
c = C()
c.a.b
#### attr-assign-int
x = 1
x.y = 2
#### attr-in-binop
x = 1
y = 2 + x.real.nope
#### call-int
x = 5
x()
#### call-str
'abc'()
#### call-none
f = None
f(1)
#### call-wrong-arity-builtin
len(1, 2)
#### call-len-int
len(5)
#### call-int-of-str
int('abc')
#### call-float-of-str
float('x')
#### call-int-of-list
int([1])
#### call-chr-range
chr(-1)
#### call-ord-long
ord('ab')
#### call-list-index
[1, 2].index(5)
#### call-list-remove
[1].remove(2)
#### call-dict-pop
{}.pop('k')
#### call-str-index
'abc'.index('z')
#### call-split-empty-sep
'a b'.split('')
#### call-join-ints
','.join([1, 2])
#### call-range-float
range(1.5)
#### call-range-step-zero
range(1, 2, 0)
#### call-sum-str
sum(['a', 'b'])
#### call-pop-empty
[].pop()
#### call-next-exhausted
next(iter([]))
#### call-iter-int
iter(5)
#### call-abs-str
abs('x')
#### call-round-str
round('x')
#### call-sorted-key
sorted([1, 2], key=5)
#### call-min-empty
min([])
#### call-zip-int
list(zip(1, 2))
#### call-bool-kwarg
print(1, nosuchkw=2)
#### call-nested-failing
print(len(int('x')))
#### call-method-chain
'a,b'.split(',').nosuch()
#### call-multiline-builtin
int(
    'abc'
)
#### call-multiline-in-function
def f():
    return int(
        'abc',
    )
f()

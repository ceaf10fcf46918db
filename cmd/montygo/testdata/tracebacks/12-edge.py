# Edge cases of the caret rules: undefined calls in unusual places, names
# repeated on a line, recursion ending in an undefined call, long spans.
#### undefined-call-class-body
class C:
    x = missing(1)
#### undefined-call-except-clause
try:
    1 / 0
except missing(ZeroDivisionError):
    pass
#### undefined-call-except-name
try:
    1 / 0
except missing:
    pass
#### undefined-call-recursion-bottom
def r(n):
    if n == 0:
        return missing(n)
    return r(n - 1)
r(5)
#### undefined-call-name-twice-on-line
def f():
    return len('missing') + missing(
        1)
f()
#### undefined-call-after-same-name-string
x = 'missing(' + missing(1)
#### undefined-call-name-is-prefix-of-other
missing_long = 1
x = missing_long + missing(2)
#### undefined-call-multiline-deep-indent
def f():
    for i in range(1):
        if True:
            total = (1 +
                     missing(
                         i))
f()
#### undefined-call-multiline-first-arg-same-line
def f():
    return missing(1,
                   2)
f()
#### undefined-call-multiline-elided
def f():
    return missing(
        1,
        2,
        3,
        4,
    )
f()
#### undefined-call-multiline-parenthesised
x = (
    missing(1,
            2)
)
#### undefined-call-in-gather
import asyncio
async def main():
    await asyncio.gather(missing())
asyncio.run(main())
#### undefined-call-in-kwarg-default-lambda
f = lambda x=missing(1): x
#### undefined-call-in-method-default
class C:
    def m(self, x=missing()):
        return x
#### undefined-call-underscore-name
_private_helper(1)
#### undefined-call-digits-name
helper2(1)
#### undefined-call-unicode-name
función(1)
#### undefined-call-unicode-before
s = 'ñ'; función(s)
#### undefined-call-tab-before
if True:
	x = 1;	missing(x)
#### undefined-call-in-fstring-nested
x = f'{f"{missing(1)}"}'
#### undefined-call-as-arg-of-undefined-call
outer_missing(inner_missing(1))
#### undefined-call-keyword-arg-call
print(sep=missing(1))
#### undefined-call-in-while-body
n = 0
while n < 3:
    n += 1
    if n == 2:
        missing(n)
#### undefined-call-after-print
print('one')
print('two')
missing(3)
#### undefined-call-in-comprehension-condition
xs = [x for x in range(3) if missing(x)]
#### undefined-call-in-nested-lambda
f = lambda: (lambda: missing(1))()
f()
#### undefined-call-in-dunder
class C:
    def __add__(self, o):
        return missing(o)
C() + 1
#### undefined-call-in-finally-after-error
try:
    1 / 0
finally:
    missing(1)
#### undefined-call-in-handler-of-undefined
try:
    missing_a(1)
except NameError:
    missing_b(2)
#### undefined-call-caught
try:
    missing(1)
except NameError as e:
    print('caught:', e)
raise ValueError('after')
#### undefined-read-multiline
x = (1 +
     missing_value)
#### undefined-read-in-call-multiline
print(1,
      missing_value)
#### unbound-local-in-comprehension
def f():
    xs = [y for _ in range(1)]
    y = 1
f()
#### unbound-local-augassign
def f():
    n += 1
f()
#### attribute-error-multiline
x = (1
     .nope)
#### key-error-deep-frames
def a(d):
    return b(d)
def b(d):
    return c(d)
def c(d):
    return d['k']
a({})
#### long-traceback-mixed
def p(n):
    if n == 0:
        return q()
    return p(n - 1)
def q():
    return r(3)
def r(n):
    if n == 0:
        raise ValueError('end')
    return r(n - 1)
p(5)
#### recursion-limit-nameerror-free
def r(n):
    return 1 + r(n + 1)
r(0)
#### recursion-limit-in-lambda-multi
f = lambda n: (
    f(n + 1))
f(0)
#### very-long-line-caret
x = 1; y = 2; z = 3; w = 4; v = 5; u = 6; t = 7; s = 8; q = 9; p = 0; result = x + y + z + w + v + u + t + s + q / p
#### many-frames-distinct
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
#### single-line-function-defs
def f(): return [][0]
f()
#### exception-message-empty-string
raise KeyError('')
#### exception-message-quotes
raise ValueError("it's \"quoted\"")
#### exception-message-trailing-newline
raise ValueError('ends with newline\n')
#### exception-message-unicode-escape
raise ValueError('tab\there')
#### raise-in-generator-expression-function
def f():
    return list(int(x) for x in 'a1')
f()
#### print-end-no-newline-then-error
print('no newline', end='')
1 / 0
#### print-flush-many
for i in range(50):
    print('line', i)
[][i]
#### undefined-call-paren-spaces
x = ( missing )(1)
#### undefined-call-double-paren
x = ((missing))(1)
#### undefined-call-tab-before-paren
x = missing	(1)
#### undefined-call-callee-on-next-line
x = (
    missing
)(1)
#### undefined-call-paren-then-newline
x = (
missing)(1)
#### undefined-call-in-subscript-of-call
x = missing(1)[0]
#### undefined-call-attr-of-result
x = missing(1).real
#### undefined-call-starred-kwargs-multiline
kw = {}
missing(
    **kw)
#### undefined-call-in-return-multiline-paren
def f():
    return (
        missing(1))
f()
#### undefined-call-backslash
x = 1 + \
    missing(2)
#### undefined-call-backslash-inside
x = missing(1, \
    2)
#### undefined-call-callee-on-next-line-in-function
def f():
    x = (
        missing
    )(1)
f()
#### undefined-call-callee-after-comment-line
x = (  # the callee follows
    missing
)(1)
#### undefined-call-callee-two-lines-down
x = ((
    (
        missing)))(1)

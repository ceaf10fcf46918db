# Undefined names: called directly (the worker's CLI underlines only the
# name), read without a call, and in every position of an expression.
#### issue-call-three-args
missing_func(1, 2, 3)
#### issue-binop-call
x = 1 + missing_func()
#### issue-inner-frame
def snap_caller():
    return snap(1)
snap_caller()
#### read-plus
x = undefined_name + 1
#### read-bare
undefined_name
#### read-assign
y = undefined_name
#### read-in-function
def f():
    return some_global
f()
#### call-no-args
missing()
#### call-kwargs
missing(a=1, b=2)
#### call-star-args
args = [1, 2]
missing(*args)
#### call-star-kwargs
kw = {'a': 1}
missing(**kw)
#### call-spaces-before-paren
x = missing  (1)
#### call-nested-inner
missing(missing(1))
#### call-in-arg
print(missing(1))
#### call-in-list
xs = [1, 2, missing(3)]
#### call-in-dict
d = {'a': missing(1)}
#### call-in-tuple
t = (1, missing(2))
#### call-in-subscript
xs = [1, 2]
xs[missing(0)]
#### call-in-condition
if missing(1):
    pass
#### call-in-while
while missing():
    pass
#### call-in-for
for i in missing(3):
    pass
#### call-in-return
def f():
    return missing(1)
f()
#### call-in-ternary
x = 1 if missing(1) else 2
#### call-in-ternary-else
x = 1 if False else missing(2)
#### call-in-comparison
x = missing(1) < 2
#### call-in-fstring
s = f'value {missing(1)}'
#### call-in-lambda
f = lambda: missing(1)
f()
#### call-in-comprehension
xs = [missing(i) for i in range(3)]
#### call-in-genexpr
total = sum(missing(i) for i in range(3))
#### call-in-dictcomp
d = {i: missing(i) for i in range(3)}
#### call-in-setcomp
s = {missing(i) for i in range(3)}
#### call-multiline-args
missing(
    1,
    2)
#### call-multiline-paren-next-line
x = (missing
     (1))
#### call-multiline-in-function
def f():
    if True:
        return missing(
            1,
        2)
f()
#### call-multiline-in-list
def f():
    x = [1,
         missing(2)]
f()
#### call-after-semicolon
x = 1; missing(x)
#### call-in-method
class C:
    def m(self):
        return missing(self)
C().m()
#### call-in-nested
def outer():
    def inner():
        return missing(1)
    return inner()
outer()
#### call-in-async
async def main():
    return missing(1)
import asyncio
asyncio.run(main())
#### await-call
async def main():
    await missing()
import asyncio
asyncio.run(main())
#### call-method-of-missing
missing.attr(1)
#### attr-of-missing
x = missing.attr
#### subscript-of-missing
x = missing[0]
#### call-in-assert
assert missing(1)
#### call-in-unary
x = -missing(1)
#### call-in-not
x = not missing(1)
#### call-chained
missing(1)(2)
#### call-in-with-print
print('before')
missing(1)
print('after')
#### call-deep-frame
def a():
    return b()
def b():
    return c()
def c():
    return undefined_helper(1, 2)
a()
#### call-unicode-line
s = 'ééé'; missing(s)
#### call-tab-indent
if True:
	missing(1)
#### call-long-name
a_really_long_undefined_function_name_for_the_caret(1, 2, 3, 4, 5, 6)
#### call-in-default
def f(x=missing(1)):
    return x
#### call-in-augassign
x = 1
x += missing(1)
#### call-in-slice
xs = [1, 2, 3]
xs[missing(0):]
#### call-in-kwarg-value
print(1, sep=missing())
#### read-in-kwarg-value
print(1, sep=missing)
#### call-in-boolop
x = True and missing(1)
#### call-in-or
x = False or missing(1)
#### read-in-comprehension
xs = [undefined_thing for i in range(2)]
#### read-in-lambda
f = lambda: undefined_thing
f()
#### del-missing
del missing
#### unbound-local
def f():
    print(x)
    x = 1
f()
#### global-read-in-nested
def outer():
    def inner():
        return nope
    return inner()
outer()
#### call-in-except-handler
try:
    1 / 0
except ZeroDivisionError:
    missing(1)
#### call-in-finally
try:
    pass
finally:
    missing(1)
#### call-in-elif
x = 3
if x == 1:
    pass
elif missing(x):
    pass
#### call-in-return-tuple
def f():
    return 1, missing(2)
f()
#### call-star-expr
xs = [*missing(1)]
#### call-parenthesized
x = (missing)(1)
#### call-decorated
@missing
def f():
    pass
#### call-undefined-devanagari
नमस्ते(1)
#### call-undefined-devanagari-in-function
def f():
    return 1 + नमस्ते(2)
f()
#### call-undefined-devanagari-multiline
def f():
    return नमस्ते(
        1)
f()
#### call-undefined-connector-and-middle-dot
x‿y·z(1)
#### call-undefined-decomposed-accents
x = résumé(1)
#### call-undefined-ligature
ﬁle(1)
#### call-undefined-micro-sign-multiline
def f():
    return µx(
        1)
f()
#### call-undefined-mathematical-bold
y = (𝐟𝐨𝐨)(2)

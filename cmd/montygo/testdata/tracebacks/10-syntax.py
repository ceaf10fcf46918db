# Syntax errors and unsupported syntax: frames without a function name.
#### unexpected-eof
x = (1 +
#### missing-colon
if True
    pass
#### bad-parameter
def f(:
    pass
#### missing-indent
if True:
pass
#### unexpected-indent
	x = 1
#### unclosed-string
s = 'abc
#### second-line
x = 1
y = = 2
#### invalid-assignment-target
1 = x
#### empty-expression
x =
#### stray-bracket
x = 1)
#### nbsp-in-code
x = (
 1/0)
#### nbsp-indent-runtime
x = [
   1/0]
#### ideographic-space
x = (　1/0)
#### unsupported-class-inheritance
class A(object):
    pass
#### unsupported-yield
def g():
    yield 1
#### unsupported-global-in-comprehension
x = [1 for]
#### keyword-as-name
class = 1
#### lambda-bad
f = lambda: = 1
#### unterminated-triple
s = """abc
#### invalid-decorator
@
def f():
    pass
#### too-deep-nesting
x = ((((((((((((((((((((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))))))))))))))))))))
#### del-literal
del 1
#### return-outside-function
return 1 / 0
#### break-outside-loop
break
#### continue-outside-loop
continue
#### duplicate-argument
def f(a, a):
    pass
#### nonlocal-at-module
nonlocal x
#### star-assign-alone
*a = [1]
#### await-in-sync-function
def f():
    await g()
#### dict-bad
d = {1: }
#### call-bad-kwarg
f(a=1, 2)
#### string-prefix-bad
s = q'abc'
#### syntax-error-after-print
print('never runs')
x = (

# Error shapes probed while hardening the renderer: nested frames,
# chains, non-str args, unicode and tabs, syntax errors, undefined names.
#### nested-func
def a():
    def b():
        raise ValueError('x')
    b()
a()
#### class-method
class C:
    def m(self):
        return 1/0
C().m()
#### staticmethod
class C:
    @staticmethod
    def m():
        return {}['k']
C.m()
#### lambda
f = lambda x: x / 0
f(1)
#### lambda-inline
(lambda: 1/0)()
#### listcomp
[1/x for x in [1, 0]]
#### dictcomp
{x: 1/x for x in [0]}
#### genexp
list(1/x for x in [0])
#### generator
def g():
    yield 1
    raise KeyError('k')
for x in g():
    pass
#### generator-next
def g():
    yield 1/0
next(g())
#### decorator
def d(f):
    def w(*a):
        return f(*a)
    return w
@d
def h(x):
    return x + None
h(1)
#### closure
def outer():
    y = 0
    def inner():
        return 1 / y
    return inner
outer()()
#### recursion
def f(n):
    return f(n+1)
f(0)
#### raise-from
try:
    1/0
except ZeroDivisionError as e:
    raise ValueError('v') from e
#### raise-from-none
try:
    1/0
except ZeroDivisionError:
    raise ValueError('v') from None
#### implicit-chain
try:
    1/0
except ZeroDivisionError:
    raise ValueError('v')
#### bare-raise
try:
    1/0
except ZeroDivisionError:
    raise
#### bare-raise-no-active
raise
#### bare-raise-in-func
def f():
    raise
f()
#### nonstr-args-int
raise ValueError(42)
#### nonstr-args-tuple
raise ValueError(1, 'a')
#### nonstr-args-none
raise ValueError(None)
#### nonstr-args-list
raise ValueError([1, 'x'])
#### exception-empty-str
raise ValueError('')
#### custom-exc
class MyErr(Exception):
    pass
raise MyErr('boom')
#### custom-exc-noarg
class MyErr(Exception):
    pass
raise MyErr
#### custom-exc-str
class MyErr(Exception):
    def __str__(self):
        return 'custom'
raise MyErr('boom')
#### custom-exc-subclass
class A(ValueError):
    pass
class B(A):
    pass
raise B(1, 2)
#### keyerror-str
{}['a']
#### keyerror-int
{}[1]
#### keyerror-tuple
{}[(1, 2)]
#### keyerror-empty
raise KeyError('')
#### keyerror-noargs
raise KeyError()
#### keyerror-quote
{}["it's"]
#### keyerror-two
raise KeyError('a', 'b')
#### fstring-err
x = f'{1/0}'
#### fstring-nested
y = 5
x = f'a{y + None}b'
#### fstring-name
x = f'{undefined_var}'
#### multiline-call
def f(a, b):
    return a + b
f(
    1,
    None,
)
#### multiline-subscript
d = {}
x = d[
    'k'
]
#### attr-chain
class A:
    pass
a = A()
a.b.c.d
#### attr-chain-multiline
class A:
    pass
a = A()
x = (a
    .b
    .c)
#### method-call-chain
'abc'.upper().nope()
#### unicode-ident
变量 = 1
变量 + 'a'
#### wide-chars-before
s = '日本語'; t = s + 1
#### combining-before
s = 'éé'; t = s + 1
#### emoji-before
s = '😀😀'; t = s + 1
#### tab-inside
x = 1
y =	'a' +	1
#### tab-indent-func
def f():
	return 1/0
f()
#### long-line
x = 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + None
#### very-long-line
x = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' + 1
#### name-err
print(undefined_thing)
#### name-err-suggest
values = 1
print(valuse)
#### name-err-suggest-call
def compute():
    pass
comptue()
#### name-err-builtin-suggest
pritn('x')
#### attr-err-suggest
x = [1]
x.apend(2)
#### attr-err-module
import json
json.dumsp(1)
#### unbound-local
def f():
    print(x)
    x = 1
f()
#### syntax-unterminated-str
x = 'abc
#### syntax-unterminated-triple
x = '''abc
def
#### syntax-eof-paren
x = (1,
2
#### syntax-unmatched
x = 1)
#### syntax-indent-expected
def f():
return 1
#### syntax-unindent
if True:
        x = 1
    y = 2
#### syntax-invalid
x = = 1
#### syntax-col0
= 1
#### syntax-eof-colon
if True:
#### syntax-eof-colon-nl
if True:
#### syntax-keyword
class = 1
#### syntax-bad-token
x = 1 $ 2
#### syntax-fstring
x = f'{'
#### syntax-missing-comma
x = [1 2]
#### syntax-assign-literal
1 = x
#### syntax-unicode-line
é = (1 +
#### syntax-tab-line
x =	(1 +
#### error-line1-col0
undefined
#### error-eof
x = 1
y = 2
1/0
#### error-eof-newline
x = 1
y = 2
1/0
#### error-eof-comment
1/0
# comment
#### int-parse
int('abc')
#### type-error-call
def f(a):
    pass
f(1, 2)
#### type-error-missing-arg
def f(a, b):
    pass
f(1)
#### type-error-kw
def f(a):
    pass
f(b=1)
#### index-error
[][0]
#### assert-plain
assert False
#### assert-tuple-msg
assert False, (1, 2)
#### not-implemented
raise NotImplementedError
#### raise-class
raise ValueError
#### raise-instance-in-func
def f():
    e = ValueError('x')
    raise e
f()
#### reraise-in-func
def f():
    try:
        1/0
    except Exception:
        raise
f()
#### finally-error
try:
    pass
finally:
    1/0
#### with-error
class C:
    def __enter__(self):
        return self
    def __exit__(self, *a):
        return False
with C():
    1/0
#### error-in-except
try:
    1/0
except Exception:
    undefined_y
#### exc-in-default-arg
def f(a=1/0):
    pass
#### exc-class-body
class C:
    x = 1/0
#### sort-key
sorted([1, 2], key=lambda x: x / 0)
#### map-lambda
list(map(lambda x: x.foo, [1]))
#### str-method-err
'a'.join([1])
#### unicode-message
raise ValueError('ünïcödé 日本')
#### message-newline-trailing
raise ValueError('a\n')
#### message-crlf
raise ValueError('a\r\nb')
#### nested-call-args
def f(x):
    return x
f(f(f(1/0)))
#### binop-caret
a = 1
b = 0
c = a / b
#### subscript-caret
x = [1, 2]
y = x[5]
#### mutual-multi
def a(n):
    if n: return b(n-1)
    raise ValueError(n)
def b(n):
    return a(n)
a(5)
#### recursion-in-method
class C:
    def f(self):
        return self.f()
C().f()
#### stop-iteration
next(iter([]))
#### exception-group-like
raise Exception('a', 'b')
#### base-exception
raise BaseException('x')
#### system-exit
raise SystemExit(3)
#### keyboard-int
raise KeyboardInterrupt
#### timeout-err
raise TimeoutError('t')
#### exc-repr-str-quotes
raise ValueError("it's")
#### lookup-attr-none
None.x
#### call-none
x = None
x()
#### deep-indent
if True:
    if True:
        if True:
            1/0
#### multi-stmt-line
x = 1; y = 0; z = x / y
#### semicolon-later
a = 1; b = a + None
#### trailing-ws-lines
x = 1   
y = x / 0   
#### blank-lines-before



1/0
#### comment-line-after-expr
x = (1 +  # c
     None)
#### multiline-string-before
s = '''a
b'''
1/0
#### walrus
if (n := 1/0):
    pass
#### ternary
x = 1 if 1/0 else 2
#### starred
f = lambda a: a
f(*None)
#### kwargs-none
f = lambda **k: k
f(**None)
#### unpack-err
a, b = [1]
#### unpack-err2
a, b = [1, 2, 3]
#### augassign
x = 'a'
x += 1
#### compare-err
1 < 'a'
#### hash-list
{[1]: 1}
#### getattr-builtin
getattr(1, 'x')
#### int-huge
int('9' * 5000)
#### name-in-except
try:
    1/0
except Exception:
    undefined_y
#### name-in-fstring-call
x = f'{missing(1)}'
#### name-in-lambda-call
f = lambda: missing(2)
f()
#### name-in-comp-call
[missing(x) for x in [1]]
#### name-in-genexp-call
list(missing(x) for x in [1])
#### name-in-decorator
@missing
def f():
    pass
#### name-in-decorator-call
@missing(1)
def f():
    pass
#### name-in-default
def f(a=missing(1)):
    pass
#### name-attr-call
missing.attr(1)
#### name-subscript-call
missing[0](1)
#### name-call-call
missing(1)(2)
#### name-kwarg-call
print(sep=missing(1))
#### name-tab-before-call
if True:
	x = missing(1)
#### name-wide-before-call
s = '日本'; missing(1)
#### name-emoji-before-call
s = '😀'; missing(1)
#### name-combining-before-call
s = 'é'; missing(1)
#### name-unicode-call
变量(1)
#### name-unicode-read
x = 变量
#### name-nfkc-read
x = ﬁle
#### name-method-self
class C:
    def m(self):
        return missing(self)
C().m()
#### name-recursion-call
def f():
    return f()
f()
#### name-in-generator-call
def g():
    yield missing(1)
next(g())
#### name-in-closure
def o():
    def i():
        return missing(1)
    return i
o()()
#### name-walrus
if (y := missing(1)):
    pass
#### name-starred-call
print(*missing(1))
#### name-await-less
x = [missing
(1)]
#### name-long-line
x = 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + missing(1)
#### name-in-assert
assert missing(1)
#### name-in-raise
raise missing(1)
#### name-in-raise-from
raise ValueError('x') from missing(1)
#### name-in-with
with missing(1):
    pass
#### name-in-for
for x in missing(1):
    pass
#### name-in-slice
[1][missing(1):]
#### name-in-dict-key
{missing(1): 1}
#### name-in-ternary
x = 1 if missing(1) else 2
#### name-in-and
x = True and missing(1)
#### name-in-not
x = not missing(1)
#### name-in-comparison
x = 1 < missing(1) < 3
#### name-in-del
del missing
#### name-global
def f():
    global g
    return g
f()
#### name-nonlocal-unbound
def o():
    x = 1
    def i():
        nonlocal x
        del x
        return x
    return i()
o()
#### long-traceback-distinct
def f0():
    return f1()
def f1():
    return f2()
def f2():
    return f3()
def f3():
    return f4()
def f4():
    return f5()
def f5():
    return f6()
def f6():
    return f7()
def f7():
    return f8()
def f8():
    return f9()
def f9():
    return f10()
def f10():
    return f11()
def f11():
    return f12()
def f12():
    return f13()
def f13():
    return f14()
def f14():
    return f15()
def f15():
    return f16()
def f16():
    return f17()
def f17():
    return f18()
def f18():
    return f19()
def f19():
    return f20()
def f20():
    return f21()
def f21():
    return f22()
def f22():
    return f23()
def f23():
    return f24()
def f24():
    return f25()
def f25():
    return f26()
def f26():
    return f27()
def f27():
    return f28()
def f28():
    return f29()
def f29():
    return f30()
def f30():
    1/0
f0()
#### recursion-two-lines
def f(n):
    if n % 2:
        return f(n + 1)
    return f(n + 1)
f(0)
#### recursion-lambda
f = lambda n: f(n + 1)
f(0)
#### recursion-method
class C:
    def __repr__(self):
        return repr(self)
repr(C())
#### repeat-exactly-four
def r(n):
    if n == 0:
        raise ValueError('x')
    return r(n - 1)
r(5)
#### error-in-str-dunder
class C:
    def __str__(self):
        return 1/0
str(C())
#### error-in-eq
class C:
    def __eq__(self, o):
        return 1/0
C() == 1
#### error-in-getitem
class C:
    def __getitem__(self, k):
        raise KeyError(k)
C()['zz']
#### error-in-init
class C:
    def __init__(self):
        self.x = 1/0
C()
#### error-in-property
class C:
    @property
    def p(self):
        return 1/0
C().p
#### error-in-iter
class C:
    def __iter__(self):
        raise TypeError('no')
list(C())
#### error-in-len
class C:
    def __len__(self):
        return -1
len(C())
#### error-in-hash
class C:
    def __hash__(self):
        return 1/0
{C()}
#### exc-args-dict
raise ValueError({'a': 1})
#### exc-args-bytes
raise ValueError(b'x\x00')
#### exc-args-float
raise ValueError(1.5)
#### exc-args-exc
raise ValueError(KeyError('k'))
#### keyerror-nested-quote
raise KeyError('a"b\'c')
#### keyerror-newline
raise KeyError('a\nb')
#### keyerror-none
raise KeyError(None)
#### keyerror-unicode
{}['日本']
#### str-with-tab-message
raise ValueError('a\tb')
#### message-only-spaces
raise ValueError('   ')
#### custom-exc-repr-args
class E(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)
raise E(1, 'two')
#### custom-exc-module-name
class E(Exception):
    pass
class F(E):
    pass
try:
    raise F('x')
except E as e:
    raise
#### raise-non-exception
raise 1
#### raise-from-non-exception
raise ValueError from 1
#### raise-type-not-exc
raise int
#### exception-in-nested-try
try:
    try:
        1/0
    finally:
        pass
except KeyError:
    pass
#### reraise-after-handling
try:
    1/0
except ZeroDivisionError as e:
    err = e
raise err
#### reraise-in-nested-func
def f():
    try:
        1/0
    except Exception:
        g()
def g():
    raise
f()
#### multiline-def-call
def f(
    a,
    b,
):
    return a / b
f(
    1,
    0)
#### multiline-dict-lit
x = {
    'a': 1,
    'b': 1/0,
}
#### multiline-list-lit-long
x = [
    1,
    2,
    3,
    4,
    1/0,
]
#### multiline-binop-long
x = (1 +
     2 +
     3 +
     4 +
     'a')
#### multiline-call-nested
def f(*a):
    return 1/0
f(f(
    1),
  2)
#### multiline-string-concat
x = ('a'
     'b') + 1
#### multiline-subscript-chain
x = [[1]]
y = x[0][
    5]
#### multiline-attr-method
x = 'a'
y = (x
     .upper()
     .nope())
#### multiline-indented-func
def f():
    x = (1 +
         None)
f()
#### multiline-tab-indent
def f():
	x = (1 +
		None)
f()
#### multiline-mixed-indent
def f():
    x = (1 +
	None)
f()
#### multiline-in-class
class C:
    def m(self):
        return (
            1 /
            0)
C().m()
#### deep-indent-caret
if True:
    if True:
        if True:
            if True:
                x = 1 + None
#### tab-then-spaces
if True:
	    x = 1 + None
#### tab-in-middle
x = 1	+ None
#### tabs-before-caret
x = '		' + 1
#### fullwidth-space-string
x = '　' + 1
#### zwj-string
x = '‍' + 1
#### rtl-string
x = 'שלום' + 1
#### astral-ident
𝑥 = 1
𝑥 + 'a'
#### cr-in-string
x = 'a\rb' + 1
#### formfeed-indent
if True:
    x = 1 + None
#### unicode-in-comment-before
x = 1 + None  # ünïcödé
#### fstring-format-spec
x = f'{1:{None}}'
#### fstring-conversion
class C:
    def __repr__(self):
        return 1/0
x = f'{C()!r}'
#### fstring-multiline
x = f'''a
{1/0}
b'''
#### fstring-nested-quotes
x = f"{'a' + 1}"
#### fstring-debug
x = f'{1/0=}'
#### fstring-bad-spec
x = f'{1:zz}'
#### syntax-unterminated-dq
x = "abc
#### syntax-unterminated-line2
x = 1
y = 'abc
#### syntax-unterminated-fstring
x = f'abc
#### syntax-eof-bracket
x = [1,
#### syntax-eof-brace
x = {
#### syntax-mismatch
x = (1]
#### syntax-indent-tab
if True:
	x = 1
        y = 2
#### syntax-unexpected-indent-line2
x = 1
    y = 2
#### syntax-dedent-eof
def f():
    pass
  x
#### syntax-empty-body
def f():

x = 1
#### syntax-lambda-stmt
f = lambda: return 1
#### syntax-walrus-bad
x := 1
#### syntax-star-assign
*a = 1
#### syntax-double-star
x = **y
#### syntax-unicode-bad-char
x = 1 € 2
#### syntax-unicode-line-col
é = '日本' +
#### syntax-backslash-eof
x = 1 + \
#### syntax-invalid-decimal
x = 1_
#### syntax-leading-zero
x = 01
#### syntax-invalid-escape-bytes
x = b'é'
#### syntax-async-outside
await x
#### syntax-yield-outside
yield 1
#### syntax-break-outside
break
#### syntax-continue-outside
continue
#### syntax-nonlocal-module
nonlocal x
#### syntax-dup-arg
def f(a, a):
    pass
#### syntax-kw-repeat
f(a=1, a=2)
#### syntax-pos-after-kw
f(a=1, 2)
#### syntax-long-line
x = 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + +
#### syntax-line-1-col-0
)
#### syntax-only-comment-then-err
# c
)
#### syntax-crlf
x = 1
y = )
#### syntax-tab-col
	x = 1
#### syntax-tab-mid
x =	)
#### syntax-fullwidth
x = （1）
#### syntax-zero-width
x​ = 1
#### syntax-triple-eof
'''abc
#### syntax-if-no-colon
if True
    pass
#### syntax-else-alone
else:
    pass
#### syntax-match-bad
match x:
    case 1 +:
        pass
#### syntax-class-no-body
class C:
#### syntax-def-eof-nl
def f():
#### syntax-trailing-op
x = 1 +
#### syntax-del-literal
del 1
#### syntax-aug-literal
1 += 1
#### syntax-fstring-empty
x = f'{}'
#### syntax-fstring-backslash
x = f'{"\n"}' + 1
#### error-last-line-no-newline
x = 1



x + None
#### error-after-blank-crlf


1/0
#### error-first-of-many
1/0
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
x = 1
#### error-line-1000







































































































































































































































































































































































































































































































































































































































































































































































































































































































































































































































1/0
#### error-indent-eof
if True:
    1/0

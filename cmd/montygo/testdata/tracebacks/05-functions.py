# Frames: nested functions, closures, methods, classes, lambdas, recursion,
# wrong arguments.
#### nested-two
def a():
    return b()
def b():
    return 1 / 0
a()
#### nested-three-with-args
def a(x):
    return b(x + 1)
def b(y):
    return c(y * 2)
def c(z):
    return z / 0
a(1)
#### closure
def make():
    k = 0
    def inner(x):
        return x / k
    return inner
make()(5)
#### closure-two-levels
def outer():
    def middle():
        def inner():
            return [][0]
        return inner()
    return middle()
outer()
#### method
class Acc:
    def __init__(self):
        self.total = 0
    def add(self, x):
        self.total += x
        return self.total
a = Acc()
a.add(1)
a.add('x')
#### method-calls-method
class C:
    def a(self):
        return self.b()
    def b(self):
        return {}['k']
C().a()
#### init-fails
class C:
    def __init__(self, x):
        self.x = 10 / x
C(0)
#### staticmethod
class C:
    @staticmethod
    def s(x):
        return x[5]
C.s([1])
#### classmethod
class C:
    @classmethod
    def make(cls, v):
        return int(v)
C.make('nope')
#### property
class C:
    @property
    def p(self):
        return 1 / 0
C().p
#### dunder-add
class V:
    def __init__(self, v):
        self.v = v
    def __add__(self, other):
        return V(self.v + other.v)
V(1) + 5
#### dunder-repr-fails
class C:
    def __repr__(self):
        return 1 / 0
repr(C())
#### dunder-len
class C:
    def __len__(self):
        return 'x'
len(C())
#### dunder-getitem
class C:
    def __getitem__(self, k):
        raise KeyError(k)
C()['key']
#### dunder-eq
class C:
    def __eq__(self, other):
        return 1 / 0
C() == 1
#### dunder-call
class C:
    def __call__(self, x):
        return x.nope
C()(1)
#### dunder-iter
class C:
    def __iter__(self):
        return 5
for x in C():
    pass
#### missing-positional
def f(a, b):
    return a + b
f(1)
#### too-many-positional
def f(a):
    return a
f(1, 2)
#### unexpected-keyword
def f(a):
    return a
f(b=1)
#### duplicate-keyword
def f(a):
    return a
f(1, a=2)
#### missing-keyword-only
def f(*, k):
    return k
f()
#### method-missing-arg
class C:
    def m(self, x):
        return x
C().m()
#### init-missing-arg
class C:
    def __init__(self, x):
        self.x = x
C()
#### lambda-simple
f = lambda x: x / 0
f(1)
#### lambda-in-map
list(map(lambda x: x[1], [[1, 2], [3]]))
#### lambda-in-sorted-key
sorted([1, 2, 'a'], key=lambda x: x + 1)
#### lambda-nested
f = lambda x: (lambda y: y / x)(1)
f(0)
#### lambda-in-filter
list(filter(lambda x: x.nope, [1]))
#### lambda-arity
f = lambda x: x
f(1, 2)
#### lambda-default-arg
f = lambda x, y=0: x / y
f(1)
#### lambda-in-dict
ops = {'div': lambda a, b: a / b}
ops['div'](1, 0)
#### recursion-limit
def r(n):
    return r(n + 1)
r(0)
#### recursion-limit-two-lines
def r(n):
    x = n + 1
    return r(x)
r(0)
#### recursion-mutual
def ping(n):
    return pong(n + 1)
def pong(n):
    return ping(n + 1)
ping(0)
#### recursion-then-error
def down(n):
    if n == 0:
        return 1 / 0
    return down(n - 1)
down(10)
#### recursion-repeat-once
def r(n):
    if n == 0:
        raise ValueError('bottom')
    return r(n - 1)
r(4)
#### recursion-repeat-exactly-three
def r(n):
    if n == 0:
        raise ValueError('bottom')
    return r(n - 1)
r(3)
#### recursion-repeat-two
def r(n):
    if n == 0:
        raise ValueError('bottom')
    return r(n - 1)
r(2)
#### recursion-factorial-error
def fact(n):
    if n == 1:
        return None
    return n * fact(n - 1)
fact(5)
#### recursion-deep-lambda
f = lambda n: f(n + 1)
f(0)
#### recursion-method
class C:
    def m(self, n):
        return self.m(n + 1)
C().m(0)
#### recursion-in-comprehension
def r(n):
    return [r(n + 1) for _ in range(1)]
r(0)
#### recursion-caught-then-error
def r(n):
    return r(n + 1)
try:
    r(0)
except RecursionError:
    print('caught recursion')
1 / 0
#### default-arg-evaluated-late
def f(x, d={}):
    return d[x]
f('k')
#### kwargs-function
def f(**kw):
    return kw['missing']
f(a=1)
#### args-function
def f(*args):
    return args[3]
f(1, 2)
#### decorator
def deco(fn):
    def wrapper(*a):
        return fn(*a) / 0
    return wrapper
@deco
def g(x):
    return x
g(1)
#### decorator-fails-at-definition
def deco(fn):
    return fn.nope
@deco
def g():
    pass
#### function-in-loop
def check(i):
    if i == 2:
        raise ValueError(f'bad {i}')
for i in range(5):
    check(i)
#### function-returns-then-fails
def f():
    return [1, 2]
f()[5]
#### function-attribute
def f():
    pass
f.nope
#### print-in-frames
def a():
    print('in a')
    return b()
def b():
    print('in b')
    return 1 / 0
a()
#### class-body-error
class C:
    x = 1 / 0
#### class-attr-missing
class C:
    a = 1
C.b
#### isinstance-bad-arg
isinstance(1, 5)
#### super-less-class
class C:
    def m(self):
        return self.__nope__
C().m()
#### global-statement
counter = 0
def bump():
    global counter
    counter += 'x'
bump()
#### nonlocal-statement
def outer():
    n = 0
    def inner():
        nonlocal n
        n += None
    inner()
outer()
#### frame-tab-indent
def f():
	return 1 / 0
f()
#### frame-deep-indent
def f():
    if True:
        if True:
            if True:
                if True:
                    return 1 / 0
f()
#### frame-unicode-name
def héllo():
    return 1 / 0
héllo()
#### frame-nonascii-before-error
def f():
    s = 'ééé'; return s + 1
f()

Snippets whose tracebacks pass through many kinds of frames.
#### tb_deep_10
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
#### tb_recursion_repeated
def f(n):
    if n == 0:
        raise ValueError('bottom')
    return f(n - 1)
f(25)
#### tb_recursion_limit_hit
def f(n):
    return f(n + 1)
f(0)
#### tb_mutual_recursion
def even(n):
    if n == 0:
        raise KeyError('even')
    return odd(n - 1)
def odd(n):
    return even(n - 1)
even(10)
#### tb_list_comprehension
def f(xs):
    return [10 // x for x in xs]
f([1, 2, 0])
#### tb_dict_comprehension
{k: 1 / k for k in range(-1, 2)}
#### tb_set_comprehension
{int(s) for s in ['1', 'x']}
#### tb_generator_expression
sum(1 / x for x in [1, 0])
#### tb_nested_comprehension
[[y / x for y in range(2)] for x in range(2)]
#### tb_lambda_in_map
list(map(lambda x: x['k'], [{'k': 1}, {}]))
#### tb_lambda_nested
f = lambda x: (lambda y: y / x)(1)
f(0)
#### tb_sorted_key
sorted([1, 'a', 2], key=lambda v: v + 1)
#### tb_class_method
class K:
    def m(self, x):
        return self.n(x)
    def n(self, x):
        return x.missing
K().m(3)
#### tb_staticmethod
class K:
    @staticmethod
    def s(x):
        return x[5]
K.s([1])
#### tb_classmethod
class K:
    @classmethod
    def c(cls):
        raise TypeError(cls.__name__)
K.c()
#### tb_init_raises
class K:
    def __init__(self, v):
        if v < 0:
            raise ValueError('negative')
        self.v = v
K(-1)
#### tb_property_raises
class K:
    @property
    def p(self):
        return 1 / 0
K().p
#### tb_dunder_add
class V:
    def __add__(self, other):
        raise NotImplementedError('no add')
V() + V()
#### tb_dunder_repr
class A:
    def __repr__(self):
        raise ValueError('r')
repr(A())
#### tb_generator_body
def gen():
    yield 1
    raise RuntimeError('in generator')
list(gen())
#### tb_generator_next
def gen():
    yield 1 / 0
g = gen()
next(g)
#### tb_closure
def outer():
    k = 0
    def inner():
        return 5 // k
    return inner
outer()()
#### tb_decorator
def deco(fn):
    def wrap(*a):
        return fn(*a)
    return wrap
@deco
def target(x):
    raise KeyError(x)
target('dk')
#### tb_async_chain
async def a():
    raise ValueError('async deep')
async def b():
    return await a()
async def c():
    return await b()
await c()
#### tb_asyncio_gather
import asyncio
async def bad():
    raise TypeError('gathered')
async def good():
    return 1
await asyncio.gather(good(), bad())
#### tb_asyncio_run
import asyncio
async def main():
    raise KeyError('run')
asyncio.run(main())
#### tb_kwargs_call
def f(*, a, b):
    return a + b
f(a=1, b='x')
#### tb_multiline_call
def f(a, b, c):
    return a + b + c
f(
    1,
    2,
    'c',
)
#### tb_multiline_expression
x = (1 +
     2 +
     'three')
#### tb_long_line
values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]; total = sum(values) + values[100]
#### tb_tabs_in_line
if True:
	x = 1 +	'a'
#### tb_wide_chars
名前 = '日本語' + 1
#### tb_emoji_line
s = '🎉🎉🎉'; n = s + 5
#### tb_combining_chars
s = 'e\u0301e\u0301'; t = 'ée\u0301' - 1
#### tb_unicode_function_names
def größe(x):
    return x / 0
größe(1)
#### tb_unicode_identifier_nfkc
ﬁle = 1
file + 'a'
#### tb_after_blank_lines
x = 1



y = x / 0
#### tb_crlf_source
x = 1
y = x / 0
#### tb_in_while
i = 0
while True:
    i += 1
    if i == 5:
        raise StopIteration('five')
#### tb_with_statement
class CM:
    def __enter__(self):
        return self
    def __exit__(self, *a):
        return False
with CM():
    raise ValueError('in with')
#### tb_getattr_chain
class A:
    pass
a = A()
a.b.c.d
#### tb_subscript_chain
d = {'a': {'b': {}}}
d['a']['b']['c']
#### tb_fstring_error
x = None
f'{x.upper()}'
#### tb_default_arg_eval
def f(x=[]):
    return x[0]
f()
#### tb_ternary
x = 1 if (1 / 0) else 2
#### tb_walrus
if (n := len([])) == 0:
    raise ValueError(f'n={n}')
#### tb_star_unpack
a, b = [1, 2, 3]
#### tb_star_unpack_few
a, b, c = (1, 2)
#### tb_return_in_finally_swallows
def f():
    try:
        raise ValueError('lost')
    finally:
        return 'kept'
f()
#### tb_second_expression_stmt
x = 1
x.y = 2
#### tb_global_then_error
g = 1
def f():
    global g
    g = g + 'a'
f()
#### tb_nonlocal
def f():
    x = 1
    def g():
        nonlocal x
        x = x + None
    g()
f()

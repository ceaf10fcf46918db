# Comprehensions and generator expressions (the worker has no `yield`:
# generator functions are a NotImplementedError at parse time).
#### list-comp-div
xs = [1 / x for x in [1, 0]]
#### list-comp-condition
xs = [x for x in [1, 'a'] if x > 0]
#### list-comp-nested-for
xs = [x / y for x in [1] for y in [1, 0]]
#### list-comp-nested-comp
xs = [[1 / y for y in [0]] for x in [1]]
#### list-comp-subscript
xs = [d['k'] for d in [{'k': 1}, {}]]
#### list-comp-attr
xs = [x.nope for x in [1]]
#### list-comp-in-function
def f(items):
    return [i + 1 for i in items]
f([1, 'a'])
#### list-comp-calls-function
def g(x):
    return 10 / x
xs = [g(x) for x in [2, 0]]
#### list-comp-iter-not-iterable
xs = [x for x in 5]
#### list-comp-multiline
xs = [
    x / 0
    for x in [1]
]
#### dict-comp-value
d = {k: 1 / k for k in [1, 0]}
#### dict-comp-key-unhashable
d = {[k]: k for k in [1]}
#### dict-comp-in-function
def f():
    return {k: v['x'] for k, v in {'a': {}}.items()}
f()
#### set-comp
s = {1 / x for x in [0]}
#### set-comp-unhashable
s = {[x] for x in [1]}
#### genexpr-sum
total = sum(1 / x for x in [1, 0])
#### genexpr-list
xs = list(x.nope for x in [1])
#### genexpr-next
g = (1 / x for x in [0])
next(g)
#### genexpr-any
ok = any(x['k'] for x in [{}])
#### genexpr-all
ok = all(int(x) for x in ['1', 'x'])
#### genexpr-tuple
t = tuple(x + 'a' for x in [1])
#### genexpr-join
s = ','.join(str(1 / x) for x in [1, 0])
#### genexpr-max
m = max(x[0] for x in [[1], []])
#### genexpr-sorted
s = sorted(x / 0 for x in [1])
#### genexpr-in-function
def f(xs):
    return sum(x * 2 for x in xs)
f([1, None])
#### genexpr-exhausted
g = (x for x in [1])
list(g)
next(g)
#### comp-unpack-error
xs = [a for a, b in [(1, 2), (3,)]]
#### comp-walrus
xs = [y for x in [1, 0] if (y := 1 / x)]
#### comp-lambda-inside
fs = [lambda: 1 / 0 for _ in range(1)]
fs[0]()
#### comp-in-comp-condition
xs = [x for x in range(3) if [y for y in range(x) if y / 0]]
#### comp-zip
xs = [a / b for a, b in zip([1, 2], [1, 0])]
#### comp-enumerate
xs = [v / i for i, v in enumerate([1, 2])]
#### comp-range-error
xs = [x for x in range('a')]
#### comp-print-then-fail
xs = [print(x) or 1 / (x - 1) for x in range(3)]
#### generator-function
def gen():
    yield 1
list(gen())
#### generator-yield-from
def gen():
    yield from [1]
#### comp-deep-in-frames
def outer():
    return inner([1, 2, 0])
def inner(xs):
    return [10 // x for x in xs]
outer()
#### comp-string-iter
xs = [c + 1 for c in 'ab']
#### comp-dict-items-missing
d = {'a': 1}
xs = [d[k] for k in ['a', 'b']]

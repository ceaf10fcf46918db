# An example program for `make run`: it runs inside the monty sandbox,
# through a real worker process driven by gomonty.
from dataclasses import dataclass


@dataclass
class Point:
    x: int
    y: int


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


points = [Point(i, fib(i)) for i in range(10)]
print('hello from the sandbox')
print('fib(10) =', fib(10), 'and 2**100 =', 2**100)
print('points on the curve:', len(points))
{'last': points[-1].y, 'primes': [p for p in range(2, 30) if all(p % d for d in range(2, p))]}

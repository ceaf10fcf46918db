# Async code: coroutines, await chains, gather, tasks.
#### await-raises
import asyncio
async def fail():
    raise ValueError('async fail')
async def main():
    await fail()
asyncio.run(main())
#### await-chain
import asyncio
async def a():
    return await b()
async def b():
    return await c()
async def c():
    return 1 / 0
asyncio.run(a())
#### gather-one-fails
import asyncio
async def ok():
    return 1
async def bad():
    return {}['k']
async def main():
    return await asyncio.gather(ok(), bad())
asyncio.run(main())
#### gather-both-fail
import asyncio
async def bad1():
    raise KeyError('first')
async def bad2():
    raise ValueError('second')
async def main():
    await asyncio.gather(bad1(), bad2())
asyncio.run(main())
#### async-comprehension-like
import asyncio
async def val(x):
    return 10 / x
async def main():
    out = []
    for x in [1, 0]:
        out.append(await val(x))
    return out
asyncio.run(main())
#### async-try-except-reraise
import asyncio
async def f():
    try:
        await g()
    except ZeroDivisionError:
        print('seen')
        raise
async def g():
    return 1 / 0
asyncio.run(f())
#### async-raise-from
import asyncio
async def f():
    try:
        int('x')
    except ValueError as e:
        raise RuntimeError('wrapped') from e
asyncio.run(f())
#### async-typeerror-await-int
import asyncio
async def main():
    await 5
asyncio.run(main())
#### async-lambda-calls-coroutine
import asyncio
async def f(x):
    return x.nope
g = lambda: f(1)
asyncio.run(g())
#### async-method
import asyncio
class C:
    async def m(self):
        return self.missing_attr
asyncio.run(C().m())
#### async-print-before
import asyncio
async def main():
    print('start')
    await asyncio.sleep(0)
    print('after sleep')
    raise TimeoutError('late')
asyncio.run(main())
#### async-nested-gather
import asyncio
async def leaf(n):
    if n == 2:
        raise IndexError(f'leaf {n}')
    return n
async def mid():
    return await asyncio.gather(leaf(1), leaf(2))
async def main():
    return await asyncio.gather(mid())
asyncio.run(main())
#### async-top-level-await
async def f():
    return 1 / 0
await f()
#### async-create-task
import asyncio
async def work():
    return [][1]
async def main():
    t = asyncio.create_task(work())
    return await t
asyncio.run(main())
#### async-await-non-coroutine-call
import asyncio
def plain():
    return 1
async def main():
    await plain()
asyncio.run(main())
#### async-gather-arg-not-awaitable
import asyncio
async def main():
    await asyncio.gather(1)
asyncio.run(main())
#### async-recursion
import asyncio
async def r(n):
    return await r(n + 1)
asyncio.run(r(0))
#### async-missing-arg
import asyncio
async def f(x):
    return x
asyncio.run(f())

# Statements and expressions over several lines: spans, elided spans,
# backslash continuations, indentation.
#### binop-over-lines
x = (1 +
     2 +
     None)
#### call-args-over-lines
def f(a, b):
    return a / b
f(
    1,
    0,
)
#### call-over-many-lines-elided
def g(*a):
    return 1 / 0
def f():
        g(1,
    2,
  3,
4)
f()
#### call-over-lines-in-function
def f():
    if True:
        return g(
            1,
        2)
def g(a, b):
    return a / 0
f()
#### binop-over-lines-in-function
def f():
    if True:
        x = (1 +
                 None)
f()
#### backslash-continuation
x = 1 + \
  None
#### list-over-lines
xs = [
    1,
    1 / 0,
]
#### dict-over-lines
d = {
    'a': 1,
    'b': {}['k'],
}
#### subscript-over-lines
d = {}
x = d[
    'missing'
]
#### call-chain-over-lines
s = ('abc'
     .upper()
     .nope())
#### comparison-over-lines
x = (1
     < 'a')
#### condition-over-lines
if (1 and
        'a' + 1):
    pass
#### return-over-lines
def f():
    return (
        1 / 0
    )
f()
#### nested-call-over-lines
print(
    int(
        'x'
    )
)
#### lambda-over-lines
f = (lambda x:
     x / 0)
f(1)
#### comprehension-over-lines
xs = [
    x
    for x in range(3)
    if x / 0
]
#### crlf-line-endings
x = 1
y = x +\
  None
#### crlf-single-line
x = 1
y = x + None
#### tab-and-spaces
def f():
    if True:
	return 1 / 0
f()
#### tab-indentation
if True:
	1 / 0
#### form-feed
1 / 0
#### form-feed-in-function
def f():
    return 1 / 0
f()
#### trailing-space
1 / 0   
#### non-ascii-before-column
s = 'ééé'; s + 1
#### cjk-identifier
变量 = 1 / 0
#### emoji-string
s = '🙂🙂'; s - 1
#### long-line
xs = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]; xs[0] + xs[1] + xs[2] + xs[100]
#### semicolons
a = 1; b = 0; c = a / b
#### comment-after
x = 1 / 0  # divide by zero here
#### blank-lines-before
 


x = 1 / 0
#### deep-indent-multiline
def f():
    for i in range(1):
        while True:
            return [
                i,
                i / 0,
            ]
f()
#### string-continuation
s = ('a'
     'b') + 1
#### triple-quoted-then-error
doc = """
several
lines
"""
x = doc + 1
#### multiline-call-raising-inside
def boom(*a):
    raise ValueError('inside')
boom(
    1,
    2,
)
#### with-statement
class Ctx:
    def __enter__(self):
        return self
    def __exit__(self, *a):
        return False
with Ctx() as c:
    1 / 0
#### with-enter-fails
class Ctx:
    def __enter__(self):
        raise RuntimeError('enter')
    def __exit__(self, *a):
        return False
with Ctx():
    pass
#### with-not-context-manager
with 5:
    pass
#### for-unpack-error
for a, b in [(1, 2, 3)]:
    pass
#### assignment-unpack-too-few
a, b, c = [1, 2]
#### assignment-unpack-too-many
a, b = [1, 2, 3]
#### assignment-unpack-not-iterable
a, b = 5
#### starred-unpack
a, *b, c = [1]
#### walrus-error
if (n := 1 / 0):
    pass
#### match-statement
match 1:
    case 1:
        pass

# The shapes of raise: bare with and without an active exception, re-raise
# of a caught exception, raise from, implicit context, nested handlers.
#### bare-raise-no-active
raise
#### bare-raise-no-active-line3
x = 1
y = 2
raise
#### bare-raise-after-try
try:
    pass
except:
    pass
raise  # nothing is active here
#### bare-raise-in-function
def f():
    raise
f()
#### bare-raise-in-if
if True: raise
#### bare-raise-after-semicolon
x = 1; raise
#### bare-raise-in-nested-function
def outer():
    def inner():
        raise
    inner()
outer()
#### bare-raise-indented
if True:
    if True:
        raise
#### reraise-bare
try:
    1 / 0
except ZeroDivisionError:
    raise
#### reraise-named
try:
    1 / 0
except ZeroDivisionError as e:
    raise e
#### reraise-from-function
def f():
    return {}['k']
try:
    f()
except KeyError:
    raise
#### raise-from
try:
    1 / 0
except ZeroDivisionError as e:
    raise ValueError('converted') from e
#### raise-from-none
try:
    1 / 0
except ZeroDivisionError:
    raise ValueError('hidden context') from None
#### implicit-context
try:
    1 / 0
except ZeroDivisionError:
    raise ValueError('during handling')
#### error-in-handler
try:
    1 / 0
except ZeroDivisionError:
    [][0]
#### error-in-finally
try:
    print('body')
finally:
    {}['missing key']
#### finally-overrides
try:
    1 / 0
finally:
    raise KeyError('from finally')
#### nested-handlers
try:
    try:
        1 / 0
    except ZeroDivisionError:
        raise ValueError('inner')
except ValueError as e:
    raise TypeError('outer') from e
#### handler-not-matching
try:
    1 / 0
except KeyError:
    print('not me')
#### handler-tuple
try:
    int('x')
except (KeyError, ValueError) as e:
    raise RuntimeError(str(e))
#### handler-else
try:
    x = 1
except Exception:
    pass
else:
    x / 0
#### raise-instance-variable
err = ValueError('stored')
raise err
#### raise-in-lambda-via-call
def thrower(msg):
    raise ValueError(msg)
f = lambda m: thrower(m)
f('lambda path')
#### raise-exception-no-message
raise ValueError()
#### raise-empty-message
raise ValueError('')
#### raise-multiline-message
raise ValueError('line one\nline two')
#### raise-non-string-message
raise ValueError(42)
#### raise-two-args
raise ValueError('a', 'b')
#### raise-repr-message
raise KeyError('key')
#### raise-keyerror-int
raise KeyError(3)
#### raise-in-loop
for i in range(5):
    if i == 3:
        raise IndexError(f'i is {i}')
#### raise-in-while
n = 0
while True:
    n += 1
    if n > 2:
        raise RuntimeError('stop')
#### raise-in-with-block-suppressed-print
try:
    raise ValueError('x')
except ValueError as e:
    print('caught', e)
raise TypeError('after')
#### raise-unicode-message
raise ValueError('héllo wörld ✓')
#### raise-long-line
raise ValueError('a' * 10 + 'b' * 10)                                                                          
#### raise-parenthesized
raise (ValueError('p'))
#### raise-multiline-call
raise ValueError(
    'spread',
)
#### reraise-after-print
try:
    [1, 2][9]
except IndexError as e:
    print(type(e).__name__, e)
    raise
#### reraise-in-function-handler
def f():
    try:
        1 / 0
    except ZeroDivisionError:
        raise
f()
#### raise-from-in-function
def f():
    try:
        {}['k']
    except KeyError as e:
        raise LookupError('wrapped') from e
f()
#### raise-exception-subclass-catch
try:
    raise FileNotFoundError('nofile')
except OSError as e:
    raise
#### raise-stopiteration
raise StopIteration
#### raise-assertion-no-message
raise AssertionError
#### systemexit
raise SystemExit(3)
#### keyboardinterrupt
raise KeyboardInterrupt
#### raise-type-not-exception
raise 5
#### raise-class-call-message-var
msg = 'from var'
raise ValueError(msg)
#### raise-in-try-finally-in-function
def f():
    try:
        raise ValueError('inside')
    finally:
        print('cleanup')
f()
#### raise-after-return-in-finally
def f():
    try:
        return 1
    finally:
        print('finally ran')
print(f())
raise RuntimeError('done')
#### raise-exception-type
raise Exception('generic')
#### raise-baseexception
raise BaseException('base')

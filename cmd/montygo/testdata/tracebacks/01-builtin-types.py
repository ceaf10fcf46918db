# Every builtin exception type, raised at module level, raised in a
# function, raised bare (the class, no call), and re-raised from a handler.

#### ArithmeticError-module
raise ArithmeticError('boom ArithmeticError')

#### ArithmeticError-function
def fail(n):
    if n > 1:
        raise ArithmeticError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### ArithmeticError-class
raise ArithmeticError

#### ArithmeticError-reraise
try:
    raise ArithmeticError('first')
except ArithmeticError:
    print('caught')
    raise

#### AssertionError-module
raise AssertionError('boom AssertionError')

#### AssertionError-function
def fail(n):
    if n > 1:
        raise AssertionError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### AssertionError-class
raise AssertionError

#### AssertionError-reraise
try:
    raise AssertionError('first')
except AssertionError:
    print('caught')
    raise

#### AttributeError-module
raise AttributeError('boom AttributeError')

#### AttributeError-function
def fail(n):
    if n > 1:
        raise AttributeError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### AttributeError-class
raise AttributeError

#### AttributeError-reraise
try:
    raise AttributeError('first')
except AttributeError:
    print('caught')
    raise

#### BaseException-module
raise BaseException('boom BaseException')

#### BaseException-function
def fail(n):
    if n > 1:
        raise BaseException(f'n={n}')
    return n
print(fail(1))
fail(2)

#### BaseException-class
raise BaseException

#### BaseException-reraise
try:
    raise BaseException('first')
except BaseException:
    print('caught')
    raise

#### Exception-module
raise Exception('boom Exception')

#### Exception-function
def fail(n):
    if n > 1:
        raise Exception(f'n={n}')
    return n
print(fail(1))
fail(2)

#### Exception-class
raise Exception

#### Exception-reraise
try:
    raise Exception('first')
except Exception:
    print('caught')
    raise

#### FileExistsError-module
raise FileExistsError('boom FileExistsError')

#### FileExistsError-function
def fail(n):
    if n > 1:
        raise FileExistsError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### FileExistsError-class
raise FileExistsError

#### FileExistsError-reraise
try:
    raise FileExistsError('first')
except FileExistsError:
    print('caught')
    raise

#### FileNotFoundError-module
raise FileNotFoundError('boom FileNotFoundError')

#### FileNotFoundError-function
def fail(n):
    if n > 1:
        raise FileNotFoundError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### FileNotFoundError-class
raise FileNotFoundError

#### FileNotFoundError-reraise
try:
    raise FileNotFoundError('first')
except FileNotFoundError:
    print('caught')
    raise

#### ImportError-module
raise ImportError('boom ImportError')

#### ImportError-function
def fail(n):
    if n > 1:
        raise ImportError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### ImportError-class
raise ImportError

#### ImportError-reraise
try:
    raise ImportError('first')
except ImportError:
    print('caught')
    raise

#### IndexError-module
raise IndexError('boom IndexError')

#### IndexError-function
def fail(n):
    if n > 1:
        raise IndexError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### IndexError-class
raise IndexError

#### IndexError-reraise
try:
    raise IndexError('first')
except IndexError:
    print('caught')
    raise

#### IsADirectoryError-module
raise IsADirectoryError('boom IsADirectoryError')

#### IsADirectoryError-function
def fail(n):
    if n > 1:
        raise IsADirectoryError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### IsADirectoryError-class
raise IsADirectoryError

#### IsADirectoryError-reraise
try:
    raise IsADirectoryError('first')
except IsADirectoryError:
    print('caught')
    raise

#### KeyError-module
raise KeyError('boom KeyError')

#### KeyError-function
def fail(n):
    if n > 1:
        raise KeyError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### KeyError-class
raise KeyError

#### KeyError-reraise
try:
    raise KeyError('first')
except KeyError:
    print('caught')
    raise

#### KeyboardInterrupt-module
raise KeyboardInterrupt('boom KeyboardInterrupt')

#### KeyboardInterrupt-function
def fail(n):
    if n > 1:
        raise KeyboardInterrupt(f'n={n}')
    return n
print(fail(1))
fail(2)

#### KeyboardInterrupt-class
raise KeyboardInterrupt

#### KeyboardInterrupt-reraise
try:
    raise KeyboardInterrupt('first')
except KeyboardInterrupt:
    print('caught')
    raise

#### LookupError-module
raise LookupError('boom LookupError')

#### LookupError-function
def fail(n):
    if n > 1:
        raise LookupError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### LookupError-class
raise LookupError

#### LookupError-reraise
try:
    raise LookupError('first')
except LookupError:
    print('caught')
    raise

#### MemoryError-module
raise MemoryError('boom MemoryError')

#### MemoryError-function
def fail(n):
    if n > 1:
        raise MemoryError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### MemoryError-class
raise MemoryError

#### MemoryError-reraise
try:
    raise MemoryError('first')
except MemoryError:
    print('caught')
    raise

#### ModuleNotFoundError-module
raise ModuleNotFoundError('boom ModuleNotFoundError')

#### ModuleNotFoundError-function
def fail(n):
    if n > 1:
        raise ModuleNotFoundError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### ModuleNotFoundError-class
raise ModuleNotFoundError

#### ModuleNotFoundError-reraise
try:
    raise ModuleNotFoundError('first')
except ModuleNotFoundError:
    print('caught')
    raise

#### NameError-module
raise NameError('boom NameError')

#### NameError-function
def fail(n):
    if n > 1:
        raise NameError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### NameError-class
raise NameError

#### NameError-reraise
try:
    raise NameError('first')
except NameError:
    print('caught')
    raise

#### NotADirectoryError-module
raise NotADirectoryError('boom NotADirectoryError')

#### NotADirectoryError-function
def fail(n):
    if n > 1:
        raise NotADirectoryError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### NotADirectoryError-class
raise NotADirectoryError

#### NotADirectoryError-reraise
try:
    raise NotADirectoryError('first')
except NotADirectoryError:
    print('caught')
    raise

#### NotImplementedError-module
raise NotImplementedError('boom NotImplementedError')

#### NotImplementedError-function
def fail(n):
    if n > 1:
        raise NotImplementedError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### NotImplementedError-class
raise NotImplementedError

#### NotImplementedError-reraise
try:
    raise NotImplementedError('first')
except NotImplementedError:
    print('caught')
    raise

#### OSError-module
raise OSError('boom OSError')

#### OSError-function
def fail(n):
    if n > 1:
        raise OSError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### OSError-class
raise OSError

#### OSError-reraise
try:
    raise OSError('first')
except OSError:
    print('caught')
    raise

#### OverflowError-module
raise OverflowError('boom OverflowError')

#### OverflowError-function
def fail(n):
    if n > 1:
        raise OverflowError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### OverflowError-class
raise OverflowError

#### OverflowError-reraise
try:
    raise OverflowError('first')
except OverflowError:
    print('caught')
    raise

#### PermissionError-module
raise PermissionError('boom PermissionError')

#### PermissionError-function
def fail(n):
    if n > 1:
        raise PermissionError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### PermissionError-class
raise PermissionError

#### PermissionError-reraise
try:
    raise PermissionError('first')
except PermissionError:
    print('caught')
    raise

#### RecursionError-module
raise RecursionError('boom RecursionError')

#### RecursionError-function
def fail(n):
    if n > 1:
        raise RecursionError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### RecursionError-class
raise RecursionError

#### RecursionError-reraise
try:
    raise RecursionError('first')
except RecursionError:
    print('caught')
    raise

#### RuntimeError-module
raise RuntimeError('boom RuntimeError')

#### RuntimeError-function
def fail(n):
    if n > 1:
        raise RuntimeError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### RuntimeError-class
raise RuntimeError

#### RuntimeError-reraise
try:
    raise RuntimeError('first')
except RuntimeError:
    print('caught')
    raise

#### StopIteration-module
raise StopIteration('boom StopIteration')

#### StopIteration-function
def fail(n):
    if n > 1:
        raise StopIteration(f'n={n}')
    return n
print(fail(1))
fail(2)

#### StopIteration-class
raise StopIteration

#### StopIteration-reraise
try:
    raise StopIteration('first')
except StopIteration:
    print('caught')
    raise

#### SyntaxError-module
raise SyntaxError('boom SyntaxError')

#### SyntaxError-function
def fail(n):
    if n > 1:
        raise SyntaxError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### SyntaxError-class
raise SyntaxError

#### SyntaxError-reraise
try:
    raise SyntaxError('first')
except SyntaxError:
    print('caught')
    raise

#### TimeoutError-module
raise TimeoutError('boom TimeoutError')

#### TimeoutError-function
def fail(n):
    if n > 1:
        raise TimeoutError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### TimeoutError-class
raise TimeoutError

#### TimeoutError-reraise
try:
    raise TimeoutError('first')
except TimeoutError:
    print('caught')
    raise

#### TypeError-module
raise TypeError('boom TypeError')

#### TypeError-function
def fail(n):
    if n > 1:
        raise TypeError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### TypeError-class
raise TypeError

#### TypeError-reraise
try:
    raise TypeError('first')
except TypeError:
    print('caught')
    raise

#### UnboundLocalError-module
raise UnboundLocalError('boom UnboundLocalError')

#### UnboundLocalError-function
def fail(n):
    if n > 1:
        raise UnboundLocalError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### UnboundLocalError-class
raise UnboundLocalError

#### UnboundLocalError-reraise
try:
    raise UnboundLocalError('first')
except UnboundLocalError:
    print('caught')
    raise

#### ValueError-module
raise ValueError('boom ValueError')

#### ValueError-function
def fail(n):
    if n > 1:
        raise ValueError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### ValueError-class
raise ValueError

#### ValueError-reraise
try:
    raise ValueError('first')
except ValueError:
    print('caught')
    raise

#### ZeroDivisionError-module
raise ZeroDivisionError('boom ZeroDivisionError')

#### ZeroDivisionError-function
def fail(n):
    if n > 1:
        raise ZeroDivisionError(f'n={n}')
    return n
print(fail(1))
fail(2)

#### ZeroDivisionError-class
raise ZeroDivisionError

#### ZeroDivisionError-reraise
try:
    raise ZeroDivisionError('first')
except ZeroDivisionError:
    print('caught')
    raise

package value

// The name tables below are the exact sets of names the released worker
// (monty 0.0.23, `monty subprocess`, protocol 2) accepts in untrusted values.
// Matching is exact and case-sensitive: no trimming, no aliases.
//
// They were produced empirically, not copied from upstream source: every
// candidate name was sent to the worker as a Feed input (an Exception with
// that exc_type, a Type{origin: BUILTIN} with that name, a builtin_function
// with that name) and the reply classified as accepted (Complete) or rejected
// ("unknown exception type", "unknown type name", "unknown builtin function").
// The candidates were every identifier or dotted identifier of up to 40
// characters occurring in the worker binary, every name in CPython's builtins
// module and the attributes of its types, the attributes of ~70 standard
// library modules and their classes (module.attr, module.Class.attr,
// Class.attr), case and qualification variants of each accepted name, and
// every identifier of up to three characters plus every lowercase one of four.
// The RaisedException.exc_type table (answered through
// ResumeNameLookup.error) was probed separately and is identical to the
// Exception.exc_type table.

// exceptionTypeNames are the names accepted in Exception.exc_type and
// RaisedException.exc_type, sorted bytewise: 33 CPython builtin exceptions,
// FrozenInstanceError (dataclasses) under its bare name, and four
// module-qualified names (binascii.Error, io.UnsupportedOperation,
// json.JSONDecodeError, re.PatternError). "dataclasses.FrozenInstanceError"
// is rejected, and so are many CPython builtins: every Warning,
// UnicodeError, UnicodeTranslateError, EOFError, ConnectionError and the
// other OSError subclasses not listed, GeneratorExit, SystemError,
// ExceptionGroup, IOError and EnvironmentError, among others.
var exceptionTypeNames = []string{
	"ArithmeticError",
	"AssertionError",
	"AttributeError",
	"BaseException",
	"Exception",
	"FileExistsError",
	"FileNotFoundError",
	"FrozenInstanceError",
	"ImportError",
	"IndexError",
	"IsADirectoryError",
	"KeyError",
	"KeyboardInterrupt",
	"LookupError",
	"MemoryError",
	"ModuleNotFoundError",
	"NameError",
	"NotADirectoryError",
	"NotImplementedError",
	"OSError",
	"OverflowError",
	"PermissionError",
	"RecursionError",
	"RuntimeError",
	"StopIteration",
	"SyntaxError",
	"SystemExit",
	"TimeoutError",
	"TypeError",
	"UnboundLocalError",
	"UnicodeDecodeError",
	"UnicodeEncodeError",
	"ValueError",
	"ZeroDivisionError",
	"binascii.Error",
	"io.UnsupportedOperation",
	"json.JSONDecodeError",
	"re.PatternError",
}

// builtinTypeOnlyNames are the names accepted in Type{origin: BUILTIN} that
// are not exception names, sorted bytewise. Every exception type name is
// also a builtin type name; KnownBuiltinType accepts the union of the two
// tables (108 names). Spellings follow the worker's own type names:
// "ellipsis" and "namedtuple" are lowercase, "PosixPath" stands for
// pathlib.Path, and the datetime, itertools, re, _io and collections types
// are module-qualified. complex, bytearray, Counter and
// collections.defaultdict are rejected.
var builtinTypeOnlyNames = []string{
	"Field",
	"NoneType",
	"NotImplementedType",
	"PosixPath",
	"_DataclassParams",
	"_io.BufferedRandom",
	"_io.BufferedReader",
	"_io.BufferedWriter",
	"_io.TextIOWrapper",
	"bool",
	"builtin_function_or_method",
	"bytes",
	"bytes_iterator",
	"callable_iterator",
	"cell",
	"collections.deque",
	"coroutine",
	"datetime.date",
	"datetime.datetime",
	"datetime.time",
	"datetime.timedelta",
	"datetime.timezone",
	"dict",
	"dict_itemiterator",
	"dict_items",
	"dict_keyiterator",
	"dict_keys",
	"dict_valueiterator",
	"dict_values",
	"ellipsis",
	"float",
	"frozenset",
	"function",
	"functools.partial",
	"int",
	"iterator",
	"itertools.accumulate",
	"itertools.batched",
	"itertools.chain",
	"itertools.compress",
	"itertools.count",
	"itertools.cycle",
	"itertools.dropwhile",
	"itertools.filterfalse",
	"itertools.islice",
	"itertools.pairwise",
	"itertools.repeat",
	"itertools.starmap",
	"itertools.takewhile",
	"itertools.zip_longest",
	"list",
	"list_iterator",
	"module",
	"namedtuple",
	"object",
	"property",
	"range",
	"range_iterator",
	"re.Match",
	"re.Pattern",
	"set",
	"set_iterator",
	"slice",
	"str",
	"str_ascii_iterator",
	"str_iterator",
	"tuple",
	"tuple_iterator",
	"type",
	"typing._SpecialForm",
}

// builtinFunctionNames are the names accepted in builtin_function, sorted
// bytewise: 32 builtins-module functions plus object.__setattr__. Type
// constructors (int, str, list, ...) are types, not builtin functions, with
// the exception of "type", which is in both tables.
var builtinFunctionNames = []string{
	"abs",
	"all",
	"any",
	"bin",
	"chr",
	"divmod",
	"enumerate",
	"filter",
	"getattr",
	"hasattr",
	"hash",
	"hex",
	"id",
	"isinstance",
	"len",
	"map",
	"max",
	"min",
	"next",
	"object.__setattr__",
	"oct",
	"open",
	"ord",
	"pow",
	"print",
	"repr",
	"reversed",
	"round",
	"setattr",
	"sorted",
	"sum",
	"type",
	"zip",
}

func makeSet(tables ...[]string) map[string]struct{} {
	n := 0
	for _, t := range tables {
		n += len(t)
	}
	m := make(map[string]struct{}, n)
	for _, t := range tables {
		for _, s := range t {
			m[s] = struct{}{}
		}
	}
	return m
}

var (
	exceptionTypeSet   = makeSet(exceptionTypeNames)
	builtinTypeSet     = makeSet(exceptionTypeNames, builtinTypeOnlyNames)
	builtinFunctionSet = makeSet(builtinFunctionNames)
)

// KnownExceptionType reports whether name is an exception type the worker
// accepts in Exception.exc_type or RaisedException.exc_type, such as
// "ValueError" or "json.JSONDecodeError". Any other name is rejected with
// `unknown exception type "X"`.
func KnownExceptionType(name string) bool {
	_, ok := exceptionTypeSet[name]
	return ok
}

// KnownBuiltinType reports whether name is a builtin type name the worker
// accepts in a Type with origin BUILTIN, such as "int", "NoneType",
// "datetime.date", "PosixPath" or any exception type name. Any other name is
// rejected with `unknown type name "X"`.
func KnownBuiltinType(name string) bool {
	_, ok := builtinTypeSet[name]
	return ok
}

// KnownBuiltinFunction reports whether name is a builtin function the worker
// accepts in builtin_function, such as "len", "print" or
// "object.__setattr__". Any other name is rejected with
// `unknown builtin function "X"`.
func KnownBuiltinFunction(name string) bool {
	_, ok := builtinFunctionSet[name]
	return ok
}

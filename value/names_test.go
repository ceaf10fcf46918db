package value

import (
	"slices"
	"testing"
)

func TestNameTablesSortedAndDisjoint(t *testing.T) {
	for name, table := range map[string][]string{
		"exceptionTypeNames":   exceptionTypeNames,
		"builtinTypeOnlyNames": builtinTypeOnlyNames,
		"builtinFunctionNames": builtinFunctionNames,
	} {
		if !slices.IsSorted(table) {
			t.Errorf("%s is not sorted", name)
		}
		if len(slices.Compact(slices.Clone(table))) != len(table) {
			t.Errorf("%s has duplicates", name)
		}
	}
	for _, n := range builtinTypeOnlyNames {
		if slices.Contains(exceptionTypeNames, n) {
			t.Errorf("%q is in both exceptionTypeNames and builtinTypeOnlyNames", n)
		}
	}
	if got := len(exceptionTypeNames); got != 38 {
		t.Errorf("exception types: got %d, want 38", got)
	}
	if got := len(builtinTypeSet); got != 108 {
		t.Errorf("builtin types: got %d, want 108", got)
	}
	if got := len(builtinFunctionNames); got != 33 {
		t.Errorf("builtin functions: got %d, want 33", got)
	}
}

func TestKnownExceptionType(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"ValueError", true},
		{"KeyError", true},
		{"BaseException", true},
		{"KeyboardInterrupt", true},
		{"TimeoutError", true},
		{"MemoryError", true},
		{"RecursionError", true},
		{"UnicodeDecodeError", true},
		{"FileNotFoundError", true},
		{"FrozenInstanceError", true},
		{"json.JSONDecodeError", true},
		{"io.UnsupportedOperation", true},
		{"re.PatternError", true},
		{"binascii.Error", true},
		{"", false},
		{"HostError", false},
		{"valueerror", false},
		{"ValueError ", false},
		{"JSONDecodeError", false},
		{"dataclasses.FrozenInstanceError", false},
		{"builtins.ValueError", false},
		{"Warning", false},
		{"UnicodeError", false},
		{"EOFError", false},
		{"ConnectionError", false},
		{"GeneratorExit", false},
		{"ExceptionGroup", false},
		{"int", false},
		{"len", false},
	} {
		if got := KnownExceptionType(tc.name); got != tc.want {
			t.Errorf("KnownExceptionType(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestKnownBuiltinType(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"int", true},
		{"bool", true},
		{"NoneType", true},
		{"object", true},
		{"list", true},
		{"dict", true},
		{"tuple", true},
		{"set", true},
		{"frozenset", true},
		{"str", true},
		{"bytes", true},
		{"float", true},
		{"range", true},
		{"type", true},
		{"ellipsis", true},
		{"namedtuple", true},
		{"ValueError", true},
		{"json.JSONDecodeError", true},
		{"datetime.date", true},
		{"datetime.time", true},
		{"datetime.datetime", true},
		{"datetime.timedelta", true},
		{"datetime.timezone", true},
		{"PosixPath", true},
		{"collections.deque", true},
		{"itertools.zip_longest", true},
		{"_io.TextIOWrapper", true},
		{"typing._SpecialForm", true},
		{"", false},
		{"nosuchtype", false},
		{"Int", false},
		{"complex", false},
		{"bytearray", false},
		{"Counter", false},
		{"collections.defaultdict", false},
		{"deque", false},
		{"date", false},
		{"pathlib.Path", false},
		{"len", false},
		{"object.__setattr__", false},
	} {
		if got := KnownBuiltinType(tc.name); got != tc.want {
			t.Errorf("KnownBuiltinType(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, n := range exceptionTypeNames {
		if !KnownBuiltinType(n) {
			t.Errorf("exception type %q is not a known builtin type", n)
		}
	}
}

func TestKnownBuiltinFunction(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"len", true},
		{"print", true},
		{"isinstance", true},
		{"sorted", true},
		{"abs", true},
		{"type", true},
		{"open", true},
		{"setattr", true},
		{"object.__setattr__", true},
		{"", false},
		{"nosuch", false},
		{"Len", false},
		{"int", false},
		{"callable", false},
		{"iter", false},
		{"issubclass", false},
		{"object.__getattribute__", false},
		{"type.__call__", false},
		{"str.join", false},
		{"ValueError", false},
	} {
		if got := KnownBuiltinFunction(tc.name); got != tc.want {
			t.Errorf("KnownBuiltinFunction(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

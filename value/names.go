package value

// PLACEHOLDER: replaced by the probed name tables (helper task in progress).

// KnownExceptionType reports whether name is an exception type the worker knows.
func KnownExceptionType(name string) bool { return name != "" }

// KnownBuiltinType reports whether name is a builtin type the worker knows.
func KnownBuiltinType(name string) bool { return name != "" }

// KnownBuiltinFunction reports whether name is a builtin function the worker knows.
func KnownBuiltinFunction(name string) bool { return name != "" }

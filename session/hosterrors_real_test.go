//go:build unix

package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// errProbe is the Go value behind the host class of the error-path tests:
// its method, its constructor and its attribute hook all fail with the
// error under test.
type errProbe struct{ err error }

func (p *errProbe) Fail() error { return p.err }

// hostErrorPaths registers, for err, one way of reaching each path that
// turns a host's Go error into a Python exception, and returns the
// sandbox expression for each: a function, a method, a constructor, an
// attribute read, an Async function's future and an OS call.
func hostErrorPaths(err error) (*Registry, OSHandler, map[string]string) {
	reg := NewRegistry()
	reg.MustRegister("fail", func() error { return err })
	reg.MustRegister("afail", func() error { return err }, Async())
	c := MustClassOf[errProbe]("Probe", Policy{
		Methods:     []string{"fail"},
		Constructor: func() (*errProbe, error) { return nil, err },
		Getattr:     func(context.Context, any, string) (any, bool, error) { return nil, false, err },
	})
	reg.MustRegisterClass("Probe", c)
	reg.SetValue("probe", Object(c, &errProbe{err: err}))
	os := OSFunc(func(context.Context, *message.OsCall) (*message.ResumeCall, error) { return nil, err })
	return reg, os, map[string]string{
		"function":    "fail()",
		"method":      "probe.fail()",
		"constructor": "Probe()",
		"attribute":   "probe.anything",
		"future":      "await afail()",
		"os":          "Path('/x').read_text()",
	}
}

// Every path that turns a host's Go error into a Python exception does it
// the same way: the type, repr, str and args the sandbox sees are the
// same whether a function, a method, a constructor, an attribute hook, an
// Async function or an OS handler returned the error, except that an error
// with nothing to say its class is a RuntimeError from a call and an
// OSError from the OS handler. Before, an OS handler's error wrapping an
// exception lost the wrapper's text, an errno outside the three fs
// sentinels (EISDIR) was a plain OSError there, and a call's errno error
// was a RuntimeError.
func TestRealHostErrorsRaiseAlikeOnEveryPath(t *testing.T) {
	exc := message.NewException("ValueError", "bad")
	missing := &fs.PathError{Op: "open", Path: "/cfg", Err: syscall.ENOENT}
	var g value.Graph
	var n int
	conv := value.ToGo(&g, g.Add(value.Str("x")), &n) // what a Func's DecodeArg returns
	for _, c := range []struct {
		name string
		err  error
		want string // the tuple the sandbox sees, from every path
		os   string // from the OS handler, when it differs
	}{
		{"exception", exc, `('ValueError', "ValueError('bad')", 'bad', ('bad',))`, ""},
		{"wrapped exception", fmt.Errorf("loading cfg: %w", exc),
			`('ValueError', "ValueError('loading cfg: bad')", 'loading cfg: bad', ('loading cfg: bad',))`, ""},
		{"exception first in a join", errors.Join(exc, errors.New("then this")),
			`('ValueError', "ValueError('bad\\nthen this')", 'bad\nthen this', ('bad\nthen this',))`, ""},
		{"path error", missing,
			`('FileNotFoundError', "FileNotFoundError('open /cfg: no such file or directory')", 'open /cfg: no such file or directory', ('open /cfg: no such file or directory',))`, ""},
		{"wrapped path error", fmt.Errorf("reading config: %w", missing),
			`('FileNotFoundError', "FileNotFoundError('reading config: open /cfg: no such file or directory')", 'reading config: open /cfg: no such file or directory', ('reading config: open /cfg: no such file or directory',))`, ""},
		{"errno", &fs.PathError{Op: "read", Path: "/d", Err: syscall.EISDIR},
			`('IsADirectoryError', "IsADirectoryError('read /d: is a directory')", 'read /d: is a directory', ('read /d: is a directory',))`, ""},
		{"deadline", fmt.Errorf("fetching: %w", context.DeadlineExceeded),
			`('TimeoutError', "TimeoutError('fetching: context deadline exceeded')", 'fetching: context deadline exceeded', ('fetching: context deadline exceeded',))`, ""},
		{"conversion", fmt.Errorf("argument 1: %w", conv),
			`('TypeError', "TypeError('argument 1: value: cannot convert str to int')", 'argument 1: value: cannot convert str to int', ('argument 1: value: cannot convert str to int',))`, ""},
		{"plain", errors.New("disk on fire"),
			`('RuntimeError', "RuntimeError('disk on fire')", 'disk on fire', ('disk on fire',))`,
			`('OSError', "OSError('disk on fire')", 'disk on fire', ('disk on fire',))`},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A session of its own: the sandbox keeps the global probe
			// it looked up, so a later case would reach this one's.
			s := realSession(t, Config{})
			reg, os, paths := hostErrorPaths(c.err)
			for path, expr := range paths {
				code := "from pathlib import Path\ntry:\n    " + expr +
					"\nexcept BaseException as e:\n    r = (type(e).__name__, repr(e), str(e), e.args)\nr"
				res, err := s.Run(context.Background(), code, WithFunctions(reg), WithOS(os))
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				want := c.want
				if path == "os" && c.os != "" {
					want = c.os
				}
				if got := res.Repr(); got != want {
					t.Errorf("%s (%s):\n got %s\nwant %s", path, expr, got, want)
				}
			}
		})
	}
}

// What the worker would refuse in a host's exception is not sent: its
// traceback (the worker keeps only the sandbox's own frames, and a frame
// it finds invalid makes it reject the whole answer) and, in an OS
// handler's own ResultError answer, a type it does not know (raised as
// RuntimeError, as a host function's is). Before, both answers were
// rejected and the feed aborted, so the sandbox's except clause never ran.
func TestRealHostExceptionsAreSentAsTheWorkerTakesThem(t *testing.T) {
	s := realSession(t, Config{})
	name := "host"
	framed := message.NewException("ValueError", "bad frames")
	framed.Traceback = []message.StackFrame{{Filename: "host.go", FrameName: &name, PreviewLine: &name,
		Start: message.CodeLoc{Line: 1, Column: 4}, End: message.CodeLoc{Line: 1, Column: 2}}}
	reg := NewRegistry().MustRegister("fail", func() error { return fmt.Errorf("loading: %w", framed) })
	os := OSFunc(func(context.Context, *message.OsCall) (*message.ResumeCall, error) {
		return &message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultError,
			Error: message.NewException("BlockingIOError", "try again")}}, nil
	})
	const catch = "\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nr"
	for code, want := range map[string]string{
		"try:\n    fail()" + catch: "('ValueError', 'loading: bad frames')",
		"from pathlib import Path\ntry:\n    Path('/x').read_text()" + catch: "('RuntimeError', 'BlockingIOError: try again')",
	} {
		res, err := s.Run(context.Background(), code, WithFunctions(reg), WithOS(os))
		if err != nil {
			t.Fatalf("%q: %v", code, err)
		}
		if got := res.Repr(); got != want {
			t.Errorf("%q: got %s, want %s", code, got, want)
		}
	}
	// Uncaught, the traceback is the sandbox's: down to the call, with
	// none of the host's frames.
	_, err := s.Run(context.Background(), "def g():\n    return fail()\ng()", WithFunctions(reg))
	pe := pyErr(t, err, "ValueError")
	want := "Traceback (most recent call last):\n" +
		"  File \"<python-input-N>\", line 3, in <module>\n    g()\n    ~~~\n" +
		"  File \"<python-input-N>\", line 2, in g\n    return fail()\n           ~~~~~~\n" +
		"ValueError: loading: bad frames"
	if got := regexp.MustCompile(`<python-input-\d+>`).ReplaceAllString(pe.Traceback(), "<python-input-N>"); got != want {
		t.Fatalf("traceback:\n%s\nwant:\n%s", got, want)
	}
}

// errQuota is a host's sentinel error.
var errQuota = errors.New("quota exceeded")

// A host error the sandbox lets through ends the run with a *PythonError
// that still answers errors.Is and errors.As for the host's Go error
// (PythonError.HostErr), from every path, while errors.As for a
// *message.RaisedException still finds the worker's exception. An
// exception the sandbox raised itself, after catching the host's, is not
// the host's. Before, the Go error was lost at the sandbox boundary.
func TestRealUncaughtHostErrorUnwrapsToTheGoError(t *testing.T) {
	missing := &fs.PathError{Op: "open", Path: "/cfg", Err: syscall.ENOENT}
	for _, c := range []struct {
		name string
		err  error
		is   error
	}{
		{"sentinel", fmt.Errorf("user 7: %w", errQuota), errQuota},
		{"path error", fmt.Errorf("reading config: %w", missing), fs.ErrNotExist},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := realSession(t, Config{})
			reg, os, paths := hostErrorPaths(c.err)
			for path, expr := range paths {
				code := "from pathlib import Path\ndef g():\n    return " + expr + "\ng()"
				if strings.HasPrefix(expr, "await ") {
					code = "async def g():\n    return " + expr + "\nawait g()"
				}
				_, err := s.Run(context.Background(), code, WithFunctions(reg), WithOS(os))
				var pe *PythonError
				if !errors.As(err, &pe) {
					t.Fatalf("%s: %v", path, err)
				}
				if !errors.Is(err, c.is) || pe.HostErr != c.err {
					t.Errorf("%s: errors.Is(%v, %v) false, HostErr %v", path, err, c.is, pe.HostErr)
				}
				var exc *message.RaisedException
				if !errors.As(err, &exc) || exc != pe.Exception || len(exc.Traceback) != 2 {
					t.Errorf("%s: errors.As found %+v, want the worker's exception", path, exc)
				}
				if c.is == fs.ErrNotExist {
					var got *fs.PathError
					if !errors.As(err, &got) || got != missing {
						t.Errorf("%s: errors.As for the *fs.PathError found %v", path, got)
					}
				}
			}
			// Caught and raised anew, with another type or text: not the
			// host's error.
			for _, code := range []string{
				"try:\n    fail()\nexcept Exception as e:\n    raise ValueError('wrapped: ' + str(e))",
				"try:\n    fail()\nexcept Exception as e:\n    raise KeyError(str(e))",
			} {
				_, err := s.Run(context.Background(), code, WithFunctions(reg))
				var pe *PythonError
				if !errors.As(err, &pe) || pe.HostErr != nil || errors.Is(err, c.is) {
					t.Errorf("%q: %v (HostErr %v)", code, err, pe.HostErr)
				}
			}
			// Re-raised as is, it is.
			_, err := s.Run(context.Background(), "try:\n    fail()\nexcept Exception as e:\n    raise", WithFunctions(reg))
			if !errors.Is(err, c.is) {
				t.Errorf("re-raised: errors.Is(%v, %v) false", err, c.is)
			}
		})
	}
}

// A Getattr hook's AttributeError means "no such attribute", as a Python
// __getattr__ raising it does: hasattr is False and getattr's default is
// returned, where before the worker raised the hook's exception past both
// (it raises a lookup's error at the read, bypassing any default). Any
// other exception still goes through, as it does in CPython.
func TestRealGetattrAttributeErrorIsNotFound(t *testing.T) {
	s := realSession(t, Config{})
	for _, c := range []struct {
		err  error
		code string
		want string
	}{
		{message.NewException("AttributeError", "no x here"), "(hasattr(probe, 'x'), getattr(probe, 'x', 5))", "(False, 5)"},
		{fmt.Errorf("looking up: %w", message.NewException("AttributeError", "")), "(hasattr(probe, 'x'), getattr(probe, 'x', 5))", "(False, 5)"},
		{message.NewException("AttributeError", "no x here"),
			"try:\n    probe.x\nexcept AttributeError as e:\n    r = str(e)\nr", `"'Probe' object has no attribute 'x'"`},
		{message.NewException("ValueError", "v"),
			"try:\n    hasattr(probe, 'x')\nexcept ValueError as e:\n    r = str(e)\nr", "'v'"},
	} {
		reg, _, _ := hostErrorPaths(c.err)
		res, err := s.Run(context.Background(), c.code, WithFunctions(reg))
		if err != nil {
			t.Fatalf("%v, %q: %v", c.err, c.code, err)
		}
		if got := res.Repr(); got != c.want {
			t.Errorf("%v, %q: got %s, want %s", c.err, c.code, got, c.want)
		}
		if err := s.Reset(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// A raw Func that reads an argument the sandbox did not pass, and returns
// DecodeArg's error, raises TypeError as a function adapted by reflection
// does, in CPython's words, and so does one that cannot convert it.
// Before, the missing argument was a RuntimeError quoting the session's
// own error ("monty session: f() has no argument 1").
func TestRealRawFuncArgumentErrorsAreTypeErrors(t *testing.T) {
	s := realSession(t, Config{})
	reg := NewRegistry().MustRegister("f", Func(func(ctx context.Context, c *Call) (any, error) {
		var a, b int
		if err := c.DecodeArg(0, &a); err != nil {
			return nil, err
		}
		if err := c.DecodeArg(1, &b); err != nil {
			return nil, err
		}
		return a + b, nil
	}))
	for code, want := range map[string]string{
		"f(1)":      "('TypeError', 'f() takes at least 2 positional arguments but 1 was given')",
		"f()":       "('TypeError', 'f() takes at least 1 positional argument but 0 were given')",
		"f('x', 1)": "('TypeError', 'value: cannot convert str to int')",
		"f(1, 2)":   "3",
	} {
		res, err := s.Run(context.Background(), "try:\n    r = "+code+"\nexcept Exception as e:\n    r = (type(e).__name__, str(e))\nr", WithFunctions(reg))
		if err != nil {
			t.Fatalf("%s: %v", code, err)
		}
		if got := res.Repr(); got != want {
			t.Errorf("%s: got %s, want %s", code, got, want)
		}
	}
}

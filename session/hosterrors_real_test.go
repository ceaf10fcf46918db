//go:build unix

package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/gomonty/monty/message"
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

//go:build unix

package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// Validate finds, without a worker, what configuring one would refuse.
func TestConfigValidate(t *testing.T) {
	for _, v := range codec.Versions() {
		if err := (Config{}).Validate(v); err != nil {
			t.Errorf("v%d: zero Config: %v", v, err)
		}
		if err := (Config{ScriptName: "x.py", TypeCheck: true, TypeCheckStubs: "def f() -> int: ..."}).Validate(v); err != nil {
			t.Errorf("v%d: %v", v, err)
		}
		for _, c := range []Config{{ScriptName: "bad\xff.py"}, {TypeCheck: true, TypeCheckStubs: "\xfe"}, {MontyVersion: "\xc0"}} {
			var ir *InvalidRequestError
			if err := c.Validate(v); !errors.As(err, &ir) {
				t.Errorf("v%d: %+v: %v, want an *InvalidRequestError", v, c, err)
			}
		}
	}
	bad := Config{OsPolicy: &message.OsPolicy{Clock: message.ClockFixed, Fixed: message.FixedDateTime{Microsecond: 1_000_000}}}
	if err := bad.Validate(protocol.Version5); !errors.Is(err, message.ErrInvalidPolicy) {
		t.Errorf("an invalid policy at 5: %v, want ErrInvalidPolicy", err)
	}
	if err := (Config{}).Validate(99); err == nil {
		t.Error("protocol 99 validated")
	}
}

// Code or an input name that is not UTF-8 is the caller's mistake at every
// protocol: an *InvalidRequestError, nothing sent, the session unchanged.
// At protocols 4 and 5 it used to reach the worker, which answered with a
// RuntimeError ("malformed request") as if the sandbox had raised it.
func TestRealBadUTF8IsAnInvalidRequest(t *testing.T) {
	s := realSession(t, Config{})
	ctx := context.Background()
	for _, c := range []struct {
		code string
		opts []RunOption
	}{
		{"'\xff'", nil},
		{"x", []RunOption{WithInputs(Input{Name: "x\xfe", Value: 1})}},
	} {
		_, err := s.Run(ctx, c.code, c.opts...)
		var ir *InvalidRequestError
		if !errors.As(err, &ir) {
			t.Fatalf("protocol %d: Run(%q): %v, want an *InvalidRequestError", s.Version(), c.code, err)
		}
	}
	if r := run(t, s, "40 + 2"); r.Value.Repr() != "42" {
		t.Errorf("after: %v", r.Value)
	}
}

// A host's error whose text is not UTF-8 (a Go error quoting a file name
// or raw bytes) is raised in the sandbox with U+FFFD in place of the bad
// bytes, where the sandbox can catch it. Before, the answer could not be
// encoded and the whole Run failed with an *InvalidRequestError.
func TestRealHostErrorTextIsMadeUTF8(t *testing.T) {
	s := realSession(t, Config{})
	msg := "bad \xff msg"
	reg := NewRegistry().
		MustRegister("f", func() error { return errors.New(msg) }).
		MustRegister("h", func() error {
			e := message.NewException("ValueError", "")
			e.Message = &msg
			return e
		})
	code := `
out = []
for fn in (f, h):
    try:
        fn()
    except Exception as e:
        out.append(repr(e))
out`
	r := run(t, s, code, WithFunctions(reg))
	if got, want := r.Value.Repr(), "[\"RuntimeError('bad \ufffd msg')\", \"ValueError('bad \ufffd msg')\"]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if msg != "bad \xff msg" {
		t.Error("the host's exception was modified in place")
	}
}

// Start finds what Config.Validate finds, with the same error: an
// OsPolicy a child refuses is an *InvalidRequestError matching
// message.ErrInvalidPolicy, refused before the Configure is sent, and the
// worker is stopped. Before, it was sent, and the child's refusal came
// back as a *ProtocolError that matched neither.
func TestStartRefusesAnInvalidPolicyAsValidateDoes(t *testing.T) {
	fs := &fakeSpawner{bin: fakeBinary(t), version: 5,
		handler: func(int) fakeHandler {
			return withConfigure(func(*message.ParentRequest) fakeReply { return reply(completeInt(1)) })
		}}
	bad := &message.OsPolicy{Clock: message.ClockFixed, Fixed: message.FixedDateTime{Microsecond: 1_000_000}}
	_, err := Start(context.Background(), fs.launch(5), Config{OsPolicy: bad, Logger: quietLogger})
	var ir *InvalidRequestError
	if !errors.Is(err, message.ErrInvalidPolicy) || !errors.As(err, &ir) {
		t.Fatalf("Start: %v (%T), want an *InvalidRequestError matching ErrInvalidPolicy", err, err)
	}
	if n := fs.last().count(message.KindConfigure); n != 0 {
		t.Fatalf("%d Configures sent", n)
	}
	select {
	case <-fs.last().done:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker was not stopped")
	}
}

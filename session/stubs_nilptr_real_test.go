//go:build unix

package session

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"
)

// A *big.Int or a *time.Location parameter takes None (a nil pointer) and
// such a result gives None for nil, as every other pointer does, but the
// stubs declared them int and datetime.timezone, so the type checker
// refused f(None) and let code use a result that may be None as an int.
// They are now declared int | None and datetime.timezone | None.
func TestStubsNilBigIntAndLocationAreNone(t *testing.T) {
	reg := NewRegistry().
		MustRegister("big_or_none", func(x *big.Int) *big.Int { return x }).
		MustRegister("zone_or_none", func(l *time.Location) *time.Location { return l })
	stubs := reg.Stubs()
	for _, want := range []string{
		"def big_or_none(arg0: int | None, /) -> int | None: ...",
		"def zone_or_none(arg0: datetime.timezone | None, /) -> datetime.timezone | None: ...",
	} {
		if !strings.Contains(stubs, want) {
			t.Errorf("stubs lack %q:\n%s", want, stubs)
		}
	}
	s := realSession(t, Config{TypeCheck: true, TypeCheckStubs: stubs})
	wantReprs(t, s, reg, map[string]string{
		"big_or_none(None)":                "None",
		"big_or_none(10**30)":              "1000000000000000000000000000000",
		"zone_or_none(None)":               "None",
		"x = big_or_none(None)\nx is None": "True",
	})
	// A result that may be None is no longer taken for an int.
	if _, err := s.Run(context.Background(), "big_or_none(1) + 1", WithFunctions(reg)); err == nil || !strings.Contains(err.Error(), "unsupported-operator") {
		t.Errorf("big_or_none(1) + 1 type-checked: %v", err)
	}
}

// A pointer to a host class's Go type takes None (a nil pointer) and
// gives None for nil, but the stubs declared it the class alone, so the
// type checker refused take(None), which runs, and let code use a result
// that may be None as an instance. It is now declared Widget | None; a
// value of the class (not a pointer) stays Widget, and refuses None.
func TestStubsNilHostClassPointerIsNone(t *testing.T) {
	cls := MustClassOf[stubWidget]("Widget", Policy{Eager: []string{"size", "label"}, Construct: true})
	reg := NewRegistry().MustRegisterClass("Widget", cls).
		MustRegister("none_widget", func() *stubWidget { return nil }).
		MustRegister("take", func(w *stubWidget) bool { return w == nil }).
		MustRegister("size_of", func(w stubWidget) int { return w.Size })
	reg.SetValue("w", &stubWidget{Size: 2})
	stubs := reg.Stubs()
	for _, want := range []string{
		"def none_widget() -> Widget | None: ...",
		"def take(arg0: Widget | None, /) -> bool: ...",
		"def size_of(arg0: Widget, /) -> int: ...",
		"\nw: Widget\n", // a value that is not nil
	} {
		if !strings.Contains(stubs, want) {
			t.Errorf("stubs lack %q:\n%s", want, stubs)
		}
	}
	s := realSession(t, Config{TypeCheck: true, TypeCheckStubs: stubs})
	wantReprs(t, s, reg, map[string]string{
		"none_widget()":           "None",
		"take(None)":              "True",
		"take(Widget())":          "False",
		"take(none_widget())":     "True",
		"size_of(Widget(size=4))": "4",
		"w.size":                  "2",
	})
	// A result that may be None is no longer taken for an instance.
	if _, err := s.Run(context.Background(), "none_widget().size", WithFunctions(reg)); err == nil {
		t.Error("none_widget().size type-checked")
	}
}

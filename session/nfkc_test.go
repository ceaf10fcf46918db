//go:build unix

package session

import (
	"context"
	"testing"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/value"
)

type gauge struct {
	Level int `monty:"level"`
}

func (g *gauge) Raise(by int) int { g.Level += by; return g.Level }

// The sandbox reads every identifier NFKC-normalized, as CPython does
// (PEP 3131: ｆ and f are one name): it asks the host for f, passes the
// keyword x, calls the method raise. Names registered in another form (a
// full-width letter) were accepted and could never be reached: NameError
// for the function written exactly as registered, unexpected keyword
// argument for its parameter. They are registered as the sandbox reads
// them now.
func TestRealNamesAreNFKCNormalized(t *testing.T) {
	testenv.Worker(t)
	reg := NewRegistry()
	if err := reg.Register("ｆ", func(x, y int) int { return 10*x + y }, Params("ｘ", "y")); err != nil {
		t.Fatal(err)
	}
	reg.SetValue("ｖ", 7)
	cls := MustClassOf[gauge]("Gauge", Policy{Eager: []string{"level"}, Methods: []string{"ｂump=Raise(ｂy)"}})
	reg.MustRegisterClass("ｇauge_type", cls)
	reg.SetValue("g", &gauge{Level: 1})
	s := realSession(t, Config{})
	for _, c := range []struct{ code, want string }{
		{"ｆ(1, y=2)", "12"},
		{"f(ｘ=3, y=4)", "34"},
		{"(ｖ, v)", "(7, 7)"},
		{"g.bump(by=2)", "3"},
		{"g.ｂump(ｂy=2)", "5"},
		{"isinstance(g, gauge_type)", "True"},
	} {
		if got := run(t, s, c.code, WithFunctions(reg)).Repr(); got != c.want {
			t.Errorf("%s = %s, want %s", c.code, got, c.want)
		}
	}
	// A name whose normal form is a keyword cannot be a global.
	if err := NewRegistry().Register("ｉｆ", func() {}); err == nil {
		t.Error("a name normalizing to a keyword was accepted")
	}
	if _, err := ClassOf[gauge]("Gauge", Policy{Methods: []string{"ｉｆ=Raise"}}); err == nil {
		t.Error("a method name normalizing to a keyword was accepted")
	}
}

// An input is bound under the name the sandbox's code reads: the worker
// binds an input name as given, and code writing ｘ or x reads x, so an
// input named ｘ (full-width) was bound and could never be read.
func TestRealInputNamesAreNFKCNormalized(t *testing.T) {
	s := realSession(t, Config{})
	for _, code := range []string{"x + 1", "ｘ + 1"} {
		if got := run(t, s, code, WithInputs(Input{Name: "ｘ", Value: 5})).Repr(); got != "6" {
			t.Errorf("Run %s = %s", code, got)
		}
	}
	ev, err := s.Feed(context.Background(), "y * 2", Input{Name: "ｙ", Value: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := EventError(ev); err != nil {
		t.Fatalf("Feed: %v", err)
	}
}

type meter struct {
	Level int    `monty:"ｌevel"`
	Unit  string `monty:"ｕnit"`
}

// A host class's field and class attribute names are the sandbox's NFKC
// names too: a struct tag ｌevel or a class attribute ＫＩＮＤ was sent or
// kept as given, and g.level, g.unit and Meter.KIND read nothing.
func TestRealClassAttributeNamesAreNFKCNormalized(t *testing.T) {
	testenv.Worker(t)
	cls := MustClassOf[meter]("Meter", Policy{Eager: []string{"ｌevel"}, Lazy: []string{"ｕnit"}, Construct: true,
		ClassAttrs: []value.Attr{{Name: "ＫＩＮＤ", Value: "meter"}}})
	reg := NewRegistry().MustRegisterClass("Meter", cls)
	reg.SetValue("g", &meter{Level: 3, Unit: "cm"})
	s := realSession(t, Config{})
	if got := run(t, s, "(g.level, g.ｌevel, g.unit, Meter.KIND, g.KIND, Meter(level=4).level)", WithFunctions(reg)).Repr(); got != "(3, 3, 'cm', 'meter', 'meter', 4)" {
		t.Fatalf("got %s", got)
	}
}

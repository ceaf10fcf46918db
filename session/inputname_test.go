package session

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/gomonty/monty/message"
)

// An input name the worker would refuse (TestRealInputNamesAgreeWithWorker)
// is refused by Feed and Run before anything is sent, with an
// *InvalidRequestError naming the input; the session stays idle and
// usable. Before, the Feed went out and the worker's SyntaxError came back.
func TestBadInputNameRefusedBeforeSending(t *testing.T) {
	s, f := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		return reply(completeInt(7))
	})
	for _, name := range []string{"class", "ｉｆ", "1x", "", "x y", "price€", "x\xff"} {
		_, err := s.Feed(bg, "1", Input{Name: "ok", Value: 1}, Input{Name: name, Value: 2})
		var ire *InvalidRequestError
		if !errors.As(err, &ire) || !strings.Contains(err.Error(), "input "+strconv.Quote(name)) || !Survives(err) {
			t.Errorf("Feed with input %q: %v, want an *InvalidRequestError naming it", name, err)
		}
		_, err = s.Run(bg, "1", WithInputs(Input{Name: name, Value: 2}))
		if !errors.As(err, &ire) || !strings.Contains(err.Error(), "input "+strconv.Quote(name)) {
			t.Errorf("Run with input %q: %v, want an *InvalidRequestError naming it", name, err)
		}
		if st := s.State(); st != StateIdle {
			t.Fatalf("input %q: state %v after the refusal", name, st)
		}
	}
	if n := f.count(message.KindFeed); n != 0 {
		t.Errorf("%d feeds were sent", n)
	}
	if _, err := s.Feed(bg, "1", Input{Name: "match", Value: 1}, Input{Name: "ｘ", Value: 2}); err != nil {
		t.Fatal(err)
	}
	if n := f.count(message.KindFeed); n != 1 {
		t.Errorf("%d feeds sent, want 1", n)
	}
}

// Two inputs that are one global as the sandbox reads them (x and ｘ, or
// the same name twice) are refused by Feed and Run before anything is
// sent, with an *InvalidRequestError naming both; the worker would bind
// both, the last silently winning (TestRealInputsOneGlobalLastWins).
// Before, both were sent.
func TestInputsOneGlobalRefusedBeforeSending(t *testing.T) {
	s, f := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		return reply(completeInt(7))
	})
	for _, c := range []struct {
		names         []string
		first, second string
	}{
		{[]string{"x", "ｘ"}, "x", "ｘ"}, {[]string{"ｘ", "x"}, "ｘ", "x"}, {[]string{"x", "x"}, "x", "x"},
		{[]string{"a", "x²", "b", "x2"}, "x²", "x2"}, {[]string{"ﬁ", "fi"}, "ﬁ", "fi"},
	} {
		var in []Input
		for i, name := range c.names {
			in = append(in, Input{Name: name, Value: i})
		}
		first, second := c.first, c.second
		_, ferr := s.Feed(bg, "1", in...)
		_, rerr := s.Run(bg, "1", WithInputs(in...))
		for _, err := range []error{ferr, rerr} {
			var ire *InvalidRequestError
			if !errors.As(err, &ire) || !strings.Contains(err.Error(), strconv.Quote(first)) || !strings.Contains(err.Error(), strconv.Quote(second)) || !Survives(err) {
				t.Errorf("inputs %q: %v, want an *InvalidRequestError naming %q and %q", c.names, err, first, second)
			}
		}
	}
	if n := f.count(message.KindFeed); n != 0 {
		t.Errorf("%d feeds were sent", n)
	}
	if _, err := s.Feed(bg, "1", Input{Name: "x", Value: 1}, Input{Name: "x2", Value: 2}, Input{Name: "ｙ", Value: 3}); err != nil {
		t.Fatal(err)
	}
}

package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// answersOf runs a feed over a fake child (frame cap 1024) that sends evs
// one per turn, then completes. It returns the requests the child
// received after the Feed.
func answersOf(t *testing.T, version uint32, reg *Registry, evs ...*message.ChildEvent) ([]*message.ParentRequest, error) {
	t.Helper()
	var mu sync.Mutex
	next := 0
	s, f := startFakeOpts(t, fakeOpts{version: version, maxFrameLen: 1024}, Config{}, func(req *message.ParentRequest) fakeReply {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := req.Body.(*message.AbortFeed); ok {
			return reply(pyError("RuntimeError", "aborted"))
		}
		if next < len(evs) {
			next++
			return reply(evs[next-1])
		}
		return reply(completeInt(1))
	})
	_, err := s.Run(bg, "x", WithFunctions(reg))
	if st := s.State(); st != StateIdle {
		t.Fatalf("state %v after the run, want idle", st)
	}
	var out []*message.ParentRequest
	for _, r := range f.requests() {
		switch r.Body.(type) {
		case *message.Configure, *message.Feed:
			continue
		}
		out = append(out, r)
	}
	return out, err
}

// A host function's result that cannot be sent (over the frame cap here)
// raises ValueError in the sandbox, naming the function, as one with no
// Python equivalent raises TypeError: the code can catch it and the run
// goes on. Before, the feed was aborted with an uncatchable RuntimeError
// and Run failed with the *RequestTooLargeError.
func TestFakeUnsendableHostResultRaisesValueError(t *testing.T) {
	big := strings.Repeat("x", 4096)
	for _, v := range []uint32{2, 4, 5} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			reg := NewRegistry().MustRegister("big", func() string { return big })
			reqs, err := answersOf(t, v, reg, funcCall("big", 0))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if len(reqs) != 1 {
				t.Fatalf("%d requests after the feed, want 1", len(reqs))
			}
			rc, ok := reqs[0].Body.(*message.ResumeCall)
			if !ok || rc.Result.Kind != message.ResultError {
				t.Fatalf("answer %#v, want an error result", reqs[0].Body)
			}
			exc := rc.Result.Error
			if exc.Type != "ValueError" || !strings.Contains(exc.Msg(), "big") || !strings.Contains(exc.Msg(), "1024") {
				t.Fatalf("raised %v", exc)
			}
		})
	}
}

// The same for a host value looked up by name (a LookupError answer), and
// for the results of Async functions: each unsendable one raises
// ValueError, and results that fit one at a time but not together are
// sent over several ResolveFutures, none lost. (How many futures have
// finished when the worker first asks varies; the answers do not.)
func TestFakeUnsendableLookupAndFutureResults(t *testing.T) {
	mid := strings.Repeat("m", 400)
	reg := NewRegistry().
		MustRegister("a", func() string { return mid }, Async()).
		MustRegister("b", func() string { return mid }, Async()).
		MustRegister("c", func() string { return strings.Repeat("c", 4096) }, Async())
	reg.SetValue("bigval", strings.Repeat("v", 4096))
	var mu sync.Mutex
	got := map[uint32]string{}
	var lookup *message.ResumeNameLookup
	s, _ := startFakeOpts(t, fakeOpts{maxFrameLen: 1024}, Config{}, func(req *message.ParentRequest) fakeReply {
		mu.Lock()
		defer mu.Unlock()
		pending := func() fakeReply {
			var ids []uint32
			for _, id := range []uint32{1, 2, 3} {
				if _, ok := got[id]; !ok {
					ids = append(ids, id)
				}
			}
			if len(ids) == 0 {
				return reply(completeInt(1))
			}
			return reply(ev(&message.ResolveFutures{PendingCallIDs: ids}))
		}
		switch b := req.Body.(type) {
		case *message.Feed:
			return reply(ev(&message.NameLookup{Name: "bigval"}))
		case *message.ResumeNameLookup:
			lookup = b
			return reply(funcCall("a", 1))
		case *message.ResumeCall:
			switch b.CallID {
			case 1:
				return reply(funcCall("b", 2))
			case 2:
				return reply(funcCall("c", 3))
			}
			return pending()
		case *message.ResumeFutures:
			for _, fr := range b.Results {
				if _, dup := got[fr.CallID]; dup {
					got[fr.CallID] = "answered twice"
					continue
				}
				switch fr.Result.Kind {
				case message.ResultReturn:
					got[fr.CallID] = "return " + b.Values.Node(fr.Result.Value).Text()[:1]
				case message.ResultError:
					got[fr.CallID] = fr.Result.Error.Error()
				}
			}
			return pending()
		}
		return reply(violation("unexpected request"))
	})
	if _, err := s.Run(bg, "x", WithFunctions(reg)); err != nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if lookup == nil || lookup.Kind != message.LookupError || lookup.Error.Type != "ValueError" || !strings.Contains(lookup.Error.Msg(), "bigval") {
		t.Fatalf("lookup answer %#v", lookup)
	}
	if got[1] != "return m" || got[2] != "return m" || !strings.HasPrefix(got[3], "ValueError: ") || !strings.Contains(got[3], " c ") {
		t.Fatalf("future answers %v", got)
	}
}

// A Go error that wraps a *message.RaisedException raises that exception's
// type, with the wrapper's context in front of its message, as the Go
// error reads: fmt.Errorf("loading %s: %w", name, exc) is the sandbox's
// ValueError: loading cfg: bad. Before, the wrapper's text was lost.
func TestFakeWrappedExceptionKeepsContext(t *testing.T) {
	exc := message.NewException("ValueError", "bad")
	empty := &message.RaisedException{Type: "KeyError"}
	custom := customWrap{exc}
	for _, c := range []struct {
		err  error
		want string
	}{
		{exc, "ValueError: bad"},
		{&PythonError{Exception: exc}, "ValueError: bad"},
		{fmt.Errorf("loading cfg: %w", exc), "ValueError: loading cfg: bad"},
		{fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", exc)), "ValueError: outer: inner: bad"},
		{fmt.Errorf("no key: %w", empty), "KeyError: no key"},
		{custom, "ValueError: custom wrapper around the exception"},
		{errors.Join(errors.New("first"), exc), "ValueError: first\nbad"},
		{errors.Join(exc, errors.New("then")), "ValueError: bad\nthen"},
		{fmt.Errorf("%w (while loading cfg)", exc), "ValueError: bad (while loading cfg)"},
		{fmt.Errorf("%w (while loading cfg)", empty), "KeyError: (while loading cfg)"},
		{fmt.Errorf("%w: %w", message.NewException("RuntimeError", "loading failed"), exc), "RuntimeError: loading failed: ValueError: bad"},
	} {
		got := exceptionFor(c.err, "RuntimeError")
		if got.Error() != c.want {
			t.Errorf("exceptionFor(%q) = %q, want %q", c.err, got.Error(), c.want)
		}
	}
	if exc.Msg() != "bad" {
		t.Fatalf("the wrapped exception was modified: %q", exc.Msg())
	}
}

type customWrap struct{ exc *message.RaisedException }

func (c customWrap) Error() string { return "custom wrapper around the exception" }
func (c customWrap) Unwrap() error { return c.exc }

type bigOS struct{}

func (bigOS) HandleOS(context.Context, *message.OsCall) (*message.ResumeCall, error) {
	rc := &message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultReturn}}
	rc.Result.Value = rc.Values.Add(value.Str(strings.Repeat("r", 4096)))
	return rc, nil
}

// An OS handler's answer that cannot be sent raises ValueError naming the
// op, as a host function's result does, instead of ending the feed.
func TestFakeUnsendableOSAnswerRaisesValueError(t *testing.T) {
	var got *message.ResumeCall
	s, _ := startFakeOpts(t, fakeOpts{maxFrameLen: 1024}, Config{}, func(req *message.ParentRequest) fakeReply {
		switch b := req.Body.(type) {
		case *message.Feed:
			return reply(ev(&message.OsCall{CallID: 4, Op: message.OpReadText, Path: "/big"}))
		case *message.ResumeCall:
			got = b
		}
		return reply(completeInt(1))
	})
	if _, err := s.Run(bg, "x", WithOS(bigOS{})); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got == nil || got.CallID != 4 || got.Result.Kind != message.ResultError || got.Result.Error.Type != "ValueError" ||
		!strings.HasPrefix(got.Result.Error.Msg(), "the OS handler for ") {
		t.Fatalf("answer %#v", got)
	}
	t.Log(got.Result.Error.Msg())
}

// An exception sent without its traceback keeps a missing message missing
// (KeyError() has no args in the sandbox, KeyError with an empty message has one).
func TestFakeTracebackDroppedKeepsNoMessage(t *testing.T) {
	frame := message.StackFrame{Filename: "inner.py", Start: message.CodeLoc{Line: 1, Column: 1}, End: message.CodeLoc{Line: 1, Column: 2}}
	bare := &message.RaisedException{Type: "KeyError", Traceback: []message.StackFrame{frame}}
	got := exceptionFor(bare, "RuntimeError")
	if got.Message != nil || got.Traceback != nil || got.Type != "KeyError" {
		t.Fatalf("got %+v (message %q)", got, got.Msg())
	}
	if bare.Traceback == nil {
		t.Fatal("the host's exception was modified")
	}
}

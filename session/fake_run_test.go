package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

func TestFakeEagerAwaitIsAnsweredWithOneFuture(t *testing.T) {
	var got *message.ResumeFutures
	s, _ := startFakeOpts(t, fakeOpts{version: 4}, Config{}, func(req *message.ParentRequest) fakeReply {
		switch b := req.Body.(type) {
		case *message.Feed:
			e := funcCall("fetch", 7, 5)
			e.Body.(*message.FunctionCall).AllowEagerAwait = true
			return reply(e)
		case *message.ResumeFutures:
			got = b
			return reply(completeInt(1))
		}
		return reply(violation("expected an eager ResumeFutures"))
	})
	reg := NewRegistry().MustRegister("fetch", func(ctx context.Context, c *Call) (any, error) {
		if !c.Eager {
			t.Error("call not marked eager")
		}
		return "five", nil
	}, Async())
	if _, err := s.Run(bg, "x = await fetch(5)", WithFunctions(reg)); err != nil {
		t.Fatal(err)
	}
	if got == nil || len(got.Results) != 1 || got.Results[0].CallID != 7 ||
		got.Results[0].Result.Kind != message.ResultReturn ||
		got.Values.Node(got.Results[0].Result.Value).Text() != "five" {
		t.Fatalf("eager reply %+v", got)
	}
}

func TestFakeFuturesResolveOnlyFinishedAndUnknownIDsFail(t *testing.T) {
	var rounds [][]message.FutureResult
	release := make(chan struct{})
	second := make(chan struct{})
	step := 0
	s, _ := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		switch b := req.Body.(type) {
		case *message.Feed:
			return reply(funcCall("f", 0, 1))
		case *message.ResumeCall:
			if b.Result.Kind != message.ResultFuture || b.Result.Future != b.CallID {
				return reply(violation("expected a future"))
			}
			if b.CallID == 0 {
				return reply(funcCall("f", 1, 2))
			}
			<-second                          // f(2) has returned…
			time.Sleep(20 * time.Millisecond) // …and its result is recorded
			return reply(ev(&message.ResolveFutures{PendingCallIDs: []uint32{1, 0}}))
		case *message.ResumeFutures:
			rounds = append(rounds, b.Results)
			step++
			if step == 1 {
				close(release)
				return reply(ev(&message.ResolveFutures{PendingCallIDs: []uint32{0}}))
			}
			return reply(completeInt(2))
		}
		return reply(violation("unexpected"))
	})
	reg := NewRegistry().MustRegister("f", func(ctx context.Context, n int) (int, error) {
		if n == 1 {
			select { // the first call finishes only after the first round
			case <-release:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		if n == 2 {
			close(second)
		}
		return n * 10, nil
	}, Async())
	if _, err := s.Run(bg, "await asyncio.gather(f(1), f(2))", WithFunctions(reg)); err != nil {
		t.Fatal(err)
	}
	if len(rounds) != 2 {
		t.Fatalf("%d rounds", len(rounds))
	}
	ids := map[uint32]message.ResultKind{}
	for _, r := range rounds[0] {
		ids[r.CallID] = r.Result.Kind
	}
	if len(ids) != 1 || ids[1] != message.ResultReturn {
		t.Fatalf("first round %v", ids)
	}
	if len(rounds[1]) != 1 || rounds[1][0].CallID != 0 || rounds[1][0].Result.Kind != message.ResultReturn {
		t.Fatalf("second round %+v", rounds[1])
	}
}

func TestFakeHostPanicBecomesRuntimeError(t *testing.T) {
	var sent *message.ExtResult
	s, _ := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		switch b := req.Body.(type) {
		case *message.Feed:
			return reply(funcCall("boom", 0))
		case *message.ResumeCall:
			sent = b.Result
			return reply(pyError(b.Result.Error.Type, b.Result.Error.Msg()))
		}
		return reply(violation("unexpected"))
	})
	reg := NewRegistry().MustRegister("boom", func() int { panic("kaboom") })
	_, err := s.Run(bg, "boom()", WithFunctions(reg))
	pe := new(PythonError)
	if !errors.As(err, &pe) || sent == nil || sent.Error.Type != "RuntimeError" || !strings.Contains(sent.Error.Msg(), "kaboom") {
		t.Fatalf("got %v, sent %+v", err, sent)
	}
}

func TestFakeRejectedReplyAbortsFeed(t *testing.T) {
	s, f := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		switch b := req.Body.(type) {
		case *message.Feed:
			return reply(funcCall("f", 0))
		case *message.ResumeCall:
			return reply(violation("invalid result: unknown exception type \"X\""))
		case *message.AbortFeed:
			return reply(pyError(b.Exception.Type, b.Exception.Msg()))
		}
		return reply(violation("unexpected"))
	})
	reg := NewRegistry().MustRegister("f", func() int { return 1 })
	_, err := s.Run(bg, "f()", WithFunctions(reg))
	if !Survives(err) || !strings.Contains(err.Error(), "rejected") || f.count(message.KindAbortFeed) != 1 || s.State() != StateIdle {
		t.Fatalf("got %v, state %v", err, s.State())
	}
}

func TestFakeUnknownExceptionTypeIsRenamed(t *testing.T) {
	exc := exceptionFor(message.NewException("MyHostError", "nope"), "RuntimeError")
	if exc.Type != "RuntimeError" || exc.Msg() != "MyHostError: nope" {
		t.Fatalf("%+v", exc)
	}
	if exc := exceptionFor(&PythonError{Exception: message.NewException("KeyError", "k")}, "RuntimeError"); exc.Type != "KeyError" {
		t.Fatalf("%+v", exc)
	}
}

func TestFakeCloseCancelsRunningHostFunction(t *testing.T) {
	s, _ := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		return reply(funcCall("wait", 0))
	})
	entered := make(chan struct{})
	reg := NewRegistry().MustRegister("wait", func(ctx context.Context) error {
		close(entered)
		<-ctx.Done()
		return ctx.Err()
	})
	errc := make(chan error, 1)
	go func() {
		_, err := s.Run(bg, "wait()", WithFunctions(reg))
		errc <- err
	}()
	<-entered
	s.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("got %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not release the host function")
	}
}

func TestFakeValueRoundTrip(t *testing.T) {
	// A Value taken from one graph can be returned into another, alone or
	// nested in a Go value; only what its root reaches is copied.
	var src value.Graph
	a := src.Add(value.Int(1))
	src.Add(value.Str("unrelated"))
	b := src.Add(value.Str("two"))
	l := src.Add(value.List(a, b))
	v := Value{Graph: &src, Root: l}
	var dst value.Graph
	root, err := toGraph(&dst, []any{v, 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := dst.Repr(root); got != "[[1, 'two'], 3]" || dst.Len() != 5 {
		t.Fatalf("got %s in %d nodes", got, dst.Len())
	}
	var out []any
	if err := (Value{Graph: &dst, Root: root}).Decode(&out); err != nil || len(out) != 2 {
		t.Fatalf("decode %v %v", out, err)
	}
}

// An OS handler's error raises what a host function's would, except that
// an error with nothing to say its class is an OSError.
func TestFakeOSHandlerErrorsMapToExceptions(t *testing.T) {
	for err, want := range map[error]string{
		errors.New("x"): "OSError: x",
		ErrClosed:       "OSError: " + ErrClosed.Error(),
		message.NewException("IsADirectoryError", "d"):                           "IsADirectoryError: d",
		fmt.Errorf("loading cfg: %w", message.NewException("ValueError", "bad")): "ValueError: loading cfg: bad",
		&fs.PathError{Op: "open", Path: "/d", Err: syscall.EISDIR}:               "IsADirectoryError: open /d: is a directory",
		fmt.Errorf("x: %w", fs.ErrNotExist):                                      "FileNotFoundError: x: file does not exist",
	} {
		if got := exceptionFor(err, "OSError").Error(); got != want {
			t.Errorf("%v → %s, want %s", err, got, want)
		}
	}
}

//go:build unix

package relay

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/value"
)

// scripted5 is an inner worker speaking protocol 5 (as a 1.x worker does),
// answering each request with the next event of a script and recording the
// requests.
type scripted5 struct {
	mu     sync.Mutex
	script func(req message.Request) *message.ChildEvent
	reqs   []message.Request
}

func (s *scripted5) Do(ctx context.Context, req message.Request) (*message.ChildEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	switch req.(type) {
	case *message.Configure, *message.Reset:
		return &message.ChildEvent{Body: &message.Ok{}}, nil
	}
	return s.script(req), nil
}
func (s *scripted5) Stamps() session.Stamps { return session.Stamps{} }
func (s *scripted5) Version() uint32        { return protocol.Version5 }
func (s *scripted5) Pid() int               { return 0 }
func (s *scripted5) Close() error           { return nil }

// pipePeer is the parent's end of an in-process child.
type pipePeer struct {
	conn *transport.Stream
	stop func()
}

func (p *pipePeer) Conn() transport.Conn        { return p.conn }
func (p *pipePeer) Kill() error                 { p.stop(); return nil }
func (p *pipePeer) Close(context.Context) error { p.stop(); return nil }
func (p *pipePeer) Lost(l transport.Loss) error { return errors.New("in-process child lost") }
func (p *pipePeer) SessionSurvives() bool       { return false }

// session5 runs child.Serve at protocol 5 with the relay over inner and
// attaches a gomonty session to it.
func session5(t *testing.T, inner Inner, cfg session.Config) *session.Session {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	eng := New(Config{Logger: quiet, Start: func(context.Context, session.Config) (Inner, error) { return inner, nil }})
	conn := transport.NewStream(inR, outW, 0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		child.Serve(context.Background(), conn, eng, child.Options{Logger: quiet, Versions: child.SupportedVersions})
		conn.Close()
	}()
	var once sync.Once
	stop := func() { once.Do(func() { inW.Close(); outR.Close() }) }
	t.Cleanup(func() { stop(); <-done })
	cfg.Logger = quiet
	s, err := session.Attach(context.Background(), &pipePeer{conn: transport.NewStream(outR, inW, 0), stop: stop}, protocol.Version5, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestV5SleepsEndToEnd drives protocol 5's sleeps through both sides: a
// protocol-5 inner worker's system_sleep, async_system_sleep, call_host
// sleep and position cross child.Serve and the relay outward, and the
// parent's answers (None after the wait, a future resolved after the
// delay, the refusal of a future for time.sleep, and the AbortFeed of the
// sleep past the budget with upstream's exact text) cross them inward.
func TestV5SleepsEndToEnd(t *testing.T) {
	pos := &message.SourceRange{Filename: "<python-input-0>", Start: 0, End: 16}
	osCall := func(id uint32, op message.OsOp, seconds float64) *message.ChildEvent {
		return &message.ChildEvent{Body: &message.OsCall{CallID: id, Op: op, Seconds: seconds, Position: pos}}
	}
	inner := &scripted5{}
	inner.script = func(req message.Request) *message.ChildEvent {
		switch b := req.(type) {
		case *message.Feed:
			return osCall(1, message.OpSystemSleep, 0.1)
		case *message.ResumeCall:
			switch b.CallID {
			case 1:
				return osCall(2, message.OpAsyncSystemSleep, 0.2)
			case 2:
				return &message.ChildEvent{Body: &message.ResolveFutures{PendingCallIDs: []uint32{2}, Position: pos}}
			case 3:
				return osCall(4, message.OpSystemSleep, 0.525)
			}
		case *message.ResumeFutures:
			return osCall(3, message.OpSleep, 1)
		case *message.AbortFeed:
			return &message.ChildEvent{Body: &message.Error{Exception: b.Exception}}
		}
		return &message.ChildEvent{Body: &message.Error{Exception: message.NewException("RuntimeError", "protocol violation: unexpected request")}}
	}
	s := session5(t, inner, session.Config{Limits: session.Limits{MaxTotalSleep: 700 * time.Millisecond}})
	var seen []message.OsOp
	var positions []message.SourceRange
	start := time.Now()
	_, err := s.Run(context.Background(), "time.sleep(0.1)…", session.WithOS(session.OSFunc(func(ctx context.Context, c *message.OsCall) (*message.ResumeCall, error) {
		seen = append(seen, c.Op)
		positions = append(positions, message.PositionOrZero(c.Position))
		return &message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultFuture, Future: c.CallID}}, nil
	})))
	took := time.Since(start)
	var pe *session.PythonError
	if !errors.As(err, &pe) || pe.Type() != "TimeoutError" || pe.Exception.Msg() != "sleep limit exceeded: 825ms > 700ms" {
		t.Fatalf("got %v, want TimeoutError: sleep limit exceeded: 825ms > 700ms", err)
	}
	if took < 300*time.Millisecond {
		t.Errorf("the parent waited %v for 100ms and 200ms of sleep", took)
	}
	if len(seen) != 1 || seen[0] != message.OpSleep || positions[0] != *pos {
		t.Fatalf("OS handler saw %v at %+v; only the call_host sleep goes to it", seen, positions)
	}
	if got := s.Stamps().TotalSleep; got != 300*time.Millisecond {
		t.Errorf("TotalSleep %v, want 300ms", got)
	}
	inner.mu.Lock()
	defer inner.mu.Unlock()
	var kinds []string
	var answers []*message.ExtResult
	for _, r := range inner.reqs {
		kinds = append(kinds, r.RequestKind().String())
		switch b := r.(type) {
		case *message.ResumeCall:
			answers = append(answers, b.Result)
		case *message.ResumeFutures:
			if len(b.Results) != 1 || b.Results[0].CallID != 2 || b.Results[0].Result.Kind != message.ResultReturn {
				t.Errorf("ResumeFutures %+v", b.Results)
			}
		case *message.AbortFeed:
			if b.Exception.Type != "TimeoutError" || b.Exception.Msg() != "sleep limit exceeded: 825ms > 700ms" {
				t.Errorf("AbortFeed %+v", b.Exception)
			}
		}
	}
	if len(answers) != 3 || answers[0].Kind != message.ResultReturn || answers[1].Kind != message.ResultFuture ||
		answers[2].Kind != message.ResultError || answers[2].Error.Msg() != "time.sleep cannot be answered with a future" {
		t.Fatalf("inner requests %v, answers %+v", kinds, answers)
	}
}

// scripted2 is an inner worker speaking protocol 2 (as the released worker
// does) that answers every Feed and resume at once with a Complete (or a
// FunctionCall for code "call") while its execution clock advances by
// step: a turn that outran its budget without the relay's timer seeing it.
type scripted2 struct {
	mu    sync.Mutex
	step  time.Duration
	total time.Duration
}

func (s *scripted2) Do(ctx context.Context, req message.Request) (*message.ChildEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch b := req.(type) {
	case *message.Configure, *message.Reset:
		return &message.ChildEvent{Body: &message.Ok{}}, nil
	case *message.Feed:
		s.total += s.step
		if b.Code == "call" {
			return &message.ChildEvent{Body: &message.FunctionCall{CallID: 1, FunctionName: "f"}}, nil
		}
	default:
		s.total += s.step
	}
	var g value.Graph
	root := g.Add(value.Int(1))
	return &message.ChildEvent{Body: &message.Complete{Value: root, Values: g}}, nil
}
func (s *scripted2) Stamps() session.Stamps {
	s.mu.Lock()
	defer s.mu.Unlock()
	return session.Stamps{TotalExecution: s.total}
}
func (s *scripted2) Version() uint32 { return protocol.Version2 }
func (s *scripted2) Pid() int        { return 0 }
func (s *scripted2) Close() error    { return nil }

// TestV5TurnPastBudgetFailsOnReturn shows the budgets re-checked as a turn
// returns, as upstream's worker does ("a turn that finished without
// reaching a checkpoint still fails rather than returning its result"): a
// turn whose execution clock ran past the feed (or turn) budget before the
// relay's timer fired ends with the TimeoutError, not its result.
func TestV5TurnPastBudgetFailsOnReturn(t *testing.T) {
	for _, c := range []struct {
		limits session.Limits
		code   string
		want   string
	}{
		{session.Limits{MaxFeedDuration: time.Hour}, "1", "feed time limit exceeded: 7200s"},
		// No duration limit besides the turn's: the zero Limits would
		// also send the 60 s default as the feed limit, which trips first.
		{session.Limits{MaxTurnDuration: time.Hour, MaxDuration: session.NoDurationLimit}, "call", "turn time limit exceeded: 7200s"},
	} {
		inner := &scripted2{step: 2 * time.Hour}
		s := session5(t, inner, session.Config{Limits: c.limits})
		ev, err := s.Do(context.Background(), &message.Feed{Code: c.code})
		if err != nil {
			t.Fatal(err)
		}
		e, ok := ev.Body.(*message.Error)
		if !ok || e.Exception.Type != "TimeoutError" || !strings.HasPrefix(e.Exception.Msg(), c.want) || !strings.HasSuffix(e.Exception.Msg(), " > 3600s") {
			t.Fatalf("got %#v, want TimeoutError: %s… > 3600s", ev.Body, c.want)
		}
	}
}

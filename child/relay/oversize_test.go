//go:build unix

package relay

import (
	"strings"
	"testing"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// innerCap is the frame cap of the inner worker's connection in these
// tests: small, so that requests over it stay cheap to build.
const innerCap = 1 << 20

// overInner is the reason the inner session gives for a request over
// innerCap.
const overInner = "exceeds the maximum of 1048576 bytes"

// refusedAs checks that ev is the protocol violation "prefix{err}" whose
// err is the inner frame cap's refusal.
func refusedAs(t *testing.T, ev *message.ChildEvent, what, prefix string) {
	t.Helper()
	e, ok := ev.Body.(*message.Error)
	want := "protocol violation: " + prefix + "request frame of "
	if !ok || !strings.HasPrefix(e.Exception.Msg(), want) || !strings.HasSuffix(e.Exception.Msg(), overInner) {
		t.Fatalf("%s: expected the violation %q…%q, got %s", what, want, overInner, describe(ev.Body))
	}
}

// A Feed whose inputs fit the parent's arena but whose protocol-2 tree is
// over the inner frame cap is refused as the contract words a Feed's
// inputs that cannot be converted ("invalid inputs: …"), as a too-deep
// input is; before, the text was the bare "request frame of … exceeds …".
// The session is as it was: its globals are kept.
func TestOversizeInputIsInvalidInputs(t *testing.T) {
	s := serveWorker(t, child.Options{}, worker.Config{MaxFrameLen: innerCap})
	s.do(t, &message.Configure{ProtocolVersion: protocol.Version})
	completes(t, first(s.do(t, &message.Feed{Code: "y = 5\ny"})), "first feed", "5")
	f := &message.Feed{Code: "len(x)"}
	f.Inputs = []message.NamedRef{{Name: "x", Value: sharedValue(&f.Values, 2, 600<<10)}}
	refusedAs(t, first(s.do(t, f)), "oversize input", "invalid inputs: ")
	completes(t, first(s.do(t, &message.Feed{Code: "y + 1"})), "after", "6")
}

// A ResumeFutures whose results are over the inner frame cap together,
// and whose stand-in ValueErrors are too (thousands of results sharing one
// value), is refused as the contract words results that cannot be
// converted ("invalid results: …"). The feed stays suspended on its
// future, and a proper answer completes it.
func TestOversizeResultsAreInvalidResults(t *testing.T) {
	s := serveWorker(t, child.Options{}, worker.Config{MaxFrameLen: innerCap})
	s.do(t, &message.Configure{ProtocolVersion: protocol.Version})
	fc := call(t, first(s.do(t, &message.Feed{Code: "a = f()\nr = await a\nr"})), "Feed")
	ev := first(s.do(t, &message.ResumeCall{CallID: fc.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: fc.CallID}}))
	if rf, ok := ev.Body.(*message.ResolveFutures); !ok || len(rf.PendingCallIDs) != 1 {
		t.Fatalf("after the future: %s", describe(ev.Body))
	}
	r := &message.ResumeFutures{}
	shared := r.Values.Add(value.Str(strings.Repeat("z", 2<<10)))
	r.Results = make([]message.FutureResult, 10000)
	for i := range r.Results {
		r.Results[i] = message.FutureResult{CallID: fc.CallID, Result: &message.ExtResult{Kind: message.ResultReturn, Value: shared}}
	}
	refusedAs(t, first(s.do(t, r)), "oversize results", "invalid results: ")
	completes(t, first(s.do(t, eagerReturn(fc.CallID, 7))), "a proper answer", "7")
}

// An AbortFeed whose exception is over the inner frame cap is refused as
// the contract words an exception that cannot be converted ("invalid
// exception: …"); the feed stays suspended.
func TestOversizeAbortIsInvalidException(t *testing.T) {
	s := serveWorker(t, child.Options{}, worker.Config{MaxFrameLen: innerCap})
	s.do(t, &message.Configure{ProtocolVersion: protocol.Version})
	fc := call(t, first(s.do(t, &message.Feed{Code: "f() + 1"})), "Feed")
	abort := &message.AbortFeed{Exception: message.NewException("RuntimeError", strings.Repeat("z", innerCap+1))}
	refusedAs(t, first(s.do(t, abort)), "oversize abort", "invalid exception: ")
	completes(t, first(s.do(t, returns(fc.CallID, 41))), "the call answered", "42")
}

// A Load whose dump is over the inner frame cap is refused as the
// contract words a dump that cannot be loaded ("failed to load session:
// …"); nothing was loaded, and the child can still be configured.
func TestOversizeLoadIsFailedLoad(t *testing.T) {
	s := serveWorker(t, child.Options{}, worker.Config{MaxFrameLen: innerCap})
	state := append([]byte("MONTY\x00"), strings.Repeat("z", innerCap)...)
	refusedAs(t, first(s.do(t, &message.Load{State: state})), "oversize load", "failed to load session: ")
	s.do(t, &message.Configure{ProtocolVersion: protocol.Version})
	completes(t, first(s.do(t, &message.Feed{Code: "2 + 2"})), "after", "4")
}

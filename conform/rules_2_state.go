//go:build unix

package conform

import (
	"github.com/gomonty/monty/message"
	"google.golang.org/protobuf/encoding/protowire"
)

// Rules of the worker state machine (contract §8, behaviour §5): requests
// out of state are refused with exact texts and change nothing.

func init() {
	rule("state.feed-before-configure", "contract §8; behaviour §5 (E2)", every, 0,
		"Feed before Configure gets \"session has not been configured\", unstamped",
		func(t *rt) {
			s := t.Open()
			s.Expect(s.Feed("1"), "Feed in NoSession", violation("protocol violation: session has not been configured"), unstamped)
			s.Expect(s.Turn(t.Config()), "Configure afterwards", isOk)
		})

	rule("state.dump-before-configure", "contract §8; behaviour §5 (E2)", every, 0,
		"Dump before Configure gets \"session has not been configured\"",
		func(t *rt) {
			s := t.Open()
			s.Expect(s.Turn(&message.Dump{}), "Dump in NoSession", violation("protocol violation: session has not been configured"))
		})

	rule("state.resume-call-without-suspension", "contract §8; behaviour §5 (E4)", every, 0,
		"ResumeCall with nothing suspended gets \"ResumeCall without a suspended function/OS call\"",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("1"), "Feed 1", isComplete)
			s.Expect(s.Turn(ret(0, 1)), "ResumeCall in Ready", violation("protocol violation: ResumeCall without a suspended function/OS call"))
			s.Expect(s.Feed("2"), "Feed afterwards", completes("2"))
		})

	rule("state.resume-name-lookup-without-suspension", "contract §8; behaviour §5 (E6)", every, 0,
		"ResumeNameLookup with nothing suspended gets \"ResumeNameLookup without a suspended name lookup\"",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Turn(&message.ResumeNameLookup{Kind: message.LookupUndefined}), "ResumeNameLookup in Configured",
				violation("protocol violation: ResumeNameLookup without a suspended name lookup"))
		})

	rule("state.resume-futures-without-suspension", "contract §8; behaviour §5 (E7)", every, 0,
		"ResumeFutures with nothing suspended gets \"ResumeFutures without suspended futures\"",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Turn(&message.ResumeFutures{Results: []message.FutureResult{{CallID: 0, Result: &message.ExtResult{Kind: message.ResultNotFound, Name: "x"}}}}),
				"ResumeFutures in Configured", violation("protocol violation: ResumeFutures without suspended futures"))
		})

	rule("state.resume-futures-results-checked-first", "contract §8", every, 0,
		"ResumeFutures converts its results before the state check: a result-less FutureResult in Ready gets \"invalid results: missing required field FutureResult.result\"",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("1"), "Feed 1", isComplete)
			s.Expect(s.Turn(&message.ResumeFutures{Results: []message.FutureResult{{CallID: 0}}}), "ResumeFutures in Ready with a result-less entry",
				violation("protocol violation: invalid results: missing required field FutureResult.result"))
		})

	rule("state.reserved-field-keeps-kind", "contract §2, §8; behaviour §15", every, 0,
		"An unknown field at a number reserved for arms (here 12, a varint) is skipped: an AbortFeed whose exception has no type, carrying one, is still an AbortFeed (\"invalid exception: unknown exception type \\\"\\\"\")",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("f(1)"), "Feed f(1)", isCall)
			body := append(arm(11, arm(1, nil)), protowire.AppendVarint(protowire.AppendTag(nil, 12, protowire.VarintType), 1)...)
			s.SendBody(body, "AbortFeed{exception{}} then varint field 12")
			s.Expect(s.Read(), "untyped exception", violation(`protocol violation: invalid exception: unknown exception type ""`))
		})

	rule("state.abort-without-suspension", "contract §8; behaviour §5 (E8)", every, 0,
		"AbortFeed with nothing suspended gets \"AbortFeed without a suspended feed\" and the session is unaffected",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("y = 1"), "Feed y = 1", isComplete)
			s.Expect(s.Turn(&message.AbortFeed{Exception: message.NewException("RuntimeError", "stop")}), "AbortFeed in Ready",
				violation("protocol violation: AbortFeed without a suspended feed"))
			s.Expect(s.Feed("y + 1"), "Feed afterwards", completes("2"))
		})

	rule("state.feed-while-suspended", "contract §8; behaviour §5 (E3)", every, 0,
		"Feed while suspended gets \"Feed without a session ready for input\" and the suspension stays answerable",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo() + 1"), "Feed foo() + 1", isCall))
			s.Expect(s.Feed("2"), "Feed while suspended", violation("protocol violation: Feed without a session ready for input"))
			s.Expect(s.Turn(ret(c.CallID, 9)), "ResumeCall afterwards", completes("10"))
		})

	rule("state.load-after-feed", "contract §8; behaviour §5 (E9)", every, 0,
		"Load once a feed has run gets \"Load requires a session that has not started (a feed has already run)\"",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("z = 3"), "Feed z = 3", isComplete)
			s.Expect(s.Turn(&message.Load{State: []byte("MONTY")}), "Load in Ready",
				violation("protocol violation: Load requires a session that has not started (a feed has already run)"))
			s.Expect(s.Feed("z"), "Feed afterwards", completes("3"))
		})

	rule("state.install-dependencies-refused", "contract §8, §12; behaviour §5 (E10)", every, 0,
		"InstallDependencies (even empty) gets RuntimeError \"dependency installation is only supported by the CPython worker\", without the protocol-violation prefix",
		func(t *rt) {
			s := t.Open()
			s.Expect(s.Turn(&message.InstallDependencies{}), "InstallDependencies in NoSession",
				raises("RuntimeError", "dependency installation is only supported by the CPython worker", true))
			s.Expect(s.Turn(t.Config()), "Configure afterwards", isOk)
			s.Expect(s.Turn(&message.InstallDependencies{Requirements: []string{"requests"}}), "InstallDependencies in Configured",
				raises("RuntimeError", "dependency installation is only supported by the CPython worker", true))
		})

	rule("state.resume-call-during-name-lookup", "contract §8; behaviour §5", every, 0,
		"ResumeCall while a name lookup is suspended is refused and the lookup stays answerable",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("g = bar\ng"), "Feed g = bar", isLookup)
			s.Expect(s.Turn(ret(0, 1)), "ResumeCall during NameLookup", violation("protocol violation: ResumeCall without a suspended function/OS call"))
			s.Expect(s.Turn(lookupValue(5)), "ResumeNameLookup afterwards", completes("5"))
		})

	rule("state.resume-name-lookup-during-call", "contract §8; behaviour §5", every, 0,
		"ResumeNameLookup while a function call is suspended is refused and the call stays answerable",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo()"), "Feed foo()", isCall))
			s.Expect(s.Turn(lookupValue(1)), "ResumeNameLookup during FunctionCall", violation("protocol violation: ResumeNameLookup without a suspended name lookup"))
			s.Expect(s.Turn(ret(c.CallID, "ok")), "ResumeCall afterwards", completes("'ok'"))
		})

	rule("state.resume-futures-during-plain-call", "contract §8, §10; behaviour §5", every, 0,
		"ResumeFutures answering a plain (not awaited) call is refused with \"ResumeFutures without suspended futures\" and a ResumeCall then still succeeds",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo()"), "Feed foo()", isCall))
			if c.AllowEagerAwait {
				t.Failf("expected allow_eager_await false on a plain call, got true")
			}
			s.Expect(s.Turn(futureReturn(c.CallID, 42)), "ResumeFutures on a plain call", violation("protocol violation: ResumeFutures without suspended futures"))
			s.Expect(s.Turn(ret(c.CallID, 42)), "ResumeCall afterwards", completes("42"))
		})

	rule("state.reset-from-suspended", "contract §8, §12; behaviour §14", every, 0,
		"Reset while suspended answers Ok, discards the suspension and returns to NoSession, ready for a new Configure",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("w = 1\nfoo()"), "Feed foo()", isCall)
			s.Expect(s.Turn(&message.Reset{}), "Reset while suspended", isOk, unstamped)
			s.Expect(s.Feed("1"), "Feed after Reset", violation("protocol violation: session has not been configured"))
			s.Expect(s.Turn(t.Config()), "Configure after Reset", isOk)
			r := s.Expect(s.Feed("w"), "Feed w in the new session (w must be gone)", isLookup)
			if l := r.Event.Body.(*message.NameLookup); l.Name != "w" {
				t.Failf("expected NameLookup(\"w\"), got %s", describe(r.Event))
			}
		})

	rule("shutdown.ok-exit-0", "contract §8, §12; behaviour §14", every, 0,
		"Shutdown answers an unstamped Ok and the worker exits 0",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("1"), "Feed 1", isComplete)
			s.Expect(s.Turn(&message.Shutdown{}), "Shutdown", isOk, unstamped)
			s.ExpectExit(0, exitWithin)
		})

	rule("shutdown.while-suspended", "behaviour §14", every, 0,
		"Shutdown while suspended still answers Ok and exits 0",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("foo()"), "Feed foo()", isCall)
			s.Expect(s.Turn(&message.Shutdown{}), "Shutdown while suspended", isOk)
			s.ExpectExit(0, exitWithin)
		})

	rule("shutdown.in-no-session", "contract §8; behaviour §5", every, 0,
		"Shutdown before any Configure answers Ok and exits 0",
		func(t *rt) {
			s := t.Open()
			s.Expect(s.Turn(&message.Shutdown{}), "Shutdown in NoSession", isOk)
			s.ExpectExit(0, exitWithin)
		})
}

// lookupValue answers a name lookup with a value.
func lookupValue(v any) *message.ResumeNameLookup {
	r := &message.ResumeNameLookup{Kind: message.LookupValue}
	r.Value = mustFromGo(&r.Values, v)
	return r
}

// futureReturn answers one future (or an eager call) with a value.
func futureReturn(id uint32, v any) *message.ResumeFutures {
	r := &message.ResumeFutures{}
	root := mustFromGo(&r.Values, v)
	r.Results = []message.FutureResult{{CallID: id, Result: &message.ExtResult{Kind: message.ResultReturn, Value: root}}}
	return r
}

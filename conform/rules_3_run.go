//go:build unix

package conform

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// Rules on running code: feeds, external calls and their answers, name
// lookups, futures, aborts, prints and stamps.

func mustFromGo(g *value.Graph, v any) value.NodeID {
	id, err := value.FromGo(g, v)
	if err != nil {
		panic(err) // only constant check values are converted
	}
	return id
}

func u64(v uint64) *uint64  { return &v }
func u32p(v uint32) *uint32 { return &v }

func init() {
	// --- feeds ------------------------------------------------------------
	rule("feed.complete-value", "contract §8; tests dispatch.rs feed_round_trips_a_value", every, 0,
		"Feed `1 + 2` completes with the value 3",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("1 + 2"), "Feed 1 + 2", completes("3"), noPrints)
		})

	rule("feed.globals-persist", "contract §8; tests dispatch.rs session_state_persists_across_feeds", every, 0,
		"Globals persist across feeds",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("x = 21"), "Feed x = 21", completes("None"))
			s.Expect(s.Feed("x * 2"), "Feed x * 2", completes("42"))
		})

	rule("feed.inputs-injected", "contract §3; tests dispatch.rs inputs_are_injected", every, 0,
		"Feed inputs are bound as globals before the code runs",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Turn(feedWith("n + 1", "n", 41)), "Feed n + 1 with n = 41", completes("42"))
			s.Expect(s.Feed("n"), "the input stays bound", completes("41"))
		})

	rule("feed.error-keeps-session", "contract §8; behaviour §5", every, 0,
		"A Python exception ends the feed with Error (with a traceback) and the session keeps its globals",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("k = 7"), "Feed k = 7", isComplete)
			r := s.Expect(s.Feed("1 / 0"), "Feed 1 / 0", raisesLike("ZeroDivisionError", ""))
			if e := r.Event.Body.(*message.Error).Exception; len(e.Traceback) == 0 {
				t.Failf("expected a traceback on ZeroDivisionError, got none")
			}
			s.Expect(s.Feed("k"), "Feed k afterwards", completes("7"))
		})

	rule("feed.syntax-error-keeps-session", "behaviour §11", every, 0,
		"A syntax error ends the feed with Error SyntaxError and the session survives",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("def f(:"), "Feed def f(:", raisesLike("SyntaxError", ""))
			s.Expect(s.Feed("3"), "Feed afterwards", completes("3"))
		})

	rule("feed.repr-input-rejected", "contract §5; behaviour §7", every, 0,
		"A repr value is output-only: as a Feed input it is refused (\"… is not a valid input value\")",
		func(t *rt) {
			s := t.Fresh()
			f := &message.Feed{Code: "v"}
			f.Inputs = []message.NamedRef{{Name: "v", Value: f.Values.Add(value.Repr("<thing>"))}}
			s.Expect(s.Turn(f), "Feed with a repr input", raisesLike("RuntimeError", "is not a valid input value"))
			s.Expect(s.Feed("1"), "Feed afterwards", completes("1"))
		})

	rule("feed.cycle-input-rejected", "contract §5; behaviour §7", every, 0,
		"A cycle value is output-only: as a Feed input it is refused (\"… is not a valid input value\")",
		func(t *rt) {
			s := t.Fresh()
			f := &message.Feed{Code: "v"}
			c := f.Values.Add(value.Cycle("[...]"))
			f.Inputs = []message.NamedRef{{Name: "v", Value: f.Values.Add(value.List(c))}}
			s.Expect(s.Turn(f), "Feed with a cycle input", raisesLike("RuntimeError", "is not a valid input value"))
		})

	rule("feed.bad-input-name", "behaviour §7", only2, 0,
		"An input name that is not an identifier is refused with SyntaxError \"Input name 'not valid' not a valid identifier\"",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Turn(feedWith("1", "not valid", 1)), "Feed with input name 'not valid'",
				raises("SyntaxError", "Input name 'not valid' not a valid identifier", false))
		})

	// --- values -----------------------------------------------------------
	rule("values.round-trip", "contract §3; behaviour §7", every, 0,
		"Input values come back unchanged: a dict of a bigint, a float, bytes, a tuple, a set and None",
		func(t *rt) {
			s := t.Fresh()
			in := value.DictValue{
				{Key: "big", Value: mustBig("1267650600228229401496703205376")},
				{Key: "f", Value: 1.5},
				{Key: "b", Value: []byte{0, 255}},
				{Key: "t", Value: value.TupleValue{1, "two"}},
				{Key: "s", Value: value.SetValue{3}},
				{Key: "n", Value: nil},
			}
			want := "{'big': 1267650600228229401496703205376, 'f': 1.5, 'b': b'\\x00\\xff', 't': (1, 'two'), 's': {3}, 'n': None}"
			s.Expect(s.Turn(feedWith("v", "v", in)), "Feed v", completes(want))
		})

	rule("values.bigint-output", "contract §3; behaviour §7", every, 0,
		"An int outside i64 comes out exact (2**100)",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("2**100"), "Feed 2**100", completes("1267650600228229401496703205376"))
		})

	rule("values.cycle-output", "contract §3; behaviour §7", every, 0,
		"A self-containing list comes out with a cycle leaf showing \"[...]\"",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("a = []\na.append(a)\na"), "Feed a cyclic list", completes("[[...]]"))
		})

	rule("values.deep-input-accepted", "contract §3 (no depth limit in v4)", from4, 0,
		"A 1,000-deep nested list crosses as a Feed input (the arena has no depth limit)",
		func(t *rt) {
			s := t.Fresh()
			f := &message.Feed{Code: "d = v\nn = 0\nwhile isinstance(d, list) and d:\n    d = d[0]\n    n += 1\nn"}
			id := f.Values.Add(value.List())
			for range 999 {
				id = f.Values.Add(value.List(id))
			}
			f.Inputs = []message.NamedRef{{Name: "v", Value: id}}
			s.Expect(s.Turn(f), "Feed a 1000-deep list", completes("999"))
		})

	rule("values.deep-input-recursion-limit", "behaviour §7", only2, 0,
		"Protocol 2 refuses input trees nested deeper than its recursion limit (\"recursion limit reached\")",
		func(t *rt) {
			s := t.Fresh()
			s.SendBody(deepV2Feed(200), "Feed with a 200-deep list input")
			s.Expect(s.Read(), "deep input", raisesLike("RuntimeError", "recursion limit reached"))
			s.Expect(s.Feed("1"), "Feed afterwards", completes("1"))
		})

	rule("values.arm-occurrences-replace", "behaviour §7 (MontyObject merging, checked against the released worker)", only2, 0,
		"A protocol-2 value whose arm occurs twice takes the second occurrence afresh, checked as it ends: [1] then [2] is [2], and a date arm followed by one holding only a day is refused (\"invalid value for Date.year: 0 is outside the range 1..=9999\")",
		func(t *rt) {
			s := t.Fresh()
			list := func(n uint64) []byte { // MontyObject{list: [int n]}
				item := protowire.AppendVarint(protowire.AppendTag(nil, 5, protowire.VarintType), protowire.EncodeZigZag(int64(n)))
				items := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), item)
				return protowire.AppendBytes(protowire.AppendTag(nil, 11, protowire.BytesType), items)
			}
			date := func(fields ...uint64) []byte { // MontyObject{date: {year, month, day}[:len(fields)]}, zeros left out
				var d []byte
				for i, f := range fields {
					if f != 0 {
						d = protowire.AppendVarint(protowire.AppendTag(d, protowire.Number(i+1), protowire.VarintType), f)
					}
				}
				return protowire.AppendBytes(protowire.AppendTag(nil, 17, protowire.BytesType), d)
			}
			s.SendBody(v2Input("v", append(list(1), list(2)...)), "Feed v with a list arm twice, [1] then [2]")
			s.Expect(s.Read(), "list arm twice", completes("[2]"))
			s.SendBody(v2Input("v", append(date(2024, 12, 25), date(0, 0, 3)...)), "Feed v with a date arm, then one holding only day 3")
			s.Expect(s.Read(), "date arm twice", raisesLike("RuntimeError", "invalid value for Date.year: 0 is outside the range 1..=9999"))
			s.Expect(s.Feed("1"), "Feed afterwards", completes("1"))
		})

	// --- external calls ---------------------------------------------------
	rule("call.function-call-shape", "contract §3, §8; behaviour §8", every, 0,
		"Calling an undefined name suspends with FunctionCall{name, args, kwargs} directly, no NameLookup",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo(1, 'a', k=2)"), "Feed foo(1, 'a', k=2)", isCall))
			if got := argsRepr(c); c.FunctionName != "foo" || got != "1, 'a', k=2" || c.ObjectID != nil {
				t.Failf("expected FunctionCall foo(1, 'a', k=2) with no object_id, got %s(%s)", c.FunctionName, got)
			}
		})

	rule("call.resume-return", "contract §8", every, 0,
		"ResumeCall with a return value resumes the feed with that value",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo() * 2"), "Feed foo() * 2", isCall))
			s.Expect(s.Turn(ret(c.CallID, 21)), "ResumeCall 21", completes("42"))
		})

	rule("call.ids-distinct", "contract §8 (call-id bookkeeping)", every, 0,
		"The child assigns each FunctionCall of a feed its own call_id",
		func(t *rt) {
			s := t.Fresh()
			a := callOf(s.Expect(s.Feed("f() + g()"), "Feed f() + g()", isCall))
			b := callOf(s.Expect(s.Turn(ret(a.CallID, 1)), "ResumeCall f", isCall))
			if a.CallID == b.CallID {
				t.Failf("expected distinct call ids for f and g, got %d twice", a.CallID)
			}
			s.Expect(s.Turn(ret(b.CallID, 2)), "ResumeCall g", completes("3"))
		})

	rule("call.ids-restart-per-feed", "behaviour §8", only2, 0,
		"call_id counts from 0 in each feed, one up per FunctionCall or OsCall",
		func(t *rt) {
			s := t.Fresh()
			a := callOf(s.Expect(s.Feed("f() + g()"), "Feed f() + g()", isCall))
			b := callOf(s.Expect(s.Turn(ret(a.CallID, 1)), "ResumeCall f", isCall))
			s.Expect(s.Turn(ret(b.CallID, 2)), "ResumeCall g", isComplete)
			c := callOf(s.Expect(s.Feed("h()"), "Feed h()", isCall))
			if a.CallID != 0 || b.CallID != 1 || c.CallID != 0 {
				t.Failf("expected call ids 0, 1 then 0 in the next feed, got %d, %d, %d", a.CallID, b.CallID, c.CallID)
			}
		})

	rule("resume.call-id-mismatch", "contract §8; behaviour §5 (E5)", every, 0,
		"ResumeCall with the wrong call_id gets \"ResumeCall call_id {got} does not match {expected}\" and the call stays suspended",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo()"), "Feed foo()", isCall))
			wrong := c.CallID + 7
			s.Expect(s.Turn(ret(wrong, 1)), "ResumeCall with a wrong id",
				violation(fmt.Sprintf("protocol violation: ResumeCall call_id %d does not match %d", wrong, c.CallID)))
			s.Expect(s.Turn(ret(c.CallID, 1)), "ResumeCall with the right id", completes("1"))
		})

	rule("resume.call-id-checked-before-result", "contract §8; behaviour §5 (E5)", every, 0,
		"A ResumeCall whose call_id is wrong and whose result would not convert (an unknown exception type) gets the call_id refusal, not the conversion's error: the id is checked first, and the call stays suspended",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo()"), "Feed foo()", isCall))
			wrong := c.CallID + 77
			s.SendBody(unknownExcResume(t, wrong), "ResumeCall with a wrong id, raising MyHostError")
			s.Expect(s.Read(), "wrong id and an unknown exception type",
				violation(fmt.Sprintf("protocol violation: ResumeCall call_id %d does not match %d", wrong, c.CallID)))
			s.Expect(s.Turn(ret(c.CallID, 1)), "ResumeCall with the right id", completes("1"))
		})

	rule("resume.no-result", "contract §8; behaviour §5", every, 0,
		"ResumeCall with no result gets \"ResumeCall has no result\" and the call stays suspended",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo()"), "Feed foo()", isCall))
			s.Expect(s.Turn(&message.ResumeCall{CallID: c.CallID}), "ResumeCall without result", violation("protocol violation: ResumeCall has no result"))
			s.Expect(s.Turn(ret(c.CallID, 2)), "ResumeCall afterwards", completes("2"))
		})

	rule("resume.empty-result", "contract §4; behaviour §5", every, 0,
		"An ExtFunctionResult with no kind gets \"invalid result: missing required field ExtFunctionResult.kind\"",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo()"), "Feed foo()", isCall))
			s.Expect(s.Turn(&message.ResumeCall{CallID: c.CallID, Result: &message.ExtResult{}}), "ResumeCall with an empty result",
				violation("protocol violation: invalid result: missing required field ExtFunctionResult.kind"))
			s.Expect(s.Turn(ret(c.CallID, 3)), "ResumeCall afterwards", completes("3"))
		})

	rule("resume.not-handled-for-function", "contract §4, §8; behaviour §5", every, 0,
		"not_handled answering a FunctionCall gets \"NotHandled is only valid answering a suspended OS call\"",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo()"), "Feed foo()", isCall))
			s.Expect(s.Turn(&message.ResumeCall{CallID: c.CallID, Result: &message.ExtResult{Kind: message.ResultNotHandled}}), "ResumeCall not_handled",
				violation("protocol violation: NotHandled is only valid answering a suspended OS call"))
			s.Expect(s.Turn(ret(c.CallID, 4)), "ResumeCall afterwards", completes("4"))
		})

	rule("resume.unknown-exception-type", "contract §4; behaviour §5", every, 0,
		"An error result with an exception type that is not a builtin gets \"invalid result: unknown exception type …\"",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo()"), "Feed foo()", isCall))
			s.SendBody(unknownExcResume(t, c.CallID), "ResumeCall raising MyHostError")
			s.Expect(s.Read(), "unknown exception type", raisesLike("RuntimeError", `unknown exception type "MyHostError"`))
			s.Expect(s.Turn(ret(c.CallID, 5)), "ResumeCall afterwards", completes("5"))
		})

	rule("resume.error-is-catchable", "behaviour §8", every, 0,
		"An error result is raised at the call site and sandbox code can catch it",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("try:\n    foo()\n    r = 'no'\nexcept ValueError as e:\n    r = 'caught ' + str(e)\nr"), "Feed try/foo()", isCall))
			s.Expect(s.Turn(raiseResult(c.CallID, "ValueError", "bad")), "ResumeCall raising ValueError", completes("'caught bad'"))
		})

	rule("resume.not-found-name-error", "behaviour §8", every, 0,
		"A not_found result raises NameError naming the given string",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo()"), "Feed foo()", isCall))
			s.Expect(s.Turn(&message.ResumeCall{CallID: c.CallID, Result: &message.ExtResult{Kind: message.ResultNotFound, Name: "foo"}}),
				"ResumeCall not_found", raisesLike("NameError", "foo"))
		})

	// --- name lookups -----------------------------------------------------
	rule("lookup.suspends-on-undefined-read", "contract §6; behaviour §8", every, 0,
		"Reading an undefined name without calling it suspends with NameLookup{name}",
		func(t *rt) {
			s := t.Fresh()
			r := s.Expect(s.Feed("g = bar\ng"), "Feed g = bar", isLookup)
			if l := r.Event.Body.(*message.NameLookup); l.Name != "bar" || l.ObjectID != nil {
				t.Failf("expected NameLookup(\"bar\") with no object_id, got %s", describe(r.Event))
			}
		})

	rule("lookup.value-binds", "contract §6; behaviour §8", every, 0,
		"A value answer binds the global; later feeds see it without another lookup",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("bar"), "Feed bar", isLookup)
			s.Expect(s.Turn(lookupValue(11)), "ResumeNameLookup 11", completes("11"))
			s.Expect(s.Feed("bar + 1"), "Feed bar + 1", completes("12"))
		})

	rule("lookup.undefined-name-error", "contract §6; behaviour §8", every, 0,
		"An undefined answer raises NameError \"name 'x' is not defined\"",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("x"), "Feed x", isLookup)
			s.Expect(s.Turn(&message.ResumeNameLookup{Kind: message.LookupUndefined}), "ResumeNameLookup undefined",
				raisesLike("NameError", "name 'x' is not defined"))
		})

	rule("lookup.error-raised", "contract §6; behaviour §8", every, 0,
		"An error answer raises that exception at the read",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("x"), "Feed x", isLookup)
			s.Expect(s.Turn(&message.ResumeNameLookup{Kind: message.LookupError, Error: message.NewException("LookupError", "host says no")}),
				"ResumeNameLookup error", raises("LookupError", "host says no", false))
		})

	rule("lookup.empty-answer-rejected", "contract §4; behaviour §5", every, 0,
		"A ResumeNameLookup with no answer gets \"invalid result: missing required field ResumeNameLookup.kind\"",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("x"), "Feed x", isLookup)
			s.Expect(s.Turn(&message.ResumeNameLookup{}), "empty ResumeNameLookup",
				violation("protocol violation: invalid result: missing required field ResumeNameLookup.kind"))
			s.Expect(s.Turn(lookupValue(1)), "ResumeNameLookup afterwards", completes("1"))
		})

	// --- futures ----------------------------------------------------------
	gather := "import asyncio\nasync def main():\n    return await asyncio.gather(f(), g())\nawait main()"
	startGather := func(t *rt) (*sess, []uint32) {
		s := t.Fresh()
		var ids []uint32
		r := s.Expect(s.Feed(gather), "Feed gather(f(), g())", isCall)
		for r.Kind() == message.KindFunctionCall {
			c := callOf(r)
			ids = append(ids, c.CallID)
			r = s.Turn(&message.ResumeCall{CallID: c.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: c.CallID}})
		}
		s.Expect(r, "answering both calls with futures", isResolve)
		got := slices.Clone(r.Event.Body.(*message.ResolveFutures).PendingCallIDs)
		slices.Sort(got)
		want := slices.Clone(ids)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Failf("expected ResolveFutures listing %v (as a set), got %v", want, got)
		}
		return s, ids
	}

	rule("futures.resolve-lists-pending", "contract §8; behaviour §9", every, 0,
		"When every task waits on external futures the child sends ResolveFutures listing every pending call id",
		func(t *rt) { startGather(t) })

	rule("futures.batch-resume", "contract §8; behaviour §9", every, 0,
		"ResumeFutures may answer a subset; the next ResolveFutures lists only the rest, and answering all completes",
		func(t *rt) {
			s, ids := startGather(t)
			r := s.Expect(s.Turn(futureReturn(ids[0], 10)), "ResumeFutures for the first id", isResolve)
			if got := r.Event.Body.(*message.ResolveFutures).PendingCallIDs; !slices.Equal(got, ids[1:2]) {
				t.Failf("expected ResolveFutures%v after a partial answer, got %v", ids[1:2], got)
			}
			s.Expect(s.Turn(futureReturn(ids[1], 20)), "ResumeFutures for the second id", completes("[10, 20]"))
		})

	rule("futures.missing-result-rejected", "contract §4, §8; behaviour §5", every, 0,
		"A FutureResult with no result gets \"invalid results: missing required field FutureResult.result\"",
		func(t *rt) {
			s, ids := startGather(t)
			s.Expect(s.Turn(&message.ResumeFutures{Results: []message.FutureResult{{CallID: ids[0]}}}), "FutureResult without result",
				violation("protocol violation: invalid results: missing required field FutureResult.result"))
		})

	rule("futures.not-handled-rejected", "contract §4; behaviour §5", every, 0,
		"A FutureResult of not_handled gets \"invalid results: invalid value for ExtFunctionResult.kind: NotHandled is only valid answering a suspended OS call\"",
		func(t *rt) {
			s, ids := startGather(t)
			s.Expect(s.Turn(&message.ResumeFutures{Results: []message.FutureResult{{CallID: ids[0], Result: &message.ExtResult{Kind: message.ResultNotHandled}}}}),
				"FutureResult not_handled",
				violation("protocol violation: invalid results: invalid value for ExtFunctionResult.kind: NotHandled is only valid answering a suspended OS call"))
		})

	rule("futures.unknown-id-ends-feed", "behaviour §9", only2, 0,
		"A FutureResult for a call id that is not pending ends the feed with RuntimeError \"unknown call_id …\"; the session returns to Ready",
		func(t *rt) {
			s, _ := startGather(t)
			s.Expect(s.Turn(futureReturn(99, 1)), "ResumeFutures for id 99", raisesLike("RuntimeError", "unknown call_id 99"))
			s.Expect(s.Feed("1"), "Feed afterwards", completes("1"))
		})

	rule("futures.eager-await-flag", "contract §10; tests dispatch.rs allow_eager_await_*", from4, 0,
		"`await f()` sets FunctionCall.allow_eager_await; a plain `f()` does not",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Turn(feedWith("a = await f()\na", "f", value.Function{Name: "f"})), "Feed await f()", isCall))
			if !c.AllowEagerAwait {
				t.Failf("expected allow_eager_await true for `await f()`, got false")
			}
		})

	rule("futures.eager-one-reply", "contract §10; tests dispatch.rs allow_eager_await_uses_one_reply_per_call", from4, 0,
		"An eager call answered with a one-entry ResumeFutures continues straight to the next call, then Complete",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Turn(feedWith("a = await f()\nb = await f()\na + b", "f", value.Function{Name: "f"})), "Feed two awaits", isCall))
			c2 := callOf(s.Expect(s.Turn(futureReturn(c.CallID, 10)), "eager answer 10", isCall))
			s.Expect(s.Turn(futureReturn(c2.CallID, 20)), "eager answer 20", completes("30"))
		})

	rule("futures.eager-malformed-rejected", "contract §10; tests dispatch.rs allow_eager_await_rejects_malformed_replies", from4, 0,
		"Malformed eager replies (empty, wrong id, two entries, a future result) each get Error and a valid retry still completes",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Turn(feedWith("await f()", "f", value.Function{Name: "f"})), "Feed await f()", isCall))
			two := futureReturn(c.CallID, 1)
			two.Results = append(two.Results, two.Results[0])
			bad := []struct {
				what string
				req  *message.ResumeFutures
			}{
				{"an empty list", &message.ResumeFutures{}},
				{"the wrong id", futureReturn(c.CallID+5, 1)},
				{"two entries", two},
				{"a future result", &message.ResumeFutures{Results: []message.FutureResult{{CallID: c.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: c.CallID}}}}},
			}
			for _, b := range bad {
				s.Expect(s.Turn(b.req), "eager reply with "+b.what, raisesLike("RuntimeError", "protocol violation"))
			}
			s.Expect(s.Turn(futureReturn(c.CallID, 42)), "valid eager reply", completes("42"))
		})

	// --- abort ------------------------------------------------------------
	rule("abort.uncatchable", "contract §8, §12; behaviour §5; tests dispatch.rs abort_feed_ends_a_suspended_feed_uncatchably", every, 0,
		"AbortFeed raises its exception at the suspension point, uncatchably (no except or finally runs); the session keeps earlier globals",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("x = 41\ntry:\n    fetch('x')\nexcept BaseException:\n    print('caught')\nfinally:\n    print('finally')"), "Feed try/fetch", isCall)
			r := s.Expect(s.Turn(&message.AbortFeed{Exception: message.NewException("RuntimeError", "suspension limit 3 exceeded")}), "AbortFeed",
				raises("RuntimeError", "suspension limit 3 exceeded", false), noPrints)
			if tb := r.Event.Body.(*message.Error).Exception.Traceback; len(tb) == 0 || tb[len(tb)-1].Start.Line != 3 {
				t.Failf("expected a traceback pointing at line 3 (the suspended call), got %d frame(s)", len(tb))
			}
			s.Expect(s.Feed("x"), "Feed x afterwards", completes("41"))
		})

	rule("abort.no-exception", "contract §8; behaviour §5", every, 0,
		"AbortFeed with no exception gets \"AbortFeed has no exception\" and the feed stays suspended",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo()"), "Feed foo()", isCall))
			s.Expect(s.Turn(&message.AbortFeed{}), "AbortFeed without exception", violation("protocol violation: AbortFeed has no exception"))
			s.Expect(s.Turn(ret(c.CallID, 6)), "ResumeCall afterwards", completes("6"))
		})

	rule("abort.unknown-exception-type", "contract §8; behaviour §5", every, 0,
		"AbortFeed with an exception type that is not a builtin gets \"invalid exception: unknown exception type …\"",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("foo()"), "Feed foo()", isCall)
			s.SendBody(unknownExcAbort(t), "AbortFeed raising HostTimeout")
			s.Expect(s.Read(), "AbortFeed with HostTimeout", violation(`protocol violation: invalid exception: unknown exception type "HostTimeout"`))
		})

	// --- prints -----------------------------------------------------------
	rule("print.before-complete", "contract §11; tests dispatch.rs print_output_is_streamed_before_the_terminator", every, 0,
		"Output is streamed as Print events before the turn-ending event, text exact",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("print('hello')\nprint('world', end='!')"), "Feed two prints", isComplete, printed("hello\nworld!"))
		})

	rule("print.flushed-before-suspension", "contract §11; behaviour §3", every, 0,
		"Buffered output is flushed before a suspension: Print(\"before\\n\") then FunctionCall",
		func(t *rt) {
			// A long interval: only the drain before the suspension can
			// release the text.
			cfg := t.Config()
			cfg.PrintFlushIntervalMs = u32p(60000)
			s := t.FreshWith(cfg)
			s.Expect(s.Feed("print('before')\nfoo()"), "Feed print; foo()", isCall, printed("before\n"))
		})

	rule("print.merged-with-long-interval", "contract §11; behaviour §3", every, 0,
		"With a long flush interval, back-to-back prints arrive as one Print event",
		func(t *rt) {
			cfg := t.Config()
			cfg.PrintFlushIntervalMs = u32p(60000)
			s := t.FreshWith(cfg)
			r := s.Expect(s.Feed("print('a')\nprint('b')"), "Feed two prints", isComplete, printed("a\nb\n"))
			if len(r.Prints) != 1 {
				t.Failf("expected one Print event, got %d", len(r.Prints))
			}
		})

	rule("print.line-buffered", "contract §11; behaviour §3", every, 0,
		"print_flush_interval_ms = 0 is line buffering: one Print per completed line, the partial tail at the end of the turn",
		func(t *rt) {
			cfg := t.Config()
			cfg.PrintFlushIntervalMs = u32p(0)
			s := t.FreshWith(cfg)
			r := s.Expect(s.Feed("print('a')\nprint('b')\nprint('c', end='')"), "Feed three prints", isComplete, printed("a\nb\nc"))
			var got []string
			for _, p := range r.Prints {
				got = append(got, printText(p.Body.(*message.Print)))
			}
			if !slices.Equal(got, []string{"a\n", "b\n", "c"}) {
				t.Failf("expected Print events [\"a\\n\" \"b\\n\" \"c\"], got %q", got)
			}
		})

	rule("print.chunked-at-8192", "contract §11; behaviour §3", every, 0,
		"No Print event holds more than 8192 bytes of text; a long output is cut at UTF-8 boundaries and arrives whole",
		func(t *rt) {
			s := t.Fresh()
			r := s.Expect(s.Feed("print('é' * 10000)"), "Feed a 20 KB print", isComplete, printed(strings.Repeat("é", 10000)+"\n"))
			for _, p := range r.Prints {
				if n := len(printText(p.Body.(*message.Print))); n > 8192 {
					t.Failf("expected Print events of at most 8192 bytes, got one of %d", n)
				}
			}
		})

	rule("print.timer-releases-silent-output", "contract §11; behaviour §3", every, 0,
		"With the default 5 ms interval, output is released while the code keeps running, not held until the turn ends",
		func(t *rt) {
			// A timing rule: on a loaded machine the worker's timer can
			// be starved for a whole turn, so the turn is tried up to
			// three times; a worker that holds output until the end of
			// the turn fails every one.
			const tries = 3
			var total, held time.Duration
			for range tries {
				s := t.Fresh()
				sent := time.Now()
				s.sendFeed("print('early')\nn = 0\nfor i in range(3000000):\n    n += 1\nn")
				ev, err := s.Next()
				if err != nil {
					t.Failf("expected Print, got %v", err)
				}
				printAt := time.Now()
				if ev.Body.EventKind() != message.KindPrint {
					t.Failf("expected Print(\"early\\n\") first, got %s", describe(ev))
				}
				s.Expect(s.Read(), "the rest of the turn", isComplete)
				total, held = time.Since(sent), printAt.Sub(sent)
				if total < 100*time.Millisecond {
					t.Skipf("the loop ran too fast (%v) to tell a timer flush from the end-of-turn drain", total)
				}
				if held <= total/2 {
					return
				}
			}
			t.Failf("expected the Print long before the end of the turn, got it after %v of %v (the last of %d turns)",
				held.Round(time.Millisecond), total.Round(time.Millisecond), tries)
		})

	rule("print.unstamped", "contract §8; behaviour §6", every, 0,
		"Print events carry none of the stamps (fields 20–23)",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("1"), "Feed 1", isComplete)
			r := s.Expect(s.Feed("print('x')"), "Feed print('x')", isComplete, printed("x\n"))
			for _, p := range r.Prints {
				if p.TotalExecutionMicros != 0 || p.MaxSuspensions != nil || p.MaxDurationMicros != nil || p.RestoredScriptName != nil {
					t.Failf("expected an unstamped Print, got %s", describe(p))
				}
			}
		})

	rule("print.stderr-segments", "contract §11; tests dispatch.rs alternating_streams_batch_into_one_event", from4, 0,
		"With a long interval, stdout/stderr/stdout output arrives as one Print with three segments, in order",
		func(t *rt) {
			cfg := t.Config()
			cfg.PrintFlushIntervalMs = u32p(60000)
			s := t.FreshWith(cfg)
			r := s.Expect(s.Feed("import sys\nprint('a')\nprint('b', file=sys.stderr)\nprint('c')"), "Feed mixed streams", isComplete)
			if len(r.Prints) != 1 {
				t.Failf("expected one Print event, got %d", len(r.Prints))
			}
			segs := r.Prints[0].Body.(*message.Print).Segments
			want := []message.PrintSegment{{Stream: message.StreamStdout, Text: "a\n"}, {Stream: message.StreamStderr, Text: "b\n"}, {Stream: message.StreamStdout, Text: "c\n"}}
			if !slices.Equal(segs, want) {
				t.Failf("expected segments %v, got %v", want, segs)
			}
		})

	rule("print.stderr-unsupported", "behaviour §3", only2, 0,
		"Protocol 2 has no stderr stream: print(..., file=sys.stderr) raises TypeError",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("import sys\nprint('b', file=sys.stderr)"), "Feed print to stderr", raisesLike("TypeError", "print() 'file' argument is not supported"))
		})

	// --- stamps -----------------------------------------------------------
	rule("stamps.turn-events-stamped", "contract §8; behaviour §6", every, 0,
		"Turn-ending events of a session with an interpreter carry max_suspensions (default 1000)",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("1"), "Feed 1", completes("1"), stampedSusp(1000))
			s.Expect(s.Feed("foo()"), "Feed foo()", isCall, stampedSusp(1000))
		})

	rule("stamps.limits-echoed", "contract §8, §12; tests dispatch.rs turn_events_carry_the_suspension_budget", upTo4, 0,
		"Configured max_suspensions and max_duration_micros are echoed on turn-ending events",
		func(t *rt) {
			cfg := t.Config()
			cfg.Limits = &message.ResourceLimits{MaxSuspensions: u64(3), MaxDurationMicros: u64(30_000_000)}
			s := t.FreshWith(cfg)
			r := s.Expect(s.Feed("1"), "Feed 1", completes("1"), stampedSusp(3))
			if d := r.Event.MaxDurationMicros; d == nil || *d != 30_000_000 {
				t.Failf("expected max_duration_micros 30000000 stamped, got %s", describe(r.Event))
			}
		})

	rule("stamps.suspensions-not-enforced", "contract §12; behaviour §6", every, 0,
		"The child only echoes max_suspensions: with a limit of 2, five suspensions all run",
		func(t *rt) {
			cfg := t.Config()
			cfg.Limits = &message.ResourceLimits{MaxSuspensions: u64(2)}
			s := t.FreshWith(cfg)
			r := s.Feed("a = 0\nfor i in range(5):\n    a += f()\na")
			for i := 0; r.Kind() == message.KindFunctionCall; i++ {
				r = s.Turn(ret(callOf(r).CallID, 1))
			}
			s.Expect(r, "five calls with max_suspensions 2", completes("5"))
		})

	rule("stamps.restored-script-name-only-on-load", "contract §8; behaviour §6", every, 0,
		"restored_script_name is set on the reply to a successful Load and on no later event",
		func(t *rt) {
			a := t.Fresh()
			st := dumpOf(t, a, "Dump")
			b := t.Open()
			r := b.Expect(b.Turn(&message.Load{State: st}), "Load", isOk)
			if r.Event.RestoredScriptName == nil {
				t.Failf("expected restored_script_name on the Load's Ok, got %s", describe(r.Event))
			}
			r = b.Expect(b.Feed("1"), "Feed after the Load", completes("1"))
			if r.Event.RestoredScriptName != nil {
				t.Failf("expected no restored_script_name after the Load's reply, got %s", describe(r.Event))
			}
		})

	rule("stamps.decode-errors-unstamped", "behaviour §6", only2, 0,
		"Errors that come from frame decoding carry no stamps, even in Ready",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("1"), "Feed 1", isComplete)
			s.SendBody([]byte{0xff}, "one 0xff byte")
			s.Expect(s.Read(), "garbage in Ready", raisesLike("RuntimeError", "malformed request"), unstamped)
		})

	rule("stamps.configured-errors-unstamped", "contract §8; behaviour §6", every, 0,
		"Replies in the Configured state (before an interpreter exists) carry no stamps",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Turn(ret(0, 1)), "ResumeCall in Configured", raisesLike("RuntimeError", "protocol violation"), unstamped)
		})
}

func mustBig(s string) *big.Int {
	b, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("bad big int " + s)
	}
	return b
}

// placeholderExc is a builtin exception name of 11 letters, replaced on
// the wire by an unknown name of the same length so the codec (which
// refuses unknown types) can encode the rest.
const placeholderExc = "LookupError"

func unknownExcResume(t *rt, id uint32) []byte {
	b, err := t.cd.AppendRequest(nil, &message.ParentRequest{Body: raiseResult(id, placeholderExc, "no")})
	if err != nil {
		t.Failf("internal: %v", err)
	}
	return bytes.Replace(b, []byte(placeholderExc), []byte("MyHostError"), 1)
}

func unknownExcAbort(t *rt) []byte {
	b, err := t.cd.AppendRequest(nil, &message.ParentRequest{Body: &message.AbortFeed{Exception: message.NewException(placeholderExc, "late")}})
	if err != nil {
		t.Failf("internal: %v", err)
	}
	return bytes.Replace(b, []byte(placeholderExc), []byte("HostTimeout"), 1)
}

// deepV2Feed is a protocol 2 Feed `1` whose input v is a list nested
// depth levels deep, hand-encoded (the codec refuses trees that deep).
func deepV2Feed(depth int) []byte {
	obj := []byte{0x5a, 0x00} // MontyObject{list: ObjectList{}}
	for range depth {
		items := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), obj)
		obj = protowire.AppendBytes(protowire.AppendTag(nil, 11, protowire.BytesType), items)
	}
	nv := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "v")
	nv = protowire.AppendBytes(protowire.AppendTag(nv, 2, protowire.BytesType), obj)
	feed := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "1")
	feed = protowire.AppendBytes(protowire.AppendTag(feed, 2, protowire.BytesType), nv)
	return arm(3, feed)
}

// v2Input is a protocol-2 Feed of code name whose one input, name, is the
// MontyObject body obj.
func v2Input(name string, obj []byte) []byte {
	nv := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), name)
	nv = protowire.AppendBytes(protowire.AppendTag(nv, 2, protowire.BytesType), obj)
	feed := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), name)
	feed = protowire.AppendBytes(protowire.AppendTag(feed, 2, protowire.BytesType), nv)
	return arm(3, feed)
}

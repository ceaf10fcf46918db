//go:build unix

package conform

import (
	"fmt"
	"strings"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// Rules on the edges of the state machine and the stream: EOF in every
// state and right after a request, a length prefix at the cap, broken
// framing and frames with no kind while suspended, and a parent that stops
// reading while the worker prints.

func init() {
	rule("framing.eof-in-every-state-exit-0", "contract §1, §14; behaviour §1", every, NeedStream|NeedProcess,
		"EOF on a frame boundary is a clean exit 0 with no event in NoSession and in Ready too (Configured and Suspended have rules of their own)",
		func(t *rt) {
			a := t.Open()
			a.CloseInput()
			a.ExpectEOF("after EOF in NoSession")
			a.ExpectExit(0, exitWithin)
			b := t.Fresh()
			b.Expect(b.Feed("x = 1"), "Feed x = 1", isComplete)
			b.CloseInput()
			b.ExpectEOF("after EOF in Ready")
			b.ExpectExit(0, exitWithin)
		})

	rule("framing.eof-after-request-answers-it", "contract §1, §14; behaviour §1", every, NeedStream|NeedProcess,
		"A request followed at once by EOF is still answered in full (its prints, then its turn-ending event) before the clean exit 0",
		func(t *rt) {
			s := t.Fresh()
			s.Send(&message.Feed{Code: "print('a')\n1 + 1"})
			s.CloseInput()
			s.Expect(s.Read(), "Feed sent just before EOF", completes("2"), printed("a\n"))
			s.ExpectEOF("after the answer")
			s.ExpectExit(0, exitWithin)
		})

	rule("framing.prefix-at-cap-waits-for-body", "contract §1; behaviour §1", every, NeedStream|NeedProcess,
		"A length prefix of exactly 268435456 bytes is not oversize: the worker waits for the body, so EOF after part of it gets \"stream ended mid-frame\" (not \"exceeds maximum\") and exit 76",
		func(t *rt) {
			s := t.Fresh()
			s.SendRaw(append(prefix(protocol.MaxFrameLen), 0x1a, 0x00), "prefix 268435456, then 2 bytes")
			s.CloseInput()
			s.Expect(s.Read(), "torn frame of the cap's length", fatal("malformed request frame: stream ended mid-frame"))
			s.ExpectExit(76, exitWithin)
		})

	rule("framing.torn-frame-while-suspended-fatal-76", "contract §1, §9, §14; behaviour §1", every, NeedStream|NeedProcess,
		"EOF inside a frame while suspended is still a framing desync: FatalError \"malformed request frame: stream ended mid-frame\", stamped as every event is once an interpreter exists, and exit 76",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("foo()"), "Feed foo()", isCall)
			s.SendRaw(append(prefix(10), 0x12, 0x00), "prefix 10, then 2 bytes")
			s.CloseInput()
			s.Expect(s.Read(), "torn frame while suspended", fatal("malformed request frame: stream ended mid-frame"), stampedSusp(protocol.DefaultMaxSuspensions))
			s.ExpectExit(76, exitWithin)
		})

	rule("framing.oversize-prefix-while-suspended-fatal-76", "contract §1, §9, §14; behaviour §1", every, NeedStream|NeedProcess,
		"A length prefix above the cap while suspended gets the oversize FatalError and exit 76, the suspension notwithstanding",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("foo()"), "Feed foo()", isCall)
			s.SendRaw(prefix(0xffffffff), "prefix 4294967295")
			s.Expect(s.Read(), "oversize prefix while suspended",
				fatal("malformed request frame: frame of 4294967295 bytes exceeds maximum of 268435456 bytes"))
			s.ExpectExit(76, exitWithin)
		})

	rule("framing.same-arm-merges", "contract §1, §3 (duplicate field merging); behaviour §4", every, 0,
		"Two occurrences of the same request arm in one frame merge as protobuf merges a message: Feed{inputs: x = 40} then Feed{code: \"x + 2\"} runs x + 2 with x bound",
		func(t *rt) {
			s := t.Fresh()
			first, err := t.cd.AppendRequest(nil, &message.ParentRequest{Body: feedWith("0", "x", 40)})
			if err != nil {
				t.Failf("internal: encoding Feed: %v", err)
			}
			second, _ := t.cd.AppendRequest(nil, &message.ParentRequest{Body: &message.Feed{Code: "x + 2"}})
			s.SendBody(append(first, second...), "Feed{inputs x = 40} + Feed{code x + 2} in one frame")
			s.Expect(s.Read(), "two Feed arms", completes("42"))
		})

	rule("framing.no-kind-while-suspended", "contract §8; behaviour §5 (E11)", every, 0,
		"An empty frame while suspended gets the unstamped \"request has no kind\" and leaves the suspension answerable",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo() + 1"), "Feed foo() + 1", isCall))
			s.SendBody(nil, "empty frame")
			s.Expect(s.Read(), "empty frame while suspended", violation("protocol violation: request has no kind"), unstamped)
			s.Expect(s.Turn(ret(c.CallID, 41)), "ResumeCall afterwards", completes("42"))
		})

	rule("malformed.request-while-suspended", "contract §9; behaviour §15", every, 0,
		"An undecodable request while suspended is refused as malformed and leaves the suspension answerable",
		func(t *rt) {
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo() + 1"), "Feed foo() + 1", isCall))
			s.SendBody([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "8 bytes of 0xff")
			s.Expect(s.Read(), "garbage request while suspended",
				raisesLike("RuntimeError", "protocol violation: malformed request: failed to decode Protobuf message: "))
			s.Expect(s.Turn(ret(c.CallID, 41)), "ResumeCall afterwards", completes("42"))
		})

	rule("configure.version-refused-while-suspended", "contract §7, §8", every, 0,
		"A Configure with a bad version while suspended is still the fatal refusal (exit 4)",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("foo()"), "Feed foo()", isCall)
			cfg := t.Config()
			cfg.ProtocolVersion = 0
			s.Expect(s.Turn(cfg), "Configure with version 0 while suspended", refuses(0))
			s.ExpectExit(4, exitWithin)
		})

	rule("state.load-while-suspended", "contract §8, §12; behaviour §5 (E9)", every, 0,
		"Load while suspended is refused with E9 and the suspension stays answerable",
		func(t *rt) {
			a := t.Fresh()
			st := dumpOf(t, a, "Dump in Configured")
			s := t.Fresh()
			c := callOf(s.Expect(s.Feed("foo() + 1"), "Feed foo() + 1", isCall))
			s.Expect(s.Turn(&message.Load{State: st}), "Load while suspended",
				violation("protocol violation: Load requires a session that has not started (a feed has already run)"))
			s.Expect(s.Turn(ret(c.CallID, 1)), "ResumeCall afterwards", completes("2"))
		})

	rule("print.parent-stops-reading", "contract §1, §11; behaviour §3", every, 0,
		"A parent that stops reading while the worker prints more than a pipe holds gets all of it, in order, once it reads again, then the turn's end; the session goes on",
		func(t *rt) {
			s := t.Fresh()
			s.Send(&message.Feed{Code: manyLines})
			t.pause(parentStopsReadingFor)
			s.Expect(s.Read(), "the printing Feed, read late", completes("'done'"), wholeOutput(manyLinesOutput()))
			s.Expect(s.Feed("1 + 1"), "Feed afterwards", completes("2"))
		})

	rule("print.parent-stops-reading-then-eof", "contract §1, §11, §14; behaviour §1, §3", every, NeedStream|NeedProcess,
		"A parent that sends a printing Feed, closes the worker's input and reads only later still gets the whole turn, then the clean exit 0",
		func(t *rt) {
			s := t.Fresh()
			s.Send(&message.Feed{Code: manyLines})
			s.CloseInput()
			t.pause(parentStopsReadingFor)
			s.Expect(s.Read(), "the printing Feed, read late", completes("'done'"), wholeOutput(manyLinesOutput()))
			s.ExpectEOF("after the answer")
			s.ExpectExit(0, exitWithin)
		})

	rule("framing.stdout-closed-mid-turn-exit-3", "contract §11, §14", every, NeedStream|NeedProcess,
		"A parent that stops reading during a turn's prints and then closes the worker's output ends the worker with status 3",
		func(t *rt) {
			s := t.Fresh()
			s.Send(&message.Feed{Code: manyLines})
			t.pause(parentStopsReadingFor)
			s.closeOutput()
			s.ExpectExit(3, exitWithin)
		})

	rule("shutdown.later-requests-unanswered", "contract §8, §12; behaviour §14", every, 0,
		"Requests written after a Shutdown in the same write get no answer: Ok, then exit 0 and nothing more",
		func(t *rt) {
			s := t.Fresh()
			sd, _ := t.cd.AppendRequest(nil, &message.ParentRequest{Body: &message.Shutdown{}})
			s.SendBody(sd, "Shutdown")
			s.trySend(&message.Feed{Code: "1"})
			s.Expect(s.Read(), "Shutdown", isOk)
			s.ExpectExit(0, exitWithin)
		})
}

// manyLines is a program printing about 1 MiB in 20000 prints (a pipe
// holds 64 KiB), and its output.
const manyLines = "for i in range(20000):\n    print(str(100000 + i)[1:] + 'x' * 45)\n'done'"

func manyLinesOutput() string {
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, "%05d%s\n", i, strings.Repeat("x", 45))
	}
	return b.String()
}

// wholeOutput requires the turn to have printed want exactly.
func wholeOutput(want string) want {
	return func(_ *rt, r *reply) string {
		if got := r.Text(); got != want {
			return fmt.Sprintf("the %d bytes printed whole and in order (got %d bytes: %s)", len(want), len(got), firstDiff(got, want))
		}
		return ""
	}
}

// parentStopsReadingFor is how long print.parent-stops-reading leaves the
// worker's output unread: long enough for the worker to fill the pipe and
// block in a write (its verdict does not depend on the length).
const parentStopsReadingFor = 300 * time.Millisecond

// pause waits for d, or until the rule is canceled.
func (t *rt) pause(d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-t.ctx.Done():
	}
}

// firstDiff describes where got first differs from want.
func firstDiff(got, want string) string {
	n := min(len(got), len(want))
	for i := range n {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at byte %d: %q", i, clip(got[i:], 60))
		}
	}
	return fmt.Sprintf("one is a prefix of the other, at byte %d", n)
}

//go:build unix

package conform

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
)

// Rules on framing, the version handshake, Configure and malformed input.

// exitWithin bounds the wait for an exit the contract requires.
const exitWithin = 15 * time.Second

// refuses requires the FatalError of a version refusal of v in the
// canonical text, naming a supported range that holds the version under
// test (a worker may support more than one version: "server supports
// protocol versions 2 to 4").
func refuses(v uint32) want {
	return func(t *rt, r *reply) string {
		w := fmt.Sprintf("FatalError(%q) or the same naming a wider range that holds %d",
			(&protocol.UnsupportedVersionError{Requested: v, Supported: protocol.VersionRange{Min: t.Version, Max: t.Version}}).Error(), t.Version)
		f, ok := r.Event.Body.(*message.FatalError)
		if !ok {
			return w
		}
		uv, ok := protocol.ParseUnsupportedVersion(f.Message)
		if !ok || uv.Requested != v || !uv.Supported.Contains(t.Version) || uv.Error() != f.Message {
			return w
		}
		return ""
	}
}

// prefix returns a 4-byte little-endian length prefix.
func prefix(n uint32) []byte { return binary.LittleEndian.AppendUint32(nil, n) }

// arm wraps body as ParentRequest arm n.
func arm(n protowire.Number, body []byte) []byte {
	b := protowire.AppendTag(nil, n, protowire.BytesType)
	return protowire.AppendBytes(b, body)
}

func init() {
	rule("framing.oversize-prefix-fatal-76", "contract §1, §9, §14; behaviour §1", every, NeedStream|NeedProcess,
		"A length prefix above 256 MiB gets FatalError \"malformed request frame: frame of N bytes exceeds maximum of 268435456 bytes\" and exit 76, before any body arrives",
		func(t *rt) {
			s := t.Fresh()
			s.SendRaw(prefix(protocol.MaxFrameLen+1), "prefix 268435457")
			s.Expect(s.Read(), "oversize prefix", fatal("malformed request frame: frame of 268435457 bytes exceeds maximum of 268435456 bytes"))
			s.ExpectExit(76, exitWithin)
		})

	rule("framing.eof-in-prefix-fatal-76", "contract §1, §9; behaviour §1", every, NeedStream|NeedProcess,
		"EOF inside a length prefix gets FatalError \"malformed request frame: stream ended mid-frame\" and exit 76",
		func(t *rt) {
			s := t.Fresh()
			s.SendRaw([]byte{5, 0}, "2 of 4 prefix bytes")
			s.CloseInput()
			s.Expect(s.Read(), "torn prefix", fatal("malformed request frame: stream ended mid-frame"))
			s.ExpectExit(76, exitWithin)
		})

	rule("framing.eof-in-body-fatal-76", "contract §1, §9; behaviour §1", every, NeedStream|NeedProcess,
		"EOF inside a frame body gets FatalError \"malformed request frame: stream ended mid-frame\" and exit 76",
		func(t *rt) {
			s := t.Fresh()
			s.SendRaw(append(prefix(10), 0x4a, 0x00, 0x00), "prefix 10, then 3 bytes")
			s.CloseInput()
			s.Expect(s.Read(), "torn body", fatal("malformed request frame: stream ended mid-frame"))
			s.ExpectExit(76, exitWithin)
		})

	rule("framing.eof-at-boundary-exit-0", "contract §14; behaviour §1", every, NeedStream|NeedProcess,
		"EOF on a frame boundary ends the worker cleanly: no event, exit 0",
		func(t *rt) {
			s := t.Fresh()
			s.CloseInput()
			s.ExpectEOF("after EOF on a frame boundary")
			s.ExpectExit(0, exitWithin)
		})

	rule("framing.eof-while-suspended-exit-0", "behaviour §1", every, NeedStream|NeedProcess,
		"EOF on a frame boundary while suspended is still a clean exit 0",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("foo()"), "Feed foo()", isCall)
			s.CloseInput()
			s.ExpectEOF("after EOF while suspended")
			s.ExpectExit(0, exitWithin)
		})

	rule("framing.stdout-broken-exit-3", "contract §14", every, NeedStream|NeedProcess,
		"When its stdout is gone (the parent closed the read end), the worker exits with status 3",
		func(t *rt) {
			s := t.Fresh()
			s.closeOutput()
			s.sendFeed("print('x')\n1")
			if !s.exited(exitWithin / 3) {
				// The worker notices only when it writes. Should its
				// write have gone through (seen very rarely, with many
				// processes starting at once on a loaded host), a second
				// request makes it write again; a worker that goes on
				// serving without its stdout still fails the rule.
				s.trySend(&message.Feed{Code: "2"})
			}
			s.ExpectExit(3, exitWithin)
		})

	rule("framing.pipelined-requests", "behaviour §1", every, 0,
		"Two requests written back to back are answered in order, one turn each",
		func(t *rt) {
			s := t.Fresh()
			s.Send(&message.Feed{Code: "1 + 1"})
			s.Send(&message.Feed{Code: "2 + 2"})
			s.Expect(s.Read(), "first pipelined Feed", completes("2"))
			s.Expect(s.Read(), "second pipelined Feed", completes("4"))
		})

	rule("framing.empty-frame-no-kind", "contract §8; behaviour §5 (E11)", every, 0,
		"A zero-length frame is a request with no kind: \"protocol violation: request has no kind\", unstamped",
		func(t *rt) {
			s := t.Fresh()
			s.SendBody(nil, "empty frame")
			s.Expect(s.Read(), "empty frame", violation("protocol violation: request has no kind"), unstamped)
		})

	rule("framing.unknown-arm-no-kind", "contract §1; behaviour §5 (E11)", every, 0,
		"A frame holding only an unknown field decodes with no kind and gets \"request has no kind\"; the session is unchanged",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("x = 5"), "Feed x = 5", isComplete)
			s.SendBody(arm(19, nil), "unknown arm 19")
			s.Expect(s.Read(), "unknown arm", violation("protocol violation: request has no kind"), unstamped)
			s.Expect(s.Feed("x"), "Feed x afterwards", completes("5"))
		})

	rule("framing.unknown-fields-skipped", "contract §1; behaviour §4", every, 0,
		"Unknown fields inside a request are skipped",
		func(t *rt) {
			s := t.Open()
			b, _ := t.cd.AppendRequest(nil, &message.ParentRequest{Body: t.Config()})
			// Field 99 (varint) appended inside the Configure arm.
			_, _, payload, n := consumeBytes(b)
			if n != len(b) {
				t.Failf("internal: Configure did not encode as one field")
			}
			payload = protowire.AppendVarint(protowire.AppendTag(append([]byte(nil), payload...), 99, protowire.VarintType), 7)
			s.SendBody(arm(1, payload), "Configure with unknown field 99")
			s.Expect(s.Read(), "Configure with an unknown field", isOk)
			s.Expect(s.Feed("1"), "Feed 1", completes("1"))
		})

	rule("framing.last-arm-wins", "contract §13; behaviour §4", every, 0,
		"When a frame carries two request arms the last one wins (Feed then Reset acts as Reset)",
		func(t *rt) {
			s := t.Fresh()
			feed, _ := t.cd.AppendRequest(nil, &message.ParentRequest{Body: &message.Feed{Code: "1"}})
			reset, _ := t.cd.AppendRequest(nil, &message.ParentRequest{Body: &message.Reset{}})
			s.SendBody(append(feed, reset...), "Feed + Reset in one frame")
			s.Expect(s.Read(), "Feed+Reset", isOk)
			s.Expect(s.Feed("1"), "Feed after the Reset", violation("protocol violation: session has not been configured"))
		})

	rule("framing.trace-parent-accepted", "contract §1; behaviour §5", every, 0,
		"ParentRequest.trace_parent (field 20), even before the arm, is accepted without effect",
		func(t *rt) {
			s := t.Fresh()
			tp := protowire.AppendString(protowire.AppendTag(nil, 20, protowire.BytesType), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
			feed, _ := t.cd.AppendRequest(nil, &message.ParentRequest{Body: &message.Feed{Code: "6 * 7"}})
			s.SendBody(append(tp, feed...), "trace_parent then Feed")
			s.Expect(s.Read(), "Feed with a leading trace_parent", completes("42"))
		})

	// --- Configure and the version handshake ---------------------------------
	rule("configure.ok-unstamped", "contract §8; behaviour §6", every, 0,
		"Configure at the worker's version is answered with exactly one Ok, which carries no stamps",
		func(t *rt) {
			s := t.Open()
			s.Expect(s.Turn(t.Config()), "Configure", isOk, noPrints, unstamped)
			// Only one: the next event answers the next request.
			s.Expect(s.Feed("1 + 2"), "Feed 1 + 2 after the Ok", completes("3"))
		})

	versionRule := func(id, title string, v uint32) {
		rule(id, "contract §7; behaviour §5", every, 0, title, func(t *rt) {
			s := t.Open()
			cfg := t.Config()
			cfg.ProtocolVersion = v
			s.Expect(s.Turn(cfg), "Configure", refuses(v), unstamped)
			s.ExpectExit(4, exitWithin)
		})
	}
	versionRule("configure.version-zero-rejected",
		"Configure with protocol_version 0 (undeclared) gets the exact refusal FatalError, naming a supported range that holds the version under test, and exit 4", 0)
	versionRule("configure.version-below-rejected",
		"Configure with version 1 (below every version) gets the refusal with \"try updating to a newer client version\" and exit 4", 1)
	versionRule("configure.version-above-rejected",
		"Configure with version 99 (above every version) gets the refusal with \"make sure you are using the correct client version\" and exit 4", 99)

	rule("configure.version-checked-before-state", "contract §7, §8", every, 0,
		"The version check runs on every Configure before the state check: a bad version after a good Configure is still fatal (exit 4)",
		func(t *rt) {
			s := t.Fresh()
			cfg := t.Config()
			cfg.ProtocolVersion = 0
			s.Expect(s.Turn(cfg), "second Configure with version 0", refuses(0))
			s.ExpectExit(4, exitWithin)
		})

	rule("configure.version-refusal-stamped", "behaviour §5, §6", only2, 0,
		"A bad version's FatalError once an interpreter exists carries the session's stamps, as every event then does (max_suspensions at least)",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("1"), "Feed 1", completes("1"))
			cfg := t.Config()
			cfg.ProtocolVersion = 0
			s.Expect(s.Turn(cfg), "Configure with version 0 in Ready", refuses(0), func(_ *rt, r *reply) string {
				if r.Event.MaxSuspensions == nil {
					return "a FatalError stamped with max_suspensions"
				}
				return ""
			})
			s.ExpectExit(4, exitWithin)
		})

	rule("configure.second-rejected", "contract §8; behaviour §5 (E1)", every, 0,
		"A second Configure, even before any Feed, gets \"Configure while a session already exists\" and the first session stays",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Turn(t.Config()), "second Configure", violation("protocol violation: Configure while a session already exists"))
			s.Expect(s.Feed("7"), "Feed after the refused Configure", completes("7"))
		})

	rule("configure.monty-version-unchecked", "contract §7; behaviour §5", every, 0,
		"Configure.monty_version is informational: any value is accepted",
		func(t *rt) {
			cfg := t.Config()
			cfg.MontyVersion = "9.9.9-not-a-real-version"
			s := t.FreshWith(cfg)
			s.Expect(s.Feed("1"), "Feed 1", completes("1"))
		})

	// --- malformed requests ---------------------------------------------------
	rule("malformed.request-keeps-session", "contract §9; behaviour §15", every, 0,
		"An undecodable request body gets \"protocol violation: malformed request: failed to decode Protobuf message: …\" and the session keeps its globals",
		func(t *rt) {
			s := t.Fresh()
			s.Expect(s.Feed("x = 41"), "Feed x = 41", isComplete)
			s.SendBody([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, "8 bytes of 0xff")
			s.Expect(s.Read(), "garbage request", raisesLike("RuntimeError", "protocol violation: malformed request: failed to decode Protobuf message: "))
			s.Expect(s.Feed("x + 1"), "Feed x + 1 afterwards", completes("42"))
		})

	rule("malformed.invalid-utf8-code", "contract §2; behaviour §15", every, 0,
		"A Feed whose code is not UTF-8 is refused as a malformed request naming \"invalid string value: data is not UTF-8 encoded\"",
		func(t *rt) {
			s := t.Fresh()
			code := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte{'1', 0xff, 0xfe})
			s.SendBody(arm(3, code), "Feed with non-UTF-8 code")
			s.Expect(s.Read(), "non-UTF-8 code", raisesLike("RuntimeError", "invalid string value: data is not UTF-8 encoded"))
			s.Expect(s.Feed("2"), "Feed afterwards", completes("2"))
		})

	rule("malformed.wrong-wire-type", "behaviour §15", every, 0,
		"A Feed.code sent as a varint is refused as a malformed request naming \"invalid wire type\"",
		func(t *rt) {
			s := t.Fresh()
			code := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)
			s.SendBody(arm(3, code), "Feed.code as a varint")
			s.Expect(s.Read(), "varint code", raisesLike("RuntimeError", "invalid wire type"))
			s.Expect(s.Feed("3"), "Feed afterwards", completes("3"))
		})

	rule("malformed.truncated-submessage", "behaviour §15", every, 0,
		"A request whose arm claims more bytes than the frame holds is refused as a malformed request (\"buffer underflow\")",
		func(t *rt) {
			s := t.Fresh()
			s.SendBody([]byte{0x1a, 0x40, 0x0a, 0x01, 'x'}, "Feed arm of 64 bytes holding 3")
			s.Expect(s.Read(), "truncated arm", raisesLike("RuntimeError", "buffer underflow"))
			s.Expect(s.Feed("4"), "Feed afterwards", completes("4"))
		})

	rule("malformed.overshooting-field", "behaviour §15; contract §2", every, 0,
		"A request whose arm's last field runs past the arm's end but not the frame's is read from the rest of the frame, as prost reads it, and refused as a malformed request (\"ParentRequest.kind: delimited length exceeded\")",
		func(t *rt) {
			s := t.Fresh()
			s.SendBody([]byte{0x1a, 0x02, 0x0a, 0x03, 'a', 'b', 'c'}, "Feed arm of 2 bytes whose 3-byte code follows it")
			s.Expect(s.Read(), "overshooting code", raisesLike("RuntimeError", "ParentRequest.kind: delimited length exceeded"))
			s.Expect(s.Feed("5"), "Feed afterwards", completes("5"))
		})

	rule("malformed.unknown-groups-recursion-limit", "behaviour §15", every, 0,
		"Unknown groups count against prost's recursion limit of 100 message levels: in a Feed (level 1) groups nested 99 deep are skipped, 100 deep are refused as a malformed request (\"recursion limit reached\")",
		func(t *rt) {
			s := t.Fresh()
			feed := func(code string, depth int) []byte {
				b := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte(code))
				for range depth {
					b = protowire.AppendTag(b, 15, protowire.StartGroupType)
				}
				for range depth {
					b = protowire.AppendTag(b, 15, protowire.EndGroupType)
				}
				return arm(3, b)
			}
			s.SendBody(feed("8", 100), "Feed carrying unknown groups nested 100 deep")
			s.Expect(s.Read(), "groups 100 deep", raisesLike("RuntimeError", "ParentRequest.kind: recursion limit reached"))
			s.SendBody(feed("9", 99), "Feed carrying unknown groups nested 99 deep")
			s.Expect(s.Read(), "groups 99 deep", completes("9"))
		})

	rule("malformed.invalid-date-input", "contract §4, §9; behaviour §7", every, 0,
		"A Date input with month 13 fails the decode-time leaf check: \"invalid value for Date.month: 13 is outside the range 1..=12\" as a malformed request",
		func(t *rt) {
			s := t.Fresh()
			f := &message.Feed{Code: "d"}
			f.Inputs = []message.NamedRef{{Name: "d", Value: f.Values.Add(value.DateNode(value.Date{Year: 2024, Month: 12, Day: 25}))}}
			b, err := t.cd.AppendRequest(nil, &message.ParentRequest{Body: f})
			if err != nil {
				t.Failf("internal: %v", err)
			}
			// month 12, day 25 → month 13 (same length on the wire)
			bad := bytes.Replace(b, []byte{0x10, 0x0c, 0x18, 0x19}, []byte{0x10, 0x0d, 0x18, 0x19}, 1)
			if bytes.Equal(bad, b) {
				t.Failf("internal: the Date's month was not found in the encoded Feed")
			}
			s.SendBody(bad, "Feed with a Date input of month 13")
			s.Expect(s.Read(), "month 13", raisesLike("RuntimeError", "protocol violation: malformed request: failed to decode Protobuf message: "),
				raisesLike("RuntimeError", "invalid value for Date.month: 13 is outside the range 1..=12"))
			s.Expect(s.Feed("6"), "Feed afterwards", completes("6"))
		})

	rule("malformed.arena-forward-ref-rejected", "contract §3, §9", from4, 0,
		"An input arena whose node references itself is refused after decode: \"invalid inputs: invalid value for Arena: value node 0 references node 0, which is not below it\"",
		func(t *rt) {
			s := t.Fresh()
			// Feed{code "v", inputs [v → 0], values Arena{nodes [List[0]]}}
			feed := []byte{0x0a, 0x01, 'v', 0x12, 0x03, 0x0a, 0x01, 'v', 0x1a, 0x07, 0x12, 0x05, 0x5a, 0x03, 0x0a, 0x01, 0x00}
			s.SendBody(arm(3, feed), "Feed whose list input contains itself by index")
			s.Expect(s.Read(), "self-referencing arena", raisesLike("RuntimeError", "invalid value for Arena: value node 0 references node 0, which is not below it"))
			s.Expect(s.Feed("7"), "Feed afterwards", completes("7"))
		})

	rule("malformed.arena-root-out-of-range", "contract §3, §9", from4, 0,
		"An input root outside its arena is refused: \"value root 5 is out of range for an arena of 1 nodes\"",
		func(t *rt) {
			s := t.Fresh()
			// Feed{code "v", inputs [v → 5], values Arena{nodes [None]}}
			feed := []byte{0x0a, 0x01, 'v', 0x12, 0x05, 0x0a, 0x01, 'v', 0x10, 0x05, 0x1a, 0x04, 0x12, 0x02, 0x12, 0x00}
			s.SendBody(arm(3, feed), "Feed whose input root is 5 in a 1-node arena")
			s.Expect(s.Read(), "root out of range", raisesLike("RuntimeError", "value root 5 is out of range for an arena of 1 nodes"))
		})

	rule("malformed.decode-budget", "contract §2; behaviour §1", every, 0,
		"A frame within the cap that would decode into more than the 1 GiB budget is refused (\"frame exceeds decode memory budget\") and the worker survives",
		func(t *rt) {
			s := t.Fresh()
			s.SendBody(budgetBomb(t.Version), "an 80 MiB request of tens of millions of tiny repeated entries")
			s.Expect(s.Read(), "decode bomb", raisesLike("RuntimeError", "frame exceeds decode memory budget"))
			s.Expect(s.Feed("5"), "Feed afterwards", completes("5"))
		})
}

// consumeBytes splits a single length-delimited field.
func consumeBytes(b []byte) (protowire.Number, protowire.Type, []byte, int) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return 0, 0, nil, n
	}
	v, m := protowire.ConsumeBytes(b[n:])
	if m < 0 {
		return 0, 0, nil, m
	}
	return num, typ, v, n + m
}

// budgetBomb is a request of 40 Mi empty repeated entries (2 bytes each
// on the wire, 80 MiB; 20 Mi entries of 4 bytes at protocol 2). Each entry costs the receiver a whole element
// slot, so the geometric growth charges far more than 1 GiB before the
// end: the decode must stop on its budget. At protocol 2 the entries are
// int 0 MontyObject items of a list input; at protocol 4, empty FutureResult entries of a
// ResumeFutures.
func budgetBomb(v uint32) []byte {
	if v != 2 {
		return bombFrame(v, 40<<20)
	}
	// 20 Mi int-0 items (4 bytes each, 80 MiB): the size the released
	// worker was seen to refuse.
	return bombFrame(v, 20<<20)
}

// bombFrame is budgetBomb's request with n entries: the headers of the
// nested messages, sized up front, then the entries, filled by doubling
// copies (a few dozen memmoves, where appending tens of millions of
// entries one by one took seconds of the rule's time under the race
// detector).
func bombFrame(v uint32, n int) []byte {
	entry := []byte{0x0a, 0x00} // FutureResult{} in ResumeFutures.results
	if v == 2 {
		entry = []byte{0x0a, 0x02, 0x28, 0x00} // MontyObject{int 0} in a list
	}
	size := n * len(entry)
	var head []byte
	if v != 2 {
		head = protowire.AppendVarint(protowire.AppendTag(nil, 6, protowire.BytesType), uint64(size))
	} else {
		// Request{feed: Feed{code "1", inputs [NamedValue{"v", MontyObject{list: items}}]}}
		obj := protowire.AppendVarint(protowire.AppendTag(nil, 11, protowire.BytesType), uint64(size))
		nv := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "v")
		nv = protowire.AppendVarint(protowire.AppendTag(nv, 2, protowire.BytesType), uint64(len(obj)+size))
		feed := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "1")
		feed = protowire.AppendVarint(protowire.AppendTag(feed, 2, protowire.BytesType), uint64(len(nv)+len(obj)+size))
		head = protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.BytesType), uint64(len(feed)+len(nv)+len(obj)+size))
		head = append(append(append(head, feed...), nv...), obj...)
	}
	b := make([]byte, len(head)+size)
	copy(b, head)
	items := b[len(head):]
	if size > 0 {
		copy(items, entry)
	}
	for done := len(entry); done < size; done *= 2 {
		copy(items[done:], items[:done])
	}
	return b
}

// Command genframes writes the event frames scripts/rustparent feeds
// upstream's Rust parent: -n mutations (codectest.Mutate and MutateFields,
// alternately) of real protocol-2 events of every kind into DIR/frames,
// the hand-made probes into DIR/probes, and the events mutated, as they
// are, into DIR/bases. A Print's file name ends in -p (the driver follows
// it with a Complete).
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec/codecv2"
	"github.com/gomonty/monty/internal/codectest"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

func main() {
	dir := flag.String("dir", "", "output directory")
	n := flag.Int("n", 3000, "mutated frames")
	seed := flag.Uint64("seed", 23, "random seed")
	flag.Parse()
	if *dir == "" {
		log.Fatal("genframes: -dir is required")
	}
	for _, sub := range []string{"frames", "probes", "bases"} {
		if err := os.MkdirAll(filepath.Join(*dir, sub), 0o755); err != nil {
			log.Fatal(err)
		}
	}
	bases := events()
	for i, b := range bases {
		frame, err := codecv2.AppendEvent(nil, b)
		if err != nil {
			log.Fatal(err)
		}
		write(*dir, "bases", fmt.Sprintf("%02d", i), isPrint(b), frame)
	}
	rng := rand.New(rand.NewPCG(*seed, 7))
	for i := range *n {
		b := bases[i%len(bases)]
		frame, err := codecv2.AppendEvent(nil, b)
		if err != nil {
			log.Fatal(err)
		}
		var m []byte
		if i%2 == 0 {
			m = codectest.Mutate(rng, frame)
		} else {
			m = codectest.MutateFields(rng, frame)
		}
		write(*dir, "frames", fmt.Sprintf("%05d", i), isPrint(b), m)
	}
	for _, p := range probes() {
		write(*dir, "probes", p.name, p.print, p.frame)
	}
}

func isPrint(e *message.ChildEvent) bool {
	_, ok := e.Body.(*message.Print)
	return ok
}

func write(dir, sub, name string, print bool, b []byte) {
	if print {
		name += "-p"
	}
	if err := os.WriteFile(filepath.Join(dir, sub, name+".bin"), b, 0o644); err != nil {
		log.Fatal(err)
	}
}

// events are the bases: an event of every kind a parent takes while a
// feed runs, holding values of every shape.
func events() []*message.ChildEvent {
	g, root := codectest.EveryShape()
	g2, root2 := codectest.EveryShape()
	k := g2.Add(value.Str("key"))
	msg, preview, name := "bad", "f(1)", "fn"
	exc := &message.RaisedException{Type: "UnicodeDecodeError", Message: &msg,
		Traceback: []message.StackFrame{{Filename: "main.py", Start: message.CodeLoc{Line: 1, Column: 1},
			End: message.CodeLoc{Line: 1, Column: 5}, FrameName: &name, PreviewLine: &preview}},
		Data: &message.UnicodeErrorData{Encoding: "utf-8", ObjectBytes: []byte{0xff}, End: 1, Reason: "invalid start byte"}}
	uid := value.UUID{1, 2, 3}
	tz := value.TimeZone{Offset: 60}
	return []*message.ChildEvent{
		{Body: &message.Complete{Values: g, Value: root}, TotalExecutionMicros: 12},
		{Body: &message.FunctionCall{FunctionName: "f", Values: g2, Args: []value.NodeID{root2, k},
			Kwargs: []value.Pair{{Key: k, Value: root2}}, CallID: 3, ObjectID: &uid}},
		{Body: &message.OsCall{CallID: 2, Op: message.OpOpen, Path: "/a/b", Mode: "rb"}},
		{Body: &message.OsCall{CallID: 2, Op: message.OpGetenv, Key: "HOME", Values: g, Default: root}},
		{Body: &message.OsCall{CallID: 2, Op: message.OpDateTimeNow, TZ: &tz}},
		{Body: &message.OsCall{CallID: 2, Op: message.OpWriteText, Path: "/x", Text: "hi"}},
		{Body: &message.OsCall{CallID: 2, Op: message.OpMkdir, Path: "/x", Parents: true, ExistOK: true}},
		{Body: &message.NameLookup{Name: "v", ObjectID: &uid}},
		{Body: &message.Error{Exception: exc}, TotalExecutionMicros: 5, MaxDurationMicros: value.Ptr[uint64](9),
			RestoredScriptName: value.Ptr("s.py"), MaxSuspensions: value.Ptr[uint64](7)},
		{Body: &message.Print{Segments: []message.PrintSegment{{Stream: message.StreamStderr, Text: "héllo"}}}},
		{Body: &message.ResolveFutures{PendingCallIDs: []uint32{1, 300, 70000}}},
		{Body: &message.TypingError{Diagnostics: "main.py:1: error"}},
		{Body: &message.FatalError{Message: "boom"}},
		{Body: &message.OsCall{CallID: 9, Op: message.OpRename, Path: "/a", Dst: "/b"}},
		{Body: &message.OsCall{CallID: 9, Op: message.OpWriteBytes, Path: "/a", Data: []byte{0, 1}}},
		{Body: &message.OsCall{CallID: 9, Op: message.OpReadText, Path: "/a"}},
	}
}

type probe struct {
	name  string
	print bool
	frame []byte
}

func ld(num protowire.Number, parts ...[]byte) []byte {
	var p []byte
	for _, x := range parts {
		p = append(p, x...)
	}
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), p)
}

func vi(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

func raw(b ...byte) []byte { return b }

// probes are hand-made frames, each aimed at one rule of the parent's.
func probes() []probe {
	fc := func(p ...[]byte) []byte { return ld(2, append([][]byte{ld(1, []byte("f"))}, p...)...) }
	u16 := make([]byte, 16)
	for i := range u16 {
		u16[i] = byte(i)
	}
	short, good := ld(5, ld(1, []byte("abc"))), ld(5, ld(1, u16))
	none := ld(1, ld(2)) // Complete.value = None, as a Complete's payload
	return []probe{
		// FunctionCall: no field of it is named in a path.
		{name: "fc_args_varint", frame: fc(vi(2, 1))},
		{name: "fc_kwargs_varint", frame: fc(vi(3, 1))},
		{name: "fc_args_trunc", frame: fc(raw(0x12, 0x05, 0x28))},
		{name: "fc_args_badvarint", frame: fc(raw(0x12, 0x02, 0x28, 0x80))},
		{name: "fc_name_utf8", frame: ld(2, ld(1, raw(0xff)))},
		{name: "fc_kwargs_key_wt", frame: fc(ld(3, vi(1, 1)))},
		{name: "fc_args_list_nokind", frame: fc(ld(2, ld(11, ld(1))))},
		{name: "fc_callid_wt", frame: fc(ld(4))},
		{name: "fc_objid_wt", frame: fc(vi(5, 1))},
		{name: "fc_kwargs_value_nokind", frame: fc(ld(3, ld(1, vi(5, 2)), ld(2)))},
		{name: "fc_args_endgroup", frame: fc(ld(2, raw(0x0c)))},
		{name: "fc_args_deep_wt", frame: fc(ld(2, ld(11, vi(1, 1))))},
		{name: "fc_kwargs_deep_wt", frame: fc(ld(3, ld(1, ld(11, vi(1, 1))), ld(2, vi(5, 2))))},
		// FunctionCall.object_id: each occurrence fresh, checked as it ends.
		{name: "oid_short_then_bad_callid", frame: fc(short, ld(4))},
		{name: "oid_short_then_good", frame: fc(short, good)},
		{name: "oid_good_then_short", frame: fc(good, short)},
		{name: "oid_short_then_bad_envelope", frame: append(fc(short), ld(20)...)},
		{name: "oid_short_then_arm_again", frame: append(fc(short), ld(2, good)...)},
		{name: "oid_short_then_other_arm", frame: append(fc(short), ld(6, none)...)},
		{name: "oid_empty", frame: fc(ld(5))},
		{name: "oid_data_twice", frame: fc(ld(5, ld(1, []byte("abc")), ld(1, u16)))},
		{name: "oid_good_then_empty", frame: fc(good, ld(5))},
		{name: "oid_good_then_unknown", frame: fc(good, ld(5, vi(2, 1)))},
		{name: "oid_data_wt", frame: fc(ld(5, vi(1, 1)))},
		{name: "oid_data_trunc", frame: fc(ld(5, raw(0x0a, 0x05, 'a', 'b')))},
		{name: "oid_short_in_second_arm", frame: append(fc(good), ld(2, ld(5, ld(1, []byte("ab"))))...)},
		{name: "oid_short_then_bad_arg", frame: fc(short, ld(2, raw(0x08)))},
		{name: "oid_bad_arg_then_short", frame: fc(ld(2, ld(11, ld(1))), short)},
		{name: "lookup_oid_short_then_bad_envelope", frame: append(ld(4, ld(1, []byte("v")), ld(2, ld(1, []byte("abc")))), ld(20)...)},
		// Print: any stream but stderr is stdout.
		{name: "print_ok", print: true, frame: ld(1, vi(1, 1), ld(2, []byte("hi")))},
		{name: "print_stream_minus1", print: true, frame: ld(1, vi(1, 1<<64-1), ld(2, []byte("hi")))},
		{name: "print_stream_5", print: true, frame: ld(1, vi(1, 5), ld(2, []byte("hi")))},
		{name: "print_stream_0", print: true, frame: ld(1, ld(2, []byte("hi")))},
		{name: "print_stream_2", print: true, frame: ld(1, vi(1, 2), ld(2, []byte("hi")))},
		{name: "print_stream_2pow40", print: true, frame: ld(1, vi(1, 1<<40), ld(2, []byte("hi")))},
		{name: "print_text_utf8", print: true, frame: ld(1, vi(1, 1), ld(2, raw(0xff)))},
		{name: "print_stream_wt", print: true, frame: ld(1, ld(1), ld(2, []byte("hi")))},
		{name: "print_empty", print: true, frame: ld(1)},
		// The other events and the envelope.
		{name: "futures_wt", frame: ld(5, raw(0x0d, 1, 0, 0, 0))},
		{name: "futures_bad_packed", frame: ld(5, ld(1, raw(0x80)))},
		{name: "futures_unpacked", frame: ld(5, vi(1, 1), vi(1, 2))},
		{name: "typing_utf8", frame: ld(8, ld(1, raw(0xff)))},
		{name: "typing_wt", frame: ld(8, vi(1, 1))},
		{name: "dump_wt", frame: ld(9, vi(1, 1))},
		{name: "fatal_utf8", frame: ld(11, ld(1, raw(0xff)))},
		{name: "shutdown_dump_wt", frame: ld(12, vi(1, 1))},
		{name: "ok_junk", frame: ld(10, raw(0x08))},
		{name: "lookup_utf8", frame: ld(4, ld(1, raw(0xff)))},
		{name: "lookup_oid_wt", frame: ld(4, ld(1, []byte("v")), vi(2, 1))},
		{name: "lookup_oid_short", frame: ld(4, ld(1, []byte("v")), ld(2, ld(1, []byte("abc"))))},
		{name: "envelope_total_wt", frame: append(ld(6, none), ld(20)...)},
		{name: "envelope_duration_wt", frame: append(ld(6, none), ld(21)...)},
		{name: "envelope_script_utf8", frame: append(ld(6, none), ld(22, raw(0xff))...)},
		{name: "envelope_suspensions_wt", frame: append(ld(6, none), ld(23)...)},
		{name: "error_no_exception", frame: ld(7)},
		{name: "error_frame_no_location", frame: ld(7, ld(1, ld(1, []byte("ValueError")), ld(3, ld(1, []byte("f.py")))))},
		{name: "error_unknown_type", frame: ld(7, ld(1, ld(1, []byte("NotAnException"))))},
		{name: "error_both_objects", frame: ld(7, ld(1, ld(1, []byte("UnicodeDecodeError")), ld(4, ld(1, ld(2, raw(0xff)), ld(3, []byte("x"))))))},
		{name: "os_no_call", frame: ld(3, vi(1, 1))},
		{name: "os_open_bad_mode", frame: ld(3, vi(1, 1), ld(18, ld(1, []byte("/a")), ld(2, []byte("zz"))))},
		{name: "os_exists_utf8", frame: ld(3, vi(1, 1), ld(2, raw(0xff)))},
		{name: "os_now_tz_wt", frame: ld(3, vi(1, 1), ld(24, vi(1, 1)))},
		{name: "os_getenv_no_default", frame: ld(3, vi(1, 1), ld(21, ld(1, []byte("k"))))},
		{name: "os_getenv_default_nokind", frame: ld(3, vi(1, 1), ld(21, ld(1, []byte("k")), ld(2)))},
		{name: "os_getenv_default_list_nokind", frame: ld(3, vi(1, 1), ld(21, ld(1, []byte("k")), ld(2, ld(11, ld(1)))))},
		{name: "complete_no_value", frame: ld(6)},
		{name: "complete_nokind", frame: ld(6, ld(1))},
		{name: "complete_list_nokind", frame: ld(6, ld(1, ld(11, ld(1))))},
	}
}

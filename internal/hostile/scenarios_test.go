package hostile_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/hostile"
	p2 "github.com/gomonty/monty/internal/pb/montyp2v1"
	p4 "github.com/gomonty/monty/internal/pb/montyv1"
)

// check drives one scenario's child and verifies it misbehaves as its
// description says.
type check func(t *testing.T, p *proc, sc hostile.Scenario)

// checks holds one verification per catalog scenario.
var checks = map[string]check{
	"normal": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed("1 + 2")
		p.wantInt(3)
		p.feed("print('x')")
		body := p.wantArm(armPrint)
		if p.ver == 4 {
			segs := p.ev4(body).GetPrint().GetSegments()
			if len(segs) != 1 || segs[0].GetText() != "x\n" || segs[0].GetStream() != p4.PrintStream_PRINT_STREAM_STDOUT {
				t.Fatalf("print segments %v", segs)
			}
		} else if pr := p.ev2(body).GetPrint(); pr.GetText() != "x\n" || pr.GetStream() != p2.PrintStream_PRINT_STREAM_STDOUT {
			t.Fatalf("print %v", pr)
		}
		if o := p.rootObj(p.read()); o.GetNone() == nil {
			t.Fatalf("print() result %v, want None", o)
		}
		p.feed("f()")
		if name, id := p.wantCall(); name != "f" || id != 0 {
			t.Fatalf("call %s/%d, want f/0", name, id)
		}
		p.resume(0, 7)
		p.wantInt(7)
		p.shutdown()
		p.wantArm(armOk)
		p.wantExit(0)
	},

	"slow_start": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.send(configureMsg(p.ver, 0))
		p.silent(500 * time.Millisecond)
		if !p.alive(0) {
			t.Fatal("slow_start exited")
		}
	},
	"never_reads": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.send(configureMsg(p.ver, 0))
		p.silent(500 * time.Millisecond)
		if !p.alive(0) {
			t.Fatal("never_reads exited")
		}
	},
	"exit_immediately": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.wantExit(1)
		if _, err := p.readErr(ioTimeout); err != io.EOF {
			t.Fatalf("stdout: %v, want EOF", err)
		}
	},

	"version_range_reversed": versionCheck("versions 9 to 3"),
	"version_range_zero":     versionCheck("versions 0 to 0"),
	"version_only_7":         versionCheck("protocol version 7,"),
	"version_flipflop": func(t *testing.T, p *proc, sc hostile.Scenario) {
		// This process is asked for 4, the next one for 2: each refusal
		// claims the other version.
		p.send(configureMsg(4, 0))
		if msg := p.wantFatal(); !strings.Contains(msg, "unsupported protocol version 4 (server supports protocol version 2,") {
			t.Fatalf("refusal of 4: %q", msg)
		}
		p.wantExit(4)
		q := start(t, sc.Name, 2, "")
		q.send(configureMsg(2, 0))
		if msg := q.wantFatal(); !strings.Contains(msg, "unsupported protocol version 2 (server supports protocol version 4,") {
			t.Fatalf("refusal of 2: %q", msg)
		}
		q.wantExit(4)
	},
	"version_refusal_no_exit": func(t *testing.T, p *proc, sc hostile.Scenario) {
		other := uint32(4)
		if p.ver == 4 {
			other = 2
		}
		p.send(configureMsg(other, 0))
		want := "unsupported protocol version " + itoa(other) + " (server supports protocol version " + itoa(p.ver) + ", "
		if msg := p.wantFatal(); !strings.HasPrefix(msg, want) {
			t.Fatalf("refusal %q, want prefix %q", msg, want)
		}
		if !p.alive(300 * time.Millisecond) {
			t.Fatal("the refusing child exited; it should stay alive")
		}
		p.stdin.Close() // even stdin EOF does not end it
		if !p.alive(300 * time.Millisecond) {
			t.Fatal("the refusing child exited at stdin EOF")
		}
		q := start(t, sc.Name, p.ver, itoa(p.ver))
		q.configure()
		q.feed("1 + 2")
		q.wantInt(3)
	},

	"configure_unexpected_reply": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.send(configureMsg(p.ver, 0))
		p.wantInt(1)
	},
	"configure_garbage_reply": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.send(configureMsg(p.ver, 0))
		body := p.read()
		if err := proto.Unmarshal(body, new(p2.ChildEvent)); err == nil {
			t.Fatalf("garbage reply %x decoded", body)
		}
		if err := proto.Unmarshal(body, new(p4.ChildEvent)); err == nil {
			t.Fatalf("garbage reply %x decoded as v4", body)
		}
	},
	"complete_before_feed": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		// No request sent: the Complete arrives anyway.
		p.wantStr(hostile.UnsolicitedValue)
		p.feed("1 + 2")
		p.wantInt(3)
	},

	"oversize_prefix": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		_, err := p.readErr(ioTimeout)
		var tl *frame.TooLargeError
		if !errors.As(err, &tl) || tl.Len != frame.MaxFrameLen+1 {
			t.Fatalf("read: %v, want a TooLargeError of %d", err, frame.MaxFrameLen+1)
		}
		if !p.alive(300 * time.Millisecond) {
			t.Fatal("oversize_prefix exited; it should hang")
		}
	},
	"prefix_then_silence": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if n := binary.LittleEndian.Uint32(p.readN(4)); n != 64 {
			t.Fatalf("prefix %d, want 64", n)
		}
		p.silent(700 * time.Millisecond)
		if !p.alive(0) {
			t.Fatal("exited")
		}
	},
	"cap_prefix_partial_body": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if n := binary.LittleEndian.Uint32(p.readN(4)); n != frame.MaxFrameLen {
			t.Fatalf("prefix %d, want exactly the cap", n)
		}
		p.readN(10)
		p.silent(700 * time.Millisecond)
		if !p.alive(0) {
			t.Fatal("exited")
		}
	},
	"truncated_body_exit": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if _, err := p.readErr(ioTimeout); !errors.Is(err, frame.ErrTruncated) {
			t.Fatalf("read: %v, want truncated", err)
		}
		p.wantExit(0)
	},
	"truncated_prefix_exit": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if _, err := p.readErr(ioTimeout); !errors.Is(err, frame.ErrTruncated) {
			t.Fatalf("read: %v, want truncated", err)
		}
		p.wantExit(0)
	},
	"slow_drip": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		// The prefix alone takes three pauses; that is evidence enough
		// (reading the whole ~3 s frame would add nothing).
		begin := time.Now()
		var got []byte
		reads := 0
		for len(got) < 5 {
			_ = p.stdout.SetReadDeadline(time.Now().Add(ioTimeout))
			var b [64]byte
			n, err := p.stdout.Read(b[:])
			if err != nil {
				t.Fatalf("drip read: %v", err)
			}
			got = append(got, b[:n]...)
			reads++
		}
		// A busy machine may pick up two bytes in one read, but the bytes
		// must take the full drip.
		elapsed := time.Since(begin)
		if minimum := time.Duration(len(got)-1) * hostile.DripInterval * 9 / 10; elapsed < minimum || reads < 3 {
			t.Fatalf("%d bytes in %d reads over %v; want one per %v", len(got), reads, elapsed, hostile.DripInterval)
		}
		if size := binary.LittleEndian.Uint32(got); size < 8 || size > 64 || got[4] != 0x32 {
			t.Fatalf("dripped %x: not the start of a small Complete", got)
		}
	},
	"garbage_body": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		body := p.read()
		if !bytes.Equal(body, bytes.Repeat([]byte{0xff}, 32)) {
			t.Fatalf("body %x", body)
		}
		if err := proto.Unmarshal(body, new(p2.ChildEvent)); err == nil {
			t.Fatal("garbage decoded")
		}
		p.feed("5") // it keeps serving
		p.wantInt(5)
	},
	"garbage_prefix": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		text := "hostile worker says hello\n"
		raw := p.readN(len(text))
		if string(raw) != text {
			t.Fatalf("stdout %q", raw)
		}
		_, err := frame.NewReader(bytes.NewReader(raw), 0).ReadFrame()
		if !errors.Is(err, frame.ErrTooLarge) {
			t.Fatalf("as a frame: %v, want too large", err)
		}
	},
	"event_no_kind": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if body := p.read(); len(body) != 0 {
			t.Fatalf("body %x, want empty", body)
		}
	},
	"event_unknown_kind_19": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		body := p.read()
		if armOf(t, body) != 19 {
			t.Fatalf("arm %d, want 19", armOf(t, body))
		}
		if p.ver == 4 && p.ev4(body).GetKind() != nil || p.ver == 2 && p.ev2(body).GetKind() != nil {
			t.Fatal("unknown arm decoded as a kind")
		}
	},
	"event_stamps_only": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		body := p.read()
		if armOf(t, body) != 0 || len(body) == 0 {
			t.Fatalf("event %x, want stamps only", body)
		}
		if p.ver == 4 {
			if e := p.ev4(body); e.GetKind() != nil || e.GetMaxSuspensions() != 1000 {
				t.Fatalf("event %v", e)
			}
		} else if e := p.ev2(body); e.GetKind() != nil || e.GetMaxSuspensions() != 1000 {
			t.Fatalf("event %v", e)
		}
	},
	"event_wrong_wire_type": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		body := p.read()
		if body[0] != 0x30 {
			t.Fatalf("event %x, want field 6 as a varint", body)
		}
		if p.ev2(body).GetKind() != nil {
			t.Fatal("decoded a kind")
		}
	},

	"amplify_empty_items":    ampCheck,
	"amplify_none_items":     ampCheck,
	"amplify_dict_pairs":     ampCheck,
	"amplify_traceback":      ampCheck,
	"amplify_print_segments": ampCheck,
	"amplify_none_nodes":     ampCheck,
	"deep_nesting":           deepNestingCheck,
	"huge_int":               hugeIntCheck,
	"deep_chain":             deepChainCheck,

	"invalid_date_month": valueCheck(func(o *p2.MontyObject) bool { return o.GetDate().GetMonth() == 13 }),
	"invalid_tz_offset":  valueCheck(func(o *p2.MontyObject) bool { return o.GetTimezone().GetOffsetSeconds() == 86400 }),
	"invalid_uuid_length": valueCheck(func(o *p2.MontyObject) bool {
		return len(o.GetType().GetId().GetData()) == 3 && o.GetType().GetOrigin() == p2.TypeOrigin_TYPE_ORIGIN_HOST
	}),
	"type_origin_0": valueCheck(func(o *p2.MontyObject) bool {
		return o.GetType() != nil && o.GetType().GetOrigin() == 0
	}),
	"type_origin_99":           valueCheck(func(o *p2.MontyObject) bool { return o.GetType().GetOrigin() == 99 }),
	"unknown_exception_value":  valueCheck(func(o *p2.MontyObject) bool { return o.GetException().GetExcType() == "HostileError" }),
	"unknown_builtin_function": valueCheck(func(o *p2.MontyObject) bool { return o.GetBuiltinFunction() == "no_such_builtin" }),
	"invalid_file_mode":        valueCheck(func(o *p2.MontyObject) bool { return o.GetFileHandle().GetMode() == "q" }),
	"invalid_utf8_str": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		body := p.read()
		if !bytes.Contains(body, []byte{0x42, 0x02, 0xff, 0xfe}) {
			t.Fatalf("event %x lacks the bad str", body)
		}
		var err error
		if p.ver == 4 {
			err = proto.Unmarshal(body, new(p4.ChildEvent))
		} else {
			err = proto.Unmarshal(body, new(p2.ChildEvent))
		}
		if err == nil {
			t.Fatal("invalid UTF-8 decoded")
		}
	},

	"arena_root_out_of_range": arenaCheck(func(c *p4.Complete) bool {
		return c.GetValue() == 5 && len(c.GetValues().GetNodes()) == 1
	}),
	"arena_forward_ref": arenaCheck(func(c *p4.Complete) bool {
		n := c.GetValues().GetNodes()
		return len(n) == 2 && len(n[0].GetList().GetItems()) == 1 && n[0].GetList().GetItems()[0] == 1
	}),
	"arena_self_ref": arenaCheck(func(c *p4.Complete) bool {
		n := c.GetValues().GetNodes()
		return len(n) == 1 && len(n[0].GetList().GetItems()) == 1 && n[0].GetList().GetItems()[0] == 0
	}),
	"arena_instance_not_type": arenaCheck(func(c *p4.Complete) bool {
		n := c.GetValues().GetNodes()
		return len(n) == 2 && c.GetValue() == 1 && n[0].GetInt() == 1 &&
			n[1].GetClassInstance() != nil && n[1].GetClassInstance().GetClassType() == 0
	}),
	"complete_missing_arena": arenaCheck(func(c *p4.Complete) bool {
		return c.GetValue() == 0 && c.GetValues() == nil
	}),
	"arena_huge_hint": arenaCheck(func(c *p4.Complete) bool {
		return c.GetValues().GetNodeCount() == 1<<32-1 && len(c.GetValues().GetNodes()) == 1 &&
			c.GetValues().GetNodes()[0].GetNone() != nil
	}),
	"call_arg_out_of_range": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		fc := p.ev4(p.wantArm(armFunctionCall)).GetFunctionCall()
		if fc.GetFunctionName() != "f" || len(fc.GetArgs()) != 1 || fc.GetArgs()[0] != 9 || fc.GetValues() != nil {
			t.Fatalf("call %v", fc)
		}
	},

	"double_turn_end": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		p.wantInt(3)
		p.wantStr(hostile.StrayValue)
	},
	"stray_ok_after_complete": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		p.wantInt(3)
		p.wantArm(armOk)
	},
	"ok_to_feed": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		p.wantArm(armOk)
	},
	"error_no_exception": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if e := p.ev2(p.wantArm(armError)); e.GetError().GetException() != nil {
			t.Fatalf("error carries %v", e.GetError().GetException())
		}
	},
	"error_unknown_exc_type": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if e := p.ev2(p.wantArm(armError)); e.GetError().GetException().GetExcType() != "HostileError" {
			t.Fatalf("exception %v", e.GetError().GetException())
		}
	},
	"error_traceback_100k": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		body := p.wantArm(armError)
		exc := p.ev2(body).GetError().GetException()
		if exc.GetExcType() != "RecursionError" || len(exc.GetTraceback()) != 100_000 {
			t.Fatalf("exception %s with %d frames", exc.GetExcType(), len(exc.GetTraceback()))
		}
		for _, f := range exc.GetTraceback() {
			if f.GetStart() == nil || f.GetEnd() == nil {
				t.Fatal("frame without a span")
			}
		}
		t.Logf("%d bytes", len(body))
		p.feed("1 + 2")
		p.wantInt(3)
	},
	"shutdown_dump": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if e := p.ev2(p.wantArm(armShutdownDump)); string(e.GetShutdown().GetDump()) != "dump" {
			t.Fatalf("event %v", e)
		}
	},
	"oscall_no_call": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if oc := p.ev2(p.wantArm(armOsCall)).GetOsCall(); oc.GetCallId() != 1 || oc.GetCall() != nil {
			t.Fatalf("os call %v", oc)
		}
	},
	"oscall_bad_mode": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if oc := p.ev2(p.wantArm(armOsCall)).GetOsCall(); oc.GetOpen().GetMode() != "q" || oc.GetCallId() != 1 {
			t.Fatalf("os call %v", oc)
		}
	},
	"call_id_reused": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		for range 3 {
			if name, id := p.wantCall(); name != "f" || id != 1 {
				t.Fatalf("call %s/%d, want f/1", name, id)
			}
			p.resume(1, 1)
		}
		if name, id := p.wantCall(); name != "f" || id != 1 {
			t.Fatalf("call %s/%d, want f/1", name, id)
		}
		p.abort()
		p.wantArm(armError)
		p.feed("1 + 2")
		p.wantInt(3)
	},
	"call_id_backwards": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if name, id := p.wantCall(); name != "f" || id != 1 {
			t.Fatalf("call %s/%d, want f/1", name, id)
		}
		p.resume(1, 10)
		if name, id := p.wantCall(); name != "g" || id != 0 {
			t.Fatalf("call %s/%d, want g/0", name, id)
		}
		p.resume(0, 11)
		p.wantInt(11)
	},
	"resolve_unknown_future": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if name, id := p.wantCall(); name != "f" || id != 0 {
			t.Fatalf("call %s/%d, want f/0", name, id)
		}
		p.resume(0, 1)
		rf := p.ev2(p.wantArm(armResolveFutures)).GetResolveFutures()
		if ids := rf.GetPendingCallIds(); len(ids) != 1 || ids[0] != 7 {
			t.Fatalf("pending %v", ids)
		}
	},
	"abort_answered_with_call": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configureLimit(sc.MaxSuspensions)
		p.feed(sc.Code)
		for want := uint32(0); want <= uint32(sc.MaxSuspensions); want++ {
			if _, id := p.wantCall(); id != want {
				t.Fatalf("call id %d, want %d", id, want)
			}
			if want < uint32(sc.MaxSuspensions) {
				p.resume(want, 1)
			}
		}
		p.abort() // the third suspension exceeded the limit of 2
		if name, id := p.wantCall(); name != "f" || id != uint32(sc.MaxSuspensions)+1 {
			t.Fatalf("abort answered with %s/%d, want another FunctionCall", name, id)
		}
	},

	"print_flood": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		wantPrints(t, p, 500)
	},
	"print_unknown_stream": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		wantPrints(t, p, 2)
		if o := p.rootObj(p.read()); o.GetNone() == nil {
			t.Fatalf("then %v, want Complete(None)", o)
		}
	},
	"print_at_cap": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		n := streamPrint(t, p, frame.MaxFrameLen)
		if n != frame.MaxFrameLen {
			t.Fatalf("body %d", n)
		}
		if o := p.rootObj(p.read()); o.GetNone() == nil {
			t.Fatalf("then %v, want Complete(None)", o)
		}
	},
	"print_over_cap": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if n := binary.LittleEndian.Uint32(p.readN(4)); n != hostile.OverCapPrintBytes || n <= frame.MaxFrameLen {
			t.Fatalf("prefix %d, want %d", n, hostile.OverCapPrintBytes)
		}
		p.readN(1 << 20) // the body really streams
	},
	"stderr_flood": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		_ = p.stdout.SetReadDeadline(time.Now().Add(4 * ioTimeout))
		body, err := p.r.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if o := p.rootObj(body); o.GetInt() != 3 {
			t.Fatalf("Complete value %v, want 3", o)
		}
		// Everything was written before the Complete; the drain may lag.
		for deadline := time.Now().Add(ioTimeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if n, _ := p.stderr(); n >= hostile.StderrFloodBytes {
				break
			}
		}
		if n, tail := p.stderr(); n < hostile.StderrFloodBytes || !strings.Contains(tail, "hostile stderr flood") {
			t.Fatalf("stderr: %d bytes (%q)", n, tail[:min(len(tail), 40)])
		}
		p.feed("1 + 2")
		p.wantInt(3)
	},

	"oom_exit": exitCheck(65),
	"exit_4":   exitCheck(4),
	"exit_76":  exitCheck(76),
	"sigsegv":  signalCheck(syscall.SIGSEGV),
	"sigabrt":  signalCheck(syscall.SIGABRT),
	"sigkill":  signalCheck(syscall.SIGKILL),
	"fatal_stay_alive": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if msg := p.wantFatal(); msg != hostile.FatalAliveText {
			t.Fatalf("fatal %q", msg)
		}
		p.feed("1 + 2") // read and ignored
		p.silent(300 * time.Millisecond)
		p.stdin.Close()
		if !p.alive(300 * time.Millisecond) {
			t.Fatal("exited")
		}
	},
	"fatal_then_exit": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if msg := p.wantFatal(); msg != hostile.FatalText {
			t.Fatalf("fatal %q", msg)
		}
		p.wantExit(4)
	},
	"close_stdout": func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if _, err := p.readErr(ioTimeout); err != io.EOF {
			t.Fatalf("read: %v, want EOF", err)
		}
		if !p.alive(300 * time.Millisecond) {
			t.Fatal("exited")
		}
	},
	"stop_reading":     stopReadingCheck,
	"stop_reading_big": stopReadingCheck,
}

func versionCheck(want string) check {
	return func(t *testing.T, p *proc, sc hostile.Scenario) {
		for _, v := range []uint32{4, 2} {
			q := p
			if v != 4 {
				q = start(t, sc.Name, v, "")
			}
			q.send(configureMsg(v, 0))
			msg := q.wantFatal()
			if !strings.HasPrefix(msg, "unsupported protocol version "+itoa(v)+" (") || !strings.Contains(msg, want) {
				t.Fatalf("refusal of %d: %q, want it to mention %q", v, msg, want)
			}
			q.wantExit(4)
		}
	}
}

func valueCheck(ok func(*p2.MontyObject) bool) check {
	return func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if o := p.rootObj(p.read()); !ok(o) {
			t.Fatalf("value %v", o)
		}
	}
}

func arenaCheck(ok func(*p4.Complete) bool) check {
	return func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if c := p.ev4(p.wantArm(armComplete)).GetComplete(); !ok(c) {
			t.Fatalf("complete %v", c)
		}
	}
}

func exitCheck(code int) check {
	return func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if _, err := p.readErr(ioTimeout); err != io.EOF {
			t.Fatalf("read: %v, want EOF without a frame", err)
		}
		p.wantExit(code)
	}
}

func signalCheck(sig syscall.Signal) check {
	return func(t *testing.T, p *proc, sc hostile.Scenario) {
		p.configure()
		p.feed(sc.Code)
		if _, err := p.readErr(ioTimeout); err != io.EOF {
			t.Fatalf("read: %v, want EOF without a frame", err)
		}
		p.wantSignal(sig)
	}
}

// streamPrint reads a Print frame without holding it, checks its layout
// (one stdout run of 'x' filling the body) and returns the body size.
func streamPrint(t *testing.T, p *proc, want int) int {
	t.Helper()
	size := int(binary.LittleEndian.Uint32(p.readN(4)))
	if size != want {
		t.Fatalf("prefix %d, want %d", size, want)
	}
	hdr := p.readN(32)
	// Walk the header: ChildEvent.print, (v4: Print.segments,) stream, text.
	rest := hdr
	path := []int{1, 2}
	if p.ver == 4 {
		path = []int{1, 1, 2}
	}
	for i, num := range path {
		if i == len(path)-1 {
			// stream = STDOUT comes first inside the innermost message.
			if !bytes.HasPrefix(rest, []byte{0x08, 0x01}) {
				t.Fatalf("no stdout stream in %x", hdr)
			}
			rest = rest[2:]
		}
		if int(rest[0]) != num<<3|2 {
			t.Fatalf("header %x: want field %d", hdr, num)
		}
		l, n := uvarint(rest[1:])
		rest = rest[1+n:]
		if i == len(path)-1 {
			consumed := len(hdr) - len(rest)
			if consumed+int(l) != size {
				t.Fatalf("text of %d bytes after a %d-byte header in a %d-byte body", l, consumed, size)
			}
		}
	}
	left := size - len(hdr)
	if bytes.Count(rest, []byte{'x'}) != len(rest) {
		t.Fatal("text is not all 'x'")
	}
	// Every chunk is checked at both ends and the first and last in full:
	// a full comparison of 256 MiB is slow under the race detector.
	buf := make([]byte, 1<<20)
	full := bytes.Repeat([]byte{'x'}, len(buf))
	for first := true; left > 0; first = false {
		n := min(len(buf), left)
		_ = p.stdout.SetReadDeadline(time.Now().Add(ioTimeout))
		if _, err := io.ReadFull(p.stdout, buf[:n]); err != nil {
			t.Fatal(err)
		}
		left -= n
		if first || left == 0 {
			if !bytes.Equal(buf[:n], full[:n]) {
				t.Fatal("text is not all 'x'")
			}
		} else if buf[0] != 'x' || buf[n-1] != 'x' {
			t.Fatal("text is not all 'x'")
		}
	}
	return size
}

func uvarint(b []byte) (uint64, int) {
	v, n := binary.Uvarint(b)
	return v, n
}

func stopReadingCheck(t *testing.T, p *proc, sc hostile.Scenario) {
	p.configure()
	body, _ := proto.Marshal(p.feedMsg(sc.Code))
	if len(body) < len(sc.Code) {
		t.Fatalf("request of %d bytes", len(body))
	}
	_ = p.stdin.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
	n, err := p.stdin.Write(frame.AppendFrame(nil, body))
	if !errors.Is(err, os.ErrDeadlineExceeded) || n >= len(body) {
		t.Fatalf("write: %d bytes, %v; want a blocked write", n, err)
	}
	if !p.alive(0) {
		t.Fatal("exited")
	}
}

//go:build linux

package session

import (
	"context"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// Each benchmark runs the session beside a floor: the same exchange as
// hand-written protocol-2 frames over blocking pipes, with no codec and no
// session (what the wire and the worker cost by themselves).
//
//	go test -run '^$' -bench . -benchmem ./session/

// rawWorker is the floor's worker: blocking pipes, raw frames.
type rawWorker struct {
	cmd  *exec.Cmd
	in   *os.File
	out  *os.File
	wbuf []byte
	rbuf []byte
	pfx  [4]byte
}

func startRaw(tb testing.TB, bin string) *rawWorker {
	var inFds, outFds [2]int
	if err := syscall.Pipe2(inFds[:], syscall.O_CLOEXEC); err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Pipe2(outFds[:], syscall.O_CLOEXEC); err != nil {
		tb.Fatal(err)
	}
	inR, inW := os.NewFile(uintptr(inFds[0]), "in-r"), os.NewFile(uintptr(inFds[1]), "in-w")
	outR, outW := os.NewFile(uintptr(outFds[0]), "out-r"), os.NewFile(uintptr(outFds[1]), "out-w")
	cmd := exec.Command(bin, "subprocess")
	cmd.Env = []string{}
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	inR.Close()
	outW.Close()
	w := &rawWorker{cmd: cmd, in: inW, out: outR}
	w.send(rawConfigure)
	if arm(w.recv()) != 10 {
		tb.Fatal("raw Configure failed")
	}
	return w
}

func (w *rawWorker) send(body []byte) {
	w.wbuf = binary.LittleEndian.AppendUint32(w.wbuf[:0], uint32(len(body)))
	w.wbuf = append(w.wbuf, body...)
	if _, err := w.in.Write(w.wbuf); err != nil {
		panic(err)
	}
}

// recv returns the next frame body; it is valid until the next recv.
func (w *rawWorker) recv() []byte {
	if _, err := io.ReadFull(w.out, w.pfx[:]); err != nil {
		panic(err)
	}
	n := int(binary.LittleEndian.Uint32(w.pfx[:]))
	if cap(w.rbuf) < n {
		w.rbuf = make([]byte, n)
	}
	w.rbuf = w.rbuf[:n]
	if _, err := io.ReadFull(w.out, w.rbuf); err != nil {
		panic(err)
	}
	return w.rbuf
}

func (w *rawWorker) close() {
	w.in.Close()
	w.cmd.Wait()
	w.out.Close()
}

// Hand-written protocol-2 frames.
var (
	rawConfigure = func() []byte {
		inner := protowire.AppendTag(nil, 1, protowire.BytesType)
		inner = protowire.AppendString(inner, "main.py")
		inner = protowire.AppendTag(inner, 2, protowire.BytesType) // limits
		lim := protowire.AppendTag(nil, 5, protowire.VarintType)   // max_suspensions
		lim = protowire.AppendVarint(lim, 20000)
		inner = protowire.AppendBytes(inner, lim)
		inner = protowire.AppendTag(inner, 9, protowire.VarintType)
		inner = protowire.AppendVarint(inner, 2)
		return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), inner)
	}()
	rawFeed = func(code string) []byte {
		inner := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), code)
		return protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), inner)
	}
)

// rawResumeNone appends ResumeCall{call_id, result{return_value: None}}.
func rawResumeNone(dst []byte, callID uint64) []byte {
	// result(2): ExtFunctionResult{return_value(1): MontyObject{none(2): Unit{}}}
	result := [...]byte{0x12, 0x04, 0x0a, 0x02, 0x12, 0x00}
	n := len(result)
	if callID != 0 {
		n += 1 + protowire.SizeVarint(callID)
	}
	dst = protowire.AppendVarint(protowire.AppendTag(dst, 4, protowire.BytesType), uint64(n))
	if callID != 0 {
		dst = protowire.AppendVarint(protowire.AppendTag(dst, 1, protowire.VarintType), callID)
	}
	return append(dst, result[:]...)
}

// arm returns the oneof arm of a ChildEvent.
func arm(b []byte) protowire.Number {
	num, _, n := protowire.ConsumeTag(b)
	if n < 0 {
		return 0
	}
	return num
}

// callID extracts FunctionCall.call_id from a function_call event.
func callID(b []byte) uint64 {
	_, _, n := protowire.ConsumeTag(b)
	fc, m := protowire.ConsumeBytes(b[n:])
	if m < 0 {
		panic("bad FunctionCall")
	}
	for len(fc) > 0 {
		num, typ, k := protowire.ConsumeTag(fc)
		fc = fc[k:]
		if num == 4 && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(fc)
			return v
		}
		k = protowire.ConsumeFieldValue(num, typ, fc)
		fc = fc[k:]
	}
	return 0
}

// rawTurn feeds code and answers every FunctionCall with None until the
// turn-ending Complete; it returns the Complete frame's length.
func (w *rawWorker) rawTurn(feed []byte) int {
	w.send(feed)
	var resume []byte
	for {
		b := w.recv()
		switch arm(b) {
		case 1: // print
		case 2:
			resume = rawResumeNone(resume[:0], callID(b))
			w.send(resume)
		case 6:
			return len(b)
		default:
			panic("unexpected raw event")
		}
	}
}

func benchSession(b *testing.B) *Session {
	b.Helper()
	return realSession(b, Config{Limits: Limits{MaxSuspensions: 20000}})
}

func benchPair(b *testing.B, code string, check func(*testing.B, *Result)) {
	bin := requireWorker(b)
	feed := rawFeed(code)
	b.Run("floor", func(b *testing.B) {
		w := startRaw(b, bin)
		defer w.close()
		defer hostCPU(b)()
		for b.Loop() {
			w.rawTurn(feed)
		}
	})
	b.Run("session", func(b *testing.B) {
		s := benchSession(b)
		ctx := context.Background()
		reg := NewRegistry().MustRegister("f", Func(func(context.Context, *Call) (any, error) { return nil, nil }))
		opt := WithFunctions(reg)
		defer hostCPU(b)()
		for b.Loop() {
			r, err := s.Run(ctx, code, opt)
			if err != nil {
				b.Fatal(err)
			}
			if check != nil {
				check(b, r)
			}
		}
	})
}

// BenchmarkFeedRoundTrip: one warm feed of `1 + 2`.
func BenchmarkFeedRoundTrip(b *testing.B) {
	benchPair(b, "1 + 2", nil)
	b.Run("session-lowlevel", func(b *testing.B) {
		s := benchSession(b)
		ctx := context.Background()
		defer hostCPU(b)()
		for b.Loop() {
			if _, err := s.Feed(ctx, "1 + 2"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkHostCalls: 10,000 host calls in one feed (one op = the feed).
func BenchmarkHostCalls(b *testing.B) {
	benchPair(b, "for i in range(10000): f(i)", nil)
	b.Run("session-typed", func(b *testing.B) {
		s := benchSession(b)
		ctx := context.Background()
		reg := NewRegistry().MustRegister("f", func(i int) {})
		opt := WithFunctions(reg)
		defer hostCPU(b)()
		for b.Loop() {
			if _, err := s.Run(ctx, "for i in range(10000): f(i)", opt); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkListResult: a 1,000,000-int list result.
func BenchmarkListResult(b *testing.B) {
	benchPair(b, "list(range(1000000))", func(b *testing.B, r *Result) {
		if n := r.Node(); len(n.Refs()) != 1000000 {
			b.Fatalf("%d items", len(n.Refs()))
		}
	})
}

// BenchmarkBytesResult: a 10 MB bytes result.
func BenchmarkBytesResult(b *testing.B) {
	benchPair(b, "b'x' * 10_000_000", func(b *testing.B, r *Result) {
		if n := r.Node(); len(n.Bytes()) != 10_000_000 {
			b.Fatalf("%d bytes", len(n.Bytes()))
		}
	})
}

// BenchmarkColdStart: a fresh worker's spawn, Configure and first feed of
// `1 + 2`, up to the decoded result. Stopping the worker is not timed (the
// timer is paused for it), but its CPU is in cpu-ns/op. Besides the mean
// (ns/op) it reports the median op (p50-ns/op): on a shared machine a few
// slow spawns skew the mean.
//
//	go test -run '^$' -bench ColdStart -benchmem -benchtime=200x ./session/
func BenchmarkColdStart(b *testing.B) {
	bin := requireWorker(b)
	feed := rawFeed("1 + 2")
	b.Run("floor", func(b *testing.B) {
		coldLoop(b, func() func() {
			w := startRaw(b, bin)
			w.rawTurn(feed)
			return w.close
		})
	})
	b.Run("session", func(b *testing.B) {
		ctx := context.Background()
		// Negotiate once; later starts use the cached version, as every
		// start after a process's first does.
		s, err := Start(ctx, Launch{}, Config{Logger: quietLogger})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
		coldLoop(b, func() func() {
			s, err := Start(ctx, Launch{}, Config{Logger: quietLogger})
			if err != nil {
				b.Fatal(err)
			}
			r, err := s.Run(ctx, "1 + 2")
			if err != nil {
				b.Fatal(err)
			}
			if r.Repr() != "3" {
				b.Fatalf("1 + 2 = %s", r.Repr())
			}
			return func() { s.Close() }
		})
	})
}

// coldLoop times start (which returns the matching stop) once per op, with
// the timer paused for stop, and reports the median op as p50-ns/op.
func coldLoop(b *testing.B, start func() (stop func())) {
	var ops []time.Duration
	defer hostCPU(b)()
	for b.Loop() {
		t0 := time.Now()
		stop := start()
		ops = append(ops, time.Since(t0))
		b.StopTimer()
		stop()
		b.StartTimer()
	}
	slices.Sort(ops)
	if len(ops) > 0 {
		b.ReportMetric(float64(ops[len(ops)/2].Nanoseconds()), "p50-ns/op")
	}
}

// BenchmarkConvertEndToEnd: Go values through the real worker, converted
// on the way. cpu-ns/op is the parent's CPU (getrusage of this process).
func BenchmarkConvertEndToEnd(b *testing.B) {
	b.Run("result-1M-ints-into-int64s", func(b *testing.B) {
		s := benchSession(b)
		ctx := context.Background()
		defer hostCPU(b)()
		for b.Loop() {
			r, err := s.Run(ctx, "list(range(1000000))")
			if err != nil {
				b.Fatal(err)
			}
			var xs []int64
			if err := r.Decode(&xs); err != nil || len(xs) != 1_000_000 {
				b.Fatal(len(xs), err)
			}
		}
	})
	b.Run("input-1M-int64s", func(b *testing.B) {
		s := benchSession(b)
		ctx := context.Background()
		xs := make([]int64, 1_000_000)
		for i := range xs {
			xs[i] = int64(i)
		}
		defer hostCPU(b)()
		for b.Loop() {
			r, err := s.Run(ctx, "len(xs)", WithInputs(Input{"xs", xs}))
			if err != nil {
				b.Fatal(err)
			}
			if n := r.Node(); n.Int() != 1_000_000 {
				b.Fatal(r.Repr())
			}
		}
	})
}

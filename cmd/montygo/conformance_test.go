//go:build unix

package main

import (
	"io"
	"os/exec"
	"reflect"
	"testing"

	"github.com/gomonty/monty/codec"
	codecv2 "github.com/gomonty/monty/codec/codecv2"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// wireSession drives a worker process with raw protocol-2 requests.
type wireSession struct {
	cmd *exec.Cmd
	fw  *frame.Writer
	fr  *frame.Reader
}

func startWire(t *testing.T, bin string, args ...string) *wireSession {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"subprocess"}, args...)...)
	cmd.Env = []string{}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return &wireSession{cmd: cmd, fw: frame.NewWriter(in, 0), fr: frame.NewReader(out, 0)}
}

// turn sends one request and returns every event up to the turn's end,
// with the execution-time stamp (which differs from run to run) cleared.
func (w *wireSession) turn(t *testing.T, req message.Request) []*message.ChildEvent {
	t.Helper()
	b, err := codecv2.Codec.AppendRequest(nil, &message.ParentRequest{Body: req})
	if err != nil {
		t.Fatal(err)
	}
	return w.turnRaw(t, b)
}

// turnRaw is turn for a frame body as it is.
func (w *wireSession) turnRaw(t *testing.T, body []byte) []*message.ChildEvent {
	t.Helper()
	if err := w.fw.WriteFrame(body); err != nil {
		t.Fatal(err)
	}
	var evs []*message.ChildEvent
	for {
		b, err := w.fr.ReadFrame()
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		ev, err := codecv2.Codec.DecodeEvent(b, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		ev.TotalExecutionMicros = 0
		evs = append(evs, ev)
		if ev.Body != nil && ev.Body.EventKind().EndsTurn() {
			return evs
		}
	}
}

// The same protocol-2 request sequence, covering most cells of the state
// table, gets the same events from `montygo subprocess --protocol 2` as
// from the released worker itself.
func TestSubprocessMatchesTheWorkerOnTheWire(t *testing.T) {
	real := testenv.Worker(t)
	relay := relayBinary(t)
	zero := uint32(0)
	two := uint64(2)
	none := func(id uint32) *message.ResumeCall {
		r := &message.ResumeCall{CallID: id, Result: &message.ExtResult{Kind: message.ResultReturn}}
		r.Result.Value = r.Values.Add(value.Int(7))
		return r
	}
	// Each side restores its own dump: a dump holds the run's measured
	// execution time, so the bytes differ between runs.
	const loadOwnDump = "load own dump"
	steps := []func() message.Request{
		func() message.Request { return &message.Feed{Code: "1"} },
		func() message.Request { return &message.Dump{} },
		func() message.Request {
			return &message.Configure{ProtocolVersion: 2, ScriptName: "conf.py", PrintFlushIntervalMs: &zero,
				Limits: &message.ResourceLimits{MaxSuspensions: &two}}
		},
		func() message.Request { return &message.Configure{ProtocolVersion: 2} },
		func() message.Request { return &message.InstallDependencies{Requirements: []string{"x"}} },
		func() message.Request { return &message.ResumeCall{CallID: 0} },
		func() message.Request {
			return &message.Feed{Code: "print('a')\nprint('b', end='')\nx = f(1, k=2)\nx * 2"}
		},
		func() message.Request { return &message.Feed{Code: "1"} },
		func() message.Request { return none(7) },
		func() message.Request { return &message.ResumeCall{CallID: 0} },
		func() message.Request {
			return &message.ResumeCall{CallID: 0, Result: &message.ExtResult{Kind: message.ResultNotHandled}}
		},
		func() message.Request { return &message.ResumeNameLookup{Kind: message.LookupUndefined} },
		func() message.Request { return &message.ResumeFutures{} },
		func() message.Request { return &message.AbortFeed{} },
		func() message.Request { return &message.Load{State: []byte("x")} },
		func() message.Request { return &message.Dump{} },
		func() message.Request { return none(0) },
		func() message.Request {
			return &message.AbortFeed{Exception: message.NewException("RuntimeError", "x")}
		},
		func() message.Request { return &message.Feed{Code: "def g():\n    raise KeyError('k')\ng()"} },
		func() message.Request { return &message.Feed{Code: "undefined_name + 1"} },
		func() message.Request { return &message.ResumeNameLookup{Kind: message.LookupUndefined} },
		func() message.Request { return &message.Feed{Code: "y = h()"} },
		func() message.Request { return &message.Dump{} },
		func() message.Request { return &message.Reset{} },
		func() message.Request { return &message.Dump{} },
		func() message.Request { return &message.Load{State: []byte(loadOwnDump)} },
		func() message.Request { return none(0) },
		func() message.Request { return &message.Feed{Code: "y"} },
		func() message.Request { return &message.Shutdown{} },
	}
	a := startWire(t, real)
	b := startWire(t, relay, "--protocol", "2")
	var dumps [2][]byte
	for i, step := range steps {
		var evs [2][]*message.ChildEvent
		for side, w := range []*wireSession{b, a} {
			req := step()
			if l, ok := req.(*message.Load); ok && string(l.State) == loadOwnDump {
				l.State = dumps[side]
			}
			evs[side] = w.turn(t, req)
			if d, ok := evs[side][len(evs[side])-1].Body.(*message.DumpResult); ok {
				if i == 22 {
					dumps[side] = d.State
				}
				d.State = nil
			}
		}
		if !sameEvents(evs[0], evs[1]) {
			t.Fatalf("step %d (%s):\nrelay  %s\nworker %s", i, step().RequestKind(), render(evs[0]), render(evs[1]))
		}
	}
	if code, _ := exitCode(t, b.cmd); code != 0 {
		t.Fatalf("relay exit %d", code)
	}
}

// sameEvents reports whether two event lists are the same: each pair
// encodes to the same protocol-2 bytes (graph nodes hold their payloads
// behind pointers, which reflect.DeepEqual would compare by address).
func sameEvents(a, b []*message.ChildEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, errx := codecv2.AppendEvent(nil, a[i])
		y, erry := codecv2.AppendEvent(nil, b[i])
		if errx != nil || erry != nil {
			if !reflect.DeepEqual(a[i], b[i]) {
				return false
			}
			continue
		}
		if string(x) != string(y) {
			return false
		}
	}
	return true
}

func render(evs []*message.ChildEvent) string {
	s := ""
	for _, ev := range evs {
		s += describeEvent(ev) + "; "
	}
	return s
}

func describeEvent(ev *message.ChildEvent) string {
	out := "no kind"
	if ev.Body != nil {
		out = ev.Body.EventKind().String()
	}
	switch b := ev.Body.(type) {
	case *message.Error:
		out += " " + b.Exception.Type + ": " + b.Exception.Msg()
	case *message.Print:
		for _, s := range b.Segments {
			out += " " + s.Text
		}
	case *message.FatalError:
		out += " " + b.Message
	}
	if ev.MaxSuspensions != nil {
		out += " [ms]"
	}
	if ev.MaxDurationMicros != nil {
		out += " [md]"
	}
	if ev.RestoredScriptName != nil {
		out += " [name " + *ev.RestoredScriptName + "]"
	}
	return out
}

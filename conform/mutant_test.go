//go:build unix

package conform_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// A mutant is a deliberately broken worker: the test binary, re-executed
// with CONFORM_MUTANT set, runs the real worker behind a proxy that passes
// the parent's bytes through untouched and rewrites the worker's events
// (or its exit status) in one specific way. Each mutation breaks one
// behaviour of the contract, so the rules that check it must fail.
type mutation struct {
	// event rewrites one decoded event into the events to send instead.
	event func(ev *message.ChildEvent) []*message.ChildEvent
	// exit maps the real worker's exit status.
	exit func(code int) int
}

const mutatedSuffix = " [mutant]"

func one(ev *message.ChildEvent) []*message.ChildEvent { return []*message.ChildEvent{ev} }

var mutations = map[string]mutation{
	// Every Error message gets a suffix: exact texts no longer match.
	"error-text": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if e, ok := ev.Body.(*message.Error); ok && e.Exception != nil {
			e.Exception.Message = value.Ptr(e.Exception.Msg() + mutatedSuffix)
		}
		return one(ev)
	}},
	// Every Error becomes a plain Exception: the type is wrong.
	"error-type": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if e, ok := ev.Body.(*message.Error); ok && e.Exception != nil {
			e.Exception.Type = "Exception"
		}
		return one(ev)
	}},
	// Every Complete carries the str 'mutant' instead of its value.
	"complete-value": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if c, ok := ev.Body.(*message.Complete); ok {
			c.Values = value.Graph{}
			c.Value = c.Values.Add(value.Str("mutant"))
		}
		return one(ev)
	}},
	// Every FatalError message gets a suffix.
	"fatal-text": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if f, ok := ev.Body.(*message.FatalError); ok {
			f.Message += mutatedSuffix
		}
		return one(ev)
	}},
	// The worker's exit status is off by one.
	"exit-code": {exit: func(code int) int { return code + 1 }},
	// Every event is stamped, even those that must not be.
	"stamp-all": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if ev.MaxSuspensions == nil {
			ev.MaxSuspensions = value.Ptr(uint64(1000))
		}
		return one(ev)
	}},
	// No event is stamped.
	"unstamp-all": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		ev.TotalExecutionMicros, ev.MaxDurationMicros, ev.MaxSuspensions, ev.RestoredScriptName = 0, nil, nil, nil
		ev.FeedExecutionMicros, ev.MaxFeedDurationMicros, ev.MaxTurnDurationMicros, ev.MaxTotalSleepMicros = 0, nil, nil, nil
		return one(ev)
	}},
	// Print events are lost.
	"prints-dropped": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if ev.Body.EventKind() == message.KindPrint {
			return nil
		}
		return one(ev)
	}},
	// Prints are held back and sent as one event just before the
	// turn-ending event: line buffering and the 8 KiB cap are broken.
	"prints-merged": {}, // handled by the proxy loop (it needs state)
	// Every Print is split into one event per character.
	"prints-split": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		p, ok := ev.Body.(*message.Print)
		if !ok {
			return one(ev)
		}
		var out []*message.ChildEvent
		for _, s := range p.Segments {
			for _, r := range s.Text {
				out = append(out, &message.ChildEvent{Body: &message.Print{Segments: []message.PrintSegment{{Stream: s.Stream, Text: string(r)}}}})
			}
		}
		return out
	}},
	// FunctionCall names are changed.
	"call-renamed": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if c, ok := ev.Body.(*message.FunctionCall); ok {
			c.FunctionName += "_x"
		}
		return one(ev)
	}},
	// Every FunctionCall claims call id 0.
	"call-id-zero": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if c, ok := ev.Body.(*message.FunctionCall); ok {
			c.CallID = 0
		}
		return one(ev)
	}},
	// Every FunctionCall's id is shifted up by one.
	"call-id-shift": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if c, ok := ev.Body.(*message.FunctionCall); ok {
			c.CallID++
		}
		return one(ev)
	}},
	// NameLookup names are changed.
	"lookup-renamed": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if l, ok := ev.Body.(*message.NameLookup); ok {
			l.Name += "_x"
		}
		return one(ev)
	}},
	// ResolveFutures forgets its last pending id.
	"resolve-drop-id": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if r, ok := ev.Body.(*message.ResolveFutures); ok && len(r.PendingCallIDs) > 0 {
			r.PendingCallIDs = r.PendingCallIDs[:len(r.PendingCallIDs)-1]
		}
		return one(ev)
	}},
	// OsCall paths and keys are changed.
	"os-path": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if o, ok := ev.Body.(*message.OsCall); ok {
			o.Path += "_x"
			o.Key += "_x"
		}
		return one(ev)
	}},
	// DumpResult carries no state.
	// Every event but a Print is sent twice.
	"events-doubled": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if ev.Body.EventKind() == message.KindPrint {
			return one(ev)
		}
		return []*message.ChildEvent{ev, ev}
	}},
	"dump-empty": {event: func(ev *message.ChildEvent) []*message.ChildEvent {
		if d, ok := ev.Body.(*message.DumpResult); ok {
			d.State = nil
		}
		return one(ev)
	}},
}

// mutantMain runs when the test binary is re-executed as a mutant worker.
// It returns the process exit status.
func mutantMain(name string) int {
	if name == "escapee" {
		return escapeeMain()
	}
	mut, ok := mutations[name]
	if !ok {
		fmt.Fprintln(os.Stderr, "mutant: unknown mutation", name)
		return 2
	}
	ver, _ := strconv.Atoi(os.Getenv("CONFORM_MUTANT_PROTOCOL"))
	cd, ok := codec.ForVersion(uint32(ver))
	if !ok {
		fmt.Fprintln(os.Stderr, "mutant: bad CONFORM_MUTANT_PROTOCOL")
		return 2
	}
	cmd := exec.Command(os.Getenv("CONFORM_MUTANT_WORKER"), "subprocess")
	cmd.Env = []string{}
	cmd.Stderr = os.Stderr
	win, err := cmd.StdinPipe()
	if err != nil {
		return 2
	}
	wout, err := cmd.StdoutPipe()
	if err != nil {
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "mutant:", err)
		return 2
	}
	go func() {
		_, _ = io.Copy(win, os.Stdin)
		win.Close()
	}()
	r := frame.NewReader(wout, 0)
	w := frame.NewWriter(os.Stdout, 0)
	var held []string // prints-merged: text held back in this turn
	for {
		body, err := r.ReadFrame()
		if err != nil {
			break
		}
		ev, err := cd.DecodeEvent(body, codec.Limits{})
		if err != nil || ev.Body == nil {
			_ = w.WriteFrame(body)
			continue
		}
		out := one(ev)
		switch {
		case name == "prints-merged":
			if p, ok := ev.Body.(*message.Print); ok {
				for _, s := range p.Segments {
					held = append(held, s.Text)
				}
				out = nil
			} else if len(held) > 0 {
				merged := &message.ChildEvent{Body: &message.Print{Segments: []message.PrintSegment{{Stream: message.StreamStdout, Text: strings.Join(held, "")}}}}
				held = nil
				out = []*message.ChildEvent{merged, ev}
			}
		case mut.event != nil:
			out = mut.event(ev)
		}
		for _, e := range out {
			b, err := cd.AppendEvent(nil, e)
			if err != nil {
				fmt.Fprintln(os.Stderr, "mutant: re-encoding:", err)
				b = body
			}
			if w.WriteFrame(b) != nil {
				break
			}
		}
	}
	_ = cmd.Wait()
	code := 1
	if st := cmd.ProcessState; st != nil && st.ExitCode() >= 0 {
		code = st.ExitCode()
	}
	if mut.exit != nil {
		code = mut.exit(code)
	}
	return code
}

// escapeeMain is a worker (CONFORM_MUTANT=escapee) that never answers and
// leaves a process holding its stdout in a session of its own, out of
// reach of a kill of the worker's process group; the process's pid goes
// to $CONFORM_ESCAPEE_PIDFILE.
func escapeeMain() int {
	c := exec.Command("/bin/sleep", "300")
	c.Stdout = os.Stdout
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		return 2
	}
	if os.WriteFile(os.Getenv("CONFORM_ESCAPEE_PIDFILE"), []byte(strconv.Itoa(c.Process.Pid)), 0o644) != nil {
		return 2
	}
	select {}
}

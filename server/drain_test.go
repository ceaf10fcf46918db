package server

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
)

// shutdownDump sends req and expects the drain's answer: a ShutdownDump
// with a signed dump, then close code 1001.
func expectShutdownDump(t *testing.T, cl *rawClient, req message.Request) []byte {
	t.Helper()
	turn := do(t, cl, req)
	sd, ok := turn.Event.Body.(*message.ShutdownDump)
	if !ok || sd.Dump == nil {
		t.Fatalf("during the drain %s was answered %s, want a ShutdownDump with a dump", req.RequestKind(), describe(turn.Event))
	}
	if code := closeCode(t, cl); code != CloseDrain {
		t.Fatalf("close code %d after ShutdownDump, want %d", code, CloseDrain)
	}
	return *sd.Dump
}

func TestDrainHandsOutSignedDumpsThatResumeElsewhere(t *testing.T) {
	a := startServer(t, func(c *Config) { c.DrainGrace = 500 * time.Millisecond })
	b := startServer(t, nil)

	idle := dialConfigured(t, a.URL, 4)
	repr(t, idle, "x = 41")
	susp := dialConfigured(t, a.URL, 2)
	ev := do(t, susp, &message.Feed{Code: "from pathlib import Path\ny = 1\n[Path('/a').exists(), y]"}).Event
	oc, ok := ev.Body.(*message.OsCall)
	if !ok {
		t.Fatalf("want an OsCall, got %s", describe(ev))
	}
	silent := dialConfigured(t, a.URL, 4)
	repr(t, silent, "z = 'kept'")

	shutdown := make(chan error, 1)
	go func() { shutdown <- a.Shutdown(context.Background()) }()
	waitReady(t, a, http.StatusServiceUnavailable)
	if de := dialErr(t, a.URL, nil); de.StatusCode != http.StatusServiceUnavailable || de.RetryAfter <= 0 {
		t.Fatalf("upgrade while draining: %d retry %v", de.StatusCode, de.RetryAfter)
	}

	// The idle session: its next request did not run; resume it on b.
	dump := expectShutdownDump(t, idle, &message.Feed{Code: "x + 1"})
	moved := dialConfigured(t, b.URL, 4)
	if got := describe(do(t, moved, &message.Load{State: dump}).Event); got != "Ok" {
		t.Fatalf("Load on b: %s", got)
	}
	if got := repr(t, moved, "x + 1"); got != "42" {
		t.Fatalf("re-run on b: %s", got)
	}

	// The suspended session: the restored worker re-announces the call.
	dump = expectShutdownDump(t, susp, resumeBool(oc.CallID, true))
	moved = dialConfigured(t, b.URL, 2)
	ev = do(t, moved, &message.Load{State: dump}).Event
	again, ok := ev.Body.(*message.OsCall)
	if !ok || again.CallID != oc.CallID || again.Path != "/a" {
		t.Fatalf("Load of a suspended dump answered %s", describe(ev))
	}
	if got := describe(do(t, moved, resumeBool(oc.CallID, true)).Event); got != "[True, 1]" {
		t.Fatalf("resumed on b: %s", got)
	}

	// The silent session is handed its dump at the drain grace, before
	// the close (as its next request would have been: a client reads it
	// as that request's answer), and resumes on b. Before, it was closed
	// with 1001 alone and its state was lost.
	b4, err := silent.Conn.ReadFrame()
	if err != nil {
		t.Fatalf("silent session at the drain grace: %v, want a ShutdownDump", err)
	}
	sd, ok := decodeEvent(t, 4, b4).Body.(*message.ShutdownDump)
	if !ok || sd.Dump == nil {
		t.Fatalf("silent session at the drain grace got %s, want a ShutdownDump with a dump", describe(decodeEvent(t, 4, b4)))
	}
	if code := closeCode(t, silent); code != CloseDrain {
		t.Fatalf("silent session closed with %d", code)
	}
	moved = dialConfigured(t, b.URL, 4)
	if got := describe(do(t, moved, &message.Load{State: *sd.Dump}).Event); got != "Ok" {
		t.Fatalf("Load of the silent session's dump on b: %s", got)
	}
	if got := repr(t, moved, "z"); got != "'kept'" {
		t.Fatalf("the silent session on b: z is %s", got)
	}
	// Then Shutdown returns.
	select {
	case err := <-shutdown:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown did not return")
	}
}

func TestShutdownReturnsWhenTheLastSessionEnds(t *testing.T) {
	a := startServer(t, func(c *Config) { c.DrainGrace = time.Hour })
	c := dialConfigured(t, a.URL, 4)
	shutdown := make(chan error, 1)
	go func() { shutdown <- a.Shutdown(context.Background()) }()
	waitReady(t, a, http.StatusServiceUnavailable)
	expectShutdownDump(t, c, &message.Feed{Code: "1"})
	select {
	case <-shutdown:
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown waited for the grace although no session is left")
	}
}

func TestShutdownContextEndsAtOnce(t *testing.T) {
	a := startServer(t, func(c *Config) { c.DrainGrace = time.Hour })
	c := dialConfigured(t, a.URL, 4)
	ctx, cancel := context.WithCancel(context.Background())
	shutdown := make(chan error, 1)
	go func() { shutdown <- a.Shutdown(ctx) }()
	waitReady(t, a, http.StatusServiceUnavailable)
	cancel() // the second SIGTERM
	if code := closeCode(t, c); code != CloseDrain {
		t.Fatalf("close code %d", code)
	}
	// Cut short, as http.Server.Shutdown says: ctx's error (it was nil).
	if err := <-shutdown; !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown cut short by its ctx: %v", err)
	}
}

func waitReady(t *testing.T, ts *testServer, want int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if code, _ := get(t, ts.HTTP+"/readyz"); code == want {
			return
		}
	}
	t.Fatalf("/readyz never answered %d", want)
}

func TestDrainLetsARunningTurnFinish(t *testing.T) {
	a := startServer(t, func(c *Config) { c.DrainGrace = time.Hour })
	c := dialConfigured(t, a.URL, 4)
	if err := c.Conn.WriteFrame(encodeRequest(t, 4, &message.Feed{Code: "n = 0\nfor i in range(3000000):\n    n += i\nn"})); err != nil {
		t.Fatal(err)
	}
	// The feed has passed the gate (it counts a frame once it decided).
	waitMetric(t, a, `monty_server_frames_total{direction="in"} 2`)
	a.Drain()
	ev, err := c.Conn.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	turn := decodeEvent(t, 4, ev)
	if got := describe(turn); got != "4499998500000" {
		t.Fatalf("the running turn answered %s", got)
	}
	expectShutdownDump(t, c, &message.Feed{Code: "n"})
}

// A dump that does not fit the frame cap once signed: Dump answers an
// Error and the session lives on; at a drain the client still learns that
// its request did not run (a ShutdownDump without a dump), rather than
// seeing a bare disconnect.
func TestDumpOverTheFrameCap(t *testing.T) {
	a := startServer(t, func(c *Config) {
		c.MaxFrameLen = 64 << 10
		c.DrainGrace = time.Hour
	})
	c := dialConfigured(t, a.URL, 4)
	repr(t, c, "x = 'a' * 70000\nNone")
	got := describe(do(t, c, &message.Dump{}).Event)
	wantPrefix(t, got, "Error RuntimeError: dump of ")
	if got := repr(t, c, "len(x)"); got != "70000" {
		t.Fatalf("after the refused Dump: %s", got)
	}
	shutdown := make(chan error, 1)
	go func() { shutdown <- a.Shutdown(context.Background()) }()
	waitReady(t, a, http.StatusServiceUnavailable)
	turn := do(t, c, &message.Feed{Code: "len(x)"})
	sd, ok := turn.Event.Body.(*message.ShutdownDump)
	if !ok || sd.Dump != nil {
		t.Fatalf("during the drain the Feed was answered %s, want a ShutdownDump without a dump", describe(turn.Event))
	}
	if code := closeCode(t, c); code != CloseDrain {
		t.Fatalf("close code %d after ShutdownDump, want %d", code, CloseDrain)
	}
	// Five events went out (Ok, Complete, Error, Complete, ShutdownDump);
	// the ShutdownDump that did not fit was never sent, so not counted.
	if err := <-shutdown; err != nil {
		t.Fatal(err)
	}
	if got := framesOut(t, a); got != 5 {
		t.Fatalf("monty_server_frames_total{direction=\"out\"} = %v, want 5", got)
	}
}

// framesOut reads monty_server_frames_total{direction="out"} from the
// server's registry (its HTTP endpoint may be closed).
func framesOut(t *testing.T, ts *testServer) float64 {
	t.Helper()
	mfs, err := ts.m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "monty_server_frames_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "direction" && l.GetValue() == "out" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatal("no monty_server_frames_total{direction=\"out\"}")
	return 0
}

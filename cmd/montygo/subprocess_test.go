//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	codecv4 "github.com/gomonty/monty/codec/codecv4"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// relayBinary returns montygo with the real worker beside it, where
// `montygo subprocess` finds it with no flag and no environment.
func relayBinary(t *testing.T) string {
	t.Helper()
	real := testenv.Worker(t)
	bin := montygo(t)
	beside := filepath.Join(filepath.Dir(bin), "monty")
	if _, err := os.Lstat(beside); err != nil {
		if err := os.Symlink(real, beside); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
	return bin
}

// A gomonty parent drives `montygo subprocess` like the real worker, and
// --record taps every frame, which decode --record renders.
func TestSubprocessRecordAndDecode(t *testing.T) {
	bin := relayBinary(t)
	rec := filepath.Join(t.TempDir(), "tap.rec")
	var out strings.Builder
	s, err := session.Start(context.Background(), session.Launch{Launcher: session.ProcessLauncher{
		Worker: worker.Config{Binary: bin, Args: []string{"subprocess", "--record", rec}, Logger: quiet},
	}}, session.Config{Logger: quiet, Print: session.Writers(&out, nil)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(context.Background(), "print('hi')\nf(20) + 1",
		session.WithFunctions(session.NewRegistry().MustRegister("f", func(i int) int { return 2 * i })))
	if err != nil || r.Repr() != "41" || out.String() != "hi\n" {
		t.Fatalf("got %v %v %q", r, err, out.String())
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "", "decode", "--record", rec)
	if code != 0 {
		t.Fatalf("decode: %d %s", code, stderr)
	}
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		var k any
		if m, ok := doc["request"].(map[string]any); ok {
			k = m["kind"]
		} else if m, ok := doc["event"].(map[string]any); ok {
			k = m["kind"]
		}
		kinds = append(kinds, doc["dir"].(string)[:6]+" "+k.(string))
	}
	want := []string{"parent configure", "child- ok", "parent feed", "child- print", "child- function_call",
		"parent resume_call", "child- complete", "parent shutdown", "child- ok"}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Fatalf("recorded %q", kinds)
	}
}

// spawn starts `montygo subprocess` as an upstream parent does: an empty
// environment and no other argument.
func spawn(t *testing.T) (*exec.Cmd, io.WriteCloser, io.ReadCloser) {
	t.Helper()
	cmd, in, out, _ := spawnStderr(t)
	return cmd, in, out
}

// spawnStderr is spawn that also collects the child's stderr, complete
// once the process has been waited for.
func spawnStderr(t *testing.T) (*exec.Cmd, io.WriteCloser, io.ReadCloser, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(relayBinary(t), "subprocess")
	cmd.Env = []string{}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, in, out, &stderr
}

func sendReq(t *testing.T, w io.Writer, r message.Request) {
	t.Helper()
	b, err := codecv4.Codec.AppendRequest(nil, &message.ParentRequest{Body: r})
	if err != nil {
		t.Fatal(err)
	}
	if err := frame.NewWriter(w, 0).WriteFrame(b); err != nil {
		t.Fatal(err)
	}
}

func readEvent(t *testing.T, r io.Reader) *message.ChildEvent {
	t.Helper()
	b, err := frame.NewReader(r, 0).ReadFrame()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	ev, err := codecv4.DecodeEvent(b, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func exitCode(t *testing.T, cmd *exec.Cmd) (int, syscall.Signal) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("montygo subprocess did not exit")
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return -1, ws.Signal()
	}
	return ws.ExitStatus(), 0
}

// The process-level exits of a hostile or vanished parent.
func TestSubprocessExits(t *testing.T) {
	t.Run("version mismatch: 4", func(t *testing.T) {
		cmd, in, out := spawn(t)
		sendReq(t, in, &message.Configure{})
		ev := readEvent(t, out)
		if f, ok := ev.Body.(*message.FatalError); !ok || !strings.HasPrefix(f.Message, "unsupported protocol version 0 (server supports protocol versions 2 to 4") {
			t.Fatalf("got %+v", ev.Body)
		}
		if code, _ := exitCode(t, cmd); code != 4 {
			t.Fatalf("exit %d", code)
		}
	})
	t.Run("truncated frame: 76", func(t *testing.T) {
		cmd, in, out, stderr := spawnStderr(t)
		in.Write([]byte{9, 0, 0, 0, 1})
		in.Close()
		if f, ok := readEvent(t, out).Body.(*message.FatalError); !ok || f.Message != "malformed request frame: stream ended mid-frame" {
			t.Fatal("no FatalError")
		}
		if code, _ := exitCode(t, cmd); code != 76 {
			t.Fatalf("exit %d", code)
		}
		// The native worker's stderr line (behaviour §14), checked
		// against monty 0.0.23.
		if got, want := stderr.String(), "monty subprocess fatal error: malformed request frame: stream ended mid-frame\n"; got != want {
			t.Fatalf("stderr %q, want %q", got, want)
		}
	})
	t.Run("broken stdout: 3", func(t *testing.T) {
		cmd, in, out := spawn(t)
		out.Close()
		sendReq(t, in, &message.Configure{ProtocolVersion: 4})
		if code, sig := exitCode(t, cmd); code != 3 {
			t.Fatalf("exit %d signal %v", code, sig)
		}
	})
	// Sandbox code printing forever to a parent that went away is stopped
	// (the inner worker with it), as the native worker's failed print ends
	// its turn: exit 3, not a relay running on with its output dropped.
	t.Run("broken stdout mid-turn: 3", func(t *testing.T) {
		cmd, in, out := spawn(t)
		sendReq(t, in, &message.Configure{ProtocolVersion: 4})
		readEvent(t, out)
		out.Close()
		sendReq(t, in, &message.Feed{Code: "while True:\n    print('again')"})
		if code, sig := exitCode(t, cmd); code != 3 {
			t.Fatalf("exit %d signal %v", code, sig)
		}
	})
	t.Run("clean end of stream: 0", func(t *testing.T) {
		cmd, in, _ := spawn(t)
		in.Close()
		if code, _ := exitCode(t, cmd); code != 0 {
			t.Fatalf("exit %d", code)
		}
	})
	t.Run("inner worker killed: the same signal", func(t *testing.T) {
		cmd, in, out := spawn(t)
		sendReq(t, in, &message.Configure{ProtocolVersion: 4})
		readEvent(t, out)
		sendReq(t, in, &message.Feed{Code: "f()"})
		if _, ok := readEvent(t, out).Body.(*message.FunctionCall); !ok {
			t.Fatal("no FunctionCall")
		}
		inner := innerPid(t, cmd.Process.Pid)
		syscall.Kill(inner, syscall.SIGKILL)
		sendReq(t, in, &message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultFuture}})
		if _, sig := exitCode(t, cmd); sig != syscall.SIGKILL {
			t.Fatalf("signal %v", sig)
		}
	})
	// The signals the Go runtime turns into a crash dump and exit 2 by
	// default (SIGABRT is how a Rust worker aborts) still end montygo by
	// the same signal, with nothing on stderr.
	for _, want := range []syscall.Signal{syscall.SIGABRT, syscall.SIGILL, syscall.SIGFPE} {
		t.Run("inner worker died by "+want.String()+": the same signal", func(t *testing.T) {
			cmd, in, out, stderr := spawnStderr(t)
			noCore(t, cmd.Process.Pid)
			sendReq(t, in, &message.Configure{ProtocolVersion: 4})
			readEvent(t, out)
			sendReq(t, in, &message.Feed{Code: "f()"})
			if _, ok := readEvent(t, out).Body.(*message.FunctionCall); !ok {
				t.Fatal("no FunctionCall")
			}
			syscall.Kill(innerPid(t, cmd.Process.Pid), want)
			sendReq(t, in, &message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultFuture}})
			if code, sig := exitCode(t, cmd); sig != want {
				t.Fatalf("exit %d signal %v, want signal %v (stderr %.200q)", code, sig, want, stderr.String())
			}
			if stderr.Len() != 0 {
				t.Fatalf("stderr %.300q, want nothing", stderr.String())
			}
		})
	}
}

// SIGTERM ends montygo subprocess by SIGTERM, as it ends the native
// worker, and takes the inner worker with it.
func TestSubprocessSIGTERM(t *testing.T) {
	cmd, in, out := spawn(t)
	sendReq(t, in, &message.Configure{ProtocolVersion: 4})
	readEvent(t, out)
	inner := innerPid(t, cmd.Process.Pid)
	cmd.Process.Signal(syscall.SIGTERM)
	if _, sig := exitCode(t, cmd); sig != syscall.SIGTERM {
		t.Fatalf("signal %v", sig)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(inner) + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("inner worker %d still running", inner)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// innerPid finds the relay's inner worker (its only child).
func innerPid(t *testing.T, pid int) int {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if f := strings.Fields(s[i+1:]); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			n, err := strconv.Atoi(e.Name())
			if err == nil {
				return n
			}
		}
	}
	t.Fatal("no inner worker")
	return 0
}

// The inner worker is found without flags or environment, and never as
// montygo itself.
func TestInnerWorkerResolution(t *testing.T) {
	real := testenv.Worker(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if p, err := innerWorker(real); err != nil || p != real {
		t.Fatalf("--worker: %q %v", p, err)
	}
	if _, err := innerWorker(self); err == nil {
		t.Fatal("--worker naming montygo itself was accepted")
	}
	t.Setenv(worker.EnvBinary, self)
	p, err := innerWorker("")
	if err != nil || p == self {
		t.Fatalf("$MONTY_BIN naming montygo: %q %v", p, err)
	}
}

// --spin 0 never spins, for the inner worker either: a zero SpinWait would
// spin on one CPU.
func TestInnerSpin(t *testing.T) {
	for _, c := range []struct{ spin, want time.Duration }{
		{0, -1},
		{-time.Second, -1},
		{time.Nanosecond, time.Nanosecond},
		{50 * time.Microsecond, 50 * time.Microsecond},
	} {
		if got := innerSpin(c.spin); got != c.want {
			t.Errorf("innerSpin(%v) = %v, want %v", c.spin, got, c.want)
		}
	}
}

// The inner worker's stderr reaches montygo subprocess's stderr byte for
// byte, as the real worker's would reach the parent: however many lines
// (no bound on logging applies to it), a line longer than a log record
// (it was cut into 4 KiB lines), and a last line without a newline (one
// was added).
func TestSubprocessRelaysInnerStderrVerbatim(t *testing.T) {
	bin := relayBinary(t)
	long := strings.Repeat("x", 10000)
	script := filepath.Join(t.TempDir(), "noisy")
	body := "#!/bin/sh\ni=0; while [ $i -lt 1000 ]; do echo \"error $i\" >&2; i=$((i+1)); done\n" +
		"printf '%s\\n' " + long + " >&2\nprintf 'no newline' >&2\nexec " + testenv.Worker(t) + " \"$@\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := range 1000 {
		want.WriteString("error " + strconv.Itoa(i) + "\n")
	}
	want.WriteString(long + "\nno newline")

	cmd := exec.Command(bin, "subprocess", "--worker", script, "--inner-protocol", "2")
	cmd.Env = []string{}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sendReq(t, in, &message.Configure{ProtocolVersion: 4})
	if ev := readEvent(t, out); ev.Body == nil {
		t.Fatal("no answer to Configure")
	} else if _, ok := ev.Body.(*message.Ok); !ok {
		t.Fatalf("Configure: %+v", ev.Body)
	}
	in.Close()
	if code, sig := exitCode(t, cmd); code != 0 {
		t.Fatalf("exit %d signal %v (stderr %.300q)", code, sig, stderr.String())
	}
	if got := stderr.String(); got != want.String() {
		i := 0
		for i < min(len(got), want.Len()) && got[i] == want.String()[i] {
			i++
		}
		t.Fatalf("relayed %d bytes of stderr, want %d; first difference at %d: got %.80q", len(got), want.Len(), i, got[i:])
	}
}

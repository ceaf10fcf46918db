package worker

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/spawn/spawntest"
)

// A worker binary may be a wrapper (a shell script that runs the real
// worker without exec, a launcher that forks): the process that does the
// work, and holds the pipes, is then a grandchild. Kill must stop it too, or
// a read blocked on it never ends (a session's deadline would hang its Run)
// and the grandchild spins on as an orphan.
func TestKillStopsTheWorkersDescendants(t *testing.T) {
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", "sleep 1000 & echo $! >&2; wait"}})
	killWithDescendant(t, p, stderrPid(t, p))
}

// A worker that exits on its own leaves nothing behind in its process
// group: a descendant holding its stdout would otherwise keep a blocked
// read from seeing the end of the stream.
func TestExitStopsTheWorkersDescendants(t *testing.T) {
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", "sleep 1000 & echo $! >&2; read x; exit 3"}})
	grandchild := stderrPid(t, p)
	readErr := make(chan error, 1)
	go func() {
		_, err := p.ReadFrame()
		readErr <- err
	}()
	if err := p.WriteFrame([]byte("go\n")); err != nil { // ends the read
		t.Fatal(err)
	}
	select {
	case err := <-readErr:
		if err != io.EOF && !IsStreamEnd(err) {
			t.Fatalf("read after the exit: %v, want the end of the stream", err)
		}
	case <-time.After(10 * time.Second):
		syscallKill(grandchild)
		t.Fatal("a read blocked on the worker's grandchild did not end after the worker exited")
	}
	if exit, _ := p.Wait(context.Background()); exit.Code != 3 {
		t.Fatalf("exit %v, want status 3", exit)
	}
	waitGone(t, grandchild)
}

// stderrPid waits for the first stderr line of p, a pid.
func stderrPid(t *testing.T, p *Process) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if line, _, ok := strings.Cut(p.Stderr(), "\n"); ok {
			pid, err := strconv.Atoi(line)
			if err != nil {
				t.Fatalf("stderr %q", p.Stderr())
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid on stderr: %q", p.Stderr())
		}
		time.Sleep(time.Millisecond)
	}
}

// waitGone waits until pid has exited (a zombie counts: its reaper is not
// this process), failing after a generous deadline.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if _, rest, ok := strings.Cut(string(b), ") "); ok && strings.HasPrefix(rest, "Z") {
			return
		}
		if time.Now().After(deadline) {
			syscallKill(pid)
			t.Fatalf("descendant %d still running: %s", pid, b)
		}
		time.Sleep(time.Millisecond)
	}
}

func syscallKill(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

// A descendant that leaves the worker's process group (setsid) is not
// reached by the group's SIGKILL. When it still holds one of the worker's
// pipes, a read blocked on the child's stdout would never see the end of
// the stream (a session's deadline or cancellation would hang its Run),
// and a write to its stdin would block once the pipe fills. Kill finds
// such holders by the pipes they hold and kills them too.
func TestKillStopsADescendantThatLeftTheGroupHoldingAPipe(t *testing.T) {
	for name, script := range map[string]string{
		// a blocked read would never end
		"stdout": "setsid sleep 1000 & echo $! >&2; wait",
		// as descriptor 3, the others on /dev/null
		"stdin": "exec 3<&0; setsid sleep 1000 >/dev/null 2>&1 & echo $! >&2; exec >/dev/null 3<&-; wait",
	} {
		t.Run(name, func(t *testing.T) { killEscaped(t, script) })
	}
}

// killEscaped starts script, whose descendant leaves the group and prints
// its pid, and kills the worker (killWithDescendant).
func killEscaped(t *testing.T, script string) {
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", script}})
	escaped := stderrPid(t, p)
	waitLeftGroup(t, escaped, p.Pid())
	killWithDescendant(t, p, escaped)
}

// killWithDescendant kills p while a read of its stdout is blocked, and
// checks that the read ends and p's descendant pid dies.
func killWithDescendant(t *testing.T, p *Process, pid int) {
	t.Helper()
	readErr := make(chan error, 1)
	go func() {
		_, err := p.ReadFrame()
		readErr <- err
	}()
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-readErr:
		if err != io.EOF {
			t.Fatalf("read after Kill: %v, want io.EOF", err)
		}
	case <-time.After(10 * time.Second):
		syscallKill(pid)
		t.Fatal("a read blocked on the worker's descendant did not end after Kill")
	}
	waitGone(t, pid)
}

// waitLeftGroup waits until pid is in a process group other than pgid's.
func waitLeftGroup(t *testing.T, pid, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if g, err := syscall.Getpgid(pid); err == nil && g != pgid {
			return
		}
		if time.Now().After(deadline) {
			syscallKill(pid)
			t.Fatalf("descendant %d did not leave the group %d", pid, pgid)
		}
		time.Sleep(time.Millisecond)
	}
}

// The kernel sends the parent-death signal (Config's SIGKILL, so that a
// worker never outlives its host) when the thread that forked the worker
// exits, not the process; and the Go runtime ends a thread when a
// goroutine locked to it (runtime.LockOSThread) returns still locked. A
// worker started from such a goroutine was killed when the goroutine
// returned, its host alive and its session in use.
func TestWorkerOutlivesTheThreadThatStartedIt(t *testing.T) {
	spawntest.OutlivesStartingThread(t, func() (spawntest.Child, error) {
		p, err := Start(context.Background(), Config{Binary: "/bin/sh", Args: []string{"-c", spawntest.EchoScript}, Logger: quiet})
		if err != nil {
			return spawntest.Child{}, err
		}
		return spawntest.Child{Stdin: p.stdin, Stdout: p.stdout, Close: func() { p.Close(context.Background()) },
			Exit: func() string { return fmt.Sprint(must(p.Wait(context.Background()))) }}, nil
	})
}

func must(e Exit, _ error) Exit { return e }

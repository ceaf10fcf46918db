package worker

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A worker binary may be a wrapper (a shell script that runs the real
// worker without exec, a launcher that forks): the process that does the
// work, and holds the pipes, is then a grandchild. Kill must stop it too, or
// a read blocked on it never ends (a session's deadline would hang its Run)
// and the grandchild spins on as an orphan.
func TestKillStopsTheWorkersDescendants(t *testing.T) {
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", "sleep 1000 & echo $! >&2; wait"}})
	grandchild := stderrPid(t, p)
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
		syscallKill(grandchild)
		t.Fatal("a read blocked on the worker's grandchild did not end after Kill")
	}
	waitGone(t, grandchild)
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

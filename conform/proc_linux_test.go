package conform

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The kernel sends the parent-death signal (childProcAttr's SIGKILL, so
// that a worker under test never outlives the kit) when the thread that
// forked the worker exits, not the process; and the Go runtime ends a
// thread when a goroutine locked to it (runtime.LockOSThread) returns
// still locked. A worker started on such a thread was killed when it
// ended, the kit alive and the rule still using it.
func TestWorkerOutlivesTheThreadThatStartedIt(t *testing.T) {
	type started struct {
		p   *proc
		tid int
		err error
	}
	c := make(chan started, 1)
	var onThreadThatEnds func()
	onThreadThatEnds = func() {
		runtime.LockOSThread()
		if syscall.Gettid() == os.Getpid() {
			// The main thread is never ended: start from another one
			// (this goroutine holds the main thread meanwhile).
			done := make(chan struct{})
			go func() { onThreadThatEnds(); close(done) }()
			<-done
			runtime.UnlockOSThread()
			return
		}
		p, err := startProc(Target{Binary: "/bin/sh", Args: []string{"-c", `read x; echo "$x"; read y`}})
		c <- started{p, syscall.Gettid(), err}
		// and return locked: the thread ends
	}
	go onThreadThatEnds()
	s := <-c
	if s.err != nil {
		t.Fatal(s.err)
	}
	p := s.p
	t.Cleanup(func() { p.Close() })
	// The signal, if any, is sent before the thread's entry goes.
	task := "/proc/self/task/" + strconv.Itoa(s.tid)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(task); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the locked thread did not end")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := p.stdin.Write([]byte("alive\n")); err != nil {
		t.Fatalf("write after the starting thread ended: %v", err)
	}
	b := make([]byte, 16)
	n, err := p.stdout.Read(b)
	if string(b[:n]) != "alive\n" {
		ex, _ := p.wait(context.Background())
		t.Fatalf("after the starting thread ended the worker answered %q, %v (exit %v)", b[:n], err, ex)
	}
}

// The kit signals a worker's process group by the worker's pid, which
// names the group only while the worker is unreaped (a zombie keeps its
// pid, and so its group's id, reserved). Close killed the group after the
// worker had been reaped, so with pid reuse it could signal an unrelated
// group; so could the kill of a rule's timeout after the worker's exit.
func TestGroupIsSignalledOnlyWhileTheWorkerIsUnreaped(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []string // for each group kill, what the group's leader was then
	)
	orig := killGroup
	t.Cleanup(func() { killGroup = orig })
	killGroup = func(pgid int) {
		mu.Lock()
		calls = append(calls, leaderState(pgid))
		mu.Unlock()
		orig(pgid)
	}
	check := func(t *testing.T, script string, end func(p *proc)) {
		mu.Lock()
		calls = nil
		mu.Unlock()
		p, err := startProc(Target{Binary: "/bin/sh", Args: []string{"-c", script}})
		if err != nil {
			t.Fatal(err)
		}
		end(p)
		mu.Lock()
		defer mu.Unlock()
		if len(calls) == 0 {
			t.Error("the group was never signalled: what the worker left in it lives on")
		}
		for _, c := range calls {
			if c != "unreaped child" {
				t.Errorf("the group was signalled when its leader was %s", c)
			}
		}
	}
	t.Run("exited-then-closed", func(t *testing.T) {
		check(t, "exit 0", func(p *proc) {
			<-p.exited
			p.Close()
		})
	})
	t.Run("exited-then-killed", func(t *testing.T) {
		check(t, "exit 0", func(p *proc) {
			<-p.exited
			p.kill()
			p.Close()
		})
	})
	t.Run("killed-live", func(t *testing.T) {
		check(t, "exec sleep 1000", func(p *proc) {
			p.kill()
			p.Close()
			if ex := p.exit; ex.Signal != syscall.SIGKILL {
				t.Errorf("exit %v, want SIGKILL", ex)
			}
		})
	})
}

// leaderState says what process pid is to this one: an "unreaped child"
// (running or a zombie), "gone", or "another process" (its pid reused).
func leaderState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "gone"
	}
	// pid (comm) state ppid ...
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "unreadable"
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) {
		return "another process"
	}
	return "unreaped child"
}

//go:build unix

package conform

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/gomonty/monty/internal/spawn"
	"github.com/gomonty/monty/internal/spawn/spawntest"
)

// The kernel sends the parent-death signal (childProcAttr's SIGKILL, so
// that a worker under test never outlives the kit) when the thread that
// forked the worker exits, not the process; and the Go runtime ends a
// thread when a goroutine locked to it (runtime.LockOSThread) returns
// still locked. A worker started on such a thread was killed when it
// ended, the kit alive and the rule still using it.
func TestWorkerOutlivesTheThreadThatStartedIt(t *testing.T) {
	spawntest.OutlivesStartingThread(t, func() (spawntest.Child, error) {
		p, err := startProc(Target{Binary: "/bin/sh", Args: []string{"-c", spawntest.EchoScript}})
		if err != nil {
			return spawntest.Child{}, err
		}
		return spawntest.Child{Stdin: p.stdin, Stdout: p.stdout, Close: func() { p.Close() },
			Exit: func() string { ex, _ := p.wait(context.Background()); return fmt.Sprint(ex) }}, nil
	})
}

// The kit signals a worker's process group by the worker's pid, which
// names the group only while the worker is unreaped (a zombie keeps its
// pid, and so its group's id, reserved). Close killed the group after the
// worker had been reaped, so with pid reuse it could signal an unrelated
// group; so could the kill of a rule's timeout after the worker's exit.
func TestGroupIsSignalledOnlyWhileTheWorkerIsUnreaped(t *testing.T) {
	groupKills := recordGroupKills(t)
	check := func(t *testing.T, script string, end func(p *proc)) {
		groupKills() // forget the earlier cases' kills
		p, err := startProc(Target{Binary: "/bin/sh", Args: []string{"-c", script}})
		if err != nil {
			t.Fatal(err)
		}
		end(p)
		requireKilledUnreaped(t, groupKills(), "worker")
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

// recordGroupKills has every signal to a group record, for each call, what the
// group's leader was to this process then (leaderState), for the rest of
// the test. The function it returns hands over the records made since its
// last call.
func recordGroupKills(t *testing.T) func() []string {
	var (
		mu    sync.Mutex
		calls []string
	)
	t.Cleanup(spawn.ObserveGroupKills(func(pgid int) {
		mu.Lock()
		calls = append(calls, leaderState(pgid))
		mu.Unlock()
	}))
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		c := calls
		calls = nil
		return c
	}
}

// requireKilledUnreaped requires the recorded group kills to be at least
// one, each while the group's leader (the worker or the parent: who) was
// an unreaped child.
func requireKilledUnreaped(t *testing.T, calls []string, who string) {
	t.Helper()
	if len(calls) == 0 {
		t.Errorf("the %s's group was never signalled: what the %s left in it lives on", who, who)
	}
	for _, c := range calls {
		if c != "unreaped child" {
			t.Errorf("the %s's group was signalled when the %s was %s", who, who, c)
		}
	}
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

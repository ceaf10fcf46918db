package conform

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The parent judge signals the parent's process group by the parent's
// pid, which names the group only while the parent is unreaped. It killed
// the group after the checks, long after the parent had been reaped, so
// with pid reuse it could signal an unrelated group.
func TestParentGroupIsSignalledOnlyWhileTheParentIsUnreaped(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []string
	)
	orig := killGroup
	t.Cleanup(func() { killGroup = orig })
	killGroup = func(pgid int) {
		mu.Lock()
		calls = append(calls, leaderState(pgid))
		mu.Unlock()
		orig(pgid)
	}
	for name, c := range map[string]struct {
		command []string
		timeout time.Duration
	}{
		"exited":    {[]string{"/bin/sh", "-c", "exit 0"}, 30 * time.Second},
		"timed-out": {[]string{"/bin/sh", "-c", "exec sleep 1000"}, 200 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			mu.Lock()
			calls = nil
			mu.Unlock()
			rep, err := RunParent(context.Background(), c.command, ParentOptions{Match: regexp.MustCompile(`^normal$`), Timeout: c.timeout})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Rules) != 1 || rep.Rules[0].Status != Fail {
				t.Fatalf("report %+v, want normal failed (the parent never spawns the child)", rep.Rules)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(calls) == 0 {
				t.Error("the parent's group was never signalled: what the parent left in it lives on")
			}
			for _, c := range calls {
				if c != "unreaped child" {
					t.Errorf("the parent's group was signalled when the parent was %s", c)
				}
			}
		})
	}
}

// The reaping check took every pid a scripted child had recorded for a
// child still running, and killed it: a pid recorded by a child that has
// since exited may name an unrelated process by then, which was reported
// as an orphan of the parent and killed.
func TestReapingCheckLeavesARecycledPidAlone(t *testing.T) {
	other := exec.Command("/bin/sleep", "1000")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	// The pid recorded by a scripted child of another control file (the
	// child exited, its pid reused by other).
	log := []string{"spawn " + strconv.Itoa(other.Process.Pid) + " subprocess"}
	if orphans := orphanPids(log, "/tmp/no-such-dir/control"); len(orphans) != 0 {
		t.Errorf("orphans %v, want none: the pid is not a scripted child of this scenario", orphans)
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil || !running(other.Process.Pid) {
		t.Errorf("the unrelated process was killed")
	}
}

//go:build unix

package spawn_test

import (
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/gomonty/monty/internal/spawn"
)

// A group is signalled by Kill until its leader's exit is recorded, at
// that record when the leader is known unreaped, and never after it.
func TestGroupIsSignalledOnlyUntilTheExitIsRecorded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("groups are signalled on Linux only")
	}
	var (
		mu    sync.Mutex
		kills []int
	)
	defer spawn.ObserveGroupKills(func(pgid int) {
		mu.Lock()
		kills = append(kills, pgid)
		mu.Unlock()
	})()
	cmd := exec.Command("/bin/sh", "-c", "exec sleep 1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	g := spawn.NewGroup(pid)
	g.Kill() // the group's kill ends the leader
	if !spawn.AwaitExit(pid) {
		t.Fatal("the exit was not seen")
	}
	g.Exited(true)
	g.Kill()
	g.Exited(true)
	if err := cmd.Wait(); cmd.ProcessState == nil || cmd.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("Wait: %v, %v; want killed by SIGKILL", err, cmd.ProcessState)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []int{pid, pid}; !slices.Equal(kills, want) {
		t.Errorf("group kills %v, want %v (Kill, then Exited while unreaped; none after)", kills, want)
	}
}

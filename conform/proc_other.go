//go:build unix && !linux

package conform

import "syscall"

// childProcAttr puts a worker under test in its own process group (no
// parent-death signal off Linux).
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup is not used off Linux: awaitExit never reports an unreaped
// exit, so the group is never known to be named by the worker's pid.
var killGroup = func(int) {}

// awaitExit returns at once off Linux, knowing nothing: there is no way
// here to wait for the exit without reaping.
func awaitExit(int) bool { return false }

// pinnedChild is a scripted child by its pid: without /proc and pidfds,
// neither its identity nor the pid's reuse can be checked here.
type pinnedChild struct{ pid int }

// pinChild returns a handle on process pid.
func pinChild(pid int, _ string) (pinnedChild, bool) { return pinnedChild{pid}, true }

func (c pinnedChild) running() bool { return running(c.pid) }
func (c pinnedChild) kill()         { _ = syscall.Kill(c.pid, syscall.SIGKILL) }
func (c pinnedChild) release()      {}

// kitPeakRSS is 0 off Linux: a child's reported peak is its own.
func kitPeakRSS() int64 { return 0 }

// sampleHWM is not used off Linux (kitPeakRSS never exceeds a bound).
func sampleHWM(int, <-chan struct{}) int64 { return 0 }

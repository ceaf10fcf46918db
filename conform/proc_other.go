//go:build unix && !linux

package conform

import "syscall"

// childProcAttr puts a worker under test in its own process group (no
// parent-death signal off Linux).
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// pinnedChild is a scripted child by its pid: without /proc and pidfds,
// neither its identity nor the pid's reuse can be checked here.
type pinnedChild struct{ pid int }

// pinChild returns a handle on process pid.
func pinChild(pid int, _ ...string) (pinnedChild, bool) { return pinnedChild{pid}, true }

// inFlight finds no process off Linux (no /proc to read arguments from):
// only the token and the control file tell.
func inFlight(...string) []int { return nil }

// Running reports whether the child is running.
func (c pinnedChild) Running() bool { return running(c.pid) }

// Kill sends the child SIGKILL.
func (c pinnedChild) Kill() error { return syscall.Kill(c.pid, syscall.SIGKILL) }

// Release has nothing to release.
func (c pinnedChild) Release() {}

// kitPeakRSS is 0 off Linux: a child's reported peak is its own.
func kitPeakRSS() int64 { return 0 }

// sampleHWM is not used off Linux (kitPeakRSS never exceeds a bound).
func sampleHWM(int, <-chan struct{}) int64 { return 0 }

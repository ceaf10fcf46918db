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

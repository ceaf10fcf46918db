//go:build unix && !linux

package conform

import "syscall"

// childProcAttr puts a worker under test in its own process group (no
// parent-death signal off Linux: the kit's own teardown kills the group).
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

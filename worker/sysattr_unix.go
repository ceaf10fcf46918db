//go:build unix && !linux

package worker

import "syscall"

// sysProcAttr puts the child in its own process group; no pidfd is asked
// for, so *pidfd stays -1.
func sysProcAttr(*int) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

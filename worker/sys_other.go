//go:build unix && !linux

package worker

import (
	"os"
	"syscall"
)

// blockingPipe falls back to os.Pipe where pipe2 is unavailable; those
// ends use the poller.
func blockingPipe() (r, w *os.File, err error) { return os.Pipe() }

// sysProcAttr puts the child in its own process group.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// pipeReadable is not implemented off Linux; read-ahead bytes are still
// detected by Pending.
func pipeReadable(*os.File) bool { return false }

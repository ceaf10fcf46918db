//go:build !linux

package worker

import (
	"os"
	"time"
)

// blockingPipe falls back to os.Pipe where pipe2 is unavailable; those
// ends use the poller.
func blockingPipe() (r, w *os.File, err error) { return os.Pipe() }

// growPipe leaves the pipe as it is off Linux.
func growPipe(*os.File) bool { return false }

// shrinkPipes has nothing to give back off Linux.
func shrinkPipes(int) {}

// stderrPipe is os.Pipe off Linux.
func stderrPipe() (r, w *os.File, err error) { return os.Pipe() }

// awaitExit returns at once off Linux, knowing nothing: the reaper blocks
// in wait instead.
func awaitExit(pidfd, pid int) bool { return false }

// pipeInode is not used off Linux.
func pipeInode(*os.File) uint64 { return 0 }

// stillHeld reports false off Linux: killStrays is Linux only.
func stillHeld(*os.File) bool { return false }

// killStrays does nothing off Linux.
func killStrays([3]uint64) {}

// firstRead reads the child's stdout; off Linux it adds nothing (spin,
// Config.SpinWait, is ignored).
type firstRead struct {
	*os.File
	spin time.Duration
	sole bool
}

// Pending is not implemented off Linux (it reports false); read-ahead
// bytes are still detected by the Stream's Pending.
func (r *firstRead) Pending() bool { return false }

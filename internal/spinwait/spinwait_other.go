//go:build !linux

package spinwait

import (
	"syscall"
	"time"
)

// readable does not spin off Linux: the caller waits the ordinary way.
func readable(uintptr, time.Duration) bool { return false }

// read does not spin off Linux: the caller reads the ordinary way.
func read(uintptr, []byte, time.Duration) (int, syscall.Errno, bool) { return 0, 0, false }

func write(uintptr, []byte) (int, syscall.Errno, bool) { return 0, 0, false }

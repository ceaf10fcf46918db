//go:build !linux

package spinwait

import "time"

// readable does not spin off Linux: the caller waits the ordinary way.
func readable(uintptr, time.Duration) bool { return false }

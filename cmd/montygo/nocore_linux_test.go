//go:build unix

package main

import (
	"testing"

	"golang.org/x/sys/unix"
)

// noCore keeps a process (and the workers it starts later) from writing
// core files when it dies by a signal.
func noCore(t *testing.T, pid int) {
	t.Helper()
	if err := unix.Prlimit(pid, unix.RLIMIT_CORE, &unix.Rlimit{}, nil); err != nil {
		t.Skipf("cannot limit core files: %v", err)
	}
}

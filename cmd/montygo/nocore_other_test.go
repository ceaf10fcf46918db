//go:build unix && !linux

package main

import "testing"

// noCore skips: another process's core limit is set with prlimit(2),
// which only Linux has.
func noCore(t *testing.T, _ int) {
	t.Helper()
	t.Skip("cannot limit another process's core files here")
}

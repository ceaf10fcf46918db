// Package spawntest checks, for the packages that fork through
// internal/spawn, that a child outlives the thread that started it.
//
// The kernel sends a child its parent-death signal when the thread that
// forked it exits, not the process, and the Go runtime ends a thread when
// a goroutine locked to it (runtime.LockOSThread) returns still locked. A
// child forked on such a thread was killed when the goroutine returned,
// its parent alive and still using it.
package spawntest

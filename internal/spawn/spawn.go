// Package spawn forks child processes that have a parent-death signal.
//
// The kernel sends a child its parent-death signal (SysProcAttr.Pdeathsig)
// when the thread that forked it exits, not the process, and the Go
// runtime ends a thread when a goroutine locked to it
// (runtime.LockOSThread) returns still locked. Any thread may be that one:
// a pooled thread that forked a child may later run a goroutine that locks
// it and returns, and a host doing that (to change a thread's namespaces,
// say) would see its children killed. So [Start] forks on one spawner
// goroutine's thread, which it keeps locked, and so alive, while any child
// it forked is unreaped; the goroutine ends with the last of them (each
// reaped child is reported by [Done]). Off Linux there is no parent-death
// signal and Start runs the fork where it is called.
//
// It also holds what both spawners of process groups (package worker and
// the conformance kit) need to signal a child safely: [AwaitExit] waits
// for a child's exit without reaping it, a [Group] is signalled only while
// its leader's pid still names it, and a [Pinned] process (Linux) is held
// by a pidfd, so a recycled pid is never signalled.
package spawn

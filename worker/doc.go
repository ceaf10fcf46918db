// Package worker runs one `monty subprocess` child and classifies its
// death.
//
// [Start] resolves the worker binary (see [ResolveBinary]), spawns it with an
// empty environment and connects its stdin and stdout through blocking
// pipes: frames are read and written with plain read/write system calls on
// the calling goroutine, without Go's network poller, which saves a park
// and wake per round trip. The price is that a blocked read cannot be
// interrupted by a deadline; it is unblocked by the child exiting, which is
// why every interruption in this module ends in [Process.Kill] or the kill
// ladder of [Process.Close]. On Linux both reach the child's whole process
// group, so a worker binary that is a wrapper (a script running the worker
// without exec) cannot leave the pipes held by a grandchild.
//
// On Linux the kernel kills the child when this process dies (its
// parent-death signal). The kernel sends that signal when the thread that
// forked the child exits, and the Go runtime ends a thread whose locked
// goroutine (runtime.LockOSThread) returns without unlocking it; so every
// child is forked on one spawner thread, kept locked while any child it
// forked is unreaped, and a host's locked goroutines cannot kill workers.
// The same choice means per-thread state of the goroutine that starts a
// worker does not reach it: a network or mount namespace entered with
// setns on a locked thread, say. To start workers in another namespace,
// make [Config.Binary] a wrapper that enters it (nsenter, unshare, ip
// netns exec) and put the worker's path and its arguments in [Config.Args].
//
// A descendant that leaves the group (setsid, setpgid) is out of the
// group's reach. Once the child has exited and its group has been killed,
// if one of the three pipes is still open at the child's end, the reaper
// kills every process holding one of them, found through /proc/<pid>/fd,
// so an escaped descendant cannot keep a read or a write blocked either.
// What no unprivileged parent can reach stays out: an escaped descendant
// that closed the pipes (a daemon, which outlives the worker but blocks
// nothing) and one whose descriptors this process may not read (made
// non-dumpable with prctl, or running set-uid). Containing those takes a
// PID namespace or a cgroup around the worker, which the host provides;
// the real worker never forks.
//
// On Linux the two frame pipes are enlarged to 1 MiB, so a large frame
// crosses in a few reads, while the process holds less than half of the
// user's pipe budget (/proc/sys/fs/pipe-user-pages-soft): past that budget
// the kernel would give every pipe the user creates, in any process, the
// smallest capacity. Workers started beyond the share keep 64 KiB pipes.
//
// The child's descriptors are its three pipes (0, 1 and 2) and nothing the
// parent opened, which Go opens close-on-exec. A descriptor the host process
// inherited without close-on-exec from its own parent (a shell's, a
// supervisor's) is passed on like any inheritable descriptor; a host that
// must keep such descriptors from the sandbox marks them with
// syscall.CloseOnExec.
//
// Two waits are the exception, on Linux: the first read (the worker takes
// milliseconds to start) and the reaper's wait for the exit (through a
// pidfd) park in the poller instead of holding a thread in a system call,
// so a parent waiting for a starting worker is fully idle and leaves the
// CPU to it. [Config.SpinWait] busy-polls the stdout pipe for a bounded
// time before each later read blocks: by default in a process that may
// run on one CPU only, where parent and worker take turns on it, and on two
// CPUs while the read's worker is the process's only live one (a lone
// session keeps its CPU awake for the reply; several sessions keep the CPUs
// busy themselves); set by montygo subprocess, whose inner worker answers
// within microseconds. On a small virtual machine a sleeping thread's
// wake-up costs more than the spin.
//
// The child's stderr is drained by one goroutine into a bounded ring
// buffer (the tail is attached to crash errors) and logged through
// log/slog, at most Config.StderrLogBurst lines at once and then
// Config.StderrLogRate lines a second (a worker writing to its stderr in
// a loop cannot flood the host's logs; a Warn record counts the lines not
// logged; workers sharing a Config.StderrLogLimiter, as a pool's do, share
// the bound), or copied byte for byte to Config.StderrTo. Once the child has
// exited and nothing holds its stderr, Close reads the pipe to its end.
//
// # Errors
//
// [Process.Lost] classifies the loss of a worker into a typed error:
//
//   - [*CrashError]: the worker announced a FatalError (Announced) or
//     exited, hung up or broke a pipe without one (Vanished);
//   - [*MemoryLimitError] (matching [ErrMemoryLimit]): the worker exited
//     with status 65 because its allocator ceiling was crossed.
//
// Both have a SessionSurvives method reporting false. The errors of a
// session (timeouts, cancellation, protocol violations) belong to package
// session. Error texts are for humans and may change; match with errors.Is
// and errors.As.
//
// This package knows frames, not messages: it never decodes what the
// worker sends. Package session builds the protocol on top of it.
package worker

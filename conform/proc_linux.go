package conform

import "syscall"

// childProcAttr puts a worker under test in its own process group and
// has the kernel kill it if the kit dies first. The signal follows the
// thread that forked the worker, so startProc forks on the spawner's
// thread (internal/spawn).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

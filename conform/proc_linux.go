package conform

import "syscall"

// childProcAttr puts a worker under test in its own process group and
// has the kernel kill it if the kit dies first.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

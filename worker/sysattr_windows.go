package worker

import "syscall"

// sysProcAttr asks nothing special on Windows, where no Monty worker is
// released: the package builds there so that remote sessions (which need
// no local worker) can be used, and Start runs whatever binary it is given.
func sysProcAttr(*int) *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

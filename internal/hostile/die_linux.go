//go:build linux && (amd64 || arm64)

package hostile

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// kernelSigaction is the kernel's struct sigaction on linux/amd64 and
// linux/arm64 (handler, flags, restorer, mask).
type kernelSigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// Die ends the process by sig, with no core file.
//
// The Go runtime handles SIGSEGV and SIGABRT itself: a SIGSEGV sent by
// kill(2) would become a Go crash with exit status 2, not a death by
// signal. So the default disposition is restored directly with
// rt_sigaction before the signal is raised.
func Die(sig syscall.Signal) {
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	var sa kernelSigaction // handler 0 = SIG_DFL
	_, _, _ = syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig),
		uintptr(unsafe.Pointer(&sa)), 0, unsafe.Sizeof(sa.mask), 0, 0)
	_ = syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Second)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
}

//go:build linux

package main

import (
	"runtime"
	"syscall"
	"unsafe"
)

// defaultAction gives sig the kernel's default action, below the Go
// runtime: for SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS
// and SIGQUIT the runtime's own handler stays installed after
// signal.Reset and turns the signal into a goroutine dump and exit 2, so
// only this lets montygo die by the signal its inner worker died by.
func defaultAction(sig syscall.Signal) {
	// The kernel's struct sigaction, all zero: SIG_DFL, no flags, no
	// restorer, an empty mask (32 bytes covers every layout).
	var sa [4]uint64
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&sa)), 0, 8, 0, 0)
}

// killSelf sends sig to the calling thread, which the kernel then makes
// act on it as it returns from the call. kill(2) of the process would
// hand it to the main thread, which may be parked and, on a loaded
// machine, not run for longer than dieBySignal waits (montygo then exited
// 128+N instead of dying by the signal).
func killSelf(sig syscall.Signal) {
	runtime.LockOSThread()
	syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), sig)
}

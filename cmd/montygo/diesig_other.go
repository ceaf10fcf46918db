//go:build unix && !linux

package main

import "syscall"

// defaultAction is a no-op where the kernel's sigaction is not reached
// directly: signal.Reset is all there is (see the Linux version).
func defaultAction(syscall.Signal) {}

// killSelf sends sig to the process.
func killSelf(sig syscall.Signal) { syscall.Kill(syscall.Getpid(), sig) }

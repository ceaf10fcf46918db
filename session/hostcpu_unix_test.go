//go:build unix

package session

import (
	"syscall"
	"testing"
)

// hostCPU reports the benchmark process's own CPU time per op (user +
// system, all threads; the worker's time is not included) as cpu-ns/op.
// On a shared machine it is steadier than wall time, and it isolates what
// the parent adds.
func hostCPU(b *testing.B) func() {
	cpu := func() int64 {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	start := cpu()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

//go:build unix

package frame

import (
	"io"
	"strconv"
	"syscall"
	"testing"
)

// processCPU reports the process's CPU time per op (user + system, all
// threads) as cpu-ns/op. On a shared machine it is steadier than wall time.
func processCPU(b *testing.B) func() {
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

var benchSizes = []int{16, 4 << 10, 1 << 20, 10 << 20}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

func BenchmarkReadFrame(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			r := NewReader(&repeatReader{data: AppendFrame(nil, make([]byte, n))}, 0)
			b.ReportAllocs()
			b.SetBytes(int64(n))
			defer processCPU(b)()
			for b.Loop() {
				if _, err := r.ReadFrame(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkWriteFrame(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			w := NewWriter(io.Discard, 0)
			body := make([]byte, n)
			b.ReportAllocs()
			b.SetBytes(int64(n))
			for b.Loop() {
				if err := w.WriteFrame(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

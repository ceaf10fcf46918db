package frame

import (
	"io"
	"strconv"
	"testing"
)

var benchSizes = []int{16, 4 << 10, 1 << 20}

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

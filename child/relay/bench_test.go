//go:build unix

package relay

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// The relay's cost: the same warm feed and host calls against the real
// worker directly and through `montygo subprocess` (built once into a
// temporary directory, with the real worker beside it), in the same run.
//
//	go test -run '^$' -bench . -benchmem ./child/relay/

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

// montygo builds the CLI and returns its path.
func montygo(b *testing.B) string {
	real := testenv.Worker(b)
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "montygo-bench")
		if benchErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(benchDir, "montygo"), "github.com/gomonty/monty/cmd/montygo")
		cmd.Stderr = os.Stderr
		if benchErr = cmd.Run(); benchErr != nil {
			return
		}
		benchErr = os.Symlink(real, filepath.Join(benchDir, "monty"))
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return filepath.Join(benchDir, "montygo")
}

type target struct {
	name    string
	bin     func(b *testing.B) string
	version uint32
}

var targets = []target{
	{"direct", testenvWorker, 0},
	{"relay-v4", montygo, 4},
	{"relay-v2", montygo, 2},
}

func testenvWorker(b *testing.B) string { return testenv.Worker(b) }

// RELAY_BENCH_ALT names a second relay binary (for example an older
// build, with the real worker beside it) benchmarked beside the built one
// in the same run, as relay-alt-v4 and relay-alt-v2.
func init() {
	for _, alt := range strings.Split(os.Getenv("RELAY_BENCH_ALT"), ",") {
		if alt == "" {
			continue
		}
		name := "alt"
		if k, v, ok := strings.Cut(alt, "="); ok {
			name, alt = k, v
		}
		bin := func(*testing.B) string { return alt }
		targets = append(targets, target{"relay-" + name + "-v4", bin, 4}, target{"relay-" + name + "-v2", bin, 2})
	}
}

// benchSpin is the parent's worker.Config.SpinWait (RELAY_BENCH_SPIN, a
// duration: unset or 0 is the default, which on two CPUs spins while the
// benchmark's one worker is its only one; -1ns never spins).
var benchSpin, _ = time.ParseDuration(os.Getenv("RELAY_BENCH_SPIN"))

func benchSession(b *testing.B, t target) *session.Session {
	s, err := session.Start(context.Background(), session.Launch{
		Launcher:        session.ProcessLauncher{Worker: worker.Config{Binary: t.bin(b), Logger: quiet, SpinWait: benchSpin}},
		ProtocolVersion: t.version,
	}, session.Config{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if _, err := s.Run(context.Background(), "1"); err != nil {
		b.Fatal(err)
	}
	return s
}

// cpu reports the CPU time per op of the whole chain, load-independent
// where wall time on a shared 2-core machine is not: the benchmark process
// (the parent) as parent-cpu-ns/op, and the worker process with its
// children (for the relay: montygo and the inner worker) as
// worker-cpu-ns/op (10 ms tick resolution, so only meaningful over many
// ops).
func cpu(b *testing.B, pid int) func() {
	self := func() int64 {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	p0, w0 := self(), treeCPU(pid)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(self()-p0)/float64(b.N), "parent-cpu-ns/op")
			b.ReportMetric(float64(treeCPU(pid)-w0)/float64(b.N), "worker-cpu-ns/op")
		}
	}
}

// treeCPU sums utime+stime of pid and its live children, in ns.
func treeCPU(pid int) int64 {
	ticks := func(p string) int64 {
		b, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil {
			return 0
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			return 0
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		return u + k
	}
	total := ticks(strconv.Itoa(pid))
	kids, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	for _, k := range strings.Fields(string(kids)) {
		total += ticks(k)
	}
	return total * 10_000_000 // USER_HZ is 100 on Linux
}

// percentiles reports the 10th, 50th and 90th percentiles of d as
// name-p10-ns, name-p50-ns and name-p90-ns.
func percentiles(b *testing.B, d []time.Duration, name string) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	for _, q := range []int{10, 50, 90} {
		b.ReportMetric(float64(d[len(d)*q/100].Nanoseconds()), name+"-p"+strconv.Itoa(q)+"-ns")
	}
}

// BenchmarkWarmFeed: one feed of `1 + 2` on a warm session, with the
// percentiles of the feeds' wall times (op-p10-ns, op-p50-ns, op-p90-ns;
// see BenchmarkHostCalls for why).
func BenchmarkWarmFeed(b *testing.B) {
	for _, t := range targets {
		b.Run(t.name, func(b *testing.B) {
			s := benchSession(b, t)
			ctx := context.Background()
			ops := make([]time.Duration, 0, 4096)
			defer cpu(b, s.Pid())()
			for b.Loop() {
				t0 := time.Now()
				if _, err := s.Feed(ctx, "1 + 2"); err != nil {
					b.Fatal(err)
				}
				ops = append(ops, time.Since(t0))
			}
			percentiles(b, ops, "op")
		})
	}
}

// BenchmarkHostCalls: 1,000 host calls in one feed (one op = the feed).
// Besides the wall and CPU times it reports percentiles of the time from
// one call of the host function to the next (gap-p10-ns, gap-p50-ns,
// gap-p90-ns): one whole round trip each, worker to parent and back. On
// this shared machine round trips are bimodal, fast when every process
// the frame passes is awake and slow when a sleeping thread has to be
// woken, so p10 is the fast path's cost and the wall time says how often
// a wake-up was slow.
func BenchmarkHostCalls(b *testing.B) {
	for _, t := range targets {
		b.Run(t.name, func(b *testing.B) {
			s := benchSession(b, t)
			ctx := context.Background()
			var last time.Time
			gaps := make([]time.Duration, 0, 1000)
			opt := session.WithFunctions(session.NewRegistry().MustRegister("f", func(i int) int {
				now := time.Now()
				if i > 0 {
					gaps = append(gaps, now.Sub(last))
				}
				last = now
				return i
			}))
			defer cpu(b, s.Pid())()
			for b.Loop() {
				if _, err := s.Run(ctx, "for i in range(1000): f(i)", opt); err != nil {
					b.Fatal(err)
				}
			}
			percentiles(b, gaps, "gap")
		})
	}
}

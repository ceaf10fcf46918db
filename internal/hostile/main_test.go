package hostile_test

import (
	"flag"
	"runtime"
	"strconv"
	"testing"

	"go.uber.org/goleak"
)

// TestMain raises the default test parallelism: most scenario checks wait
// on a child process (a pause, a deadline, a pipe) rather than use a CPU,
// so GOMAXPROCS parallel slots would leave the machine idle. An explicit
// -test.parallel is respected. At the end, no goroutine may be left over.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			explicit = true
		}
	})
	if !explicit {
		_ = flag.Set("test.parallel", strconv.Itoa(max(6, 3*runtime.GOMAXPROCS(0))))
	}
	goleak.VerifyTestMain(m)
}

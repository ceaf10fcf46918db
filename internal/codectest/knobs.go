package codectest

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// MutSeed is the mutation seed of a mutation test: def, or MUT_SEED when
// set (for a longer run by hand).
func MutSeed(def uint64) uint64 {
	if n, err := strconv.ParseUint(os.Getenv("MUT_SEED"), 10, 64); err == nil {
		return n
	}
	return def
}

// MutRounds is the mutants per frame of a mutation test: def, or
// MUT_ROUNDS when set.
func MutRounds(def int) int {
	if n, err := strconv.Atoi(os.Getenv("MUT_ROUNDS")); err == nil {
		return n
	}
	return def
}

// Measure returns the bytes f allocates: the least of three runs, since
// TotalAlloc is process-wide and the runtime itself occasionally allocates
// a few KiB in the middle of one (seen under heavy machine load).
func Measure(f func()) uint64 {
	best := uint64(math.MaxUint64)
	for range 3 {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		f()
		runtime.ReadMemStats(&m1)
		best = min(best, m1.TotalAlloc-m0.TotalAlloc)
	}
	return best
}

// MutantSet is the frames of one message type to mutate, with an optional
// Skip for frames, recorded or mutated, the test cannot judge.
type MutantSet struct {
	Side   OracleSide
	Frames [][]byte
	Skip   func(frame []byte) bool
}

// RunMutants checks every frame of sets and rounds mutants of each (see
// CheckMutant), drawn from a generator seeded with seed, and fails the
// test when fewer than a quarter of the mutants decode (it would then
// check little).
func RunMutants(t *testing.T, seed uint64, rounds int, sets []MutantSet) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2026))
	total, decoded := 0, 0
	for _, s := range sets {
		for _, base := range s.Frames {
			if s.Skip == nil || !s.Skip(base) {
				CheckMutant(t, s.Side, base)
			}
			for range rounds {
				f := Mutate(rng, base)
				if s.Skip != nil && s.Skip(f) {
					continue
				}
				ok, _ := CheckMutant(t, s.Side, f)
				total++
				if ok {
					decoded++
				}
			}
		}
	}
	if decoded < total/4 {
		t.Fatalf("only %d of %d mutants decoded", decoded, total)
	}
	t.Logf("%d of %d mutants decoded alike", decoded, total)
}

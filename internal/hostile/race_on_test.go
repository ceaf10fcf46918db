//go:build race

package hostile_test

// raceEnabled reports a test binary built with the race detector.
const raceEnabled = true

// raceSlack is the extra heap allowance of a race-enabled build.
const raceSlack = 32 << 20

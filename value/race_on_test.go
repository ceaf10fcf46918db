//go:build race

package value

// raceEnabled reports a test binary built with the race detector.
const raceEnabled = true

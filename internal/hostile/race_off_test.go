//go:build !race

package hostile_test

// raceEnabled reports a test binary built with the race detector.
const raceEnabled = false

// raceSlack is the extra heap allowance of a race-enabled build.
const raceSlack = 0

// raceScale stretches the wall-clock bounds of a scenario: the race
// detector slows decoding several-fold (codecv2's amplify_traceback takes
// about 7 s of its 8 s under it on a quiet machine).
const raceScale = 1

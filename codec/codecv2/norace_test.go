//go:build !race

package codecv2

const raceEnabled = false

//go:build race

package codecv4

const raceEnabled = true

//go:build !linux

package spawn

// AwaitExit returns at once off Linux, knowing nothing: there the exit
// cannot be awaited without reaping the child.
func AwaitExit(int) bool { return false }

// killGroup does nothing off Linux: AwaitExit never reports an unreaped
// exit there, so a group is never known to be named by its leader's pid.
var killGroup = func(int) {}

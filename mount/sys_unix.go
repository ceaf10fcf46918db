//go:build unix

package mount

import "syscall"

// Open flags that only exist on Unix.
const (
	// oNonblock keeps open(2) from blocking on a FIFO with no peer.
	oNonblock = syscall.O_NONBLOCK
	// oDirectory makes open(2) fail unless the path is a directory.
	oDirectory = syscall.O_DIRECTORY
)

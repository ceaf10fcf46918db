//go:build !unix

package mount

// Open flags that have no equivalent off Unix.
const (
	oNonblock  = 0
	oDirectory = 0
)

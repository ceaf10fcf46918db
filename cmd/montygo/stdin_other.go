//go:build !unix

package main

import (
	"io"
	"time"
)

// pollableStdin returns r unchanged: see stdin_unix.go.
func pollableStdin(r io.Reader, _ time.Duration) (io.Reader, func()) { return r, func() {} }

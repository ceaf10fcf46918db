//go:build !unix

package main

import "io"

// pollableStdin returns r unchanged: see stdin_unix.go.
func pollableStdin(r io.Reader) (io.Reader, func()) { return r, func() {} }

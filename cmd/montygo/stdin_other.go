//go:build !unix

package main

import (
	"io"
	"time"
)

// stdinReader returns r unchanged: see stdin_unix.go.
func stdinReader(r io.Reader, _ time.Duration) (io.Reader, func()) { return r, func() {} }

// spinStdout returns w unchanged: see stdin_unix.go.
func spinStdout(w io.Writer, _ time.Duration) io.Writer { return w }

//go:build unix

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stdin through stdinReader: bytes written before and long after the
// read starts (past the spin, so blocked in read(2), or parked in the
// poller without a spin) arrive, and the end of the stream is io.EOF; a
// socket, and a pipe the parent made non-blocking, are read all the same;
// without a spin, closing the reader wakes a parked read.
func TestSpinningStdin(t *testing.T) {
	pipe := func(t *testing.T) (*os.File, *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		return r, w
	}
	cases := []struct {
		name string
		spin time.Duration
		mk   func(t *testing.T) (r, w *os.File)
	}{
		{"pipe, no spin", 0, pipe},
		{"pipe, 50µs", 50 * time.Microsecond, pipe},
		{"pipe, 1s", time.Second, pipe},
		{"socket", 50 * time.Microsecond, func(t *testing.T) (*os.File, *os.File) {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			return os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
		}},
		{"non-blocking pipe", 50 * time.Microsecond, pipe},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, w := c.mk(t)
			defer r.Close()
			defer w.Close()
			in, restore := stdinReader(r, c.spin)
			defer restore()
			if _, ok := in.(*spinStdin); ok != (c.spin > 0) {
				t.Fatalf("spin %v: reader %T", c.spin, in)
			}
			if strings.HasPrefix(c.name, "non-blocking") {
				// The parent sets O_NONBLOCK on the pipe they share (after
				// stdinReader, whose Fd call makes it blocking), so the
				// read after the spin finds EAGAIN.
				if err := syscall.SetNonblock(int(r.Fd()), true); err != nil {
					t.Fatal(err)
				}
			}
			buf := make([]byte, 16)
			w.Write([]byte("ab"))
			if n, err := in.Read(buf); n != 2 || err != nil || !bytes.Equal(buf[:2], []byte("ab")) {
				t.Fatalf("read %q, %v", buf[:n], err)
			}
			go func() {
				time.Sleep(5 * time.Millisecond)
				w.Write([]byte("cde"))
				w.Close()
			}()
			got, err := io.ReadAll(in)
			if err != nil || string(got) != "cde" {
				t.Fatalf("read %q, %v", got, err)
			}
		})
	}
	t.Run("close wakes a parked read", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		in, restore := stdinReader(r, 0)
		done := make(chan error, 1)
		go func() {
			_, err := in.Read(make([]byte, 1))
			done <- err
		}()
		time.Sleep(10 * time.Millisecond)
		restore()
		select {
		case err := <-done:
			if !errors.Is(err, os.ErrClosed) {
				t.Fatalf("read after close: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("closing did not wake the read")
		}
	})
}

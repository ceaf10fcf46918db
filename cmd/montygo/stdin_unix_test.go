//go:build unix

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// stdin through pollableStdin: bytes written before and long after the
// read starts (past the spin, so blocked in read(2), or parked in the
// poller without a spin) arrive, and the end of the stream is io.EOF; a
// stdin made non-blocking by the parent is read all the same; without a
// spin, closing the reader wakes a parked read.
func TestSpinningStdin(t *testing.T) {
	for _, spin := range []time.Duration{0, 50 * time.Microsecond, time.Second} {
		t.Run(spin.String(), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			in, restore := pollableStdin(r, spin)
			defer restore()
			if _, ok := in.(*spinStdin); ok != (spin > 0) {
				t.Fatalf("spin %v: reader %T", spin, in)
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
	t.Run("socket", func(t *testing.T) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		r, w := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
		defer r.Close()
		defer w.Close()
		in, restore := pollableStdin(r, 50*time.Microsecond)
		defer restore()
		if _, ok := in.(*spinStdin); !ok {
			t.Fatalf("socket stdin read through %T", in)
		}
		w.Write([]byte("ab"))
		go func() {
			time.Sleep(5 * time.Millisecond)
			w.Write([]byte("cde"))
			w.Close()
		}()
		got, err := io.ReadAll(in)
		if err != nil || string(got) != "abcde" {
			t.Fatalf("read %q, %v", got, err)
		}
	})
	t.Run("non-blocking", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		if err := syscall.SetNonblock(int(r.Fd()), true); err != nil {
			t.Fatal(err)
		}
		in, restore := pollableStdin(r, 50*time.Microsecond)
		defer restore()
		go func() {
			time.Sleep(5 * time.Millisecond)
			w.Write([]byte("xyz"))
			w.Close()
		}()
		got, err := io.ReadAll(in)
		if err != nil || string(got) != "xyz" {
			t.Fatalf("read %q, %v", got, err)
		}
	})
	t.Run("close wakes a parked read", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		in, restore := pollableStdin(r, 0)
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

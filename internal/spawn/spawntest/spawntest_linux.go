//go:build linux

package spawntest

import (
	"io"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// EchoScript is the `/bin/sh -c` script of the child that
// OutlivesStartingThread's start function forks: it echoes one line of
// its stdin, then waits for another.
const EchoScript = `read x; echo "$x"; read y`

// Child is a child process that a start function forked.
type Child struct {
	Stdin  io.Writer
	Stdout io.Reader
	// Exit describes the child's exit, for the failure message when it
	// did not answer (it may wait for the exit).
	Exit func() string
	// Close ends the child and releases it; it runs at the test's
	// cleanup.
	Close func()
}

// OutlivesStartingThread calls start on a locked thread other than the
// main one, which the runtime ends once start has returned, waits until
// that thread is gone, and then requires the child start forked (running
// EchoScript) to be alive: a line written to its stdin comes back on its
// stdout.
func OutlivesStartingThread(t *testing.T, start func() (Child, error)) {
	t.Helper()
	type started struct {
		c   Child
		tid int
		err error
	}
	ch := make(chan started, 1)
	var onThreadThatEnds func()
	onThreadThatEnds = func() {
		runtime.LockOSThread()
		if syscall.Gettid() == os.Getpid() {
			// The main thread is never ended: start from another one
			// (this goroutine holds the main thread meanwhile).
			done := make(chan struct{})
			go func() { onThreadThatEnds(); close(done) }()
			<-done
			runtime.UnlockOSThread()
			return
		}
		c, err := start()
		ch <- started{c, syscall.Gettid(), err}
		// and return locked: the thread ends
	}
	go onThreadThatEnds()
	s := <-ch
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(s.c.Close)
	// The signal, if any, is sent before the thread's entry goes.
	task := "/proc/self/task/" + strconv.Itoa(s.tid)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(task); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the locked thread did not end")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := s.c.Stdin.Write([]byte("alive\n")); err != nil {
		t.Fatalf("write after the starting thread ended: %v", err)
	}
	b := make([]byte, 16)
	n, err := s.c.Stdout.Read(b)
	if string(b[:n]) != "alive\n" {
		t.Fatalf("after the starting thread ended the child answered %q, %v (exit %v)", b[:n], err, s.c.Exit())
	}
}

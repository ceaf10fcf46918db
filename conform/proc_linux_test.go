package conform

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The kernel sends the parent-death signal (childProcAttr's SIGKILL, so
// that a worker under test never outlives the kit) when the thread that
// forked the worker exits, not the process; and the Go runtime ends a
// thread when a goroutine locked to it (runtime.LockOSThread) returns
// still locked. A worker started on such a thread was killed when it
// ended, the kit alive and the rule still using it.
func TestWorkerOutlivesTheThreadThatStartedIt(t *testing.T) {
	type started struct {
		p   *proc
		tid int
		err error
	}
	c := make(chan started, 1)
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
		p, err := startProc(Target{Binary: "/bin/sh", Args: []string{"-c", `read x; echo "$x"; read y`}})
		c <- started{p, syscall.Gettid(), err}
		// and return locked: the thread ends
	}
	go onThreadThatEnds()
	s := <-c
	if s.err != nil {
		t.Fatal(s.err)
	}
	p := s.p
	t.Cleanup(func() { p.Close() })
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
	if _, err := p.stdin.Write([]byte("alive\n")); err != nil {
		t.Fatalf("write after the starting thread ended: %v", err)
	}
	b := make([]byte, 16)
	n, err := p.stdout.Read(b)
	if string(b[:n]) != "alive\n" {
		ex, _ := p.wait(context.Background())
		t.Fatalf("after the starting thread ended the worker answered %q, %v (exit %v)", b[:n], err, ex)
	}
}

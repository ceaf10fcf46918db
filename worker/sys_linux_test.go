package worker

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// goroutineState returns the scheduler state ("IO wait", "syscall", ...)
// of the first goroutine whose stack mentions fn, or "" if there is none.
func goroutineState(fn string) string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if !bytes.Contains(g, []byte(fn)) {
			continue
		}
		head, _, _ := bytes.Cut(g, []byte("\n"))
		_, state, ok := bytes.Cut(head, []byte(" ["))
		if !ok {
			return ""
		}
		s, _, _ := strings.Cut(string(state), "]")
		s, _, _ = strings.Cut(s, ",") // "IO wait, 2 minutes"
		return s
	}
	return ""
}

// waitState polls until the goroutine running fn is in state want, or
// fails after a deadline far beyond any scheduling delay.
func waitState(t *testing.T, fn, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := goroutineState(fn)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutine in %s is %q, want %q", fn, got, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// While a child has not answered yet, neither the reader waiting for its
// first frame nor the reaper may hold a thread in a blocking system call:
// both park in the poller, and Kill still releases them.
func TestStartupWaitsParkInThePoller(t *testing.T) {
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", "exec sleep 30"}})
	readErr := make(chan error, 1)
	go func() {
		_, err := p.ReadFrame()
		readErr <- err
	}()
	waitState(t, "worker.(*firstRead).Read", "IO wait")
	waitState(t, "worker.(*Process).reap", "IO wait")
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := <-readErr; err != io.EOF {
		t.Fatalf("read after Kill: %v, want EOF", err)
	}
	exit, err := p.Wait(context.Background())
	if err != nil || exit.Signal != syscall.SIGKILL {
		t.Fatalf("exit %v, %v; want SIGKILL", exit, err)
	}
}

// Only the first read waits in the poller; later reads are plain blocking
// reads on the caller's thread.
func TestLaterReadsBlockInTheSyscall(t *testing.T) {
	p, readErr := busyRead(t, Config{Binary: realWorker(t)})
	waitState(t, "worker.(*firstRead).Read", "syscall")
	p.Kill()
	if err := <-readErr; err == nil {
		t.Fatal("read succeeded on a killed worker")
	}
}

func TestAwaitReadable(t *testing.T) {
	t.Run("data", func(t *testing.T) {
		r, w, err := blockingPipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		defer w.Close()
		go w.Write([]byte("x"))
		awaitReadable(int(r.Fd()))
		if !(&firstRead{File: r}).Pending() {
			t.Fatal("returned before the pipe was readable")
		}
	})
	t.Run("hang-up", func(t *testing.T) {
		r, w, err := blockingPipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		go w.Close()
		awaitReadable(int(r.Fd()))
		if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("read %d, %v; want EOF", n, err)
		}
	})
	t.Run("not-pollable", func(t *testing.T) {
		// A regular file cannot go into an epoll set: no wait at all.
		f, err := os.CreateTemp(t.TempDir(), "regular")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		awaitReadable(int(f.Fd()))
	})
}

// Without a pidfd, awaitExit waits in waitid and leaves the child
// unreaped: its status is still there for Wait.
func TestAwaitExitWithoutPidfdLeavesTheChildUnreaped(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 7")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !awaitExit(-1, cmd.Process.Pid) {
		t.Fatal("the exit was not seen")
	}
	if err := cmd.Wait(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 7 {
		t.Fatalf("Wait after awaitExit: %v, %v", err, cmd.ProcessState)
	}
}

// With SpinWait, replies that come within the spin are read as usual,
// and a slower one falls back to the blocking read, which Kill releases.
func TestSpinWaitFallsBackToTheBlockingRead(t *testing.T) {
	p, readErr := busyRead(t, Config{Binary: realWorker(t), SpinWait: 20 * time.Millisecond})
	// Past the spin the reader sits in the read system call (during it,
	// in the spin's own function).
	waitState(t, "worker.(*firstRead).Read", "syscall")
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(goroutineStack("worker.(*firstRead).Read"), "spinwait.") {
		if time.Now().After(deadline) {
			t.Fatal("still spinning long past SpinWait")
		}
		time.Sleep(time.Millisecond)
	}
	waitState(t, "worker.(*firstRead).Read", "syscall")
	p.Kill()
	if err := <-readErr; err == nil {
		t.Fatal("read succeeded on a killed worker")
	}
}

// goroutineStack returns the stack of the first goroutine whose stack
// mentions fn, or "".
func goroutineStack(fn string) string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(fn)) {
			return string(g)
		}
	}
	return ""
}

// A zero SpinWait spins for OneCPUSpinWait when the process may run on one
// CPU only, and on two CPUs while the worker is the process's only live
// one (sole), never on more; a negative one never spins; a positive one is
// kept, and not limited to a lone worker. The worker started with the
// one-CPU default answers as usual through the spinning reads.
func TestOneCPUSpinsByDefault(t *testing.T) {
	bin := realWorker(t)
	defer func(f func() int) { numCPU = f }(numCPU)
	for _, c := range []struct {
		cpus       int
		spin, want time.Duration
		sole       bool
	}{
		{1, 0, OneCPUSpinWait, false},
		{2, 0, OneCPUSpinWait, true},
		{3, 0, 0, false},
		{8, 0, 0, false},
		{1, -1, 0, false},
		{2, -1, 0, false},
		{1, 7 * time.Microsecond, 7 * time.Microsecond, false},
		{2, 7 * time.Microsecond, 7 * time.Microsecond, false},
		{8, 7 * time.Microsecond, 7 * time.Microsecond, false},
	} {
		numCPU = func() int { return c.cpus }
		got := (Config{SpinWait: c.spin}).withDefaults()
		if got.SpinWait != c.want || got.soleSpin != c.sole {
			t.Errorf("%d CPUs, SpinWait %v: got %v (sole %v), want %v (sole %v)", c.cpus, c.spin, got.SpinWait, got.soleSpin, c.want, c.sole)
		}
	}
	numCPU = func() int { return 1 }
	p := start(t, Config{Binary: bin})
	if p.cfg.SpinWait != OneCPUSpinWait {
		t.Fatalf("started with SpinWait %v, want %v", p.cfg.SpinWait, OneCPUSpinWait)
	}
	if got := eventArm(t, roundTrip(t, p, configureV2)); got != 10 {
		t.Fatalf("Configure answered with arm %d, want Ok (10)", got)
	}
	for range 100 {
		if got := eventArm(t, roundTrip(t, p, feedFrame("1 + 2"))); got != 6 {
			t.Fatalf("feed answered with arm %d, want Complete (6)", got)
		}
	}
}

// On two CPUs the default spin is a lone worker's: a read spins while its
// worker is the only live worker of the process, not while a second one
// runs, and again once the second has been reaped; an explicit SpinWait
// spins regardless. Reads answer as usual either way.
func TestTwoCPUsSpinWhileAlone(t *testing.T) {
	bin := realWorker(t)
	defer func(f func() int) { numCPU = f }(numCPU)
	numCPU = func() int { return 2 }
	// Workers of earlier tests may still be being reaped.
	for deadline := time.Now().Add(10 * time.Second); liveWorkers.Load() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d workers still live before the test", liveWorkers.Load())
		}
	}
	spins := func(p *Process) bool { return p.out.spins() }
	feed := func(p *Process) {
		t.Helper()
		if got := eventArm(t, roundTrip(t, p, feedFrame("1 + 2"))); got != 6 {
			t.Fatalf("feed answered with arm %d, want Complete (6)", got)
		}
	}
	a := start(t, Config{Binary: bin})
	if got := eventArm(t, roundTrip(t, a, configureV2)); got != 10 {
		t.Fatalf("Configure answered with arm %d, want Ok (10)", got)
	}
	if !spins(a) {
		t.Fatal("the only live worker's reads do not spin")
	}
	feed(a)
	b := start(t, Config{Binary: bin})
	explicit := start(t, Config{Binary: bin, SpinWait: OneCPUSpinWait})
	if spins(a) || spins(b) {
		t.Fatalf("reads spin with %d workers live", liveWorkers.Load())
	}
	if !spins(explicit) {
		t.Fatal("an explicit SpinWait does not spin beside other workers")
	}
	feed(a)
	for _, p := range []*Process{b, explicit} {
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if !spins(a) {
		t.Fatalf("the lone worker's reads do not spin again (%d live)", liveWorkers.Load())
	}
	feed(a)
}

// pipeCap is the capacity of the pipe of f (fcntl F_GETPIPE_SZ).
func pipeCap(t *testing.T, f *os.File) int {
	t.Helper()
	n, _, e := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), 1032, 0)
	if e != 0 {
		t.Fatal(e)
	}
	return int(n)
}

// A process enlarges only its share of the user's pipe budget: past it,
// a worker's frame pipes keep the kernel's default, and a closed worker's
// share is given back. Before, every worker's two pipes took 1 MiB, and
// thirty-two unprivileged workers spent the whole budget, leaving every
// pipe the user then created (in any process) at the smallest capacity.
func TestFramePipesStayWithinTheUsersBudget(t *testing.T) {
	old := maxBigPipes
	room := bigPipes.Load() + 3 // three more enlarged pipes
	maxBigPipes = func() int64 { return room }
	defer func() { maxBigPipes = old }()
	sleeper := Config{Binary: "/bin/sh", Args: []string{"-c", "exec sleep 30"}}
	a, b := start(t, sleeper), start(t, sleeper)
	if got := []int{pipeCap(t, a.stdin), pipeCap(t, a.stdout)}; got[0] != pipeSize || got[1] != pipeSize {
		t.Fatalf("first worker's pipes %v, want %d each", got, pipeSize)
	}
	if got := pipeCap(t, b.stdin); got != pipeSize {
		t.Fatalf("second worker's stdin %d, want %d (the last enlarged pipe)", got, pipeSize)
	}
	if got := pipeCap(t, b.stdout); got >= pipeSize {
		t.Fatalf("second worker's stdout %d, want the default: over the budget", got)
	}
	a.Close(context.Background())
	c := start(t, sleeper)
	if got := pipeCap(t, c.stdout); got != pipeSize {
		t.Fatalf("after a Close, a new worker's stdout %d, want %d", got, pipeSize)
	}
}

// stillHeld tells a pipe end whose other end is open somewhere from one
// whose other end is closed everywhere, so the reaper scans /proc only
// when a worker's pipe outlives the worker's group.
func TestStillHeld(t *testing.T) {
	r, w, err := blockingPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !stillHeld(r) || !stillHeld(w) {
		t.Fatal("an open pipe's ends are not held")
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if !stillHeld(r) {
		t.Fatal("a read end with data and a writer is not held")
	}
	if holdsPipe(os.Getpid(), [3]uint64{pipeInode(r)}) != true {
		t.Fatal("this process does not hold its own pipe")
	}
	if holdsPipe(os.Getpid(), [3]uint64{}) {
		t.Fatal("this process holds the pipe of inode 0")
	}
	w.Close()
	if stillHeld(r) {
		t.Fatal("a read end without writers (but with data) is held")
	}
	if stillHeld(w) {
		t.Fatal("a closed end is held")
	}
	r2, w2, err := blockingPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	r2.Close()
	if stillHeld(w2) {
		t.Fatal("a write end without readers is held")
	}
}

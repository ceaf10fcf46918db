// Command remote runs sessions across several `montygo serve` replicas on
// loopback while draining and restarting them, the way a rolling update of
// a Kubernetes Deployment does, and checks that every session ends with its
// own correct answer:
//
//	make build && go run ./examples/remote -servers 3 -sessions 200 -drain-every 25
//
// Every session builds up globals over several feeds and answers an OS
// call suspension. Every -drain-every finished sessions one replica gets
// SIGTERM: its sessions' next requests are answered with a ShutdownDump
// carrying a signed dump; the session (session.RemoteLauncher with its
// default auto-resume) Loads it on another replica (all replicas share one
// dump key) before re-sending the request; the drained replica exits and
// is restarted on a new port.
//
// It ends with the line "results: N ok, L lost, W wrong" and exits 0 only
// when nothing was lost or wrong.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gomonty/monty/internal/remotejob"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop() // before os.Exit, which runs no deferred calls
	os.Exit(code)
}

// replica is one `montygo serve` process.
type replica struct {
	cmd    *exec.Cmd
	url    string
	exited chan error
}

type fleet struct {
	bin, key, worker string
	stderr           io.Writer

	mu   sync.Mutex
	reps []*replica
	next int
}

func (f *fleet) start(ctx context.Context) (*replica, error) {
	args := []string{"serve", "--listen", "127.0.0.1:0", "--dump-key", f.key, "--drain-grace", "5s",
		"--max-sessions-per-client", "0", "--log-level", "warn"}
	if f.worker != "" {
		args = append(args, "--worker", f.worker)
	}
	cmd := exec.Command(f.bin, args...)
	cmd.Stderr = f.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("montygo serve printed no URL: %w", err)
	}
	r := &replica{cmd: cmd, url: strings.TrimSpace(line), exited: make(chan error, 1)}
	go func() { r.exited <- cmd.Wait() }()
	return r, nil
}

// pick returns the replicas round-robin.
func (f *fleet) pick() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	return f.reps[f.next%len(f.reps)].url
}

// roll drains replica i with SIGTERM, starts its replacement at once (as a
// Deployment's surge does), and waits for the old one to exit.
func (f *fleet) roll(ctx context.Context, i int) error {
	fresh, err := f.start(ctx)
	if err != nil {
		return err
	}
	f.mu.Lock()
	old := f.reps[i]
	f.reps[i] = fresh
	f.mu.Unlock()
	old.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-old.exited:
		if err != nil {
			return fmt.Errorf("drained replica: %w", err)
		}
	case <-time.After(time.Minute):
		old.cmd.Process.Kill()
		return errors.New("a drained replica did not exit")
	}
	return nil
}

func (f *fleet) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.reps {
		r.cmd.Process.Signal(syscall.SIGTERM)
		r.cmd.Process.Signal(syscall.SIGTERM)
		<-r.exited
	}
}

// lockedWriter serializes writes from the replicas and the sessions.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func findMontygo() string {
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "montygo"); fileExists(p) {
			return p
		}
	}
	if fileExists("bin/montygo") {
		return "bin/montygo"
	}
	if p, err := exec.LookPath("montygo"); err == nil {
		return p
	}
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stderr = &lockedWriter{w: stderr}
	fs := flag.NewFlagSet("remote", flag.ContinueOnError)
	fs.SetOutput(stderr)
	servers := fs.Int("servers", 3, "replicas")
	sessions := fs.Int("sessions", 200, "sessions to run")
	drainEvery := fs.Int("drain-every", 25, "drain and restart a replica every N finished sessions (0: never)")
	concurrency := fs.Int("concurrency", 8, "sessions at once")
	think := fs.Duration("think", 10*time.Millisecond, "client pause between requests")
	bin := fs.String("montygo", "", "the montygo binary (default: beside this program, bin/montygo, then PATH)")
	workerBin := fs.String("worker", "", "the monty worker the replicas run (default: their own search)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *servers < 1 || *sessions < 1 || *concurrency < 1 || *drainEvery < 0 {
		fmt.Fprintln(stderr, "remote: -servers, -sessions and -concurrency must be positive")
		return 2
	}
	if *bin == "" {
		*bin = findMontygo()
	}
	if *bin == "" {
		fmt.Fprintln(stderr, "remote: montygo not found; run `make build` or pass -montygo PATH")
		return 2
	}
	dir, err := os.MkdirTemp("", "monty-remote")
	if err != nil {
		fmt.Fprintln(stderr, "remote:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	key := filepath.Join(dir, "dump.key")
	if err := os.WriteFile(key, []byte(rand.Text()), 0o600); err != nil {
		fmt.Fprintln(stderr, "remote:", err)
		return 1
	}
	f := &fleet{bin: *bin, key: key, worker: *workerBin, stderr: stderr}
	for range *servers {
		r, err := f.start(ctx)
		if err != nil {
			fmt.Fprintln(stderr, "remote:", err)
			f.stop()
			return 1
		}
		f.reps = append(f.reps, r)
	}
	defer f.stop()
	fmt.Fprintf(stdout, "%d replicas: %s\n", *servers, strings.Join(urls(f), " "))

	var ok, lost, wrong, resumed, finished atomic.Int64
	jobs := make(chan int)
	rolls := make(chan struct{}, *sessions)
	var wg sync.WaitGroup
	for range *concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range jobs {
				v := []uint32{4, 2}[n%2]
				jctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
				res, moved, err := remotejob.Run(jctx, f.pick, v, n, *think)
				cancel()
				resumed.Add(int64(moved))
				switch res {
				case remotejob.OK:
					ok.Add(1)
				case remotejob.Lost:
					lost.Add(1)
					fmt.Fprintf(stderr, "session %d lost: %v\n", n, err)
				default:
					wrong.Add(1)
					fmt.Fprintf(stderr, "session %d wrong: %v\n", n, err)
				}
				if d := finished.Add(1); *drainEvery > 0 && d%int64(*drainEvery) == 0 && d < int64(*sessions) {
					rolls <- struct{}{}
				}
			}
		}()
	}
	// Rolling restarts, one at a time, while the sessions run.
	rollDone := make(chan int)
	go func() {
		n := 0
		for range rolls {
			if err := f.roll(ctx, n%*servers); err != nil {
				fmt.Fprintln(stderr, "remote: restart:", err)
			}
			n++
		}
		rollDone <- n
	}()
feed:
	for n := range *sessions {
		select {
		case jobs <- n:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	close(rolls)
	drains := <-rollDone
	fmt.Fprintf(stdout, "%d drains, %d sessions resumed on another replica\n", drains, resumed.Load())
	fmt.Fprintf(stdout, "results: %d ok, %d lost, %d wrong\n", ok.Load(), lost.Load(), wrong.Load())
	if lost.Load() != 0 || wrong.Load() != 0 || ok.Load() != int64(*sessions) {
		return 1
	}
	return 0
}

func urls(f *fleet) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.reps {
		out = append(out, r.url)
	}
	return out
}

//go:build unix

package conform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gomonty/monty/internal/redact"
	"github.com/gomonty/monty/internal/spawn"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
)

// Target is the worker under test: a local executable (Binary, spawned as
// `Binary Args...`, Args defaulting to ["subprocess"], with an empty
// environment unless Env is set) or a WebSocket endpoint (URL, with extra
// upgrade headers). Every session a rule opens is a fresh process or a
// fresh connection.
//
// A Target is plain data, safe for concurrent use.
type Target struct {
	Binary string
	Args   []string
	Env    []string
	URL    string
	Header http.Header
}

// Name returns how the report names the target: a URL with its password
// and query values masked, since reports are published.
func (t Target) Name() string {
	if t.URL != "" {
		return redact.URL(t.URL)
	}
	if bin, err := worker.ResolveBinary(t.Binary); err == nil {
		return bin
	}
	return t.Binary
}

func (t Target) stream() bool  { return t.URL == "" }
func (t Target) process() bool { return t.URL == "" }

// errNoProcess is returned by wait on a remote target.
var errNoProcess = errors.New("no local process")

// conn is one session's connection to the worker.
type conn interface {
	transport.Conn
	// writeRaw writes bytes unframed (stream targets only).
	writeRaw(b []byte) error
	// closeInput closes the worker's input side (EOF at the worker).
	closeInput() error
	// closeOutput closes the parent's end of the worker's output.
	closeOutput() error
	// wait waits for the process to exit (process targets only).
	wait(ctx context.Context) (worker.Exit, error)
	// kill ends the worker at once.
	kill()
	// stderr returns the retained tail of the worker's stderr.
	stderr() string
}

func (t Target) open(ctx context.Context) (conn, error) {
	if t.URL != "" {
		c, err := ws.Dial(ctx, t.URL, ws.DialOptions{Header: t.Header})
		if err != nil {
			return nil, err
		}
		return &remoteConn{Conn: c}, nil
	}
	return startProc(t)
}

type remoteConn struct{ *ws.Conn }

func (r *remoteConn) writeRaw([]byte) error { return errors.New("conform: raw bytes need a stream") }
func (r *remoteConn) closeInput() error     { return r.Conn.Close() }
func (r *remoteConn) closeOutput() error    { return r.Conn.Close() }
func (r *remoteConn) wait(context.Context) (worker.Exit, error) {
	return worker.Exit{Code: -1}, errNoProcess
}
func (r *remoteConn) kill()          { r.Conn.CloseWith(1001, "conformance rule ended") }
func (r *remoteConn) stderr() string { return "" }

// proc is a worker process spawned for one session. It is spawned here
// rather than through worker.Start because the rules need the raw stdin
// (torn frames, EOF at chosen points).
type proc struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	*transport.Stream
	exited chan struct{}
	exit   worker.Exit

	group *spawn.Group // the worker's process group

	mu   sync.Mutex
	tail bytes.Buffer
}

const stderrKeep = 8 << 10

func startProc(t Target) (*proc, error) {
	bin, err := worker.ResolveBinary(t.Binary)
	if err != nil {
		return nil, err
	}
	args := t.Args
	if args == nil {
		args = []string{"subprocess"}
	}
	env := t.Env
	if env == nil {
		env = []string{}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	// The worker's stderr is a pipe of ours, read by a goroutine of ours:
	// with every standard stream an *os.File, cmd.Wait returns when the
	// process ends, not when every holder of the stderr pipe has closed it
	// (which os/exec's own copier would wait for).
	errR, errW, err := os.Pipe()
	if err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return nil, err
	}
	p := &proc{stdin: inW, stdout: outR, exited: make(chan struct{})}
	cmd := &exec.Cmd{
		Path: bin, Args: append([]string{bin}, args...), Env: env,
		Stdin: inR, Stdout: outW, Stderr: errW,
		SysProcAttr: childProcAttr(),
	}
	// Forked on the spawner's thread: the parent-death signal follows the
	// forking thread, which the runtime may end (see internal/spawn).
	if err := spawn.Start(cmd.Start); err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW, errR, errW} {
			f.Close()
		}
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	inR.Close()
	outW.Close()
	errW.Close()
	p.cmd = cmd
	p.group = spawn.NewGroup(cmd.Process.Pid)
	p.Stream = transport.NewStream(outR, inW, 0)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy((*tailWriter)(p), errR)
		errR.Close()
	}()
	go func() {
		// Whatever the worker left in its process group (a helper it
		// started) is killed at its exit, even when it exited on its own,
		// while the worker is a zombie: its pid, the group's id, cannot
		// have been reused yet. Off Linux the exit cannot be awaited
		// without reaping, and the group is not signalled.
		p.group.Exited(spawn.AwaitExit(cmd.Process.Pid))
		err := cmd.Wait()
		spawn.Done()
		// The stderr tail is complete once the pipe ends, which it does
		// at the exit unless something else holds its write end: the exit
		// is not held back by that for more than a moment, and the reader
		// stops then (a holder out of the group's reach may live on).
		t := time.NewTimer(time.Second)
		select {
		case <-copied:
		case <-t.C:
			errR.Close()
			<-copied
		}
		t.Stop()
		p.exit = exitOf(cmd.ProcessState, err)
		close(p.exited)
	}()
	return p, nil
}

// state describes the worker process for a report: its pid and, where
// /proc has it, its scheduler state.
func (p *proc) state() string {
	if p.cmd == nil || p.cmd.Process == nil {
		return "not started"
	}
	pid := p.cmd.Process.Pid
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return fmt.Sprintf("pid %d", pid)
	}
	// pid (comm) state ...: the state follows the last ')'.
	st := fmt.Sprintf("pid %d", pid)
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		st += fmt.Sprintf(", state %c", b[i+2])
	}
	// Where each thread waits: its system call (number, then arguments).
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		sc, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/syscall", pid, t.Name()))
		if f := strings.Fields(string(sc)); len(f) >= 2 {
			st += fmt.Sprintf("; thread %s in syscall %s(%s)", t.Name(), f[0], f[1])
		}
	}
	return st
}

func exitOf(st *os.ProcessState, _ error) worker.Exit {
	if st == nil {
		return worker.Exit{Code: -1}
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return worker.Exit{Code: -1, Signal: ws.Signal()}
	}
	return worker.Exit{Code: st.ExitCode()}
}

type tailWriter proc

func (w *tailWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tail.Write(b)
	if w.tail.Len() > 2*stderrKeep {
		rest := w.tail.Bytes()[w.tail.Len()-stderrKeep:]
		w.tail = *bytes.NewBuffer(append([]byte(nil), rest...))
	}
	return len(b), nil
}

func (p *proc) writeRaw(b []byte) error {
	_, err := p.stdin.Write(b)
	return err
}

// closeInput and closeOutput close the parent's end of a worker pipe
// under syscall.ForkLock. A process that another rule is starting holds a
// copy of every descriptor of this one from its fork to its exec (which
// closes the copies, all close-on-exec); the fork runs under the lock, so
// once the lock is held no copy of this end exists anywhere and the close
// ends the pipe for the worker at once. Without it a worker whose stdout
// was closed could still write into the pipe while such a copy lived, and
// then wait for a request forever instead of exiting 3
// (framing.stdout-broken-exit-3 failed so now and then when rules started
// workers in parallel).
func (p *proc) closeInput() error { return closeUnforked(p.stdin) }

func closeUnforked(f *os.File) error {
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	return f.Close()
}

func (p *proc) closeOutput() error { return closeUnforked(p.stdout) }

func (p *proc) wait(ctx context.Context) (worker.Exit, error) {
	select {
	case <-p.exited:
		return p.exit, nil
	case <-ctx.Done():
		return worker.Exit{Code: -1}, ctx.Err()
	}
}

// kill ends the worker's process group at once (the worker alone once
// it has exited: the group was killed then, and its id may since name
// another), and closes the kit's end of the worker's stdout: a process
// out of the group's reach (one that started a session of its own) may
// still hold the pipe's write end, and a rule's read must not wait for it.
func (p *proc) kill() {
	if p.cmd.Process != nil {
		p.group.Kill()
		_ = p.cmd.Process.Kill()
	}
	_ = p.stdout.Close()
}

func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tail.String()
}

// Close ends the session: it closes the worker's input, gives it a moment
// to exit on its own, then kills it, and releases the pipes. Whatever the
// worker left in its process group (a helper it started) is killed at the
// worker's exit, even when the worker exited on its own (on Linux).
func (p *proc) Close() error {
	p.stdin.Close()
	t := time.NewTimer(2 * time.Second)
	select {
	case <-p.exited:
	case <-t.C:
	}
	t.Stop()
	p.kill()
	<-p.exited
	return nil
}

package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/spawn"
	"github.com/gomonty/monty/internal/spinwait"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport"
	"golang.org/x/time/rate"
)

// Defaults applied by Start to zero Config fields.
const (
	// DefaultStderrLimit is how many bytes of the child's stderr are kept.
	DefaultStderrLimit = 64 << 10
	// DefaultStderrLogBurst is how many of the child's stderr lines may
	// be logged at once (see Config.StderrLogBurst).
	DefaultStderrLogBurst = 100
	// DefaultStderrLogRate is how many of the child's stderr lines may be
	// logged a second once the burst is spent (see Config.StderrLogRate).
	DefaultStderrLogRate = 10
	// DefaultKillGrace is how long Close waits for a clean exit after
	// closing the child's stdin before it sends SIGKILL.
	DefaultKillGrace = 100 * time.Millisecond
	// OneCPUSpinWait is the SpinWait a zero Config gets on Linux when this
	// process may run on one CPU only (see Config.SpinWait).
	OneCPUSpinWait = 50 * time.Microsecond
)

// liveWorkers counts the workers this process has started and not yet
// reaped (see Config.SpinWait).
var liveWorkers atomic.Int32

// numCPU is runtime.NumCPU, replaced in tests.
var numCPU = runtime.NumCPU

// Config describes how to start a worker. The zero value starts the
// resolved binary as `monty subprocess` with an empty environment.
//
// A Config is plain data; Start copies it, so it may be reused and shared.
type Config struct {
	// Binary is the worker executable; empty means [ResolveBinary]'s search.
	Binary string
	// Args are the arguments after the program name; nil means
	// ["subprocess"].
	Args []string
	// Env is the child's environment; nil means an empty environment
	// (the worker needs none, and the sandbox must not see the host's).
	Env []string
	// Dir is the child's working directory; empty means the parent's.
	Dir string
	// StderrLimit bounds the retained stderr tail in bytes; 0 means
	// DefaultStderrLimit and a negative value keeps nothing.
	StderrLimit int
	// Logger receives the child's stderr lines (Debug, or Warn for lines
	// that report a failure; a line is cut into records of at most 4 KiB)
	// and lifecycle messages; nil means slog.Default().
	Logger *slog.Logger
	// StderrLogBurst and StderrLogRate bound the stderr lines given to
	// Logger, so that a worker writing to its stderr in a loop cannot
	// flood the host's logs: up to StderrLogBurst lines at once, then
	// StderrLogRate lines a second. Lines beyond are kept in the tail
	// ([Process.Stderr]) but not logged; the next record logged, and the
	// end of stderr, is preceded by one Warn record, "monty worker stderr
	// lines not logged", whose "lines" attribute counts them. A zero
	// StderrLogBurst means DefaultStderrLogBurst and a negative one logs
	// every line; a StderrLogRate of 0 or less means DefaultStderrLogRate.
	//
	// The bound is StderrLogLimiter's when that is set, and is then
	// shared by every worker started with it (StderrLogBurst and
	// StderrLogRate are not used). Otherwise Start makes one of its own
	// for each worker (NewStderrLogLimiter), so that workers started one
	// after another, as a program that floods stderr and gets its worker
	// replaced would have them, each get a fresh burst. A pool.Pool (and
	// so a server.Server) sets one for all its workers.
	StderrLogBurst   int
	StderrLogRate    int
	StderrLogLimiter *rate.Limiter
	// StderrTo, when set, receives the child's stderr byte for byte as the
	// child wrote it, instead of Logger (which then gets no stderr
	// records; the tail is kept either way): montygo subprocess relays its
	// inner worker's stderr so. It is written from one goroutine, never
	// after Close returns; a failed write stops the copy, not the tail. A
	// write that blocks holds up the drain, and so Close (and, once the
	// pipe is full, the child's own stderr writes), as a blocked reader of
	// the worker's own stderr would.
	StderrTo io.Writer
	// KillGrace is the wait between closing stdin and SIGKILL in Close;
	// 0 means DefaultKillGrace.
	KillGrace time.Duration
	// MaxFrameLen caps frames in both directions; 0 means the protocol
	// maximum (256 MiB).
	MaxFrameLen int
	// SpinWait, when positive, has every read of the child's stdout
	// after the first busy-poll the pipe for up to this long (yielding
	// the CPU between polls) before it blocks. A reply that comes within
	// it is read without the reading thread sleeping and being woken,
	// which on a small virtual machine costs more than the poll; each
	// read costs up to SpinWait of CPU when the reply is slower. With it,
	// frames to the child are also written without the scheduler's
	// bookkeeping when the write cannot wait (spinwait.Writer). Linux
	// only. montygo subprocess, which waits for its inner worker inside
	// every relayed turn, sets it.
	//
	// 0, the default, spins only on the smallest machines, where a
	// waiting thread's CPU would otherwise go idle and the wake-up that
	// ends the wait costs most (a virtual machine may halt an idle CPU at
	// once, and waking it then costs tens of microseconds):
	//
	//   - where this process may run on one CPU only (runtime.NumCPU is
	//     1: an affinity mask or a cpuset of one CPU, which the worker
	//     inherits), every read spins for OneCPUSpinWait. Parent and
	//     worker take turns on that CPU, so a spin cannot take CPU time
	//     the worker is using (each attempt yields the CPU, and with
	//     GOMAXPROCS 1 the P to the program's other goroutines). Measured
	//     pinned to one CPU, a warm feed took 7.3-7.8 µs with the spin
	//     against 11.0-11.8 µs without it.
	//   - on two CPUs, a read spins for OneCPUSpinWait while its worker is
	//     the only live worker this process has started (one session, or
	//     a pool of one): the spin keeps the waiting CPU awake for the
	//     reply. With two or more live workers the sessions keep both CPUs
	//     busy and a spin would take CPU time from the other sessions, so
	//     reads do not spin. Measured on a 2-vCPU VM: one session's warm
	//     feed 26-29 µs without the spin against 18 µs with it, and a
	//     relayed session (montygo subprocess) 35-47 µs against 15-18 µs;
	//     a pool of two sessions lost 20-50 % of its feeds per second when
	//     every read spun (docs/PERFORMANCE.md, "A lone session on two
	//     CPUs").
	//
	// A CPU quota alone (a container's --cpus) does not count. Larger
	// machines never spin by default. A negative value never spins.
	SpinWait time.Duration

	// soleSpin limits the spin to reads made while this process has one
	// live worker (the two-CPU default).
	soleSpin bool
}

// NewStderrLogLimiter returns the limiter of Config.StderrLogBurst burst
// and StderrLogRate perSecond, with their defaults (a zero burst is
// DefaultStderrLogBurst, a negative one no limit; a perSecond of 0 or
// less is DefaultStderrLogRate): set it as the StderrLogLimiter of the
// Configs whose workers should share one bound.
func NewStderrLogLimiter(burst, perSecond int) *rate.Limiter {
	switch {
	case burst < 0:
		return rate.NewLimiter(rate.Inf, 0)
	case burst == 0:
		burst = DefaultStderrLogBurst
	}
	if perSecond <= 0 {
		perSecond = DefaultStderrLogRate
	}
	return rate.NewLimiter(rate.Limit(perSecond), burst)
}

func (c Config) withDefaults() Config {
	if c.Args == nil {
		c.Args = []string{"subprocess"}
	}
	if c.Env == nil {
		c.Env = []string{}
	}
	switch {
	case c.StderrLimit == 0:
		c.StderrLimit = DefaultStderrLimit
	case c.StderrLimit < 0:
		c.StderrLimit = 0
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.StderrLogBurst == 0 {
		c.StderrLogBurst = DefaultStderrLogBurst
	}
	if c.StderrLogRate <= 0 {
		c.StderrLogRate = DefaultStderrLogRate
	}
	if c.StderrLogLimiter == nil {
		c.StderrLogLimiter = NewStderrLogLimiter(c.StderrLogBurst, c.StderrLogRate)
	}
	if c.KillGrace <= 0 {
		c.KillGrace = DefaultKillGrace
	}
	switch {
	case c.SpinWait < 0:
		c.SpinWait = 0
	case c.SpinWait == 0 && numCPU() == 1:
		c.SpinWait = OneCPUSpinWait
	case c.SpinWait == 0 && numCPU() == 2:
		c.SpinWait, c.soleSpin = OneCPUSpinWait, true
	}
	return c
}

// Process is one running worker child.
//
// ReadFrame and WriteFrame carry frames on the calling goroutine; one
// goroutine may read while another writes, but reads must not overlap
// reads, nor writes writes. Kill, Close, Pid, Exited, Exit and Stderr are
// safe for concurrent use with everything, including a blocked ReadFrame.
//
// Get a Process from [Start]; the zero Process is not usable. Pid, Exit
// and Stderr keep answering after the process has exited and Close has
// returned (the pid may then belong to another process).
type Process struct {
	cfg    Config
	bin    string
	cmd    *exec.Cmd
	stdin  *os.File   // parent's write end of the child's stdin
	stdout *os.File   // parent's read end of the child's stdout
	grown  int        // of the two pipes, those enlarged (see growPipe)
	pipes  [3]uint64  // the inodes of the stdin, stdout and stderr pipes (see killStrays)
	errR   *os.File   // parent's read end of the child's stderr
	out    *firstRead // what conn reads
	conn   *transport.Stream
	log    *slog.Logger
	tail   *ring

	exited     chan struct{} // closed once the child is reaped
	exit       Exit          // valid once exited is closed
	stderrDone chan struct{}
	wg         sync.WaitGroup

	closeOnce sync.Once

	// group is the child's process group: Kill signals it until the
	// reaper records the exit, before it reaps the child (the group's id
	// may name another group after that).
	group *spawn.Group
}

// Start resolves the binary and starts the worker. ctx bounds only the
// start itself; the process lives until Close or Kill.
func Start(ctx context.Context, cfg Config) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	bin, err := ResolveBinary(cfg.Binary)
	if err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	cfg.Binary = bin

	var files []*os.File
	grown := 0 // frame pipes enlarged (see growPipe)
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
		shrinkPipes(grown)
	}
	inR, inW, err := blockingPipe()
	if err != nil {
		return nil, fmt.Errorf("monty worker: stdin pipe: %w", err)
	}
	files = append(files, inR, inW)
	outR, outW, err := blockingPipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("monty worker: stdout pipe: %w", err)
	}
	files = append(files, outR, outW)
	for _, w := range []*os.File{inW, outW} {
		if growPipe(w) {
			grown++
		}
	}
	errR, errW, err := stderrPipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("monty worker: stderr pipe: %w", err)
	}
	files = append(files, errR, errW)

	pidfd := -1
	cmd := &exec.Cmd{
		Path:        bin,
		Args:        append([]string{bin}, cfg.Args...),
		Env:         cfg.Env,
		Dir:         cfg.Dir,
		Stdin:       inR,
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: sysProcAttr(&pidfd),
	}
	if err := spawn.Start(cmd.Start); err != nil {
		closeAll()
		return nil, fmt.Errorf("monty worker: start %s: %w%s", bin, err, startHint(err, cfg.Dir, bin))
	}
	liveWorkers.Add(1)
	// The child has its copies; ours must go, or EOF would never arrive.
	inR.Close()
	outW.Close()
	errW.Close()

	p := &Process{
		cfg:        cfg,
		bin:        bin,
		cmd:        cmd,
		group:      spawn.NewGroup(cmd.Process.Pid),
		stdin:      inW,
		stdout:     outR,
		grown:      grown,
		pipes:      [3]uint64{pipeInode(inW), pipeInode(outR), pipeInode(errR)},
		errR:       errR,
		out:        &firstRead{File: outR, spin: cfg.SpinWait, sole: cfg.soleSpin},
		tail:       newRing(cfg.StderrLimit),
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	p.conn = transport.NewStream(p.out, stdinWriter(inW, cfg.SpinWait), cfg.MaxFrameLen)
	p.log = cfg.Logger.With(slog.String("worker", bin), slog.Int("pid", cmd.Process.Pid))
	p.wg.Add(2)
	go p.reap(pidfd)
	go p.drainStderr()
	p.log.Debug("monty worker started")
	return p, nil
}

// startHint explains an ENOENT from starting bin, which exec reports
// against the binary whatever was missing: the working directory dir, or
// the interpreter of a binary that is there (a script's #! line, an ELF
// binary's dynamic loader, such as a glibc build in a musl container).
func startHint(err error, dir, bin string) string {
	if !errors.Is(err, syscall.ENOENT) {
		return ""
	}
	if dir != "" {
		if _, err := os.Stat(dir); err != nil {
			return " (the working directory " + dir + " does not exist)"
		}
	}
	if _, err := os.Stat(bin); err == nil {
		return " (the file exists: its interpreter or dynamic loader is missing)"
	}
	return ""
}

// reap waits for the child's exit, parked in the poller when the kernel
// gave a pidfd (Wait then returns at once), else blocked in Wait. On Linux
// it then kills what is left of the child's process group before reaping
// it: descendants of a wrapper that would otherwise hold the pipes open
// (a blocked read would never see the end of the stream) and outlive it.
// When one of the pipes is still held after that, it kills every process
// holding one (killStrays): descendants that left the group.
func (p *Process) reap(pidfd int) {
	defer p.wg.Done()
	pid := p.cmd.Process.Pid
	p.group.Exited(awaitExit(pidfd, pid))
	if stillHeld(p.stdout) || stillHeld(p.errR) || stillHeld(p.stdin) {
		killStrays(p.pipes)
	}
	err := p.cmd.Wait()
	spawn.Done()
	liveWorkers.Add(-1)
	p.exit = exitOf(p.cmd.ProcessState, err)
	close(p.exited)
	p.log.Debug("monty worker exited", slog.String("exit", p.exit.String()))
}

func exitOf(st *os.ProcessState, err error) Exit {
	if st == nil {
		return Exit{Code: -1}
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Exit{Code: -1, Signal: ws.Signal()}
	}
	return Exit{Code: st.ExitCode()}
}

// maxLogLine bounds one logged stderr record; a longer line is logged as
// several.
const maxLogLine = 4 << 10

func (p *Process) drainStderr() {
	defer p.wg.Done()
	defer close(p.stderrDone)
	buf := make([]byte, 4096)
	var line []byte
	lim := p.cfg.StderrLogLimiter
	var dropped int64 // lines not logged since the last summary
	summary := func() {
		if dropped > 0 {
			p.log.Warn("monty worker stderr lines not logged", slog.Int64("lines", dropped))
			dropped = 0
		}
	}
	emit := func() {
		if len(line) == 0 {
			return
		}
		if !lim.Allow() {
			dropped++
		} else {
			summary()
			level := slog.LevelDebug
			if looksFatal(line) {
				level = slog.LevelWarn
			}
			p.log.Log(context.Background(), level, "monty worker stderr", slog.String("line", string(line)))
		}
		line = line[:0]
	}
	// emitFull logs a full record of a line that goes on, cut between
	// characters: a character the cut would split starts the next one.
	var carry [utf8.UTFMax]byte
	emitFull := func() {
		n := 0
		for j := len(line) - 1; j >= 0 && j >= len(line)-(utf8.UTFMax-1); j-- {
			if utf8.RuneStart(line[j]) {
				if !utf8.FullRune(line[j:]) && j > 0 {
					n = copy(carry[:], line[j:])
					line = line[:j]
				}
				break
			}
		}
		emit()
		line = append(line, carry[:n]...)
	}
	to := p.cfg.StderrTo
	for {
		n, err := p.errR.Read(buf)
		if n > 0 {
			p.tail.Write(buf[:n])
			chunk := buf[:n]
			if to != nil {
				if _, werr := to.Write(chunk); werr != nil {
					to = nil
				}
				chunk = nil
			}
			// A line longer than maxLogLine is logged as consecutive
			// records of maxLogLine bytes, then its rest.
			for len(chunk) > 0 {
				i := bytes.IndexByte(chunk, '\n')
				end := i
				if i < 0 {
					end = len(chunk)
				}
				k := min(maxLogLine-len(line), end)
				line = append(line, chunk[:k]...)
				switch {
				case k < end:
					emitFull() // the line goes on
					chunk = chunk[k:]
				case i >= 0:
					emit()
					chunk = chunk[i+1:]
				default:
					if len(line) >= maxLogLine {
						emitFull()
					}
					chunk = nil
				}
			}
		}
		if err != nil {
			emit()
			summary()
			return
		}
	}
}

func looksFatal(line []byte) bool {
	for _, s := range [...]string{"fatal", "panicked", "allocation of", "error"} {
		if bytes.Contains(line, []byte(s)) {
			return true
		}
	}
	return false
}

// Binary returns the resolved path of the worker executable.
func (p *Process) Binary() string { return p.bin }

// Pid returns the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Conn returns the frame connection over the child's stdin and stdout.
// Its Close closes both pipes without waiting for the child; use
// [Process.Close] to stop the process.
func (p *Process) Conn() transport.Conn { return p.conn }

// ReadFrame reads the next frame the child wrote to its stdout. It blocks
// until a frame arrives or the child closes stdout (io.EOF at a frame
// boundary, frame.ErrTruncated inside one).
func (p *Process) ReadFrame() ([]byte, error) { return p.conn.ReadFrame() }

// WriteFrame writes one frame to the child's stdin.
func (p *Process) WriteFrame(body []byte) error { return p.conn.WriteFrame(body) }

// Pending reports whether the child has written bytes that no read has
// consumed yet: read ahead in the parent's buffer, or waiting in the pipe.
// Under strict alternation nothing may be pending when the parent is about
// to send a request, so a true result exposes an unsolicited (stray)
// event. Call it from the goroutine that reads frames.
func (p *Process) Pending() bool { return p.conn.Pending() }

// Exited returns a channel closed once the child has exited and been
// reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Exit returns the child's exit status and true once it has been reaped.
func (p *Process) Exit() (Exit, bool) {
	select {
	case <-p.exited:
		return p.exit, true
	default:
		return Exit{Code: -1}, false
	}
}

// Wait waits for the child to exit, or for ctx to be done.
func (p *Process) Wait(ctx context.Context) (Exit, error) {
	select {
	case <-p.exited:
		return p.exit, nil
	case <-ctx.Done():
		return Exit{Code: -1}, ctx.Err()
	}
}

// Stderr returns the retained tail of the child's stderr.
func (p *Process) Stderr() string { return p.tail.String() }

// Kill sends SIGKILL to the child at once, and on Linux to every process
// in its process group: a worker binary that is a wrapper (a script that
// runs the worker without exec) has the worker as a grandchild, which holds
// the pipes. Descendants that left the group (setsid, setpgid) are not
// reached by the signal; once the child has exited, those still holding
// one of its pipes are killed (see the package documentation). Kill does
// not wait; the child is reaped in the background (see
// Exited) and Close still has to be called to release the pipes. Killing a
// process that has already exited is a no-op.
func (p *Process) Kill() error {
	p.group.Kill()
	err := p.cmd.Process.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// Close stops the child with the kill ladder: it closes the child's stdin
// (a worker exits cleanly on EOF at a frame boundary), waits up to
// KillGrace for the exit, sends SIGKILL if the child is still running (at
// once if ctx is done), reaps it, and joins the stderr goroutine. It is
// idempotent; concurrent callers all wait for the first to finish. It
// returns nil unless the child could not be signalled.
func (p *Process) Close(ctx context.Context) error {
	var err error
	p.closeOnce.Do(func() {
		p.stdin.Close()
		t := time.NewTimer(p.cfg.KillGrace)
		select {
		case <-p.exited:
		case <-t.C:
			p.log.Debug("monty worker did not exit after stdin closed; killing")
			err = p.Kill()
		case <-ctx.Done():
			err = p.Kill()
		}
		t.Stop()
		<-p.exited
		p.release()
	})
	return err
}

// release joins the stderr drain and closes every parent-side pipe end.
// The child must have been reaped. On Linux, when no process holds the
// write end of the child's stderr any more, the drain reads the pipe to
// its end first; otherwise it gets KillGrace.
func (p *Process) release() {
	if runtime.GOOS == "linux" && !stillHeld(p.errR) {
		// Nothing can write any more: what is left in the pipe is read
		// to the end, however slowly the drain logs it.
		<-p.stderrDone
	}
	t := time.NewTimer(p.cfg.KillGrace)
	select {
	case <-p.stderrDone:
	case <-t.C:
		// Something else (a grandchild) holds the write end; stop reading.
	}
	t.Stop()
	p.errR.Close()
	p.wg.Wait()
	p.conn.Close()
	shrinkPipes(p.grown)
}

// settle waits up to protocol.FatalExitGrace for the child to exit, kills
// it if it has not, and returns its exit status.
func (p *Process) settle() Exit {
	t := time.NewTimer(protocol.FatalExitGrace)
	select {
	case <-p.exited:
	case <-t.C:
		p.Kill()
		<-p.exited
	}
	t.Stop()
	// The tail attached to the error should hold the child's last words:
	// once it has exited its stderr ends too (unless a grandchild holds
	// it), so give the drain a moment to finish.
	g := time.NewTimer(p.cfg.KillGrace)
	select {
	case <-p.stderrDone:
	case <-g.C:
	}
	g.Stop()
	return p.exit
}

// Lost classifies the loss of the child's connection (see
// [transport.Loss]): it waits up to protocol.FatalExitGrace for the exit
// (killing the child after that), reaps it, and returns the typed error.
// An announced loss (the child sent a FatalError) is a *CrashError with
// Reason Announced; otherwise exit status 65 gives a *MemoryLimitError and
// anything else a *CrashError with Reason Vanished wrapping the I/O error.
// If the child managed to write a FatalError frame before dying, that frame
// is still available to ReadFrame afterwards (the pipe is drained only by
// the caller). Lost does not release the pipes; call Close afterwards.
func (p *Process) Lost(l transport.Loss) error {
	exit := p.settle()
	if l.Announced {
		return &CrashError{Reason: Announced, Message: l.Message, Exit: exit, Stderr: p.Stderr()}
	}
	if exit.Code == int(protocol.ExitOOM) {
		return &MemoryLimitError{Exit: exit, Stderr: p.Stderr()}
	}
	cause := l.Err
	if cause == io.EOF {
		cause = io.ErrUnexpectedEOF
	}
	return &CrashError{Reason: Vanished, Context: l.Op, Exit: exit, Stderr: p.Stderr(), Err: cause}
}

// IsStreamEnd reports whether err from ReadFrame or WriteFrame means the
// child's side of the pipe is gone (EOF, a truncated frame or a broken
// pipe), as opposed to a protocol-level framing violation.
func IsStreamEnd(err error) bool {
	return err == io.EOF || errors.Is(err, frame.ErrTruncated) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, os.ErrClosed)
}

// stdinWriter is what frames to the child are written through: with a
// spin (Config.SpinWait), a spinwait.Writer, whose writes skip the
// scheduler's bookkeeping when they cannot wait.
func stdinWriter(f *os.File, spin time.Duration) io.Writer {
	if spin > 0 {
		return spinwait.NewWriter(f)
	}
	return f
}

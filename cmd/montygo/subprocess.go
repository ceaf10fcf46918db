//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/child/relay"
	"github.com/gomonty/monty/child/tap"
	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/worker"
)

// defaultSpin is how long `montygo subprocess` busy-polls for the next
// frame, from its parent and from its inner worker, before it sleeps. In
// a relayed turn each side answers within microseconds, and on a 2-CPU
// virtual machine a sleeping thread's wake-up costs more than that
// (docs/PERFORMANCE.md, the relay section). The poll yields the CPU
// between attempts, so a process queued behind it runs at once.
const defaultSpin = 50 * time.Microsecond

// maxSpin bounds --spin: each wait for the parent's next frame (an idle
// REPL's, for one) would busy-poll a CPU for up to that long.
const maxSpin = time.Second

// subprocessCmd is `montygo subprocess`: a Monty worker over stdin and
// stdout that any Monty parent can drive, relaying each session to a real
// `monty subprocess` worker.
func subprocessCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("subprocess", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workerPath := fs.String("worker", "", "`PATH` of the inner monty worker (default: $MONTY_BIN, a monty file beside montygo, then the usual search)")
	record := fs.String("record", "", "write every frame both ways to `FILE` (render with montygo decode --record FILE)")
	proto := versionVar(fs, "protocol", 0, "accept only this outer protocol `version` (5, 4 or 2; default 4 and 2)")
	inner := versionVar(fs, "inner-protocol", 0, "pin the inner worker's protocol `version` (default: negotiate)")
	spin := fs.Duration("spin", defaultSpin, "busy-poll for up to this long for the next frame from the parent and from the inner worker before sleeping (0: never; at most 1s)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: montygo subprocess [--worker PATH] [--record FILE] [--protocol 5|4|2] [--inner-protocol N] [--spin DURATION]")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), subprocessExitStatusHelp)
	}
	if err := parseArgs(fs, stdout, stderr, func() error { return fs.Parse(args) }); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "montygo subprocess: unexpected argument %q\n", fs.Arg(0))
		return exitError{code: 2}
	}
	if _, ok := codec.ForVersion(*inner); *inner != 0 && !ok {
		// Found when a parent's Configure came, as a fatal start failure.
		fmt.Fprintf(stderr, "montygo subprocess: --inner-protocol %d: gomonty speaks protocols %v\n", *inner, codec.Versions())
		return exitError{code: 2}
	}
	if *spin < 0 || *spin > maxSpin {
		fmt.Fprintf(stderr, "montygo subprocess: --spin %v: want 0 (never spin) to %v (a spin saves a wake-up of microseconds; a longer one keeps a CPU busy at every wait for the parent)\n", *spin, maxSpin)
		return exitError{code: 2}
	}
	bin, err := innerWorker(*workerPath)
	if err != nil {
		fmt.Fprintf(stderr, "montygo subprocess: %v\n", err)
		return exitError{code: int(protocol.ExitFatal)}
	}
	// A parent that went away must end us with status 3 (stdout broken),
	// not by SIGPIPE, which Go raises for writes to a closed stdout.
	signal.Ignore(syscall.SIGPIPE)
	// SIGTERM and SIGINT end us at once, as they end the native worker;
	// the inner worker follows through its parent-death signal.
	signal.Reset(syscall.SIGTERM, syscall.SIGINT)
	errOut := &stderrHandler{w: stderr}
	logger := slog.New(errOut)
	spinFor := *spin
	stdin, restore := stdinReader(stdin, spinFor)
	defer restore()
	var conn transport.Conn = transport.NewStream(stdin, spinStdout(stdout, spinFor), 0)
	var tapped *tap.Conn
	if *record != "" {
		f, err := os.OpenFile(*record, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			// A file the flag names that cannot be written is a usage
			// mistake (exit 2, as the help says), not a fatal worker.
			fmt.Fprintf(stderr, "montygo subprocess: --record %s: %v\n", *record, pathErrorCause(err))
			return exitError{code: 2}
		}
		defer f.Close()
		tapped = tap.New(conn, f)
		conn = tapped
	}
	var opts child.Options
	opts.Logger = logger
	if *proto != 0 {
		// The versions the child side serves (5 only when pinned, see
		// child.DefaultVersions); refuse the others rather than serve them
		// half.
		if !slices.Contains(child.SupportedVersions, *proto) {
			fmt.Fprintf(stderr, "montygo subprocess: --protocol must be one of %v\n", child.SupportedVersions)
			return exitError{code: 2}
		}
		opts.Versions = []uint32{*proto}
	}
	eng := relay.New(relay.Config{
		Worker:          worker.Config{Binary: bin, Logger: logger, StderrTo: errOut, SpinWait: innerSpin(spinFor)},
		ProtocolVersion: *inner,
		Logger:          logger,
	})
	err = child.Serve(ctx, conn, eng, opts)
	if tapped != nil && tapped.Err() != nil {
		fmt.Fprintf(stderr, "montygo subprocess: recording stopped: %v\n", tapped.Err())
	}
	var ee *child.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		if ee.Signal != 0 {
			dieBySignal(ee.Signal)
			return exitError{code: 128 + int(ee.Signal)}
		}
		if ee.Code < 0 || ee.Code > 255 {
			return exitError{code: int(protocol.ExitFatal)}
		}
		var ce *worker.CrashError
		if ee.Code == protocol.ExitProtocol && ee.Message != "" && !errors.As(err, &ce) {
			// The native worker's line for a desynchronized stream; an
			// inner worker's own death has had its stderr relayed already.
			fmt.Fprintf(stderr, "monty subprocess fatal error: %s\n", ee.Message)
		}
		return exitError{code: int(ee.Code)}
	case ctx.Err() != nil:
		return exitError{code: 1}
	}
	return err
}

// dieBySignal ends the process by sig, as the inner worker ended, so the
// parent sees the same death.
func dieBySignal(sig syscall.Signal) {
	signal.Reset(sig)
	defaultAction(sig)
	killSelf(sig)
	// A signal that does not kill (or is blocked) falls through to the
	// 128+N exit the caller returns.
	time.Sleep(time.Second)
}

// innerWorker finds the inner worker: --worker, then $MONTY_BIN unless it
// names montygo itself, then a `monty` file beside the montygo executable,
// then the usual search. Upstream parents start `BINARY subprocess` with
// an empty environment and no other argument, so the last two steps must
// work without flags or environment.
func innerWorker(explicit string) (string, error) {
	self, _ := os.Executable()
	isSelf := func(p string) bool {
		if self == "" {
			return false
		}
		a, err1 := os.Stat(self)
		b, err2 := os.Stat(p)
		return err1 == nil && err2 == nil && os.SameFile(a, b)
	}
	if explicit != "" {
		p, err := worker.ResolveBinary(explicit)
		if err == nil && isSelf(p) {
			return "", errors.New("--worker names montygo itself")
		}
		return p, workerNotFound(err, "--worker")
	}
	if env := os.Getenv(worker.EnvBinary); env != "" {
		if !isSelf(env) {
			p, err := worker.ResolveBinary(env)
			return p, workerNotFound(err, "$"+worker.EnvBinary)
		}
	}
	if self != "" {
		beside := filepath.Join(filepath.Dir(self), "monty")
		if st, err := os.Stat(beside); err == nil && !st.IsDir() && !isSelf(beside) {
			p, err := worker.ResolveBinary(beside)
			return p, workerNotFound(err, "the monty beside montygo,")
		}
	}
	// The usual search, without a $MONTY_BIN that names montygo.
	if env := os.Getenv(worker.EnvBinary); env != "" && isSelf(env) {
		os.Unsetenv(worker.EnvBinary)
	}
	p, err := worker.ResolveBinary("")
	if err == nil && isSelf(p) {
		return "", errors.New("the only monty worker found is montygo itself; pass --worker")
	}
	return p, workerNotFound(err, "")
}

// stderrHandler writes the inner worker's stderr to our stderr byte for
// byte (worker.Config.StderrTo: a parent reading our stderr sees what the
// real worker would have written) and warnings as plain lines.
type stderrHandler struct {
	mu sync.Mutex
	w  io.Writer
}

// Write relays the inner worker's stderr as it came.
func (h *stderrHandler) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.w.Write(b)
}

func (h *stderrHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *stderrHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return nil
	}
	line := "montygo subprocess: " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	line += "\n"
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line)
	return err
}

func (h *stderrHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *stderrHandler) WithGroup(string) slog.Handler      { return h }

// innerSpin is the worker.Config.SpinWait of the inner worker for --spin:
// the same, except that --spin 0 never spins (a zero SpinWait would spin
// on one CPU, worker.OneCPUSpinWait).
func innerSpin(spin time.Duration) time.Duration {
	if spin <= 0 {
		return -1
	}
	return spin
}

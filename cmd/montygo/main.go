//go:build unix

// Command montygo runs untrusted Python in crash-isolated monty workers and
// helps debug the Monty wire protocol.
//
// Usage:
//
//	montygo run FILE | -c CODE [flags]   run a program through a real worker
//	montygo repl [flags]                 an interactive session
//	montygo decode [flags] < frames      decode a captured frame stream to JSON
//	montygo decode --record FILE         render a `subprocess --record` file
//	montygo subprocess [flags]           be a Monty worker (relay to a real one)
//	montygo serve [flags]                serve Monty sessions over WebSockets
//	montygo conform worker|parent ...    the protocol's conformance kit
//	montygo version                      print versions
//	montygo help [command]               the commands, or a command's flags
//	montygo --version                    print montygo's version (one line)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gomonty/monty/session"
)

// exitError carries a process exit status out of a subcommand: with err,
// an error main prints as it prints any other before it exits with code;
// without, one the subcommand has told already.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return fmt.Sprintf("exit status %d", e.code)
}

func (e exitError) Unwrap() error { return e.err }

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"run", "run a Python file or -c CODE through a real worker", runCmd},
		{"repl", "start an interactive session", replCmd},
		{"decode", "decode a captured stream of frames to JSON lines", decodeCmd},
		{"subprocess", "serve the worker protocol on stdin/stdout, relaying to a real worker", subprocessCmd},
		{"serve", "serve Monty sessions over WebSockets (the Monty server)", serveCmd},
		{"version", "print the module, protocol and worker versions", versionCmd},
		{"conform", "conformance kit: check a worker (conform worker) or a parent (conform parent)", conformCmd},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: montygo <command> [flags]")
	fmt.Fprintln(w)
	cmds := commands()
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, exitStatusTable)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'montygo help <command>' or 'montygo <command> -h' for a command's flags, 'montygo --version' for montygo's version.")
}

func main() {
	os.Exit(mainArgs(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func mainArgs(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return mainWith(commands(), args, stdin, stdout, stderr, os.Exit)
}

// exitGrace is how long montygo waits, after a first SIGTERM or Ctrl-C has
// cancelled the command, for the command to wind down on its own; then (or
// at a second signal) it kills its workers and exits. It is a variable only
// so that a test can lengthen it (TestSignalsEndAStuckCommand); nothing
// else changes it.
var exitGrace = 500 * time.Millisecond

// mainWith runs the command of cmds that args name; exit ends the process
// when a signal's grace runs out (os.Exit outside tests).
func mainWith(cmds []command, args []string, stdin io.Reader, stdout, stderr io.Writer, exit func(int)) int {
	if len(args) > 1 && args[0] == "help" && args[1] != "help" {
		// As `go help build`: a command's own usage.
		args = []string{args[1], "-h"}
	}
	if len(args) == 0 {
		// No command is a usage mistake, told with the list of commands.
		usage(stderr)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		// Help asked for is output: stdout, exit 0.
		usage(stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-V" {
		// As `monty --version`: one line. `montygo version` and the REPL's
		// banner ask a worker binary this, and montygo can be the worker.
		fmt.Fprintf(stdout, "montygo %s (github.com/gomonty/monty)\n", moduleVersion())
		return 0
	}
	for _, c := range cmds {
		if c.name != args[0] {
			continue
		}
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		sigs := make(chan os.Signal, 2)
		if c.name == "repl" {
			// The REPL handles Ctrl-C itself (it interrupts the running
			// input); SIGTERM ends it like any other command.
			signal.Notify(sigs, syscall.SIGTERM)
		} else {
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		}
		defer signal.Stop(sigs)
		done := make(chan struct{})
		var got atomic.Value // the first signal
		go func() {
			var first os.Signal
			select {
			case first = <-sigs:
			case <-done:
				return
			}
			got.Store(first)
			stop() // the command cancels its work and kills its worker
			grace := time.NewTimer(exitGrace)
			defer grace.Stop()
			select {
			case <-sigs:
			case <-grace.C:
			case <-done:
				return
			}
			// The command did not end in time (it may be busy on a CPU):
			// kill the workers, restore the terminal and leave.
			liveSessions.killAll()
			runExitHooks()
			exit(signalStatus(first))
		}()
		err := c.run(ctx, args[1:], stdin, stdout, stderr)
		close(done)
		if sig, ok := got.Load().(os.Signal); ok {
			if sig == os.Interrupt {
				fmt.Fprintln(stderr, "KeyboardInterrupt")
			}
			return signalStatus(sig)
		}
		var ee exitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ee):
			if ee.err != nil {
				fmt.Fprintf(stderr, "montygo %s: %s\n", c.name, cliText(err))
			}
			return ee.code
		default:
			fmt.Fprintf(stderr, "montygo %s: %s\n", c.name, cliText(err))
			return 1
		}
	}
	// One line and a pointer, as a subcommand's mistakes are said.
	if strings.HasPrefix(args[0], "-") {
		// A flag before the command: say where it goes.
		where := "montygo COMMAND " + args[0]
		for _, a := range args[1:] {
			if slices.ContainsFunc(cmds, func(c command) bool { return c.name == a }) {
				where = "montygo " + a + " " + args[0]
				break
			}
		}
		fmt.Fprintf(stderr, "montygo: unknown flag %q (flags go after the command: %s)\nRun 'montygo help' for the commands.\n", args[0], where)
		return 2
	}
	fmt.Fprintf(stderr, "montygo: unknown command %q\nRun 'montygo help' for the commands.\n", args[0])
	return 2
}

// parseArgs runs parse, which parses a subcommand's arguments with fs.
// -h or --help prints fs's usage on stdout and exits 0: help asked for is
// the command's output, to be paged or grepped (fs.Usage must write to
// fs.Output()). A mistake (an unknown flag, a value the flag refuses, a
// flag given twice) is said on one line naming the subcommand, with a
// pointer to -h, on stderr, and exits 2, as go and kubectl do: the flag
// package alone printed the mistake bare and then every flag's help, so
// the one line that mattered scrolled away above it.
//
// A flag that takes one value may be given once: the flag package keeps
// the last of `-c 1 -c 2` without a word, so a user who repeated a flag
// by mistake ran something other than what one of the two asked for.
// Flags whose value implements repeatable (--mount, --input, ...) collect
// every occurrence.
func parseArgs(fs *flag.FlagSet, stdout, stderr io.Writer, parse func() error) error {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	var twice string
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := f.Value.(repeatable); !ok {
			f.Value = &onceValue{Value: f.Value, name: f.Name, twice: &twice}
		}
	})
	err := parse()
	fs.VisitAll(func(f *flag.Flag) {
		if o, ok := f.Value.(*onceValue); ok {
			f.Value = o.Value
		}
	})
	fs.Usage = usage
	fs.SetOutput(out)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		fs.SetOutput(out)
		return exitError{code: 0}
	case twice != "":
		err = fmt.Errorf("flag -%s given twice (it takes one value)", twice)
	}
	fmt.Fprintf(stderr, "montygo %s: %v\nRun 'montygo %s -h' for usage.\n", fs.Name(), err, fs.Name())
	return exitError{code: 2}
}

// repeatable is implemented by the values of flags that may be given more
// than once, each occurrence adding to the value.
type repeatable interface {
	flag.Value
	repeatable()
}

// onceValue wraps a flag's value while parseArgs parses: a second Set
// records the flag's name in twice and fails.
type onceValue struct {
	flag.Value
	name  string
	set   bool
	twice *string
}

func (o *onceValue) Set(s string) error {
	if o.set {
		*o.twice = o.name
		return errors.New("given twice")
	}
	o.set = true
	return o.Value.Set(s)
}

// IsBoolFlag passes on the wrapped value's, so that -json needs no
// argument.
func (o *onceValue) IsBoolFlag() bool {
	b, ok := o.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// signalStatus is the shell's exit status for a death by sig: 128 + its
// number (130 for SIGINT, 143 for SIGTERM).
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// sessionSet tracks the sessions a command holds, so that a forced exit
// kills their workers first. Safe for concurrent use.
type sessionSet struct {
	mu sync.Mutex
	m  map[*session.Session]struct{}
}

var liveSessions sessionSet

func (ss *sessionSet) add(s *session.Session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.m == nil {
		ss.m = map[*session.Session]struct{}{}
	}
	ss.m[s] = struct{}{}
}

func (ss *sessionSet) remove(s *session.Session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.m, s)
}

// killAll sends SIGKILL to every tracked worker (Session.Kill is safe to
// call concurrently with a turn).
func (ss *sessionSet) killAll() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for s := range ss.m {
		s.Kill()
	}
}

var (
	exitMu    sync.Mutex
	exitHooks = map[int]func(){}
	exitNext  int
)

// onForcedExit registers f to run before a forced exit (one that skips
// deferred calls), such as restoring the terminal, and returns a function
// that unregisters it.
func onForcedExit(f func()) (unregister func()) {
	exitMu.Lock()
	defer exitMu.Unlock()
	id := exitNext
	exitNext++
	exitHooks[id] = f
	return func() {
		exitMu.Lock()
		defer exitMu.Unlock()
		delete(exitHooks, id)
	}
}

func runExitHooks() {
	exitMu.Lock()
	defer exitMu.Unlock()
	for _, f := range exitHooks {
		f()
	}
}

// versionFlag is a protocol-version flag (--protocol, --inner-protocol).
// A value that does not fit the wire's uint32 is a parse error, so a usage
// mistake: a uint flag converted to uint32 wrapped 4294967300 to 4. So is
// 0, which no protocol is: the commands read a zero value as the flag left
// out (negotiate, the default versions), so an explicit 0 ran something
// other than a version the user could have meant.
type versionFlag uint32

func (v *versionFlag) String() string { return strconv.FormatUint(uint64(*v), 10) }

func (v *versionFlag) Set(s string) error {
	n, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		return fmt.Errorf("%q is not a protocol version", s)
	}
	if n == 0 {
		return fmt.Errorf("%q is not a protocol version (leave the flag out for its default)", s)
	}
	*v = versionFlag(n)
	return nil
}

// versionVar defines a protocol-version flag with a default.
func versionVar(fs *flag.FlagSet, name string, def uint32, usage string) *uint32 {
	v := versionFlag(def)
	fs.Var(&v, name, usage)
	return (*uint32)(&v)
}

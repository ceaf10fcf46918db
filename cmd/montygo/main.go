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
//	montygo version                      print versions
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// exitError carries a process exit status out of a subcommand.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

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
		{"version", "print the module, protocol and worker versions", versionCmd},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: montygo <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'montygo <command> -h' for a command's flags.")
}

func main() {
	os.Exit(mainArgs(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func mainArgs(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		if c.name != "repl" { // the REPL handles Ctrl-C itself
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sig)
			go func() {
				select {
				case <-sig:
					stop()
				case <-ctx.Done():
				}
			}()
		}
		err := c.run(ctx, args[1:], stdin, stdout, stderr)
		var ee exitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ee):
			return ee.code
		default:
			fmt.Fprintf(stderr, "montygo %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "montygo: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/worker"
)

func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func versionCmd(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
			fmt.Fprintln(stdout, "usage: montygo version   (the module, protocol and worker versions)")
			return nil
		}
		fmt.Fprintf(stderr, "montygo version: unexpected argument %q\n", args[0])
		return exitError{code: 2}
	}
	fmt.Fprintf(stdout, "montygo %s (github.com/gomonty/monty)\n", moduleVersion())
	vs := codec.Versions()
	fmt.Fprintf(stdout, "protocol versions: %v (tried first: %d)\n", vs, vs[0])
	bin, err := worker.ResolveBinary("")
	if err != nil {
		fmt.Fprintf(stdout, "worker: not found (%v)\n", workerNotFoundNoFlag(err))
		return nil
	}
	v := workerVersion(ctx, bin)
	if v == "" {
		v = "unknown version"
	}
	fmt.Fprintf(stdout, "worker: %s (%s)\n", v, bin)
	return nil
}

// workerVersion returns what the worker binary bin answers to --version,
// "" when it fails or does not answer within workerVersionTimeout (it is
// then killed; a process it left holding its output is not waited for).
func workerVersion(ctx context.Context, bin string) string {
	ctx, cancel := context.WithTimeout(ctx, workerVersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.WaitDelay = 100 * time.Millisecond
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// workerVersionTimeout bounds the wait for a worker binary's answer to
// --version (`montygo version`, the REPL's banner).
var workerVersionTimeout = 5 * time.Second

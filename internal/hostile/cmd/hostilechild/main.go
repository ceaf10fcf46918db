// Command hostilechild is a misbehaving Monty worker for tests.
//
// Usage:
//
//	hostilechild [subprocess] [-protocol 2|4|2,4] [-scenario NAME] [-scale N] [-lifetime D]
//	hostilechild -list
//
// It speaks the worker protocol on stdin/stdout like `monty subprocess`
// (a leading "subprocess" argument is accepted and ignored) and plays one
// scenario of package internal/hostile. The scenario and the claimed
// protocol versions can also be chosen with the HOSTILE_SCENARIO and
// HOSTILE_PROTOCOL environment variables, so a parent can select them while
// passing a fixed argv; flags win over the environment. -scale
// (HOSTILE_SCALE) shrinks the amplification and nesting payloads for
// parents configured with a small decode budget.
//
// By default the child claims protocol 2 only, like the released worker,
// and refuses any other version with its exact FatalError (exit status 4).
//
// As a safety net for broken parents, the process exits with status 124
// after -lifetime (HOSTILE_LIFETIME, default 60s) whatever it is doing, so
// that a scenario that "hangs forever" cannot outlive a test run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/gomonty/monty/internal/hostile"
)

// lifetimeExit is the status used when the lifetime cap ends the process.
const lifetimeExit = 124

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout *os.File, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "subprocess" {
		args = args[1:]
	}
	fs := flag.NewFlagSet("hostilechild", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scenario := fs.String("scenario", os.Getenv("HOSTILE_SCENARIO"), "scenario to play (default \"normal\")")
	protos := fs.String("protocol", os.Getenv("HOSTILE_PROTOCOL"), "protocol versions to claim: 2, 4 or 2,4 (default: the scenario's)")
	lifetime := fs.Duration("lifetime", envDuration("HOSTILE_LIFETIME", 60*time.Second), "exit after this long whatever happens")
	scale := fs.Int("scale", envInt("HOSTILE_SCALE", 1), "divide amplification and nesting payload sizes by this")
	list := fs.Bool("list", false, "list the scenarios and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	for _, a := range fs.Args() {
		if a != "subprocess" {
			fmt.Fprintf(stderr, "hostilechild: unexpected argument %q\n", a)
			return 2
		}
	}
	if *list {
		for _, s := range hostile.Scenarios() {
			fmt.Fprintf(stdout, "%-28s %-16s %s\n", s.Name, s.Expect.Outcome, s.Description)
		}
		return 0
	}
	claim, err := hostile.ParseProtocols(*protos)
	if err != nil {
		fmt.Fprintln(stderr, "hostilechild:", err)
		return 2
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if *lifetime > 0 {
		time.AfterFunc(*lifetime, func() {
			fmt.Fprintf(stderr, "hostilechild: lifetime of %v reached, exiting\n", *lifetime)
			os.Exit(lifetimeExit)
		})
	}

	err = hostile.Run(*scenario, stdin, stdout, hostile.Options{
		Protocols:   claim,
		Stderr:      stderr,
		Context:     ctx,
		CloseStdout: stdout.Close,
		Scale:       *scale,
	})
	return hostile.Exit(err, stderr, "hostilechild")
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v := os.Getenv(name); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return def
}

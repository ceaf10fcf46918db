//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/conform"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
)

// conformCmd runs the conformance kit:
//
//	montygo conform worker (--worker BIN | --remote URL [--header 'Name: value']...) [--protocol N] [--json] [--run REGEXP]
//	montygo conform parent [--json] [--run REGEXP] -- COMMAND [ARGS...]
func conformCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, conformUsage)
		return exitError{code: 2}
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprintln(stdout, conformUsage)
		return nil
	case "worker":
		return conformWorker(ctx, args[1:], stdout, stderr)
	case "parent":
		return conformParent(ctx, args[1:], stdout, stderr)
	case conform.ChildCommand:
		// The scripted child of `conform parent`, run by the per-scenario
		// launcher; not for direct use.
		return exitIfNonZero(conform.ServeChild(ctx, args[1:], stdin, stdout, stderr))
	}
	fmt.Fprintf(stderr, "montygo conform: unknown mode %q (want worker or parent)\n", args[0])
	return exitError{code: 2}
}

// conformParentUsage is the first line of conform parent's usage.
const conformParentUsage = "usage: montygo conform parent [flags] -- COMMAND [ARGS...]   (COMMAND is the parent under test; it must start its worker from $MONTY_BIN)"

// conformUsage is conform's usage, before its mode is known.
const conformUsage = "usage: montygo conform worker|parent [flags]   (montygo conform worker -h, montygo conform parent -h for each one's flags)"

func exitIfNonZero(code int) error {
	if code == 0 {
		return nil
	}
	return exitError{code: code}
}

type headerFlag struct{ h http.Header }

func (f *headerFlag) repeatable() {}

func (f *headerFlag) String() string { return "" }
func (f *headerFlag) Set(s string) error {
	name, val, err := ws.ParseHeader(s)
	if err != nil {
		return untagged{err, "ws: "}
	}
	if f.h == nil {
		f.h = http.Header{}
	}
	f.h.Add(name, val)
	return nil
}

func conformWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("conform worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bin := fs.String("worker", "", "worker executable `BIN`, run as 'BIN subprocess' (default: $MONTY_BIN, .monty/bin/monty, PATH)")
	workerArgs := fs.String("worker-args", "", "space-separated `ARGS` the worker is run with instead of 'subprocess' (e.g. 'subprocess --protocol 2' for montygo)")
	remote := fs.String("remote", "", "test the WebSocket worker endpoint at `URL` (ws:// or wss://) instead of a local binary")
	var hdr headerFlag
	fs.Var(&hdr, "header", "extra upgrade `HEADER` for --remote, 'Name: value' (repeatable)")
	proto := versionVar(fs, "protocol", 4, "protocol `version` to test (2, 4 or 5)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	run := fs.String("run", "", "only rules whose id matches this `REGEXP`")
	parallel := fs.Int("parallel", 0, "rules run at once (default: max(4, 2×CPUs))")
	timeout := fs.Duration("rule-timeout", 30*time.Second, "time limit of one rule")
	expect := fs.String("expect-fail", "", "comma-separated rule `IDS` known to fail: exit 0 when exactly these fail (for CI against a worker with documented deviations)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: montygo conform worker [--worker BIN | --remote URL [--header 'Name: value']...] [flags]")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), conformExitStatusHelp)
	}
	if err := parseArgs(fs, stdout, stderr, func() error { return fs.Parse(args) }); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "montygo conform worker: unexpected argument %q\n", fs.Arg(0))
		return exitError{code: 2}
	}
	if *remote != "" && *bin != "" {
		fmt.Fprintln(stderr, "montygo conform worker: --worker and --remote are exclusive")
		return exitError{code: 2}
	}
	if err := negativeFlags(stderr, "conform worker", fs); err != nil {
		return err
	}
	if *timeout == 0 {
		// The kit reads 0 as its default (30s), which the help shows as
		// the flag's own default, not as a way to ask for it.
		fmt.Fprintln(stderr, "montygo conform worker: --rule-timeout 0s: a rule needs some time (leave the flag out for 30s)")
		return exitError{code: 2}
	}
	opts := conform.Options{Protocol: *proto, Parallel: *parallel, RuleTimeout: *timeout}
	if *run != "" {
		re, err := regexp.Compile(*run)
		if err != nil {
			fmt.Fprintf(stderr, "montygo conform worker: --run: %v\n", err)
			return exitError{code: 2}
		}
		opts.Match = re
		// A --run that selects nothing checks nothing: a usage mistake,
		// told before the worker is looked for or started.
		if !slices.ContainsFunc(conform.Rules(), func(r conform.Rule) bool { return re.MatchString(r.ID) }) {
			fmt.Fprintf(stderr, "montygo conform worker: --run %q matches no rule\n", *run)
			return exitError{code: 2}
		}
	}
	if opts.Protocol != 0 && !slices.Contains(codec.Versions(), opts.Protocol) {
		fmt.Fprintf(stderr, "montygo conform worker: --protocol %d: the kit knows protocols %v\n", opts.Protocol, codec.Versions())
		return exitError{code: 2}
	}
	if *workerArgs != "" && *remote != "" {
		fmt.Fprintln(stderr, "montygo conform worker: --worker-args needs a local worker, not --remote")
		return exitError{code: 2}
	}
	for _, id := range strings.Split(*expect, ",") {
		// A typo is refused before anything runs; a rule outside the
		// selection is told after the report (expectedFailures).
		if id = strings.TrimSpace(id); id != "" {
			if _, ok := conform.Lookup(id); !ok {
				fmt.Fprintf(stderr, "montygo conform worker: --expect-fail: %q is not a rule of the kit\n", id)
				return exitError{code: 2}
			}
		}
	}
	target := conform.Target{Binary: *bin, URL: *remote, Header: hdr.h}
	if *remote != "" {
		// The pool's check, as run's --remote: a URL no dial can use is one
		// usage error, not a failure of every rule (secrets masked).
		if err := pool.CheckEndpointURL(*remote); err != nil {
			fmt.Fprintf(stderr, "montygo conform worker: --remote %v\n", err)
			return exitError{code: 2}
		}
	}
	if *remote == "" {
		// A worker that cannot be found is one error, not a failure of
		// every rule under an empty target name; it exits 3, as run's
		// and serve's missing worker does (no worker was found).
		if _, err := worker.ResolveBinary(*bin); err != nil {
			fmt.Fprintln(stderr, "montygo conform worker:", workerNotFound(err, "--worker"))
			return exitError{code: exitSandboxFailed}
		}
	}
	if *workerArgs != "" {
		target.Args = strings.Fields(*workerArgs)
	}
	if *remote != "" {
		// An endpoint that cannot be reached is one error, as run says
		// it (exit 3), not a failure of every rule with the dial's text.
		if err := reachable(ctx, *remote, hdr.h); err != nil {
			fmt.Fprintln(stderr, "montygo conform worker:", cliText(err))
			return exitError{code: exitSandboxFailed}
		}
	}
	rep, err := conform.Run(ctx, target, opts)
	if err != nil {
		return err
	}
	if err := nothingChecked(rep, "conform worker", "rule", stderr); err != nil {
		return err
	}
	if err := printReport(stdout, rep, *asJSON); err != nil {
		return err
	}
	if *expect != "" {
		return expectedFailures(rep, strings.Split(*expect, ","), stderr)
	}
	if rep.Summary.Fail > 0 {
		return exitError{code: 1}
	}
	return nil
}

// expectedFailures returns nil when exactly the listed rules failed, and
// exit status 1 (naming the difference) otherwise; a listed rule that was
// skipped did not fail.
func expectedFailures(rep *conform.Report, ids []string, stderr io.Writer) error {
	want := map[string]bool{}
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			want[id] = true
		}
	}
	ok := true
	for _, r := range rep.Rules {
		switch {
		case r.Status == conform.Fail && !want[r.ID]:
			fmt.Fprintf(stderr, "montygo conform: %s failed unexpectedly\n", r.ID)
			ok = false
		case r.Status == conform.Pass && want[r.ID]:
			fmt.Fprintf(stderr, "montygo conform: %s was expected to fail but passed\n", r.ID)
			ok = false
		case r.Status == conform.Skip && want[r.ID]:
			fmt.Fprintf(stderr, "montygo conform: %s was expected to fail but was skipped (%s)\n", r.ID, r.Detail)
			ok = false
		}
		delete(want, r.ID)
	}
	for id := range want {
		fmt.Fprintf(stderr, "montygo conform: expected failure %s is not a rule that ran\n", id)
		ok = false
	}
	if !ok {
		return exitError{code: 1}
	}
	return nil
}

func conformParent(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("conform parent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	run := fs.String("run", "", "only scenarios whose name matches this `REGEXP`")
	parallel := fs.Int("parallel", 0, "scenarios run at once (default: max(2, CPUs))")
	limit := fs.Duration("scenario-timeout", 0, "time a parent gets per scenario (default 30s)")
	proto := versionVar(fs, "protocol", 0, "protocol `version` the scripted child claims (default: the scenario's, 2 where defined)")
	budget := fs.Int64("decode-budget", 0, "the parent's per-frame decode budget in bytes, for the memory check (default 1 GiB)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), conformParentUsage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), conformExitStatusHelp)
	}
	if err := parseArgs(fs, stdout, stderr, func() error { return fs.Parse(args) }); err != nil {
		return err
	}
	cmd := fs.Args()
	if len(cmd) == 0 {
		fmt.Fprintln(stderr, conformParentUsage)
		return exitError{code: 2}
	}
	if err := negativeFlags(stderr, "conform parent", fs); err != nil {
		return err
	}
	if _, err := exec.LookPath(cmd[0]); err != nil {
		// A parent that cannot be run is one usage error, not a failure
		// of every scenario ("the parent never started the scripted
		// child"), 78 times.
		var ee *exec.Error
		var pe *os.PathError
		if errors.As(err, &ee) && !errors.As(ee.Err, &pe) {
			err = ee.Err
		}
		if errors.As(err, &pe) {
			err = pe.Err
		}
		fmt.Fprintf(stderr, "montygo conform parent: cannot run %s: %v\n", cmd[0], err)
		return exitError{code: 2}
	}
	opts := conform.ParentOptions{Parallel: *parallel, Timeout: *limit, Protocol: *proto, DecodeBudget: *budget}
	if opts.Protocol != 0 && !slices.Contains(codec.Versions(), opts.Protocol) {
		fmt.Fprintf(stderr, "montygo conform parent: --protocol %d: the kit knows protocols %v\n", opts.Protocol, codec.Versions())
		return exitError{code: 2}
	}
	if *run != "" {
		re, err := regexp.Compile(*run)
		if err != nil {
			fmt.Fprintf(stderr, "montygo conform parent: --run: %v\n", err)
			return exitError{code: 2}
		}
		opts.Match = re
	}
	rep, err := conform.RunParent(ctx, cmd, opts)
	if err != nil {
		return err
	}
	if len(rep.Rules) == 0 {
		fmt.Fprintf(stderr, "montygo conform parent: --run %q matches no scenario\n", *run)
		return exitError{code: 2}
	}
	if err := nothingChecked(rep, "conform parent", "scenario", stderr); err != nil {
		return err
	}
	if err := printReport(stdout, rep, *asJSON); err != nil {
		return err
	}
	if rep.Summary.Fail > 0 {
		return exitError{code: 1}
	}
	return nil
}

// nothingChecked returns a usage error (exit 2, said once on stderr with
// the first skip's reason, no report) when every selected rule was
// skipped: such a run checks nothing (a --protocol at which no rule or
// scenario of the selection is defined), and exit 0 would say it passed.
func nothingChecked(rep *conform.Report, mode, what string, stderr io.Writer) error {
	if len(rep.Rules) == 0 || rep.Summary.Skip < len(rep.Rules) {
		return nil
	}
	fmt.Fprintf(stderr, "montygo %s: nothing was checked: every selected %s was skipped (%s)\n", mode, what, rep.Rules[0].Detail)
	return exitError{code: 2}
}

func printReport(w io.Writer, rep *conform.Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range rep.Rules {
		line := fmt.Sprintf("%s\t%s", r.Status, r.ID)
		if r.Detail != "" {
			line += "\t" + r.Detail
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	proto := fmt.Sprintf("protocol %d", rep.Protocol)
	if rep.Protocol == 0 {
		// conform parent without --protocol: each scenario claims its own.
		proto = "each scenario's protocol"
	}
	_, err := fmt.Fprintf(w, "\n%s, %s: %d pass, %d fail, %d skip\n",
		rep.Target, proto, rep.Summary.Pass, rep.Summary.Fail, rep.Summary.Skip)
	if err != nil && !errors.Is(err, io.ErrShortWrite) {
		return err
	}
	return nil
}

// negativeFlags refuses, as a usage error (exit 2), a count, duration or
// size flag set below zero: the kit reads 0 or less as its default, so a
// mistyped --rule-timeout -5s or --parallel -1 ran with the defaults and
// the report looked as asked for. Zero stays the documented default.
func negativeFlags(stderr io.Writer, cmd string, fs *flag.FlagSet) error {
	var bad error
	fs.Visit(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || bad != nil {
			return
		}
		neg := false
		switch v := g.Get().(type) {
		case int:
			neg = v < 0
		case int64:
			neg = v < 0
		case time.Duration:
			neg = v < 0
		}
		if neg {
			fmt.Fprintf(stderr, "montygo %s: --%s %s: must not be negative\n", cmd, f.Name, f.Value)
			bad = exitError{code: 2}
		}
	})
	return bad
}

// reachable dials the WebSocket endpoint at url once, before any rule,
// and closes the connection at once; the error is the dial's.
func reachable(ctx context.Context, url string, h http.Header) error {
	c, err := ws.Dial(ctx, url, ws.DialOptions{Header: h})
	if err != nil {
		return err
	}
	c.CloseWith(1000, "conformance kit: endpoint reachable")
	return nil
}

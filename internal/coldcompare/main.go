// Command coldcompare times cold starts of gomonty against another parent,
// one op of each in turn, so both see the same machine load: a gomonty op
// is session.Start, Run("1 + 2") up to its result (Close is not timed); the
// other parent is a child process that performs one cold start per line on
// its stdin and answers with the op's nanoseconds, then its worker's on-CPU
// and run-queue nanoseconds so far (scripts/coldstart-rust.cjs does that for
// upstream's Rust parent). The order inside a pair alternates. For both, the
// worker's /proc/PID/schedstat, read right after the first result, shows how
// much of the op was the worker's own CPU time.
//
//	coldcompare [-n 300] [-warmup 10] -- COMMAND [ARGS...]
//
// It prints the 10th, 50th and 90th percentile of both, the ratio of the
// medians and the median of the per-pair ratios. scripts/coldstart-vs-rust.sh
// runs it; no test does.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomonty/monty/session"
)

func main() {
	n := flag.Int("n", 300, "timed pairs")
	warmup := flag.Int("warmup", 10, "untimed pairs first")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: coldcompare [-n N] [-warmup W] -- COMMAND [ARGS...]")
		os.Exit(2)
	}
	if err := compare(*n, *warmup, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "coldcompare:", err)
		os.Exit(1)
	}
}

func compare(n, warmup int, argv []string) error {
	ctx := context.Background()
	cfg := session.Config{Logger: slog.New(slog.DiscardHandler)}
	goOp := func() (op, error) {
		t0 := time.Now()
		s, err := session.Start(ctx, session.Launch{}, cfg)
		if err != nil {
			return op{}, err
		}
		defer s.Close()
		r, err := s.Run(ctx, "1 + 2")
		if err != nil {
			return op{}, err
		}
		o := op{wall: time.Since(t0)}
		if r.Repr() != "3" {
			return op{}, fmt.Errorf("1 + 2 gave %s", r.Repr())
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", s.Pid())); err == nil {
			o.cpu, o.wait = parseSched(strings.Fields(string(b)))
		}
		return o, nil
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Wait()
	defer in.Close()
	out := bufio.NewScanner(outPipe)
	otherOp := func() (op, error) {
		if _, err := io.WriteString(in, "\n"); err != nil {
			return op{}, err
		}
		if !out.Scan() {
			if out.Err() != nil {
				return op{}, out.Err()
			}
			return op{}, errors.New("the other parent stopped answering")
		}
		f := strings.Fields(out.Text())
		if len(f) == 0 {
			return op{}, errors.New("empty answer")
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		o := op{wall: time.Duration(ns)}
		o.cpu, o.wait = parseSched(f[1:])
		return o, err
	}

	var gos, others []op
	var ratios []float64
	for i := range warmup + n {
		first, second := goOp, otherOp
		if i%2 == 1 {
			first, second = otherOp, goOp
		}
		a, err := first()
		if err != nil {
			return err
		}
		b, err := second()
		if err != nil {
			return err
		}
		g, o := a, b
		if i%2 == 1 {
			g, o = b, a
		}
		if i >= warmup {
			gos, others = append(gos, g), append(others, o)
			ratios = append(ratios, float64(g.wall)/float64(o.wall))
		}
	}
	slices.Sort(ratios)
	fmt.Printf("%d pairs, µs    p10     p50     p90   worker on-CPU p50   run queue p50\n", n)
	row := func(name string, ops []op) float64 {
		wall := pick(ops, func(o op) time.Duration { return o.wall })
		fmt.Printf("%-9s %7d %7d %7d   %17d   %13d\n", name, wall(10), wall(50), wall(90),
			pick(ops, func(o op) time.Duration { return o.cpu })(50),
			pick(ops, func(o op) time.Duration { return o.wait })(50))
		return float64(wall(50))
	}
	g, o := row("gomonty", gos), row("other", others)
	fmt.Printf("ratio of medians %.3f; median of per-pair ratios %.3f\n", g/o, ratios[len(ratios)/2])
	return nil
}

// op is one cold start: its wall time, and its worker's on-CPU and
// run-queue time up to the result (0 when unknown).
type op struct{ wall, cpu, wait time.Duration }

// pick returns the percentiles, in µs, of one field of ops.
func pick(ops []op, field func(op) time.Duration) func(p int) int64 {
	v := make([]time.Duration, len(ops))
	for i, o := range ops {
		v[i] = field(o)
	}
	slices.Sort(v)
	return func(p int) int64 { return v[(len(v)-1)*p/100].Microseconds() }
}

// parseSched reads the first two fields of /proc/PID/schedstat (ns on the
// CPU, ns waiting on a run queue); missing or bad fields give 0.
func parseSched(f []string) (cpu, wait time.Duration) {
	if len(f) >= 2 {
		c, _ := strconv.ParseInt(f[0], 10, 64)
		w, _ := strconv.ParseInt(f[1], 10, 64)
		cpu, wait = time.Duration(c), time.Duration(w)
	}
	return cpu, wait
}

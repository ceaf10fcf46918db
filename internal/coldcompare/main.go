// Command coldcompare times cold starts of gomonty against another parent,
// one op of each in turn, so both see the same machine load: a gomonty op
// is session.Start, Run("1 + 2") up to its result (Close is not timed); the
// other parent is a child process that performs one cold start per line on
// its stdin and answers with the op's nanoseconds (scripts/coldstart-rust.cjs
// does that for upstream's Rust parent). The order inside a pair alternates.
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
	goOp := func() (time.Duration, error) {
		t0 := time.Now()
		s, err := session.Start(ctx, cfg)
		if err != nil {
			return 0, err
		}
		defer s.Close()
		r, err := s.Run(ctx, "1 + 2")
		if err != nil {
			return 0, err
		}
		d := time.Since(t0)
		if r.Repr() != "3" {
			return 0, fmt.Errorf("1 + 2 gave %s", r.Repr())
		}
		return d, nil
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
	otherOp := func() (time.Duration, error) {
		if _, err := io.WriteString(in, "\n"); err != nil {
			return 0, err
		}
		if !out.Scan() {
			if out.Err() != nil {
				return 0, out.Err()
			}
			return 0, errors.New("the other parent stopped answering")
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(out.Text()), 10, 64)
		return time.Duration(ns), err
	}

	var gos, others []time.Duration
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
			ratios = append(ratios, float64(g)/float64(o))
		}
	}
	slices.Sort(gos)
	slices.Sort(others)
	slices.Sort(ratios)
	pc := func(s []time.Duration, p int) float64 { return float64(s[(len(s)-1)*p/100].Microseconds()) }
	fmt.Printf("%d pairs, µs    p10     p50     p90\n", n)
	fmt.Printf("gomonty     %7.0f %7.0f %7.0f\n", pc(gos, 10), pc(gos, 50), pc(gos, 90))
	fmt.Printf("other       %7.0f %7.0f %7.0f\n", pc(others, 10), pc(others, 50), pc(others, 90))
	fmt.Printf("ratio of medians %.3f; median of per-pair ratios %.3f\n",
		pc(gos, 50)/pc(others, 50), ratios[len(ratios)/2])
	return nil
}

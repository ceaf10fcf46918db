package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
)

// The differential traceback harness: every snippet of the corpus in
// testdata/tracebacks runs through `montygo run -c` and through the
// worker's own `monty -c`, and both must print the same standard output and
// the same traceback (file names normalised).
//
// A corpus file holds snippets separated by lines "#### name". Text before
// the first separator is a comment about the file.

// corpusSnippet is one program of the corpus.
type corpusSnippet struct {
	name string // file:name
	code string
}

// minCorpus is the smallest corpus the harness accepts, so that a broken
// loader cannot pass by running nothing.
const minCorpus = 400

func loadCorpus(t *testing.T) []corpusSnippet {
	t.Helper()
	files, err := filepath.Glob("testdata/tracebacks/*.py")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []corpusSnippet
	seen := map[string]bool{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(file), ".py")
		var cur *corpusSnippet
		var body []string
		flush := func() {
			if cur == nil {
				return
			}
			cur.code = strings.TrimRight(strings.Join(body, "\n"), "\n")
			if strings.TrimSpace(cur.code) == "" {
				t.Fatalf("%s: snippet %s is empty", file, cur.name)
			}
			out = append(out, *cur)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if name, ok := strings.CutPrefix(line, "#### "); ok {
				flush()
				full := base + ":" + strings.TrimSpace(name)
				if seen[full] {
					t.Fatalf("duplicate snippet name %s", full)
				}
				seen[full] = true
				cur, body = &corpusSnippet{name: full}, nil
				continue
			}
			if cur != nil {
				body = append(body, line)
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		flush()
	}
	return out
}

// cliPrefix is the worker CLI's timing prefix on its result line
// ("12.3µs ❯ ").
var cliPrefix = regexp.MustCompile(`^[0-9.]+\S*s ❯ `)

// outcome is what one program printed, in comparable form.
type outcome struct {
	stdout string // standard output
	report string // the traceback (or other error report); empty on success
	failed bool   // the program ended with an error
}

// workerCLI runs code through `monty -c` and splits its output: the CLI
// prints the program's output on stdout and, on stderr, either
// "{timing} ❯ {repr}" or "{timing} ❯ error: {traceback}" (for a
// SyntaxError, "error:\n{traceback}").
func workerCLI(ctx context.Context, bin, code string) (outcome, error) {
	var o outcome
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "-c", code)
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = []string{}
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return o, err
	}
	o.stdout = out.String()
	rest := errb.String()
	if s, ok := strings.CutPrefix(rest, "error:\n"); ok {
		o.report, o.failed = s, true
	} else if m := cliPrefix.FindString(rest); m != "" {
		rest = rest[len(m):]
		if s, ok := strings.CutPrefix(rest, "error: "); ok {
			o.report, o.failed = s, true
		} else if repr := strings.TrimSuffix(rest, "\n"); repr != "None" {
			// The CLI prints a result with str(), montygo with repr(): a
			// snippet of the corpus ends with an error or a statement.
			return o, fmt.Errorf("the snippet ends with the value %q, not an error or None", repr)
		}
	} else {
		return o, fmt.Errorf("unrecognised worker CLI stderr %q (exit %v)", rest, err)
	}
	if o.failed != (err != nil) {
		return o, fmt.Errorf("worker CLI exit %v does not fit its report %q", err, errb.String())
	}
	return o, nil
}

// montygoRun runs code through `montygo run -c`, which prints the output
// and the result's repr on stdout and the traceback on stderr.
func montygoRun(ctx context.Context, montygoBin, workerBin, code string) (outcome, error) {
	var o outcome
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, montygoBin, "run", "--worker", workerBin, "-c", code)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return o, err
	}
	o.stdout, o.report, o.failed = out.String(), errb.String(), err != nil
	return o, nil
}

// fileName matches a frame header's file name, for normalisation.
var fileName = regexp.MustCompile(`(?m)^  File "[^"\n]+", line `)

func normaliseFiles(s string) string {
	return fileName.ReplaceAllLiteralString(s, `  File "<file>", line `)
}

// TestTracebackCorpus is the differential harness of issue 20.
func TestTracebackCorpus(t *testing.T) {
	bin := testenv.Worker(t)
	corpus := loadCorpus(t)
	if len(corpus) < minCorpus {
		t.Errorf("the corpus has %d snippets, want at least %d", len(corpus), minCorpus)
	}
	mg := montygo(t)
	for _, sn := range corpus {
		t.Run(sn.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			want, err := workerCLI(ctx, bin, sn.code)
			if err != nil {
				t.Fatalf("monty -c: %v\ncode:\n%s", err, sn.code)
			}
			got, err := montygoRun(ctx, mg, bin, sn.code)
			if err != nil {
				t.Fatalf("montygo run -c: %v\ncode:\n%s", err, sn.code)
			}
			if got.failed != want.failed || got.stdout != want.stdout ||
				normaliseFiles(got.report) != normaliseFiles(want.report) {
				t.Errorf("montygo run -c and monty -c disagree\ncode:\n%s\n--- montygo (failed=%v) stdout:\n%s--- montygo stderr:\n%s--- monty (failed=%v) stdout:\n%s--- monty traceback:\n%s",
					sn.code, got.failed, got.stdout, got.report, want.failed, want.stdout, want.report)
			}
		})
	}
}

//go:build unix

package main

import (
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
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// The differential traceback harness: every snippet of the corpus in
// testdata/tracebacks runs through `montygo run -c` and through the
// worker's own `monty -c`, and both must print the same standard output and
// the same traceback (the fed code's file name normalised).
//
// A corpus file holds snippets separated by lines "#### name". Text before
// the first separator is a comment about the file. A file NAME.names lists
// snippets of internal/vecrec/snippets (recorded in testdata/v2-more) by
// name, one a line ("#" starts a comment), which join the corpus as
// NAME:name, so that the recorder's snippets are written once.

// corpusSnippet is one program of the corpus.
type corpusSnippet struct {
	name string // file:name
	code string
}

// minCorpus is the smallest corpus the harness accepts, so that a broken
// loader cannot pass by running nothing.
const minCorpus = 400

// vecrecSnippets is where the .names files take their snippets from.
const vecrecSnippets = "../../internal/vecrec/snippets"

// parseSnippets splits a corpus file's text into its snippets, named
// base:name.
func parseSnippets(t *testing.T, file, base string, data []byte) []corpusSnippet {
	t.Helper()
	var out []corpusSnippet
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
	// Lines split at "\n" only: a "\r" stays in the snippet, so CRLF
	// sources are part of the corpus.
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(line, "#### "); ok {
			flush()
			cur, body = &corpusSnippet{name: base + ":" + strings.TrimSpace(name)}, nil
			continue
		}
		if cur != nil {
			body = append(body, line)
		}
	}
	flush()
	return out
}

// readSnippets reads every snippet of the corpus files matching pattern,
// each named by its file's base name without ext.
func readSnippets(t *testing.T, pattern, ext string) []corpusSnippet {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []corpusSnippet
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, parseSnippets(t, file, strings.TrimSuffix(filepath.Base(file), ext), data)...)
	}
	return out
}

func loadCorpus(t *testing.T) []corpusSnippet {
	t.Helper()
	out := readSnippets(t, "testdata/tracebacks/*.py", ".py")
	lists, err := filepath.Glob("testdata/tracebacks/*.names")
	if err != nil {
		t.Fatal(err)
	}
	if len(lists) > 0 {
		byName := map[string]string{}
		for _, sn := range readSnippets(t, filepath.Join(vecrecSnippets, "*.py"), ".py") {
			_, name, _ := strings.Cut(sn.name, ":")
			if _, dup := byName[name]; dup {
				t.Fatalf("%s: two snippets named %s", vecrecSnippets, name)
			}
			byName[name] = sn.code
		}
		sort.Strings(lists)
		for _, list := range lists {
			data, err := os.ReadFile(list)
			if err != nil {
				t.Fatal(err)
			}
			base := strings.TrimSuffix(filepath.Base(list), ".names")
			for _, line := range strings.Split(string(data), "\n") {
				name := strings.TrimSpace(line)
				if name == "" || strings.HasPrefix(name, "#") {
					continue
				}
				code, ok := byName[name]
				if !ok {
					t.Fatalf("%s: no snippet %s in %s", list, name, vecrecSnippets)
				}
				out = append(out, corpusSnippet{name: base + ":" + name, code: code})
			}
		}
	}
	seen := map[string]bool{}
	for _, sn := range out {
		if seen[sn.name] {
			t.Fatalf("duplicate snippet name %s", sn.name)
		}
		seen[sn.name] = true
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

// workerCLI runs code through `monty -c` (or `monty FILE` when file is
// set) and splits its output: the CLI
// prints the program's output on stdout and, on stderr, either
// "{timing} ❯ {repr}" or "{timing} ❯ error: {traceback}" (for a
// SyntaxError, "error:\n{traceback}").
func workerCLI(ctx context.Context, bin, code, file string) (outcome, error) {
	var o outcome
	var out, errb bytes.Buffer
	args := []string{"-c", code}
	if file != "" {
		args = []string{file}
	}
	cmd := exec.CommandContext(ctx, bin, args...)
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
func montygoRun(ctx context.Context, montygoBin, workerBin, code, file string) (outcome, error) {
	var o outcome
	var out, errb bytes.Buffer
	args := []string{"run", "--worker", workerBin, "-c", code}
	if file != "" {
		args = []string{"run", "--worker", workerBin, file}
	}
	cmd := exec.CommandContext(ctx, montygoBin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return o, err
	}
	o.stdout, o.report, o.failed = out.String(), errb.String(), err != nil
	return o, nil
}

// fedFile matches a frame header naming the fed code: "<string>" in the
// CLIs, "<python-input-N>" in the worker's own frames (what the session
// API shows). Other names, such as the empty name of a frame without a
// location, are compared as they are.
var fedFile = regexp.MustCompile(`(?m)^  File "(<string>|<python-input-[0-9]+>)", line `)

func normaliseFiles(s string) string {
	return fedFile.ReplaceAllLiteralString(s, `  File "<fed code>", line `)
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
			want, err := workerCLI(ctx, bin, sn.code, "")
			if err != nil {
				t.Fatalf("monty -c: %v\ncode:\n%s", err, sn.code)
			}
			got, err := montygoRun(ctx, mg, bin, sn.code, "")
			if err != nil {
				t.Fatalf("montygo run -c: %v\ncode:\n%s", err, sn.code)
			}
			if got.failed != want.failed || got.stdout != want.stdout ||
				normaliseFiles(got.report) != normaliseFiles(want.report) {
				t.Errorf("montygo run -c and monty -c disagree\ncode:\n%s\n--- montygo (failed=%v) stdout:\n%s--- montygo stderr:\n%s--- monty (failed=%v) stdout:\n%s--- monty traceback:\n%s",
					sn.code, got.failed, got.stdout, got.report, want.failed, want.stdout, want.report)
			}
			if want.failed {
				checkLibraryRendering(ctx, t, bin, sn.code, want.report)
			}
		})
	}
}

// checkLibraryRendering runs code through the session API, as a library
// user would, and checks the two other ways to render its exception:
// PythonError.Traceback (which knows the fed code) must match the CLI, and
// so must the renderer given no source at all, except for the line of a
// frame without a location, which only the source can supply.
func checkLibraryRendering(ctx context.Context, t *testing.T, bin, code, want string) {
	t.Helper()
	s, err := session.Start(ctx, session.Launch{Launcher: session.ProcessLauncher{Worker: worker.Config{Binary: bin}}},
		session.Config{ScriptName: "<string>"}) // no Print: output is discarded
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Run(ctx, code)
	var pe *session.PythonError
	if !errors.As(err, &pe) {
		t.Fatalf("session.Run: %v, want a *session.PythonError\ncode:\n%s", err, code)
	}
	want = normaliseFiles(want)
	if got := normaliseFiles(pe.Traceback() + "\n"); got != want {
		t.Errorf("PythonError.Traceback and monty -c disagree\ncode:\n%s\n--- Traceback():\n%s--- monty:\n%s", code, got, want)
	}
	located := true
	for _, f := range pe.Exception.Traceback {
		located = located && f.Filename != "\x00"
	}
	if located {
		got := normaliseFiles(string(pe.Exception.AppendTracebackWith(nil, message.TracebackOptions{})))
		if got != want {
			t.Errorf("the rendering without the source and monty -c disagree\ncode:\n%s\n--- no source:\n%s--- monty:\n%s", code, got, want)
		}
	}
}

// TestTracebackCorpusFiles runs every tenth snippet as a script file
// (`montygo run FILE` against `monty FILE`), where frames name the file's
// path: compared exactly, not normalised.
func TestTracebackCorpusFiles(t *testing.T) {
	bin := testenv.Worker(t)
	mg := montygo(t)
	dir := t.TempDir()
	for i, sn := range loadCorpus(t) {
		if i%10 != 0 {
			continue
		}
		file := filepath.Join(dir, fmt.Sprintf("snippet_%d.py", i))
		if err := os.WriteFile(file, []byte(sn.code), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Run(sn.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			want, err := workerCLI(ctx, bin, sn.code, file)
			if err != nil {
				t.Fatalf("monty FILE: %v\ncode:\n%s", err, sn.code)
			}
			got, err := montygoRun(ctx, mg, bin, sn.code, file)
			if err != nil {
				t.Fatalf("montygo run FILE: %v\ncode:\n%s", err, sn.code)
			}
			if got.failed != want.failed || got.stdout != want.stdout || got.report != want.report {
				t.Errorf("montygo run FILE and monty FILE disagree\ncode:\n%s\n--- montygo (failed=%v) stdout:\n%s--- montygo stderr:\n%s--- monty (failed=%v) stdout:\n%s--- monty traceback:\n%s",
					sn.code, got.failed, got.stdout, got.report, want.failed, want.stdout, want.report)
			}
		})
	}
}

//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gomonty/monty/internal/testenv"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// TestMain removes the CLI built for the tests once they have run, and
// checks that no test left a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if binPath != "" && buildErr == nil {
			os.RemoveAll(filepath.Dir(binPath))
		}
		os.Exit(code)
	}))
}

// montygo builds the CLI once per test binary.
func montygo(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "montygo-test")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "montygo")
		// As the Makefile builds it: static, with no cgo (a cgo build
		// cannot start threads under a 1 GiB RLIMIT_AS; see
		// TestSubprocessReplaysVectors).
		build := exec.Command("go", "build", "-o", binPath, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		if err != nil {
			buildErr = err
			binPath = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build montygo: %v\n%s", buildErr, binPath)
	}
	return binPath
}

func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	testenv.Worker(t)
	var out, errb bytes.Buffer
	cmd := exec.Command(montygo(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestRunPrintsReprOfFinalExpression(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{"1 + 2", "3\n"},
		{"'a'", "'a'\n"},   // the worker's CLI drops the quotes
		{"(1,)", "(1,)\n"}, // and the comma of a one-element tuple
		{"x = 1", ""},      // statements print nothing
		{"None", ""},       // nor does None
		{"print('hi'); [1, 'b']", "hi\n[1, 'b']\n"},
		{"{'k': (1, [2.5, {3}])}", "{'k': (1, [2.5, {3}])}\n"},
		{"2**100", "1267650600228229401496703205376\n"},
		{"float('nan'), -0.0, 1e16", "(nan, -0.0, 1e+16)\n"},
		{"'🐍'", "'🐍'\n"},
		// Every value kind the sandbox produces, as CPython's repr() shows it
		// (the expected texts were produced by CPython 3.11 from the same
		// expressions).
		{"[1, (2,), {3}, frozenset({4}), {'a': None}]", "[1, (2,), {3}, frozenset({4}), {'a': None}]\n"},
		{`b'\x00ab\xff'`, `b'\x00ab\xff'` + "\n"},
		{`'it\'s "q" \n \x7f 🐍 \u200b'`, `'it\'s "q" \n \x7f 🐍 \u200b'` + "\n"},
		{"2**64, -(2**70)", "(18446744073709551616, -1180591620717411303424)\n"},
		{"float('inf'), float('-inf'), 1e-05, 0.1, 1.5e300", "(inf, -inf, 1e-05, 0.1, 1.5e+300)\n"},
		{"import datetime\ndatetime.date(2024, 2, 29)", "datetime.date(2024, 2, 29)\n"},
		{"import datetime\ndatetime.datetime(2024, 1, 2, 3, 4, 5, 6)", "datetime.datetime(2024, 1, 2, 3, 4, 5, 6)\n"},
		{"import datetime\ndatetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)", "datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)\n"},
		{"import datetime\ndatetime.datetime(2024, 1, 2, tzinfo=datetime.timezone(datetime.timedelta(hours=-5)))", "datetime.datetime(2024, 1, 2, 0, 0, tzinfo=datetime.timezone(datetime.timedelta(days=-1, seconds=68400)))\n"},
		{"import datetime\ndatetime.time(12, 30)", "datetime.time(12, 30)\n"},
		{"import datetime\ndatetime.timedelta(microseconds=-1)", "datetime.timedelta(days=-1, seconds=86399, microseconds=999999)\n"},
		{"import datetime\ndatetime.timezone(datetime.timedelta(hours=2), 'CEST')", "datetime.timezone(datetime.timedelta(seconds=7200), 'CEST')\n"},
		{"ValueError('bad'), KeyError()", "(ValueError('bad'), KeyError())\n"},
		{"import datetime\nint, ValueError, datetime.date", "(<class 'int'>, <class 'ValueError'>, <class 'datetime.date'>)\n"},
		{"len, print", "(<built-in function len>, <built-in function print>)\n"},
		{"set(), frozenset(), (), {}", "(set(), frozenset(), (), {})\n"},
		{"from pathlib import Path\nPath('/a/b')", "PosixPath('/a/b')\n"},
		{"from collections import namedtuple\nP = namedtuple('P', 'x y')\nP(1, 2)", "P(x=1, y=2)\n"},
		{"a = []\na.append(a)\na", "[[...]]\n"},
		{"s = [1]\n[s, s]", "[[1], [1]]\n"},
		{"from dataclasses import dataclass\n@dataclass\nclass C:\n    x: int\nC(3)", "C(x=3)\n"},
		{"import sys\nsys.version_info", "sys.version_info(major=3, minor=14, micro=0, releaselevel='final', serial=0)\n"},
	} {
		out, errs, rc := runCLI(t, "", "run", "-c", c.code)
		if rc != 0 || out != c.want {
			t.Errorf("run -c %q: rc %d, stdout %q, want %q (stderr %q)", c.code, rc, out, c.want, errs)
		}
	}
}

func TestRunTracebackAndExitCode(t *testing.T) {
	out, errs, rc := runCLI(t, "", "run", "-c", "def f(n):\n    return 1 / n\nf(0)")
	if rc != 1 || out != "" {
		t.Fatalf("rc %d stdout %q", rc, out)
	}
	want := `Traceback (most recent call last):
  File "<string>", line 3, in <module>
    f(0)
    ~~~~
  File "<string>", line 2, in f
    return 1 / n
           ~~~~~
ZeroDivisionError: division by zero
`
	if errs != want {
		t.Fatalf("traceback:\n%s\nwant:\n%s", errs, want)
	}
}

func TestRunFileAndLimits(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "prog.py")
	os.WriteFile(f, []byte("raise ValueError('bad')\n"), 0o644)
	_, errs, rc := runCLI(t, "", "run", f)
	if rc != 1 || !strings.Contains(errs, `File "`+f+`", line 1, in <module>`) || !strings.HasSuffix(errs, "ValueError: bad\n") {
		t.Fatalf("rc %d stderr %q", rc, errs)
	}
	start := time.Now()
	_, errs, rc = runCLI(t, "", "run", "--max-duration", "0.2", "-c", "while True:\n    pass")
	if rc != 1 || !strings.Contains(errs, "TimeoutError: time limit exceeded") || time.Since(start) > 10*time.Second {
		t.Fatalf("max-duration: rc %d stderr %q", rc, errs)
	}
	_, errs, rc = runCLI(t, "", "run", "-c", "[0] * 10**7", "--max-memory", "1MiB")
	if rc != 1 || !strings.Contains(errs, "MemoryError: memory limit exceeded") {
		t.Fatalf("max-memory: rc %d stderr %q", rc, errs)
	}
	// No flag: the session's default limit, 256 MiB, not the worker's
	// allocator ceiling (exit 65, no traceback).
	_, errs, rc = runCLI(t, "", "run", "-c", "'x' * 10**13")
	if rc != 1 || !strings.Contains(errs, "MemoryError: memory limit exceeded: ") || !strings.HasSuffix(errs, " > 268435456 bytes\n") {
		t.Fatalf("default memory limit: rc %d stderr %q", rc, errs)
	}
	_, errs, rc = runCLI(t, "", "run", "-c", "'x' * 10**13", "--max-memory", "none")
	if rc == 0 || strings.Contains(errs, "MemoryError") {
		t.Fatalf("--max-memory none: rc %d stderr %q", rc, errs)
	}
}

func TestRunMount(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in.txt"), []byte("data from the host"), 0o644)
	out, errs, rc := runCLI(t, "", "run", "--mount", dir+"::/data", "-c",
		"from pathlib import Path\nPath('/data/in.txt').read_text()")
	if rc != 0 || out != "'data from the host'\n" {
		t.Fatalf("read: rc %d out %q err %q", rc, out, errs)
	}
	_, errs, rc = runCLI(t, "", "run", "--mount", dir+"::/data", "-c",
		"from pathlib import Path\nPath('/data/new.txt').write_text('x')")
	if rc != 1 || !strings.Contains(errs, "PermissionError") {
		t.Fatalf("write to ro mount: rc %d err %q", rc, errs)
	}
	out, errs, rc = runCLI(t, "", "run", "--mount", dir+"::/data::rw", "-c",
		"from pathlib import Path\nPath('/data/new.txt').write_text('xyz')")
	if rc != 0 || out != "3\n" {
		t.Fatalf("rw write: rc %d out %q err %q", rc, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new.txt")); string(b) != "xyz" {
		t.Fatalf("host file %q", b)
	}
	out, _, rc = runCLI(t, "", "run", "--mount", dir+"::/data::overlay", "-c",
		"from pathlib import Path\nPath('/data/in.txt').write_text('changed')\nPath('/data/in.txt').read_text()")
	if rc != 0 || out != "'changed'\n" {
		t.Fatalf("overlay: rc %d out %q", rc, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "in.txt")); string(b) != "data from the host" {
		t.Fatalf("overlay leaked to host: %q", b)
	}
}

func TestRunUsageErrors(t *testing.T) {
	_, _, rc := runCLI(t, "", "run")
	if rc != 2 {
		t.Fatalf("no program: rc %d", rc)
	}
	_, errs, rc := runCLI(t, "", "run", "--max-memory", "12 parsecs", "-c", "1")
	if rc != 2 || !strings.Contains(errs, "unknown unit") {
		t.Fatalf("bad memory: rc %d err %q", rc, errs)
	}
	_, errs, rc = runCLI(t, "", "run", "--max-memory", "0", "-c", "1")
	if rc != 2 || !strings.Contains(errs, "none lifts the limit") {
		t.Fatalf("zero memory: rc %d err %q", rc, errs)
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]uint64{"64MiB": 64 << 20, "1000": 1000, "1.5KB": 1500, "2gib": 2 << 30, "10 MB": 10e6} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "5 furlongs"} {
		if _, err := parseBytes(bad); err == nil {
			t.Errorf("parseBytes(%q) succeeded", bad)
		}
	}
}

func TestVersion(t *testing.T) {
	out, _, rc := runCLI(t, "", "version")
	if rc != 0 || !strings.Contains(out, "protocol versions: [5 4 2] (tried first: 5)") || !strings.Contains(out, "worker: monty-runtime 0.0.23") {
		t.Fatalf("rc %d out %q", rc, out)
	}
}

func TestComplete(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  bool
	}{
		{[]string{"1 + 2"}, true},
		{[]string{"[1,"}, false},
		{[]string{"[1,", " 2]"}, true},
		{[]string{"def f():"}, false},
		{[]string{"def f():", "    return 1"}, false},
		{[]string{"def f():", "    return 1", ""}, true},
		{[]string{"s = '''a"}, false},
		{[]string{"s = '''a", "b'''"}, true},
		{[]string{"x = '('"}, true},
		{[]string{"x = 1 \\"}, false},
		{[]string{"@dec", "def f(): pass", ""}, true},
	} {
		if got := complete(c.lines); got != c.want {
			t.Errorf("complete(%q) = %v, want %v", c.lines, got, c.want)
		}
	}
}

// A worker that never answers Configure ends `montygo run` after its start
// timeout instead of hanging it.
func TestRunStartTimeout(t *testing.T) {
	w := filepath.Join(t.TempDir(), "silent")
	if err := os.WriteFile(w, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, errs, rc := runCLI(t, "", "run", "--worker", w, "--protocol", "2", "--start-timeout", "0.3", "-c", "1")
	if rc != exitSandboxFailed || !strings.Contains(errs, "the worker did not start within 300ms (--start-timeout)") {
		t.Fatalf("rc %d stderr %q", rc, errs)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("montygo run took %v", d)
	}
	_, errs, rc = runCLI(t, "", "run", "--start-timeout", "-1", "-c", "1")
	if rc == 0 || !strings.Contains(errs, "--start-timeout") {
		t.Fatalf("bad --start-timeout: rc %d stderr %q", rc, errs)
	}
}

func TestRunJSON(t *testing.T) {
	out, errs, rc := runCLI(t, "", "run", "-c", "{'sum': cfg['n'] * 2, 'items': [x + 1 for x in xs], 'none': None}",
		"--input", `cfg={"n": 3}`, "--input", "xs=[1, 2.5]", "--json")
	if rc != 0 || out != `{"sum": 6, "items": [2, 3.5], "none": null}`+"\n" {
		t.Fatalf("rc %d out %q err %q", rc, out, errs)
	}
	if out, _, rc := runCLI(t, "", "run", "-c", "x = 1", "--json"); rc != 0 || out != "null\n" {
		t.Fatalf("None: rc %d out %q", rc, out)
	}
	if _, errs, rc := runCLI(t, "", "run", "-c", "[float('nan')]", "--json"); rc != 1 || !strings.Contains(errs, "no JSON form") || !strings.Contains(errs, "at [0]") {
		t.Fatalf("nan: rc %d err %q", rc, errs)
	}
	if _, errs, rc := runCLI(t, "", "run", "-c", "1", "--input", `x={"a":}`); rc != 2 || !strings.Contains(errs, "--input x: invalid JSON at byte 5") {
		t.Fatalf("bad input: rc %d err %q", rc, errs)
	}
	if _, errs, rc := runCLI(t, "", "run", "-c", "1", "--input", `novalue`); rc != 2 || !strings.Contains(errs, "want NAME=JSON") {
		t.Fatalf("no '=': rc %d err %q", rc, errs)
	}
}

// TestRunStdin: "montygo run -" reads the program from standard input, as
// python - does, and names it <stdin> in a traceback.
func TestRunStdin(t *testing.T) {
	out, errs, rc := runCLI(t, "print('from stdin')\nx = 6 * 7\nx\n", "run", "-")
	if rc != 0 || out != "from stdin\n42\n" {
		t.Fatalf("rc %d out %q err %q", rc, out, errs)
	}
	_, errs, rc = runCLI(t, "1 / 0\n", "run", "-")
	if rc != 1 || !strings.Contains(errs, `File "<stdin>", line 1, in <module>`) {
		t.Fatalf("traceback: rc %d err %q", rc, errs)
	}
}

// `montygo --version` prints montygo's version (exit 0), as `monty
// --version` does: it was an unknown command (exit 2), so `montygo
// version`, and the REPL's banner, which ask a worker binary for its
// --version, said "unknown version" of montygo itself when it is the
// worker (`montygo subprocess`, a drop-in for `monty subprocess`).
func TestDashDashVersion(t *testing.T) {
	for _, flag := range []string{"--version", "-V"} {
		out, errs, rc := runCLI(t, "", flag)
		if rc != 0 || !strings.HasPrefix(out, "montygo ") || strings.Count(out, "\n") != 1 || errs != "" {
			t.Errorf("montygo %s: exit %d, stdout %q, stderr %.200q; want 0 and one line naming montygo", flag, rc, out, errs)
		}
	}
	t.Setenv("MONTY_BIN", montygo(t))
	out, _, rc := runCLI(t, "", "version")
	if rc != 0 || !strings.Contains(out, "worker: montygo ") {
		t.Errorf("montygo version with montygo as the worker: exit %d, stdout %q", rc, out)
	}
}

// --json prints what json.dumps(x, ensure_ascii=False) prints, as its
// flag says: with json.dumps's default separators (", " and ": "), not
// the compact ones (`{"1":2}` where json.dumps writes `{"1": 2}`). A value
// json.dumps cannot write in standard JSON (NaN, an infinity) is an error
// naming where it sits, not a Go conversion's words.
func TestRunJSONIsJSONDumps(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{`{1: 2}`, `{"1": 2}`},
		{`{"a, b": "c: \"d\" \\", "e": [1, [], {}, (2, 3.5)]}`, `{"a, b": "c: \"d\" \\", "e": [1, [], {}, [2, 3.5]]}`},
		{`["é", None, True]`, `["é", null, true]`},
		{`"x"`, `"x"`},
	} {
		out, errs, rc := runCLI(t, "", "run", "--json", "-c", c.code)
		if rc != 0 || out != c.want+"\n" {
			t.Errorf("run --json -c %s: exit %d, stdout %q, stderr %q; want %q", c.code, rc, out, errs, c.want)
		}
	}
	for _, c := range []struct{ code, want string }{
		{"[1.5, float('inf')]", "at [1]: Out of range float values are not JSON compliant: inf"},
		// A value with no JSON form at all is named by its kind.
		{`{"a": ...}`, `at ["a"]: ellipsis has no JSON form`},
		{`[len]`, `at [0]: builtin_function has no JSON form`},
	} {
		_, errs, rc := runCLI(t, "", "run", "--json", "-c", c.code)
		if want := "montygo run: the result has no JSON form: " + c.want + "\n"; rc != 1 || errs != want {
			t.Errorf("run --json -c %s: exit %d, stderr %q; want 1 and %q", c.code, rc, errs, want)
		}
	}
}

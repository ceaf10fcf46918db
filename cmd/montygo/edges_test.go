//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/session"
)

// NaN passes every "< 0" and "> max" comparison, so a range check written
// that way let --max-duration NaN through as no limit at all (a negative
// duration after the float-to-int conversion): a runaway loop then ran
// forever. Every seconds flag refuses it.
func TestSecondsFlagsRefuseNaN(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--max-duration", "NaN", "-c", "1"}, "--max-duration"},
		{[]string{"run", "--max-duration", "nan", "-c", "1"}, "--max-duration"},
		{[]string{"run", "--start-timeout", "NaN", "-c", "1"}, "--start-timeout"},
		{[]string{"repl", "--max-duration", "NaN"}, "--max-duration"},
	} {
		_, stderr, code := runCLI(t, "", c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want a failure naming %s", c.args, code, stderr, c.want)
		}
	}
	for _, s := range []string{"NaN", "-NaN", "nan"} {
		f := secondsFlag{new(time.Duration)}
		if err := f.Set(s); err == nil {
			t.Errorf("secondsFlag.Set(%q) = nil, %v; want an error", s, *f.d)
		}
	}
}

// Input that ends inside a block (no blank line after it) or inside an
// open bracket is run at the end of the input, as python3 -i does with
// piped input, rather than dropped without a word.
func TestREPLRunsTheBlockPendingAtEOF(t *testing.T) {
	out, _, code := runCLI(t, "x = 1\nif x:\n    print('tail', x)\n", "repl")
	if code != 0 || !strings.Contains(out, "tail 1") {
		t.Errorf("a block cut off by EOF: exit %d, stdout %q; want it run", code, out)
	}
	_, stderr, code := runCLI(t, "y = (1,\n", "repl")
	if code != 0 || !strings.Contains(stderr, "SyntaxError") {
		t.Errorf("an open bracket at EOF: exit %d, stderr %q; want a SyntaxError", code, stderr)
	}
	// A pending blank tail is nothing to run.
	out, stderr, code = runCLI(t, "print('a')\n\n\n", "repl")
	if code != 0 || out != "a\n" || strings.Contains(stderr, "Error") {
		t.Errorf("blank lines at EOF: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// server.Config takes a zero duration or prewarm count for "the default",
// so `--drain-grace 0` (or a value that rounds to 0 ns) silently became 30
// s, `--turn-timeout 0` 300 s and `--prewarm 0` two workers. The flags
// refuse such values instead of replacing them with something else.
func TestServeRefusesValuesThatWouldTakeTheDefault(t *testing.T) {
	for _, s := range []string{"0", "0s", "0.0000000001", "-0"} {
		f := secondsFlag{new(time.Duration)}
		if err := f.Set(s); err == nil {
			t.Errorf("secondsFlag.Set(%q) = nil (%v); want an error", s, *f.d)
		}
	}
	for _, s := range []string{"1", "0.5", "1ns", "5m"} {
		f := secondsFlag{new(time.Duration)}
		if err := f.Set(s); err != nil || *f.d <= 0 {
			t.Errorf("secondsFlag.Set(%q) = %v (%v); want a positive duration", s, err, *f.d)
		}
	}
	key := writeFile(t, "key", "0123456789abcdef0123")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--drain-grace", "0"}, "drain-grace"},
		{[]string{"--turn-timeout", "0"}, "turn-timeout"},
		{[]string{"--prewarm", "0"}, "--prewarm"},
		{[]string{"--prewarm", "-3"}, "--prewarm"},
	} {
		args := append([]string{"serve", "--listen", "127.0.0.1:0", "--dump-key", key}, c.args...)
		// Bounded: a value the server accepts would have it serve on.
		bin := montygo(t) // built before the bound starts: a first build is slow
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		cmd := exec.CommandContext(ctx, bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		_ = cmd.Run()
		cancel()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", c.args, code, stderr.String(), c.want)
		}
	}
}

// A program file is read with the same bound as a program on standard
// input (one frame): `montygo run /dev/zero` read until the Go runtime died
// of an out-of-memory fatal error, and an over-large file was read whole
// before anything complained.
func TestRunRefusesAProgramFileOverOneFrame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.py")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: no disk, and a bounded reader learns its size from Stat.
	if err := f.Truncate(protocol.MaxFrameLen + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, stderr, code := runCLI(t, "", "run", path)
	if code != 2 || !strings.Contains(stderr, "over 268435456 bytes") {
		t.Fatalf("exit %d, stderr %q; want 2 and the frame bound", code, stderr)
	}
}

// runFull runs montygo with its standard output on /dev/full, where every
// write fails with ENOSPC (a full disk).
func runFull(t *testing.T, stdin string, args ...string) (stderr string, code int) {
	t.Helper()
	testenv.Worker(t)
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	var errb bytes.Buffer
	cmd := exec.Command(montygo(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = full, &errb
	_ = cmd.Run()
	return errb.String(), cmd.ProcessState.ExitCode()
}

// Output that could not be written (a full disk) fails the command, as it
// fails python3 (exit 1) and the worker's own CLI (which panics): montygo
// run and decode exited 0 with the output lost.
func TestLostStandardOutputFailsTheCommand(t *testing.T) {
	for _, args := range [][]string{
		{"run", "-c", "print('printed')"},
		{"run", "-c", "'a result'"},
		{"run", "--json", "-c", "[1, 2]"},
	} {
		stderr, code := runFull(t, "", args...)
		if code != 1 || !strings.Contains(stderr, "standard output") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and a word on the lost output", args, code, stderr)
		}
	}
	// A Python error keeps its traceback and its exit status.
	stderr, code := runFull(t, "", "run", "-c", "print('x')\n1/0")
	if code != 1 || !strings.Contains(stderr, "ZeroDivisionError") {
		t.Errorf("print then raise: exit %d, stderr %q", code, stderr)
	}
	// decode: one event frame (protocol 4).
	stderr, code = runFull(t, "\x02\x00\x00\x00\x0a\x00", "decode")
	if code != 1 || !strings.Contains(stderr, "standard output") {
		t.Errorf("decode: exit %d, stderr %q; want 1 and a word on the lost output", code, stderr)
	}
}

// With several --remote endpoints that all fail, each failure names its
// endpoint once: the dial error already names it, and startSession's
// prefix doubled it ("ws://h/: ws://h/: failed to WebSocket dial ...").
func TestStartSessionNamesEachEndpointOnce(t *testing.T) {
	var urls []string
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, "ws://"+l.Addr().String()+"/")
		l.Close() // refused from now on
	}
	var ls []session.Launch
	for _, u := range urls {
		ls = append(ls, session.Launch{Launcher: session.RemoteLauncher{URL: u}})
	}
	cfg := session.Config{Logger: slog.New(slog.DiscardHandler)}
	_, err := startSession(context.Background(), ls, cfg)
	if err == nil {
		t.Fatal("started a session on closed ports")
	}
	for _, u := range urls {
		if n := strings.Count(err.Error(), u); n != 1 {
			t.Errorf("%s named %d times in %q", u, n, err)
		}
	}
}

// Source that is not UTF-8 is named as such, with the offending byte, as
// python3 and the worker's CLI do (exit 1), instead of the codec's
// "invalid request: codecv2: Feed.code is not valid UTF-8".
func TestRunNamesSourceThatIsNotUTF8(t *testing.T) {
	path := filepath.Join(t.TempDir(), "latin1.py")
	if err := os.WriteFile(path, []byte("print('caf\xe9')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"run", path}, path + " is not valid UTF-8 (byte 10)"},
		{"print('caf\xe9')\n", []string{"run", "-"}, "the program on standard input is not valid UTF-8 (byte 10)"},
		{"", []string{"run", "-c", "print('caf\xe9')"}, "the -c program is not valid UTF-8 (byte 10)"},
	} {
		_, stderr, code := runCLI(t, c.stdin, c.args...)
		if code != 1 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "codec") {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", c.args, code, stderr, c.want)
		}
	}
}

// An --input name given twice is a usage error: the later value silently
// replaced the earlier one.
func TestRunRefusesAnInputNamedTwice(t *testing.T) {
	_, stderr, code := runCLI(t, "", "run", "--input", "x=1", "--input", "x=2", "-c", "x")
	if code != 2 || !strings.Contains(stderr, `--input x given twice`) {
		t.Errorf("exit %d, stderr %q; want 2 and a word on the duplicate", code, stderr)
	}
}

// signalWriter is a concurrency-safe buffer that closes seen once the
// text written to it contains want.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// When the REPL's own context ends (SIGTERM) while an input runs, the REPL
// ends quietly: it printed the cancelled run as an error and claimed
// "(worker lost; restarted with the globals from before this input)" on
// its way out.
func TestREPLEndedMidInputSaysNoRestart(t *testing.T) {
	testenv.Worker(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	defer pw.Close()
	stdout := &signalWriter{want: "looping", seen: make(chan struct{})}
	stderr := &signalWriter{seen: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- replCmd(ctx, nil, pr, stdout, stderr) }()
	go pw.Write([]byte("for i in range(10**12): i == 0 and print('looping')\n"))
	select {
	case <-stdout.seen:
	case err := <-done:
		t.Fatalf("repl ended: %v; stdout %q stderr %q", err, stdout.String(), stderr.String())
	}
	cancel()
	err := <-done
	pw.Close()
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("repl: %v", err)
	}
	if s := stderr.String(); strings.Contains(s, "restarted") || strings.Contains(s, "montygo:") {
		t.Errorf("stderr %q; want nothing said of a restart", s)
	}
}

// A '#' inside a string is no comment: `for c in "#a":` opens a block.
// The REPL cut the line at that '#', saw no ':' and ran the header alone
// (a SyntaxError, then another for the body).
func TestCompleteSeesHashInStrings(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  bool
	}{
		{[]string{`for c in "#a":`}, false},
		{[]string{`if line.startswith('#'):`}, false},
		{[]string{`if line.startswith('#'):`, `    print(line)`}, false},
		{[]string{`if line.startswith('#'):`, `    print(line)`, ``}, true},
		{[]string{`x = "#:"`}, true},
		{[]string{`x = 1  # a comment:`}, true},
		{[]string{`if x:  # "quoted" comment`}, false},
		{[]string{`s = 'it\'s # not:'`}, true},
		// A comment ending in a backslash continues nothing (it kept
		// asking for more lines).
		{[]string{`x = 1  # C:\`}, true},
		{[]string{`if x:  # C:\`, `    pass`, ``}, true},
		{[]string{`x = 1 + \`}, false},
		// A comment-only line does not end a block.
		{[]string{`if x:`, `    pass`, `# note`}, false},
	} {
		if got := complete(c.lines); got != c.want {
			t.Errorf("complete(%q) = %v, want %v", c.lines, got, c.want)
		}
	}
}

// TestCompleteSeesEscapesInTripleQuotes: a backslash escapes a quote in a
// triple-quoted string as in any other, so an escaped quote and two more
// do not close one; the REPL took such a line for a whole input and sent
// it on, and the worker answered "SyntaxError: missing closing quote in
// string literal" where CPython's REPL asks for more.
func TestCompleteSeesEscapesInTripleQuotes(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  bool
	}{
		{[]string{`s = '''it\'''`}, false},
		{[]string{`s = '''it\'''`, `'''`}, true},
		{[]string{`s = """a\"""`}, false},
		{[]string{`s = """a\\"""`}, true},
		{[]string{`s = """a\`, `b"""`}, true},
	} {
		if got := complete(c.lines); got != c.want {
			t.Errorf("complete(%q) = %v, want %v", c.lines, got, c.want)
		}
	}
}

// A worker that dies while the REPL saves the session after an input (the
// dump of a 60 MiB string passes a 64 MiB limit) is replaced at once: the
// next input ran on the dead session, failed with "session closed" and
// was dropped by the restart, never run.
func TestREPLReplacesAWorkerLostToTheDump(t *testing.T) {
	out, stderr, code := runCLI(t, "x = 9\ny = 'a' * (60 * 1024 * 1024)\n'next'\nx\n", "repl", "--max-memory", "64MiB")
	if code != 0 || !strings.Contains(out, "'next'") || !strings.Contains(out, "9\n") {
		t.Errorf("exit %d, stdout %q, stderr %q; want the inputs after the lost dump run", code, out, stderr)
	}
}

// countingStringWriter counts what it is given, by either method.
type countingStringWriter struct{ n int }

func (c *countingStringWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

func (c *countingStringWriter) WriteString(s string) (int, error) { c.n += len(s); return len(s), nil }

// TestStickyWriterPassesStringsThrough: run's output wrapper hands a
// print's text to standard output without copying it (a print at the frame
// cap would otherwise cost another 256 MiB; the conform kit's
// parent.print_at_cap caught it).
func TestStickyWriterPassesStringsThrough(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	under := &countingStringWriter{}
	w := &stickyWriter{w: under}
	if allocs := testing.AllocsPerRun(10, func() { io.WriteString(w, big) }); allocs != 0 {
		t.Fatalf("%v allocations a print", allocs)
	}
	if under.n != 11<<20 {
		t.Fatalf("%d bytes written", under.n)
	}
}

// With its input or output piped the REPL keeps standard output for what
// the inputs print and their results' reprs, as python3 -i does: the
// banner, the prompts and the newline at the end of the input go to
// standard error. The prompts used to be mixed into standard output.
func TestREPLPipedStdoutHoldsOnlyOutput(t *testing.T) {
	out, stderr, code := runCLI(t, "x = 20\nx + 22\nfor i in range(2):\n    print('i', i)\n\n'done'\n", "repl")
	if code != 0 || out != "42\ni 0\ni 1\n'done'\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if !strings.Contains(stderr, "via gomonty") || strings.Count(stderr, ">>> ") != 5 || strings.Count(stderr, "... ") != 2 {
		t.Fatalf("stderr %q: want the banner and the prompts", stderr)
	}
}

// serve's file flags are read with a bound: --dump-key /dev/zero (or a
// pipe that never ends, /dev/stdin under a supervisor) grew memory until
// something killed the process, the 64 KiB check coming only after the
// whole file; the TLS and CA files went through unbounded reads too.
func TestServeFileFlagsAreReadWithABound(t *testing.T) {
	testenv.Worker(t)
	key := writeFile(t, "key", "0123456789abcdef0123")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dump-key", "/dev/zero"}, "/dev/zero: a dump key file is at most 64 KiB"},
		{[]string{"--dump-key", key, "--dump-key-previous", "/dev/zero"}, "/dev/zero: a dump key file is at most 64 KiB"},
		{[]string{"--dump-key", key, "--tls-cert", "/dev/zero", "--tls-key", key}, "/dev/zero: larger than"},
		{[]string{"--dump-key", key, "--tls-cert", key, "--tls-key", "/dev/zero"}, "/dev/zero: larger than"},
	} {
		args := append([]string{"serve", "--listen", "127.0.0.1:0"}, c.args...)
		// Bounded: the unbounded read never ends.
		bin := montygo(t) // built before the bound starts: a first build is slow
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		_ = cmd.Run()
		cancel()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %.300q; want 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// Input that is not UTF-8 is named as run names it, and the REPL carries
// on; it printed the codec's refusal ("invalid request: codecv2: Feed.code
// is not valid UTF-8").
func TestREPLInputNotUTF8(t *testing.T) {
	out, stderr, code := runCLI(t, "x = '\xff'\n1 + 1\n", "repl")
	if code != 0 || out != "2\n" || !strings.Contains(stderr, "montygo: the input is not valid UTF-8 (byte 5)") || strings.Contains(stderr, "codec") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

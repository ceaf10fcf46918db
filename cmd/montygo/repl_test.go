//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
)

// tmuxREPL drives `montygo repl` in a real terminal (a detached tmux
// session), typing with send-keys and reading the screen with
// capture-pane.
type tmuxREPL struct {
	t    *testing.T
	name string
	used int // prompts already typed into (see prompt)
}

func startTmuxREPL(t *testing.T) *tmuxREPL {
	t.Helper()
	// A history file of its own, not the user's.
	return startTmuxREPLIn(t, t.TempDir())
}

// startTmuxREPLIn starts the REPL with XDG_STATE_HOME=state, so that its
// history file is state/montygo/history.
func startTmuxREPLIn(t *testing.T, state string) *tmuxREPL {
	t.Helper()
	testenv.Tool(t, "tmux")
	testenv.Worker(t)
	bin := montygo(t)
	r := &tmuxREPL{t: t, name: fmt.Sprintf("montygo-repl-%d", time.Now().UnixNano())}
	r.tmux("new-session", "-d", "-s", r.name, "-x", "200", "-y", "50",
		"env XDG_STATE_HOME="+strconv.Quote(state)+" TERM=xterm "+strconv.Quote(bin)+" repl")
	t.Cleanup(func() { exec.Command("tmux", "-L", r.name, "kill-server").Run() })
	r.waitFor(">>>", 15*time.Second)
	return r
}

func (r *tmuxREPL) tmux(args ...string) string {
	r.t.Helper()
	// Each REPL has a tmux server of its own (-L): a new session never
	// races the exit of a server whose last session just ended ("server
	// exited unexpectedly").
	out, err := exec.Command("tmux", append([]string{"-L", r.name}, args...)...).CombinedOutput()
	if err != nil {
		r.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (r *tmuxREPL) screen() string {
	return r.tmux("capture-pane", "-p", "-t", r.name, "-S", "-200")
}

func (r *tmuxREPL) send(keys ...string) {
	r.tmux(append([]string{"send-keys", "-t", r.name}, keys...)...)
}

func (r *tmuxREPL) line(s string) { r.send("-l", s); r.send("Enter") }

// prompt waits for a new empty prompt (">>>" or "...") on the screen's
// last line, beyond the ones already typed into, so that the next line is
// typed into the editor rather than ahead of it (typed-ahead input is
// echoed by the terminal before the prompt is drawn, which jumbles the
// screen under load).
func (r *tmuxREPL) prompt() {
	r.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := r.screen()
		lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l, ">>>") || strings.HasPrefix(l, "...") {
				n++
			}
		}
		if last := strings.TrimSpace(lines[len(lines)-1]); n > r.used && (last == ">>>" || last == "...") {
			r.used = n
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no new empty prompt; screen:\n%s", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// enter types s at the next empty prompt.
func (r *tmuxREPL) enter(s string) { r.prompt(); r.line(s) }

// pid is the process id of the montygo in the pane.
func (r *tmuxREPL) pid(t *testing.T) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(r.tmux("display-message", "-p", "-t", r.name, "#{pane_pid}")))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitComputing waits until a worker of the REPL runs (state R), which
// an input that loops forever shows once it has reached the worker; a
// worker waiting for its next request sleeps. It replaces a fixed pause
// that a loaded machine could outlast.
func (r *tmuxREPL) waitComputing(t *testing.T) {
	t.Helper()
	pid := r.pid(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, k := range childrenOf(pid) {
			if _, st, ok := procStat(k); ok && st == "R" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no worker of the REPL started computing; screen:\n%s", r.screen())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitFor waits until the screen contains want n times in total.
func (r *tmuxREPL) waitForN(want string, n int, d time.Duration) string {
	r.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := r.screen()
		if strings.Count(s, want) >= n {
			return s
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("screen never showed %q %d times; screen:\n%s", want, n, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *tmuxREPL) waitFor(want string, d time.Duration) string { return r.waitForN(want, 1, d) }

func TestREPLInTerminal(t *testing.T) {
	r := startTmuxREPL(t)

	// Globals persist and expression results print their repr.
	r.enter("x = 21")
	r.enter("x * 2")
	r.waitFor("\n42\n", 10*time.Second)
	r.enter("'text'")
	r.waitFor("\n'text'\n", 10*time.Second)

	// A multi-line block, ended by a blank line.
	r.enter("def grow(n):")
	r.enter("    return [i * x for i in range(n)]")
	r.enter("")
	r.enter("grow(3)")
	r.waitFor("[0, 21, 42]", 10*time.Second)

	// Tracebacks on errors, and the REPL carries on.
	r.enter("1 / 0")
	r.waitFor("ZeroDivisionError: division by zero", 10*time.Second)

	// Ctrl-C interrupts a running input; the globals from before it
	// survive the worker being replaced.
	r.enter("while True:")
	r.enter("    x = x + 1")
	r.enter("")
	r.waitComputing(t)
	r.send("C-c")
	r.waitFor("KeyboardInterrupt", 10*time.Second)
	r.enter("x + 100")
	r.waitFor("\n121\n", 15*time.Second)

	// Ctrl-C at the prompt discards the line being typed.
	r.send("-l", "this is not python")
	r.send("C-c")
	r.waitForN("KeyboardInterrupt", 2, 5*time.Second)
	r.enter("x")
	r.waitForN("\n21\n", 1, 10*time.Second)

	// Ctrl-D exits.
	r.send("C-d")
	r.waitExit()
}

// waitExit waits for the REPL (and so the tmux session) to end.
func (r *tmuxREPL) waitExit() {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _ := exec.Command("tmux", "-L", r.name, "list-panes", "-t", r.name, "-F", "#{pane_dead}").CombinedOutput()
		if strings.TrimSpace(string(out)) != "0" {
			return // the pane (and session) ended with the program
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("repl did not exit; screen:\n%s", r.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestREPLLineEditingAndHistory checks the line editor: recall with Up,
// cursor movement and kills, reverse search, a block recalled whole, and a
// history file that the next REPL reads.
func TestREPLLineEditingAndHistory(t *testing.T) {
	state := t.TempDir()
	r := startTmuxREPLIn(t, state)

	r.line("x = 40")
	r.line("x + 2")
	r.waitForN("\n42\n", 1, 10*time.Second)

	// Up recalls the last input; Enter runs it again.
	r.send("Up")
	r.send("Enter")
	r.waitForN("\n42\n", 2, 10*time.Second)

	// Home and End move to the ends of the line: "1 + 2" becomes
	// "10 * 1 + 2 + 0".
	r.send("-l", "1 + 2")
	r.send("Home")
	r.send("-l", "10 * ")
	r.send("End")
	r.send("-l", " + 0")
	r.send("Enter")
	r.waitFor("\n12\n", 10*time.Second)

	// Ctrl-A, Ctrl-E, Ctrl-K: cut the junk after "5 + 6".
	r.send("-l", "5 + 6 junk")
	r.send("C-a")
	for range 5 {
		r.send("Right")
	}
	r.send("C-k")
	r.send("C-e")
	r.send("-l", " + 100")
	r.send("Enter")
	r.waitFor("\n111\n", 10*time.Second)

	// Ctrl-U: throw the line away and type another.
	r.send("-l", "this is not python")
	r.send("C-u")
	r.send("-l", "x - 1")
	r.send("Enter")
	r.waitFor("\n39\n", 10*time.Second)

	// Ctrl-R finds "x + 2" by a fragment; Enter runs it.
	r.send("C-r")
	r.send("-l", "x + ")
	r.send("Enter")
	r.waitForN("\n42\n", 3, 10*time.Second)

	// A block, then recalled whole: Up (three times, past f(5) and the
	// block's second line) brings back its first line,
	// and the continuation prompt offers the block's next line, which is
	// edited before it is accepted.
	r.line("def f(n):")
	r.line("    return n * 3")
	r.line("")
	r.line("f(5)")
	r.waitFor("\n15\n", 10*time.Second)
	r.send("Up")
	r.send("Up")
	r.send("Up")
	r.send("Enter") // def f(n):
	r.waitFor("...     return n * 3", 10*time.Second)
	r.send("-l", "0") // the cursor is at the end of the offered line
	r.send("Enter")
	r.send("Enter") // the blank line that ends the block
	r.line("f(5)")
	r.waitFor("\n150\n", 10*time.Second)

	r.send("C-d")
	r.waitExit()

	// The history file holds the inputs, and a new REPL recalls them.
	b, err := os.ReadFile(filepath.Join(state, "montygo", "history"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"x = 40", "10 * 1 + 2 + 0", "5 + 6 + 100", "def f(n):", "    return n * 30", "f(5)"} {
		if !strings.Contains(string(b), want+"\n") {
			t.Fatalf("history file lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "this is not python") {
		t.Fatalf("history holds a discarded line:\n%s", b)
	}
	r2 := startTmuxREPLIn(t, state)
	r2.send("Up")
	r2.send("Enter")
	r2.waitFor("NameError", 10*time.Second) // f(5): the new session has no f
	r2.send("C-r")
	r2.send("-l", "5 + 6")
	r2.send("Enter")
	r2.waitFor("\n111\n", 10*time.Second)
	r2.send("C-d")
	r2.waitExit()
}

// SIGTERM ends the REPL at once, at the prompt or while an input
// runs, and its worker with it.
func TestREPLSIGTERM(t *testing.T) {
	for _, busy := range []bool{false, true} {
		r := startTmuxREPL(t)
		pid := r.pid(t)
		if busy {
			r.line("while True:")
			r.line("    pass")
			r.line("")
			r.waitComputing(t)
		}
		kids := childrenOf(pid)
		if len(kids) == 0 {
			t.Fatalf("busy=%v: no worker under pid %d", busy, pid)
		}
		start := time.Now()
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// A REPL that ignored SIGTERM would live on until the 30 s give-up;
		// signalExitBound leaves room for a loaded machine below that.
		for alive(pid) {
			if time.Since(start) > 30*time.Second {
				t.Fatalf("busy=%v: the REPL outlived SIGTERM; screen:\n%s", busy, r.screen())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if took := time.Since(start); took >= signalExitBound {
			t.Fatalf("busy=%v: exit took %v", busy, took)
		}
		noOrphans(t, kids)
	}
}

// A piped REPL's input is bounded as run's program is, by what one frame
// can carry (maxInputLen): a line or a block over it is dropped with a
// message and the REPL carries on. The plain reader read a line whole
// (bufio.Reader.ReadString), and the lines of a block piled up, so
// `montygo repl < /dev/zero` or `yes '[' | montygo repl` grew without
// bound.
func TestREPLInputIsBounded(t *testing.T) {
	testenv.Worker(t)
	t.Setenv("MONTYGO_LOG", "")
	defer func(n int) { maxInputLen = n }(maxInputLen)
	maxInputLen = 64
	in := "x = 41\n" +
		"y = '" + strings.Repeat("a", 100) + "'\n" + // a line over the bound
		"[\n" + strings.Repeat("1,\n", 40) + // a block over it
		"x + 1\n"
	var out, errb strings.Builder
	err := replCmd(t.Context(), nil, strings.NewReader(in), &out, &errb)
	if err != nil {
		t.Fatalf("repl: %v (stderr %q)", err, errb.String())
	}
	if n := strings.Count(errb.String(), "the input is over 64 bytes"); n != 2 {
		t.Errorf("stderr %q: want the bound reported twice, got %d", errb.String(), n)
	}
	if !strings.HasSuffix(out.String(), "42\n") || strings.Contains(errb.String(), "Traceback") && strings.Contains(errb.String(), "aaaa") {
		t.Errorf("stdout %q, stderr %q: want the REPL to carry on (42 last)", out.String(), errb.String())
	}
}

// The REPL's check of whether the lines typed form a whole input is
// linear in them: it rescanned every line of the block at each new one,
// so a bracket that never closes (a paste, a generated input piped in)
// cost time quadratic in its lines (200k lines: 2e10 bytes scanned).
func TestREPLBlockCheckIsLinear(t *testing.T) {
	testenv.Worker(t)
	t.Setenv("MONTYGO_LOG", "")
	in := "[\n" + strings.Repeat("1,\n", 5000) + "]\n"
	var out, errb strings.Builder
	before := blockScanned.Load()
	if err := replCmd(t.Context(), nil, strings.NewReader(in), &out, &errb); err != nil {
		t.Fatalf("repl: %v (stderr %q)", err, errb.String())
	}
	if scanned := blockScanned.Load() - before; scanned > int64(2*len(in)) {
		t.Errorf("the block check scanned %d bytes of a %d-byte input", scanned, len(in))
	}
	if want := "[" + strings.TrimSuffix(strings.Repeat("1, ", 5000), ", ") + "]\n"; out.String() != want {
		t.Errorf("stdout %.100q..., want the list", out.String())
	}
}

// TestSuggestIsLinear: the continuation prompts of a long block pasted
// again, with earlier blocks it begins in the history, look each typed
// line up once per remembered block, not the whole block so far at every
// prompt: the work (line comparisons, counted, not timed) grows linearly
// with the block. Before, each prompt compared every typed line again,
// so re-pasting a block of n lines cost about blocks*n*n/2 comparisons.
// The suggestions stay those of the most recent block typed so far
// begins.
func TestSuggestIsLinear(t *testing.T) {
	const n = 2000
	long := make([]string, n)
	for i := range long {
		long[i] = fmt.Sprintf("x%d = %d", i, i)
	}
	other := slices.Clone(long[:n/2])
	other = append(other, "other")
	e := &editReader{}
	e.blocks = append(e.blocks, slices.Clone(long), other, []string{"unrelated", "block"}, slices.Clone(long[:10]))
	var typed []string
	for i := range n - 1 {
		typed = append(typed, long[i])
		want := long[i+1]
		if i == n/2-1 {
			want = "other" // the more recent block that begins so
		}
		if got := e.suggest(typed); got != want {
			t.Fatalf("after %d lines: suggestion %q, want %q", i+1, got, want)
		}
	}
	if limit := 8 * n * len(e.blocks); e.compared > limit {
		t.Errorf("%d line comparisons for a block of %d lines, want at most %d", e.compared, n, limit)
	}
	// A new block starts the lookup afresh.
	if got := e.suggest([]string{"unrelated"}); got != "block" {
		t.Errorf("suggestion %q after a new first line, want %q", got, "block")
	}
	if got := e.suggest([]string{long[0]}); got != long[1] {
		t.Errorf("suggestion %q, want %q", got, long[1])
	}
}

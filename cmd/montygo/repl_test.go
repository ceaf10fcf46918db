package main

import (
	"fmt"
	"os/exec"
	"strings"
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
}

func startTmuxREPL(t *testing.T) *tmuxREPL {
	t.Helper()
	testenv.Tool(t, "tmux")
	testenv.Worker(t)
	bin := montygo(t)
	r := &tmuxREPL{t: t, name: fmt.Sprintf("montygo-repl-%d", time.Now().UnixNano())}
	r.tmux("new-session", "-d", "-s", r.name, "-x", "200", "-y", "50", bin+" repl")
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", r.name).Run() })
	r.waitFor(">>>", 15*time.Second)
	return r
}

func (r *tmuxREPL) tmux(args ...string) string {
	r.t.Helper()
	out, err := exec.Command("tmux", args...).CombinedOutput()
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
	r.line("x = 21")
	r.line("x * 2")
	r.waitFor("\n42\n", 10*time.Second)
	r.line("'text'")
	r.waitFor("\n'text'\n", 10*time.Second)

	// A multi-line block, ended by a blank line.
	r.line("def grow(n):")
	r.line("    return [i * x for i in range(n)]")
	r.line("")
	r.line("grow(3)")
	r.waitFor("[0, 21, 42]", 10*time.Second)

	// Tracebacks on errors, and the REPL carries on.
	r.line("1 / 0")
	r.waitFor("ZeroDivisionError: division by zero", 10*time.Second)

	// Ctrl-C interrupts a running input; the globals from before it
	// survive the worker being replaced.
	r.line("while True:")
	r.line("    x = x + 1")
	r.line("")
	time.Sleep(500 * time.Millisecond)
	r.send("C-c")
	r.waitFor("KeyboardInterrupt", 10*time.Second)
	r.line("x + 100")
	r.waitFor("\n121\n", 15*time.Second)

	// Ctrl-C at the prompt discards the line being typed.
	r.send("-l", "this is not python")
	r.send("C-c")
	r.waitForN("KeyboardInterrupt", 2, 5*time.Second)
	r.line("x")
	r.waitForN("\n21\n", 1, 10*time.Second)

	// Ctrl-D exits.
	r.send("C-d")
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _ := exec.Command("tmux", "list-panes", "-t", r.name, "-F", "#{pane_dead}").CombinedOutput()
		if strings.TrimSpace(string(out)) != "0" {
			break // the pane (and session) ended with the program
		}
		if time.Now().After(deadline) {
			t.Fatalf("repl did not exit on Ctrl-D; screen:\n%s", r.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

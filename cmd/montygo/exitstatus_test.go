//go:build unix

package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A program that raised and a sandbox that failed exited alike, 1, so a
// script running `montygo run` could not tell a bug in its program from a
// missing, broken or crashing worker. The sandbox's failures now exit 3
// (exitSandboxFailed), on one stderr line; a Python exception, the
// worker's TimeoutError and the watchdog that backs --max-duration up
// still exit 1.
func TestRunExitStatusTellsSandboxFailureFromException(t *testing.T) {
	notWorker, _, missing := badWorkers(t)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"exception", []string{"run", "-c", "1/0"}, 1, "ZeroDivisionError: division by zero"},
		{"missing worker", []string{"run", "--worker", missing, "-c", "1"}, exitSandboxFailed, "monty worker binary not found"},
		{"missing worker, repl", []string{"repl", "--worker", missing}, exitSandboxFailed, "monty worker binary not found"},
		{"not a worker", []string{"run", "--worker", notWorker, "-c", "1"}, exitSandboxFailed, "monty worker crashed"},
		{"crash mid-run", []string{"run", "--worker", hostileWorker(t, "sigkill"), "-c", "1"}, exitSandboxFailed, "signal: killed"},
		{"protocol violation", []string{"run", "--worker", hostileWorker(t, "invalid_date_month"), "-c", "1"}, exitSandboxFailed, "13 is outside the range 1..=12"},
		{"start timeout", []string{"run", "--worker", hostileWorker(t, "never_reads"), "--start-timeout", "0.2", "-c", "1"}, exitSandboxFailed, "the worker did not start within 200ms (--start-timeout)"},
		{"watchdog", []string{"run", "--worker", hostileWorker(t, "prefix_then_silence"), "--max-duration", "0.2", "-c", "1"}, 1, "ran past its max_duration"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, errs, code := runCLI(t, "", c.args...)
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errs, c.code, c.want)
			}
			if c.code == exitSandboxFailed && (!strings.HasPrefix(errs, "montygo "+c.args[0]+": ") || strings.Count(errs, "\n") != 1) {
				t.Fatalf("stderr %q: want one line naming the command", errs)
			}
		})
	}
}

// The worker's failure to be found or to start was told in the library's
// words: "set Config.Binary or $MONTY_BIN, or run scripts/install-worker.sh",
// though a CLI user sets no Config and --worker had named the binary. It
// now names the flag and, for a binary that ran but did not speak the
// protocol, asks whether it is a monty worker at all.
func TestRunWorkerErrorsSpeakTheCLIsWords(t *testing.T) {
	notWorker := filepath.Join(t.TempDir(), "not-a-worker")
	if err := os.WriteFile(notWorker, []byte("#!/bin/sh\necho hello\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--worker", missing, "-c", "1"}, []string{"--worker " + missing + ": ", "--worker PATH or $MONTY_BIN"}},
		{[]string{"repl", "--worker", missing}, []string{"--worker " + missing + ": ", "--worker PATH or $MONTY_BIN"}},
		{[]string{"run", "--worker", notWorker, "-c", "1"}, []string{"is " + notWorker + " a monty worker?"}},
	} {
		_, errs, _ := runCLI(t, "", c.args...)
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr %q, want %q", c.args, errs, w)
			}
		}
		if strings.Contains(errs, "Config.") || strings.Contains(errs, "scripts/") {
			t.Errorf("%v: stderr %q names the library's configuration or a source path", c.args, errs)
		}
	}
	// A worker that crashes in the middle of a run is not asked about.
	_, errs, _ := runCLI(t, "", "run", "--worker", hostileWorker(t, "sigkill"), "-c", "1")
	if strings.Contains(errs, "a monty worker?") {
		t.Errorf("crash mid-run: stderr %q asks whether the worker is one", errs)
	}
}

// subprocess and serve told a missing worker in the library's words too
// (subprocess even named $MONTY_BIN's path as Config.Binary), and serve a
// binary that is not a worker as a crash with exit status 0.
func TestWorkerErrorsSpeakTheCLIsWordsInSubprocessAndServe(t *testing.T) {
	montygo(t)
	notWorker, key, missing := badWorkers(t)
	for _, c := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"subprocess", "--worker", missing}, "--worker " + missing + ": "},
		{"MONTY_BIN=" + missing, []string{"subprocess"}, "$MONTY_BIN " + missing + ": "},
		{"", []string{"serve", "--dump-key", key, "--listen", "127.0.0.1:0", "--worker", missing}, "--worker " + missing + ": "},
		{"MONTY_BIN=" + missing, []string{"serve", "--dump-key", key, "--listen", "127.0.0.1:0"}, "$MONTY_BIN " + missing + ": "},
		{"", []string{"serve", "--dump-key", key, "--listen", "127.0.0.1:0", "--worker", notWorker}, "is " + notWorker + " a monty worker?"},
	} {
		errs, code := montygoWithEnv(t, c.env, c.args...)
		if code == 0 {
			t.Errorf("%s %v: exit 0", c.env, c.args)
		}
		if !strings.Contains(errs, c.want) || strings.Contains(errs, "Config.") || strings.Contains(errs, "scripts/") {
			t.Errorf("%s %v: stderr %q, want %q and no library configuration or source path", c.env, c.args, errs, c.want)
		}
	}
}

// --protocol pinned to a version the worker does not speak exited 1 (then
// 3, a failed sandbox), saying "gomonty speaks version 4" as if that were
// all gomonty spoke; it is the user's pin, a usage mistake (exit 2), told
// in terms of the flag.
func TestRunPinnedProtocolTheWorkerRefusesIsAUsageError(t *testing.T) {
	_, errs, code := runCLI(t, "", "run", "--protocol", "4", "-c", "1")
	if code == 0 {
		t.Skip("this worker speaks protocol 4")
	}
	if code != 2 || !strings.HasPrefix(errs, "montygo run: --protocol 4: the worker does not speak it") || !strings.Contains(errs, "leave --protocol out to negotiate") {
		t.Fatalf("exit %d, stderr %q; want 2 naming --protocol 4", code, errs)
	}
}

// serve exited 1 when its worker pool could not start and 2 when --worker
// named no binary, where run and repl exit 3 for the same failures; the
// pool's failure read "server: worker pool: monty pool: first worker:
// ...". It now exits 3 for both, on one line without the library's layers
// of context; 1 stays for a server that could not listen (the address is
// taken) and 2 for a usage mistake (an address without a port). montygo
// help and serve -h show the statuses.
func TestServeExitStatusesMatchRuns(t *testing.T) {
	notWorker, key, missing := badWorkers(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	serve := []string{"serve", "--dump-key", key, "--log-level", "error"}
	for _, c := range []struct {
		name string
		env  string
		args []string
		code int
		want string
	}{
		{"missing --worker", "", []string{"--listen", "127.0.0.1:0", "--worker", missing}, exitSandboxFailed, "montygo serve: monty worker binary not found (tried: --worker " + missing + ": "},
		{"missing $MONTY_BIN", "MONTY_BIN=" + missing, []string{"--listen", "127.0.0.1:0"}, exitSandboxFailed, "montygo serve: the worker pool did not start: monty worker binary not found (tried: $MONTY_BIN " + missing + ": "},
		{"not a worker", "", []string{"--listen", "127.0.0.1:0", "--worker", notWorker}, exitSandboxFailed, "montygo serve: the worker pool did not start: monty worker crashed "},
		// Told in net's words before ("listen tcp ADDR: bind: address
		// already in use").
		{"address taken", "", []string{"--listen", taken.Addr().String(), "--worker", notWorker}, 1, "montygo serve: cannot listen on " + taken.Addr().String() + ": address already in use\n"},
		{"no port", "", []string{"--listen", "127.0.0.1", "--worker", notWorker}, 2, `montygo serve: --listen "127.0.0.1": missing port in address`},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs, code := montygoWithEnv(t, c.env, append(serve, c.args...)...)
			if code != c.code || !strings.HasPrefix(errs, c.want) || strings.Count(errs, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want %d and one line starting %q", code, errs, c.code, c.want)
			}
			for _, tag := range []string{"server: ", "monty pool: ", "worker pool: first worker"} {
				if strings.Contains(errs, tag) {
					t.Errorf("stderr %q repeats the library's context %q", errs, tag)
				}
			}
		})
	}
	out, _, code := runCLI(t, "", "help")
	if code != 0 || !strings.Contains(out, "Exit status (every command): 0 success") || !strings.Contains(out, "3 the sandbox failed") {
		t.Errorf("montygo help: exit %d, stdout %q; want the exit status table", code, out)
	}
	out, _, code = runCLI(t, "", "serve", "-h")
	if code != 0 || !strings.Contains(out, "Exit status: 0 drained") || !strings.Contains(out, "3 the worker pool did not start") {
		t.Errorf("montygo serve -h: exit %d, stdout %q; want serve's exit statuses", code, out)
	}
}

// A CLI error is one line without the library's package tags: several
// --remote endpoints' failures came one per line (errors.Join), and a
// remote session the server ended read "montygo run: monty session:
// remote worker at ... disconnected".
func TestCLIErrorsAreOneLineWithoutLibraryTags(t *testing.T) {
	dead1, dead2 := deadURL(t), deadURL(t)
	_, errs, code := runCLI(t, "", "run", "--remote", dead1, "--remote", dead2, "-c", "1")
	if code != exitSandboxFailed || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "montygo run: no remote endpoint started the session: ") ||
		!strings.Contains(errs, dead1+": ") || !strings.Contains(errs, "; "+dead2+": ") {
		t.Errorf("two dead endpoints: exit %d, stderr %q; want 3 and one line naming both", code, errs)
	}

	// A turn the server ended at its --turn-timeout is a time limit, and
	// exits 1 as a local one does (TestRunRemoteTimeLimitExitsAsALocalOne).
	p := startServe(t, nil, "--turn-timeout", "1")
	_, errs, code = runCLI(t, "", "run", "--remote", p.url, "-c", "while True: pass")
	if code != 1 || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "montygo run: remote worker at "+p.url+" disconnected") {
		t.Errorf("a turn the server ended: exit %d, stderr %q; want 1 and one line without the session's tag", code, errs)
	}
}

// badWorkers makes a script that exits 0 without speaking the protocol
// (notWorker) and a 32-byte dump key (key), and names a worker binary that
// does not exist (missing).
func badWorkers(t *testing.T) (notWorker, key, missing string) {
	t.Helper()
	dir := t.TempDir()
	notWorker = filepath.Join(dir, "not-a-worker")
	if err := os.WriteFile(notWorker, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return notWorker, writeFile(t, "key", "0123456789abcdef0123456789abcdef"), filepath.Join(dir, "missing")
}

// montygoWithEnv runs montygo with args, env (NAME=value, or "" for none)
// added to the environment, and returns its stderr and exit status (-1
// when it did not start, or a signal ended it).
func montygoWithEnv(t *testing.T, env string, args ...string) (stderr string, code int) {
	t.Helper()
	cmd := exec.Command(montygo(t), args...)
	if env != "" {
		cmd.Env = append(os.Environ(), env)
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	cmd.Run()
	return errb.String(), cmd.ProcessState.ExitCode()
}

// deadURL is a ws:// URL at a local port nothing listens on (it was bound
// and released).
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "ws://" + addr + "/"
}

// `montygo run x.py a b` refused a and b as stray arguments without
// saying why they could not be passed: the worker's sys module has no
// argv (and none can be set), so they could never reach the program.
// The mistake says so and names --input, which does pass values.
func TestRunArgumentsAfterTheProgramSayThereIsNoArgv(t *testing.T) {
	// The premise: the sandbox has no sys.argv.
	_, errs, code := runCLI(t, "", "run", "-c", "import sys; sys.argv")
	if code != 1 || !strings.Contains(errs, "AttributeError") {
		t.Fatalf("sys.argv: exit %d, stderr %q; this worker may have sys.argv: pass run's arguments to it", code, errs)
	}
	prog := filepath.Join(t.TempDir(), "prog.py")
	if err := os.WriteFile(prog, []byte("print('ran')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"run", prog, "a", "b"}, {"run", prog, "--", "-a"}, {"run", "-c", "print('ran')", "a"}} {
		out, errs, code := runCLI(t, "", args...)
		if code != 2 || out != "" || !strings.Contains(errs, "the sandbox has no sys.argv") || !strings.Contains(errs, "--input NAME=JSON") {
			t.Errorf("montygo %s: exit %d, stdout %q, stderr %q; want 2 saying there is no sys.argv", strings.Join(args, " "), code, out, errs)
		}
	}
}

// conform worker exited 2, a usage mistake, when the worker binary could
// not be found, where run, repl and serve exit 3 (the sandbox failed: no
// worker was found), the meaning the exit status table gives that number
// for every command. It now exits as run does, on one line in the CLI's
// words, whether --worker or $MONTY_BIN named the missing binary.
func TestConformMissingWorkerExitsAsRunDoes(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, c := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"--worker", missing}, "(tried: --worker " + missing + ": "},
		{"MONTY_BIN=" + missing, nil, "(tried: $MONTY_BIN " + missing + ": "},
	} {
		var codes [2]int
		for i, cmdArgs := range [][]string{append([]string{"run", "-c", "1"}, c.args...), append([]string{"conform", "worker"}, c.args...)} {
			cmd := exec.Command(montygo(t), cmdArgs...)
			if c.env != "" {
				cmd.Env = append(os.Environ(), c.env)
			}
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			cmd.Run()
			codes[i] = cmd.ProcessState.ExitCode()
			errs := errb.String()
			want := "montygo " + cmdArgs[0] + ": monty worker binary not found "
			if cmdArgs[0] == "conform" {
				want = "montygo conform worker: monty worker binary not found "
			}
			if !strings.HasPrefix(errs, want) || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 || out.Len() != 0 {
				t.Errorf("%s montygo %s: stdout %q, stderr %q; want no report and one line starting %q naming %q", c.env, strings.Join(cmdArgs, " "), out.String(), errs, want, c.want)
			}
		}
		if codes[0] != exitSandboxFailed || codes[1] != codes[0] {
			t.Errorf("%s %v: run exits %d, conform worker %d; want both %d", c.env, c.args, codes[0], codes[1], exitSandboxFailed)
		}
	}
}

// conform worker --remote at an endpoint that could not be reached ran
// every rule against it, each failing with the dial's error, and exited
// 1, a worker that failed its checks; run exits 3 for the same endpoint
// (the remote server could not be reached), as conform worker exits for a
// local worker it cannot find. It now says so once, as run does, with no
// report.
func TestConformUnreachableRemoteExitsAsRunDoes(t *testing.T) {
	dead := deadURL(t)
	_, runErrs, runCode := runCLI(t, "", "run", "--remote", dead, "-c", "1")
	out, errs, code := runCLI(t, "", "conform", "worker", "--remote", dead, "--protocol", "2", "--run", `^feed\.`)
	want := "montygo conform worker: " + strings.TrimPrefix(runErrs, "montygo run: ")
	if runCode != exitSandboxFailed || code != runCode || out != "" || errs != want {
		t.Errorf("conform worker --remote %s: exit %d, stdout %.200q, stderr %q; want %d as run (%q), no report, and %q", dead, code, out, errs, runCode, runErrs, want)
	}
}

// A montygo that lives in the working directory, finding no worker, named
// the one place it had looked twice: "tried: DIR/.monty/bin/monty and its
// parents; DIR/.monty/bin/monty and its parents; monty in $PATH" (the
// working directory and the executable's are both searched, and were the
// same). Each place is named once.
func TestWorkerNotFoundNamesEachPlaceOnce(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "montygo")
	b, err := os.ReadFile(montygo(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "-c", "1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + dir} // no monty there, nor a MONTY_BIN
	var errb strings.Builder
	cmd.Stderr = &errb
	cmd.Run()
	errs := errb.String()
	_, tried, ok := strings.Cut(errs, "(tried: ")
	tried, _, _ = strings.Cut(tried, ")")
	if cmd.ProcessState.ExitCode() == 0 {
		t.Skipf("a worker is installed above %s", dir)
	}
	if code := cmd.ProcessState.ExitCode(); code != exitSandboxFailed || !ok {
		t.Fatalf("exit %d, stderr %q; want %d and the places tried", code, errs, exitSandboxFailed)
	}
	seen := map[string]bool{}
	for _, place := range strings.Split(tried, "; ") {
		if seen[place] {
			t.Errorf("stderr %q names %q twice", errs, place)
		}
		seen[place] = true
	}
	if !seen[filepath.Join(dir, ".monty/bin/monty")+" and its parents"] {
		t.Errorf("stderr %q does not name the working directory's install", errs)
	}
}

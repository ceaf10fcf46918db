//go:build unix

package main

import (
	"strings"
	"testing"
)

// -h and --help ask for the usage: every subcommand prints it and exits
// 0, as `montygo --help` does (and go, git, python3 do); they exited 2,
// the status of a usage mistake, so `montygo run --help && ...` failed.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{
		{"run", "-h"}, {"run", "--help"}, {"run", "-c", "1", "--help"},
		{"repl", "-h"}, {"decode", "-h"}, {"subprocess", "-h"}, {"serve", "--help"},
		{"conform", "-h"}, {"conform", "--help"},
		{"conform", "worker", "-h"}, {"conform", "parent", "--help"}, {"version", "-h"},
	} {
		var out, errb strings.Builder
		code := mainArgs(args, strings.NewReader(""), &out, &errb)
		if code != 0 || !strings.Contains(strings.ToLower(out.String()), "usage") || errb.Len() != 0 {
			t.Errorf("montygo %s: exit %d, stdout %.200q, stderr %.200q; want 0 and the usage on stdout", strings.Join(args, " "), code, out.String(), errb.String())
		}
	}
	// A mistake is still one.
	for _, args := range [][]string{{"run", "--bogus"}, {"conform", "-x"}, {"serve", "--bogus"}} {
		var out, errb strings.Builder
		if code := mainArgs(args, strings.NewReader(""), &out, &errb); code != 2 {
			t.Errorf("montygo %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
}

// A positional argument a subcommand takes none of is a usage mistake
// (exit 2, named), not ignored: `montygo decode capture.bin` read standard
// input instead (waiting on a terminal, or decoding an empty stream into
// success), and `montygo repl script.py` started a REPL that never ran
// the script. `montygo subprocess extra` served as if the argument were
// not there, where `monty subprocess extra` refuses it (exit 2).
func TestStrayArgumentsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"decode", "capture.bin"}, {"decode", "--from", "parent", "capture.bin"},
		{"repl", "script.py"}, {"repl", "--max-duration", "1", "script.py"},
		{"version", "extra"},
		{"subprocess", "extra"}, {"subprocess", "--protocol", "2", "protocol=4"},
	} {
		var out, errb strings.Builder
		code := mainArgs(args, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "unexpected argument") {
			t.Errorf("montygo %s: exit %d, stdout %.100q, stderr %.200q; want 2 naming the argument", strings.Join(args, " "), code, out.String(), errb.String())
		}
	}
}

// A flag value run or repl cannot use is a usage mistake, exit 2 like an
// unknown flag, a bad --input or a bad --header: it exited 1, the status
// of a Python exception, so a script could not tell `--max-duration 5s`
// (a typo) from a program that raised.
func TestBadFlagValuesAreUsageErrors(t *testing.T) {
	t.Setenv("MONTYGO_LOG", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-duration", "5s"}, "--max-duration"},
		{[]string{"--max-duration", "-1"}, `--max-duration: "-1" is not a number of seconds from 0 to 1e9`},
		// 0 ran every program with a 1 µs limit (a TimeoutError, exit 1)
		// where serve refuses a zero --max-duration and run a zero
		// --max-memory.
		{[]string{"--max-duration", "0"}, "none lifts the limit"},
		{[]string{"--start-timeout", "0"}, "--start-timeout"},
		{[]string{"--max-memory", "12 parsecs"}, "unknown unit"},
		{[]string{"--max-memory", "0"}, "none lifts the limit"},
		{[]string{"--mount", "/tmp::data"}, "--mount"},
		{[]string{"--mount", "/tmp::/data::bogus"}, "--mount"},
		{[]string{"--protocol", "3"}, "--protocol 3"},
		{[]string{"--remote", "http://127.0.0.1:1/"}, "--remote"},
		{[]string{"--remote", "127.0.0.1:8000"}, "--remote"},
	} {
		for _, cmd := range []string{"run", "repl"} {
			args := append([]string{cmd}, c.args...)
			if cmd == "run" {
				args = append(args, "-c", "1")
			}
			var out, errb strings.Builder
			code := mainArgs(args, strings.NewReader(""), &out, &errb)
			if code != 2 || !strings.Contains(errb.String(), c.want) {
				t.Errorf("montygo %s: exit %d, stderr %q; want 2 and %q", strings.Join(args, " "), code, errb.String(), c.want)
			}
		}
	}
	// A negative --spin was taken as 0 (never spin) without a word, where
	// conform's negative durations and counts are usage errors.
	for _, args := range [][]string{{"decode", "--protocol", "9"}, {"decode", "--from", "both"}, {"subprocess", "--spin", "-1ms"}} {
		var out, errb strings.Builder
		if code := mainArgs(args, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), args[1][2:]) {
			t.Errorf("montygo %s: exit %d, stderr %q; want 2 naming %s", strings.Join(args, " "), code, errb.String(), args[1])
		}
	}
	t.Setenv("MONTYGO_LOG", "loud")
	var out, errb strings.Builder
	if code := mainArgs([]string{"run", "-c", "1"}, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), "MONTYGO_LOG") {
		t.Errorf("MONTYGO_LOG=loud: exit %d, stderr %q; want 2 naming it", code, errb.String())
	}
}

// A --protocol past 2^32 is a usage mistake (exit 2), not a version: the
// flags were uints converted to uint32, so --protocol 4294967300 wrapped
// to 4 and `montygo run` ran at protocol 4, `decode` decoded as 4, and
// so on for every subcommand that takes a protocol version.
func TestProtocolFlagDoesNotWrap(t *testing.T) {
	t.Setenv("MONTYGO_LOG", "")
	const wraps = "4294967300" // 2^32 + 4
	for _, args := range [][]string{
		{"run", "--protocol", wraps, "-c", "1"},
		{"repl", "--protocol", wraps},
		{"decode", "--protocol", wraps},
		{"subprocess", "--protocol", wraps},
		{"subprocess", "--inner-protocol", wraps},
		{"conform", "worker", "--protocol", wraps, "--worker", "/nonexistent"},
		{"conform", "parent", "--protocol", wraps, "--", "true"},
	} {
		var out, errb strings.Builder
		code := mainArgs(args, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "protocol") {
			t.Errorf("montygo %s: exit %d, stdout %.100q, stderr %.200q; want 2 naming the flag", strings.Join(args, " "), code, out.String(), errb.String())
		}
	}
}

// A program file that cannot be opened or read is a usage mistake, exit 2
// as python3 exits for it ("can't open file '/x.py': [Errno 2] No such
// file or directory"): it exited 1, the status of a Python exception, so a
// script could not tell a mistyped path from a program that raised.
func TestRunUnreadableFileExitsTwo(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{dir + "/nonexistent.py", dir} {
		var out, errb strings.Builder
		code := mainArgs([]string{"run", path}, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "can't open file '"+path+"'") {
			t.Errorf("montygo run %s: exit %d, stderr %q; want 2 and \"can't open file '%s'\"", path, code, errb.String(), path)
		}
	}
}

// A negative --max-decode-bytes is a usage mistake (exit 2): it was taken
// as the 1 GiB default, the loosest budget, where the user asked for a
// tight one.
func TestDecodeNegativeBudgetIsAUsageError(t *testing.T) {
	var out, errb strings.Builder
	code := mainArgs([]string{"decode", "--max-decode-bytes", "-5"}, strings.NewReader(""), &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "--max-decode-bytes") {
		t.Errorf("montygo decode --max-decode-bytes -5: exit %d, stderr %q; want 2 naming the flag", code, errb.String())
	}
}

// An --input NAME that is not a Python identifier (or is a keyword) is a
// usage mistake like its bad JSON (exit 2, naming the flag), found before
// a worker starts: the worker's SyntaxError came back as a Python
// exception, exit 1. The rule is the session's (session.Input): the name
// as the sandbox reads it, NFKC-normalized, so ｉｆ (full-width) is the
// keyword if, and x² is the name x2; so is a name given twice.
func TestInputNameNotIdentifierIsAUsageError(t *testing.T) {
	t.Setenv("MONTYGO_LOG", "")
	for _, name := range []string{"1x", "not valid", "if", "None", "a-b", "ｉｆ"} {
		var out, errb strings.Builder
		code := mainArgs([]string{"run", "--input", name + "=1", "-c", "1"}, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "--input "+name) {
			t.Errorf("--input %q: exit %d, stderr %q; want 2 naming it", name+"=1", code, errb.String())
		}
	}
	var out, errb strings.Builder
	if code := mainArgs([]string{"run", "--input", "x=1", "--input", "ｘ=2", "-c", "x"}, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), "given twice") {
		t.Errorf("--input x=1 --input ｘ=2: exit %d, stderr %q; want 2, given twice", code, errb.String())
	}
	for _, c := range [][2]string{{"é_1", "é_1"}, {"x²", "x2"}, {"x\u200c", "x\u200c"}} {
		out.Reset()
		errb.Reset()
		if code := mainArgs([]string{"run", "--input", c[0] + "=1", "-c", c[1] + " + 1"}, strings.NewReader(""), &out, &errb); code != 0 || out.String() != "2\n" {
			t.Errorf("--input %s=1, reading %s: exit %d, stdout %q, stderr %q; want 2", c[0], c[1], code, out.String(), errb.String())
		}
	}
}

// The flag package takes a back-quoted word in a flag's usage as the
// name of its argument: `montygo decode -h` showed "-record montygo
// subprocess --record" and `conform worker -h` "-worker BIN subprocess"
// and "-worker-args subprocess", as if those words were what the flags
// take. Every flag's argument placeholder is one upper-case word (or the
// flag package's own "string", "int", ... for a flag without one).
func TestUsageArgumentNames(t *testing.T) {
	generic := map[string]bool{"string": true, "int": true, "uint": true, "value": true, "duration": true, "float": true, "version": true}
	for _, args := range [][]string{
		{"run", "-h"}, {"repl", "-h"}, {"decode", "-h"}, {"subprocess", "-h"}, {"serve", "-h"},
		{"conform", "worker", "-h"}, {"conform", "parent", "-h"},
	} {
		var out, errb strings.Builder
		mainArgs(args, strings.NewReader(""), &out, &errb)
		for _, line := range strings.Split(out.String(), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 || !strings.HasPrefix(line, "  -") {
				continue
			}
			if len(f) > 2 {
				t.Errorf("montygo %s: flag line %q names its argument with %d words", strings.Join(args, " "), line, len(f)-1)
			} else if len(f) == 2 && f[1] != strings.ToUpper(f[1]) && !generic[f[1]] {
				t.Errorf("montygo %s: flag line %q names its argument %q", strings.Join(args, " "), line, f[1])
			}
		}
	}
}

// The command list's summaries start in one column: "subprocess", longer
// than the %-8s it was padded to, pushed its summary one place right of
// the others.
func TestUsageListsCommandsInColumns(t *testing.T) {
	var out, errb strings.Builder
	mainArgs([]string{"--help"}, strings.NewReader(""), &out, &errb)
	col := -1
	for _, c := range commands() {
		line := ""
		for l := range strings.Lines(out.String()) {
			if strings.HasPrefix(l, "  "+c.name+" ") {
				line = l
			}
		}
		i := strings.Index(line, c.summary)
		if i < 0 {
			t.Fatalf("no line for %s in %q", c.name, out.String())
		}
		if col >= 0 && i != col {
			t.Errorf("%s's summary starts at column %d, the others' at %d:\n%s", c.name, i, col, out.String())
		}
		col = i
	}
}

// `montygo help run` printed the command list, as `montygo help` does,
// though `go help build` and `gh help pr` show that command's usage.
func TestHelpCommandShowsThatCommandsUsage(t *testing.T) {
	for _, c := range []struct{ cmd, want string }{
		{"run", "usage: montygo run FILE"},
		{"repl", "usage: montygo repl"},
		{"subprocess", "usage: montygo subprocess"},
		{"serve", "usage: montygo serve"},
		{"conform", "usage: montygo conform worker|parent"},
		{"version", "usage: montygo version"},
		{"decode", "usage: montygo decode"},
	} {
		var out, errb strings.Builder
		code := mainArgs([]string{"help", c.cmd}, strings.NewReader(""), &out, &errb)
		if code != 0 || !strings.HasPrefix(out.String(), c.want) {
			t.Errorf("montygo help %s: exit %d, stdout %.200q; want 0 and %q", c.cmd, code, out.String(), c.want)
		}
	}
	var out, errb strings.Builder
	if code := mainArgs([]string{"help", "bogus"}, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown command "bogus"`) {
		t.Errorf("montygo help bogus: exit %d, stderr %.200q; want 2 naming it", code, errb.String())
	}
}

// conform worker -h and conform parent -h began "Usage of conform parent:",
// the flag package's default, and parent's never said that it wants the
// parent's command after "--" (only a call without one said so).
func TestConformModesHaveAUsageLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"conform", "worker", "-h"}, "usage: montygo conform worker "},
		{[]string{"conform", "parent", "-h"}, "usage: montygo conform parent [flags] -- COMMAND [ARGS...]"},
		{[]string{"conform", "parent"}, "usage: montygo conform parent [flags] -- COMMAND [ARGS...]"},
	} {
		var out, errb strings.Builder
		mainArgs(c.args, strings.NewReader(""), &out, &errb)
		if !strings.Contains(out.String()+errb.String(), c.want) {
			t.Errorf("montygo %s: stdout %.300q, stderr %.300q; want %q", strings.Join(c.args, " "), out.String(), errb.String(), c.want)
		}
	}
}

// A flag mistake printed the flag package's bare line ("flag provided but
// not defined: -bogus", naming no command) and then every flag's help, 30
// lines for run, so the line that mattered scrolled away; a run with no
// program or a stray argument printed the usage alone, saying nothing of
// what was wrong. Now, as go and kubectl do: one line naming the command
// and the mistake, and a pointer to -h.
func TestUsageMistakesAreOneLineAndAPointer(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--bogus", "-c", "1"}, "montygo run: flag provided but not defined: -bogus"},
		{[]string{"run", "-c"}, "montygo run: flag needs an argument: -c"},
		{[]string{"run"}, "montygo run: no program: give a FILE, - (standard input) or -c CODE"},
		{[]string{"run", "-c", "1", "x.py"}, `montygo run: unexpected argument "x.py" (the program is -c's)`},
		{[]string{"run", "a.py", "b.py"}, `montygo run: unexpected argument "b.py" (one program FILE)`},
		{[]string{"repl", "--json"}, "montygo repl: flag provided but not defined: -json"},
		{[]string{"decode", "--hex=maybe"}, `montygo decode: invalid boolean value "maybe" for -hex`},
		{[]string{"subprocess", "--spin", "fast"}, `montygo subprocess: invalid value "fast" for flag -spin`},
		{[]string{"serve", "--prewarm", "x"}, `montygo serve: invalid value "x" for flag -prewarm`},
		{[]string{"conform", "worker", "--parallel", "x"}, `montygo conform worker: invalid value "x" for flag -parallel`},
		{[]string{"conform", "parent", "--bogus", "--", "true"}, "montygo conform parent: flag provided but not defined: -bogus"},
	} {
		var out, errb strings.Builder
		code := mainArgs(c.args, strings.NewReader(""), &out, &errb)
		name := c.args[0]
		if name == "conform" {
			name += " " + c.args[1]
		}
		lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
		if code != 2 || len(lines) != 2 || !strings.HasPrefix(lines[0], c.want) || lines[1] != "Run 'montygo "+name+" -h' for usage." {
			t.Errorf("montygo %s: exit %d, stderr %q; want 2, %q and a pointer to -h", strings.Join(c.args, " "), code, errb.String(), c.want)
		}
	}
}

// A --mount that could not be set up was named by the library's zero-based
// index ("--mount: mount 0 (/data): host directory: ..."), which a user
// who gave one --mount never counted; it is now named by its value.
func TestMountErrorsNameTheFlagValue(t *testing.T) {
	dir := t.TempDir()
	missing := dir + "/missing"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mount", missing + "::/data"}, "--mount " + missing + "::/data: host directory: "},
		{[]string{"--mount", dir + "::/data", "--mount", dir + "::/data"}, "--mount " + dir + "::/data: virtual path /data overlaps"},
		// A spec that does not parse was told as "--mount: mount spec
		// \"SPEC\": ...", the spec twice over the library's words, where
		// every other --mount error names it as the flag's value.
		{[]string{"--mount", dir + "::data"}, "montygo run: --mount " + dir + `::data: virtual path "data" is not absolute` + "\n"},
		{[]string{"--mount", dir + "::/data::bogus"}, "montygo run: --mount " + dir + `::/data::bogus: unknown mount mode "bogus" (want ro, rw or overlay)` + "\n"},
		{[]string{"--mount", ""}, `montygo run: --mount "": want HOST::VIRTUAL[::ro|rw|overlay]` + "\n"},
	} {
		args := append(append([]string{"run"}, c.args...), "-c", "1")
		var out, errb strings.Builder
		code := mainArgs(args, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), c.want) || strings.Contains(errb.String(), "mount 0") || strings.Contains(errb.String(), "mount 1") {
			t.Errorf("montygo %s: exit %d, stderr %q; want 2 and %q", strings.Join(args, " "), code, errb.String(), c.want)
		}
	}
}

// Help asked for (montygo help, help CMD, -h, --help, CMD -h) went to
// stderr, so `montygo run -h | less` paged nothing and `montygo serve -h |
// grep tls` found nothing. It is the command's output now: stdout, exit 0,
// nothing on stderr. A usage mistake stays on stderr with exit 2 and
// nothing on stdout.
func TestHelpGoesToStdoutMistakesToStderr(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "usage: montygo <command>"},
		{[]string{"-h"}, "usage: montygo <command>"},
		{[]string{"--help"}, "usage: montygo <command>"},
		{[]string{"help", "run"}, "usage: montygo run "},
		{[]string{"run", "-h"}, "usage: montygo run "},
		{[]string{"repl", "--help"}, "usage: montygo repl "},
		{[]string{"help", "serve"}, "usage: montygo serve "},
		{[]string{"decode", "-h"}, "usage: montygo decode "},
		{[]string{"subprocess", "-h"}, "usage: montygo subprocess "},
		{[]string{"help", "conform"}, "usage: montygo conform worker|parent"},
		{[]string{"conform", "parent", "-h"}, "usage: montygo conform parent "},
		{[]string{"version", "-h"}, "usage: montygo version"},
	} {
		out, errs, code := runCLI(t, "", c.args...)
		if code != 0 || !strings.HasPrefix(out, c.want) || errs != "" {
			t.Errorf("montygo %s: exit %d, stdout %.100q, stderr %.200q; want 0, %q on stdout, nothing on stderr",
				strings.Join(c.args, " "), code, out, errs, c.want)
		}
	}
	for _, args := range [][]string{
		{}, {"bogus"}, {"help", "bogus"}, {"run", "--bogus"}, {"run"}, {"conform"}, {"conform", "parent"}, {"serve", "--bogus"},
	} {
		out, errs, code := runCLI(t, "", args...)
		if code != 2 || out != "" || errs == "" {
			t.Errorf("montygo %s: exit %d, stdout %.100q, stderr %.200q; want 2 and the mistake on stderr alone",
				strings.Join(args, " "), code, out, errs)
		}
	}
}

// A flag that takes one value took the last of its repeats without a
// word (`montygo run -c 1 -c 2` ran 2), and some flags that do not go
// together were silently ignored: --worker with --remote (the server's
// workers run the program), --from or --hex with decode --record (a
// recording holds both directions, framed). Each is now a usage mistake:
// exit 2, the mistake on one line and a pointer to -h.
func TestRepeatedAndConflictingFlagsAreUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-c", "1", "-c", "2"}, "montygo run: flag -c given twice (it takes one value)"},
		{[]string{"run", "-c", "1", "--max-duration", "1", "--max-duration=2"}, "montygo run: flag -max-duration given twice"},
		{[]string{"run", "x.py", "--json", "--json"}, "montygo run: flag -json given twice"},
		{[]string{"repl", "--worker", "a", "--worker", "b"}, "montygo repl: flag -worker given twice"},
		{[]string{"decode", "--protocol", "4", "--protocol", "2"}, "montygo decode: flag -protocol given twice"},
		{[]string{"subprocess", "--spin", "0", "--spin", "1ms"}, "montygo subprocess: flag -spin given twice"},
		{[]string{"serve", "--prewarm", "1", "--prewarm", "2"}, "montygo serve: flag -prewarm given twice"},
		{[]string{"conform", "worker", "--run", "a", "--run", "b"}, "montygo conform worker: flag -run given twice"},
		{[]string{"run", "--remote", "ws://127.0.0.1:1/", "--worker", "monty", "-c", "1"}, "montygo run: --worker and --remote are exclusive"},
		{[]string{"repl", "--worker", "monty", "--remote", "ws://127.0.0.1:1/"}, "montygo repl: --worker and --remote are exclusive"},
		{[]string{"decode", "--record", "x", "--from", "parent"}, "montygo decode: --from does not go with --record"},
		{[]string{"decode", "--hex", "--record", "x"}, "montygo decode: --hex does not go with --record"},
	} {
		out, errs, code := runCLI(t, "", c.args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, c.want) || strings.Count(errs, "\n") > 2 {
			t.Errorf("montygo %s: exit %d, stdout %.100q, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, out, errs, c.want)
		}
	}
	// The flags that collect their repeats still do.
	out, errs, code := runCLI(t, "", "run", "--input", "a=1", "--input", "b=2", "-c", "a + b")
	if code != 0 || out != "3\n" {
		t.Errorf("run --input twice: exit %d, stdout %q, stderr %q; want 3", code, out, errs)
	}
}

// Only run and repl told their exit statuses in their help; serve,
// decode, subprocess (which exits as a worker does) and conform did not,
// though each uses the numbers its own way. Every command's help now ends
// with them, and montygo help gives the table they share.
func TestEveryCommandsHelpTellsItsExitStatuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-h"}, "Exit status: 0 success; 1 the program raised"},
		{[]string{"repl", "-h"}, "Exit status: 0 at the end of input"},
		{[]string{"serve", "-h"}, "Exit status: 0 drained"},
		{[]string{"decode", "-h"}, "Exit status: 0 every frame decoded; 1 a frame did not decode"},
		{[]string{"subprocess", "-h"}, "Exit status, as a worker's: 0 the parent closed the session"},
		{[]string{"conform", "worker", "-h"}, "Exit status: 0 every selected check passed"},
		{[]string{"conform", "parent", "-h"}, "Exit status: 0 every selected check passed"},
		{[]string{"help"}, "Exit status (every command): 0 success"},
	} {
		out, errs, code := runCLI(t, "", c.args...)
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("montygo %s: exit %d, stdout %q, stderr %q; want %q", strings.Join(c.args, " "), code, out, errs, c.want)
		}
	}
}

//go:build unix

package main

import (
	"strings"
	"testing"
)

// usageError runs montygo with args (stdin empty) and fails the test
// unless it exits 2 with nothing on stdout and stderr's first line
// starting "montygo CMD: " and holding each of want.
func usageError(t *testing.T, cmd string, args []string, want ...string) {
	t.Helper()
	out, errs, code := runCLI(t, "", args...)
	first, _, _ := strings.Cut(errs, "\n")
	ok := code == 2 && out == "" && strings.HasPrefix(first, "montygo "+cmd+": ")
	for _, w := range want {
		ok = ok && strings.Contains(first, w)
	}
	if !ok {
		t.Errorf("montygo %s: exit %d, stdout %.100q, stderr %q; want 2 and a line naming %q", strings.Join(args, " "), code, out, errs, want)
	}
}

// An explicit --protocol 0 (or --inner-protocol 0) is no protocol
// version, yet every command but decode took it as the flag left out:
// run and repl negotiated, subprocess served its default versions,
// conform worker tested protocol 4 and reported it, so the run was not
// the one asked for. And subprocess took any --inner-protocol, a version
// it cannot speak to its inner worker included, to fail only when a
// parent's Configure came. Both are usage errors now, naming the flag.
func TestProtocolFlagsRefuseVersionsNoCodecSpeaks(t *testing.T) {
	t.Setenv("MONTYGO_LOG", "")
	for _, c := range []struct {
		cmd  string
		args []string
		want string
	}{
		{"run", []string{"run", "--protocol", "0", "-c", "1"}, "-protocol"},
		{"repl", []string{"repl", "--protocol", "0"}, "-protocol"},
		{"decode", []string{"decode", "--protocol", "0"}, "protocol"},
		{"subprocess", []string{"subprocess", "--protocol", "0"}, "-protocol"},
		{"subprocess", []string{"subprocess", "--inner-protocol", "0"}, "-inner-protocol"},
		{"subprocess", []string{"subprocess", "--inner-protocol", "3"}, "--inner-protocol 3"},
		{"conform worker", []string{"conform", "worker", "--protocol", "0", "--run", `^feed\.complete-value$`}, "-protocol"},
		{"conform parent", []string{"conform", "parent", "--protocol", "0", "--run", "^exit_4$", "--", "true"}, "-protocol"},
	} {
		usageError(t, c.cmd, c.args, c.want)
	}
}

// Duration flags whose value the command would read as something other
// than it says: run's and repl's --start-timeout below a nanosecond
// became a zero Duration, which the session reads as its 10 s default;
// conform worker's --rule-timeout 0 was the kit's 30 s default though the
// help shows 30s as the flag's default, not 0 as a way to ask for it; and
// subprocess took any --spin, an hour included, busy-polling a CPU for up
// to that long at every wait for the parent (an idle REPL's parent, for
// one). Each is now a usage error naming the flag.
func TestDurationFlagsRefuseValuesThatMeanSomethingElse(t *testing.T) {
	t.Setenv("MONTYGO_LOG", "")
	usageError(t, "run", []string{"run", "--start-timeout", "1e-12", "-c", "1"}, "--start-timeout")
	usageError(t, "repl", []string{"repl", "--start-timeout", "1e-10"}, "--start-timeout")
	usageError(t, "conform worker", []string{"conform", "worker", "--rule-timeout", "0", "--protocol", "2", "--run", `^feed\.complete-value$`}, "--rule-timeout")
	usageError(t, "subprocess", []string{"subprocess", "--spin", "1h"}, "--spin 1h0m0s")
	// The smallest values that mean what they say still run.
	if out, errs, code := runCLI(t, "", "run", "--start-timeout", "10", "-c", "1"); code != 0 || out != "1\n" {
		t.Errorf("run --start-timeout 10: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, errs, code := runCLI(t, "", "subprocess", "--spin", "1s"); code != 0 {
		t.Errorf("subprocess --spin 1s with no parent: exit %d, stderr %q; want 0 (the parent closed at once)", code, errs)
	}
}

// A --record file that cannot be opened (decode) or created (subprocess)
// ended decode with 1, the status of a frame that did not decode, and
// subprocess with 4, a fatal worker error, each in os.Open's words ("open
// /x: ..."), where run exits 2 for a program file it cannot open and serve
// for a file its flags name. Both are usage errors now, naming the flag
// and the file; a directory is no recording either.
func TestRecordFileThatCannotBeOpenedIsAUsageError(t *testing.T) {
	dir := t.TempDir()
	missing := dir + "/missing/rec"
	usageError(t, "decode", []string{"decode", "--record", missing}, "--record "+missing+": ", "no such file or directory")
	usageError(t, "decode", []string{"decode", "--record", dir}, "--record "+dir+": ", "is a directory")
	usageError(t, "subprocess", []string{"subprocess", "--record", missing}, "--record "+missing+": ", "no such file or directory")
	usageError(t, "subprocess", []string{"subprocess", "--record", dir}, "--record "+dir+": ", "is a directory")
}

// decode --hex told a line that is not hex in encoding/hex's words, its
// package tag included ("invalid hex: encoding/hex: odd length hex
// string"); it is said without the tag now, still exit 1 naming the
// message.
func TestDecodeHexErrorsCarryNoPackageTag(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"zz\n", "montygo decode: message 0: invalid hex: invalid byte: U+007A 'z'\n"},
		{"0a0\n", "montygo decode: message 0: invalid hex: odd length hex string\n"},
	} {
		out, errs, code := runCLI(t, c.in, "decode", "--hex")
		if code != 1 || out != "" || errs != c.want {
			t.Errorf("decode --hex %q: exit %d, stdout %q, stderr %q; want 1 and %q", c.in, code, out, errs, c.want)
		}
	}
}

// A --max-memory under one byte (0.5, 0.9KB/1000) was refused as "0
// bytes would fail every allocation", a value the user never wrote; the
// refusal names the value given.
func TestMaxMemoryUnderOneByteNamesTheValue(t *testing.T) {
	t.Setenv("MONTYGO_LOG", "")
	for _, v := range []string{"0.5", "0.0001KB"} {
		usageError(t, "run", []string{"run", "--max-memory", v, "-c", "1"}, `--max-memory: "`+v+`" is under one byte`)
	}
	usageError(t, "run", []string{"run", "--max-memory", "0", "-c", "1"}, "--max-memory: 0 bytes would fail every allocation")
}

// Help named the argument of most flags by its Go type ("-c string",
// "-input value", "-remote value", "-header value", "-mount value",
// "-max-memory string"), which tells a user nothing of what to write:
// each flag now names what it takes.
func TestHelpNamesWhatEachFlagTakes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "-h"}, []string{"-c CODE", "-input NAME=JSON", "-mount HOST::VIRTUAL[::MODE]", "-remote URL", "-header HEADER",
			"-worker PATH", "-max-duration SECONDS", "-max-memory BYTES", "-start-timeout SECONDS"}},
		{[]string{"repl", "-h"}, []string{"-mount HOST::VIRTUAL[::MODE]", "-remote URL", "-header HEADER", "-worker PATH", "-max-duration SECONDS"}},
		{[]string{"subprocess", "-h"}, []string{"-worker PATH"}},
		{[]string{"serve", "-h"}, []string{"-worker PATH", "-host HOST", "-port PORT", "-log-level LEVEL"}},
		{[]string{"conform", "worker", "-h"}, []string{"-remote URL", "-header HEADER", "-run REGEXP", "-expect-fail IDS"}},
		{[]string{"conform", "parent", "-h"}, []string{"-run REGEXP"}},
	} {
		out, _, code := runCLI(t, "", c.args...)
		lines := map[string]bool{}
		for l := range strings.Lines(out) {
			lines[strings.TrimSpace(l)] = true
		}
		for _, w := range c.want {
			if code != 0 || !lines[w] {
				t.Errorf("montygo %s: exit %d, no flag line %q in\n%s", strings.Join(c.args, " "), code, w, out)
			}
		}
	}
}

// An --expect-fail id that is no rule of the kit (a typo) ran the whole
// selection, printed its report and exited 1, the status of a worker
// that failed a check, for a mistake in the command line. It is refused
// before anything runs, as a --run that selects no rule is; an id that is
// a rule but did not run still exits 1 after the report.
func TestExpectFailUnknownRuleIsAUsageError(t *testing.T) {
	usageError(t, "conform worker", []string{"conform", "worker", "--protocol", "2", "--run", `^feed\.complete-value$`,
		"--expect-fail", "feed.complete-value,feed.no-such-rule"}, `--expect-fail: "feed.no-such-rule" is not a rule`)
	out, errs, code := runCLI(t, "", "conform", "worker", "--protocol", "2", "--run", `^feed\.complete-value$`, "--expect-fail", "feed.globals-persist")
	if code != 1 || !strings.Contains(out, "pass  feed.complete-value") || !strings.Contains(errs, "expected failure feed.globals-persist is not a rule that ran") {
		t.Errorf("a rule outside the selection: exit %d, stdout %q, stderr %q; want 1 after the report", code, out, errs)
	}
}

// A flag before the command (`montygo --verbose run`, as `git -C` takes
// them) was told as an unknown command "--verbose"; it is told as a flag,
// with where flags go.
func TestFlagBeforeTheCommandIsToldAsAFlag(t *testing.T) {
	out, errs, code := runCLI(t, "", "--verbose", "run", "-c", "1")
	want := "montygo: unknown flag \"--verbose\" (flags go after the command: montygo run --verbose)\nRun 'montygo help' for the commands.\n"
	if code != 2 || out != "" || errs != want {
		t.Errorf("montygo --verbose run: exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errs, want)
	}
}

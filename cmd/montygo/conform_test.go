//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/internal/wsrelay"
	"github.com/gomonty/monty/worker"
)

// TestConformWorkerCLI runs `montygo conform worker` in-process: a passing
// selection exits 0 with a JSON report in the kit's shape, and a
// selection that fails (protocol 4 against the protocol 2 worker) exits 1
// naming what came instead.
func TestConformWorkerCLI(t *testing.T) {
	bin := testenv.Worker(t)
	var out, errb bytes.Buffer
	code := mainArgs([]string{"conform", "worker", "--worker", bin, "--protocol", "2", "--json", "--run", `^(feed|lookup)\.`},
		strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", code, out.String(), errb.String())
	}
	var rep struct {
		Target   string `json:"target"`
		Protocol uint32 `json:"protocol"`
		Rules    []struct {
			ID, Title, Status, Detail string
		} `json:"rules"`
		Summary map[string]int `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.String())
	}
	if rep.Target != bin || rep.Protocol != 2 || len(rep.Rules) < 10 || rep.Summary["pass"] == 0 || rep.Summary["fail"] != 0 {
		t.Errorf("report %+v", rep)
	}
	for _, r := range rep.Rules {
		if !strings.HasPrefix(r.ID, "feed.") && !strings.HasPrefix(r.ID, "lookup.") || r.Title == "" {
			t.Errorf("rule %+v outside the --run selection or untitled", r)
		}
	}

	out.Reset()
	errb.Reset()
	code = mainArgs([]string{"conform", "worker", "--worker", bin, "--protocol", "4", "--run", `^feed\.complete-value$`},
		strings.NewReader(""), &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "fail  feed.complete-value") || !strings.Contains(out.String(), "unsupported protocol version 4") {
		t.Errorf("text report does not show the failure and its cause:\n%s", out.String())
	}
}

func TestConformUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := mainArgs([]string{"conform"}, strings.NewReader(""), &out, &errb); code != 2 {
		t.Errorf("bare conform: exit %d, want 2", code)
	}
	if code := mainArgs([]string{"conform", "parent"}, strings.NewReader(""), &out, &errb); code != 2 {
		t.Errorf("conform parent without a command: exit %d, want 2", code)
	}
	if code := mainArgs([]string{"conform", "worker", "--worker", "x", "--remote", "ws://x"}, strings.NewReader(""), &out, &errb); code != 2 {
		t.Errorf("--worker with --remote: exit %d, want 2", code)
	}
}

// Usage mistakes an implementer makes are usage errors (exit 2, said
// once): a --run that selects nothing exited 0 with "0 pass, 0 fail", so a
// typo in CI's --run passed with nothing checked; a bad regular expression
// or protocol exited 1, the status of a failing rule; a selection whose
// every rule is skipped exited 0. (A worker that cannot be found is no
// usage mistake: TestConformMissingWorkerExitsAsRunDoes.)
func TestConformUsageMistakes(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	noParent := filepath.Join(t.TempDir(), "no-such-parent")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"worker", "--worker", self, "--run", "^no-such-rule$"}, `--run "^no-such-rule$" matches no rule`},
		{[]string{"worker", "--worker", self, "--run", "^no-such-rule$", "--expect-fail", ""}, "matches no rule"},
		// ... told before the worker is looked for (it exited 3 for the
		// missing worker, hiding the mistake in the selection).
		{[]string{"worker", "--worker", filepath.Join(t.TempDir(), "no-such-worker"), "--run", "^no-such-rule$"}, `--run "^no-such-rule$" matches no rule`},
		{[]string{"parent", "--run", "^no-such-scenario$", "--", "true"}, `--run "^no-such-scenario$" matches no scenario`},
		{[]string{"worker", "--worker", self, "--run", "("}, "--run: error parsing regexp"},
		{[]string{"parent", "--run", "(", "--", "true"}, "--run: error parsing regexp"},
		{[]string{"worker", "--worker", self, "--protocol", "3"}, "--protocol 3: the kit knows protocols"},
		{[]string{"parent", "--protocol", "7", "--", "true"}, "--protocol 7: the kit knows protocols"},
		// A selection whose every rule is skipped checks nothing: it
		// exited 0 (no scenario is defined at protocol 5, whatever the
		// parent).
		{[]string{"parent", "--protocol", "5", "--", "true"}, "nothing was checked: every selected scenario was skipped (scenario not defined at protocol 5"},
		// (the per-session max_duration rules: protocol 5 removed that limit)
		{[]string{"worker", "--worker", self, "--protocol", "5", "--run", `^limits\.(duration-timeout-error|timeout-uncatchable)$`}, "nothing was checked: every selected rule was skipped (not defined at protocol 5"},
		// A parent command that cannot be run failed all 78 scenarios,
		// each with "the parent never started the scripted child", exit 1.
		{[]string{"parent", "--", noParent}, "cannot run " + noParent + ": no such file or directory"},
		{[]string{"worker", "--remote", "http://127.0.0.1:1/ws"}, "--remote "},
		// Negative counts and durations ran with the defaults (0 or less
		// means the default to the kit), so the report looked as asked for.
		{[]string{"worker", "--worker", self, "--parallel", "-1"}, "--parallel -1: must not be negative"},
		{[]string{"worker", "--worker", self, "--rule-timeout", "-5s"}, "--rule-timeout -5s: must not be negative"},
		{[]string{"parent", "--parallel", "-2", "--", "true"}, "--parallel -2: must not be negative"},
		{[]string{"parent", "--scenario-timeout", "-1s", "--", "true"}, "--scenario-timeout -1s: must not be negative"},
		{[]string{"parent", "--decode-budget", "-5", "--", "true"}, "--decode-budget -5: must not be negative"},
		{[]string{"worker", "--remote", "https://user:hunter2-secret@127.0.0.1:1/ws?token=s3cret"}, "--remote "},
	} {
		var out, errb bytes.Buffer
		code := mainArgs(append([]string{"conform"}, c.args...), strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), c.want) || out.Len() != 0 ||
			strings.Contains(errb.String(), "hunter2") || strings.Contains(errb.String(), "s3cret") {
			t.Errorf("conform %q: exit %d, stdout %.300q, stderr %q; want exit 2, no report, and %q", c.args, code, out.String(), errb.String(), c.want)
		}
	}
}

// TestConformWorkerRemoteCLI runs `montygo conform worker --remote` against
// the test relay, with an extra upgrade header.
func TestConformWorkerRemoteCLI(t *testing.T) {
	bin := testenv.Worker(t)
	relay := &wsrelay.Relay{Worker: worker.Config{Binary: bin}}
	srv := httptest.NewServer(relay)
	defer func() {
		srv.Close()
		relay.Wait()
	}()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	var out, errb bytes.Buffer
	code := mainArgs([]string{"conform", "worker", "--remote", url, "--header", "X-Conform: 1", "--protocol", "2",
		"--run", `^(feed|shutdown)\.`}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), url+", protocol 2:") || !strings.Contains(out.String(), "pass  shutdown.ok-exit-0") {
		t.Errorf("report:\n%s", out.String())
	}
	if code := mainArgs([]string{"conform", "worker", "--remote", url, "--header", "no colon"}, strings.NewReader(""), &out, &errb); code != 2 {
		t.Errorf("a malformed --header: exit %d, want 2", code)
	}
}

// TestConformExpectFail checks --expect-fail: exit 0 when exactly the
// listed rules fail, 1 when one of them passes or another fails.
func TestConformExpectFail(t *testing.T) {
	bin := testenv.Worker(t)
	cases := []struct {
		proto, run, expect string
		code               int
	}{
		{"4", `^feed\.complete-value$`, "feed.complete-value", 0}, // the v2 worker refuses protocol 4
		{"2", `^feed\.complete-value$`, "feed.complete-value", 1}, // it passes at 2
		{"4", `^feed\.complete-value$`, "feed.globals-persist", 1},
		// A rule skipped at this version did not fail as expected: exit 0
		// said "exactly these fail" of a rule that never ran.
		{"2", `^(feed\.complete-value|values\.deep-input-accepted)$`, "values.deep-input-accepted", 1},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := mainArgs([]string{"conform", "worker", "--worker", bin, "--protocol", c.proto,
			"--run", c.run, "--expect-fail", c.expect}, strings.NewReader(""), &out, &errb)
		if code != c.code {
			t.Errorf("protocol %s, --expect-fail %s: exit %d, want %d\n%s%s", c.proto, c.expect, code, c.code, out.String(), errb.String())
		}
	}
}

// The parent command runs where `montygo conform parent` was started, so
// a relative path in it means what it says: docs/CONFORMANCE.md's
// `bin/montygo conform parent -- bin/montygo run ... {file}` (and
// `python3 my_parent.py {file}`) failed every scenario's spawn check with
// "fork/exec bin/montygo: no such file or directory", the parent having
// been started in the scenario's temporary directory.
func TestConformParentRelativeCommand(t *testing.T) {
	testenv.Worker(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(montygo(t), filepath.Join(dir, "bin", "montygo")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(montygo(t), "conform", "parent", "--run", "^version_refusal_no_exit$", "--",
		"bin/montygo", "run", "--max-duration", "5", "{file}")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "pass  parent.version_refusal_no_exit") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// conform parent without --protocol reported "protocol 0" in its summary,
// a version no scenario speaks: each scenario claims its own.
func TestConformParentSummaryWithoutProtocol(t *testing.T) {
	var out, errb bytes.Buffer
	mainArgs([]string{"conform", "parent", "--run", "^exit_4$", "--", "true"}, strings.NewReader(""), &out, &errb)
	if !strings.Contains(out.String(), "true, each scenario's protocol: ") || strings.Contains(out.String(), "protocol 0") {
		t.Errorf("stdout %q, stderr %q: want the summary to say each scenario's protocol", out.String(), errb.String())
	}
}

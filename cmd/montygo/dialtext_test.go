//go:build unix

package main

import (
	"strings"
	"testing"
)

// A --remote that could not be reached was told through every library
// layer under the dial: "ws://127.0.0.1:1/: failed to WebSocket dial:
// failed to send handshake request: Get \"http://127.0.0.1:1/\": dial tcp
// 127.0.0.1:1: connect: connection refused" (the URL twice, the second
// time masked another way, "u:***@" beside "u:xxxxx@"), and a refused
// upgrade added "failed to WebSocket dial: expected handshake response
// status code 101 but got 401" to the status it had named already. The
// line now holds the endpoint and the cause, for run and repl alike.
func TestRemoteDialFailuresAreToldShort(t *testing.T) {
	dead := deadURL(t)
	for _, cmd := range [][]string{{"run", "-c", "1"}, {"repl"}} {
		_, errs, code := runCLI(t, "", append([]string{cmd[0], "--remote", dead}, cmd[1:]...)...)
		if want := "montygo " + cmd[0] + ": " + dead + ": cannot connect: connection refused\n"; code != exitSandboxFailed || errs != want {
			t.Errorf("%s --remote %s: exit %d, stderr %q; want %d and %q", cmd[0], dead, code, errs, exitSandboxFailed, want)
		}
	}
	secret := strings.Replace(dead, "ws://", "ws://user:hunter2@", 1) + "?token=s3cret"
	_, errs, _ := runCLI(t, "", "run", "--remote", secret, "-c", "1")
	for _, bad := range []string{"hunter2", "s3cret", "***", "Get ", "failed to", "dial tcp"} {
		if strings.Contains(errs, bad) {
			t.Errorf("run --remote with secrets: stderr %q holds %q", errs, bad)
		}
	}

	tokens := writeFile(t, "tokens", "alice:tok-alice-0123456789\n")
	p := startServe(t, nil, "--tokens", tokens)
	_, errs, code := runCLI(t, "", "run", "--remote", p.url, "-c", "1")
	if want := "montygo run: " + p.url + ": upgrade refused with HTTP 401 (unauthorized)\n"; code != exitSandboxFailed || errs != want {
		t.Errorf("run without the token: exit %d, stderr %q; want %d and %q", code, errs, exitSandboxFailed, want)
	}
	// Several endpoints: each one's cause, on one line.
	_, errs, _ = runCLI(t, "", "run", "--remote", p.url, "--remote", dead, "-c", "1")
	if want := "montygo run: no remote endpoint started the session: " + p.url + ": upgrade refused with HTTP 401 (unauthorized); " + dead + ": cannot connect: connection refused\n"; errs != want {
		t.Errorf("two endpoints: stderr %q; want %q", errs, want)
	}
}

// A malformed --header was told with the transport package's tag: "--header
// \"Bad Name: x\": ws: invalid header name \"Bad Name\"" (run, repl,
// conform worker). The tag is gone; still a usage error.
func TestHeaderErrorsCarryNoPackageTag(t *testing.T) {
	dead := deadURL(t)
	for _, c := range []struct {
		cmd  string
		args []string
	}{
		{"run", []string{"run", "--remote", dead, "--header", "Bad Name: x", "-c", "1"}},
		{"repl", []string{"repl", "--remote", dead, "--header", "Bad Name: x"}},
		{"conform worker", []string{"conform", "worker", "--remote", dead, "--header", "Bad Name: x"}},
	} {
		usageError(t, c.cmd, c.args, `invalid header name "Bad Name"`)
		if _, errs, _ := runCLI(t, "", c.args...); strings.Contains(errs, "ws: ") {
			t.Errorf("montygo %s: stderr %q carries the ws package's tag", strings.Join(c.args, " "), errs)
		}
	}
}

// Package testenv finds what gomonty's integration tests need (the real
// worker binary, tmux) and decides whether a missing one skips or fails the
// test: under CI (CI=true) nothing may skip silently.
package testenv

import (
	"os"
	"os/exec"
	"testing"

	"github.com/gomonty/monty/worker"
)

// CI reports whether the tests run under CI.
func CI() bool { return os.Getenv("CI") == "true" }

// Worker returns the path of the real monty worker, skipping the test when
// it is not installed (failing it under CI).
func Worker(t testing.TB) string {
	t.Helper()
	bin, err := worker.ResolveBinary("")
	if err != nil {
		Missing(t, "monty worker (run `make worker`): "+err.Error())
	}
	return bin
}

// Tool returns the path of a command on PATH, skipping (failing under CI)
// when it is missing.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name+" is not installed")
	}
	return p
}

// Missing skips the test, or fails it under CI.
func Missing(t testing.TB, what string) {
	t.Helper()
	if CI() {
		t.Fatalf("required for this test under CI: %s", what)
	}
	t.Skipf("skipping: %s", what)
}

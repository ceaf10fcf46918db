//go:build unix

package main

import (
	"strings"
	"testing"
)

// A time limit ends a run with the same status wherever the worker runs.
// Locally, a program past --max-duration exits 1 (the worker's
// TimeoutError, or the watchdog that backs the limit up). Over --remote
// the server enforces the same kind of limit by killing its worker and
// closing with 4002 (its --turn-timeout) or 4004 (max_duration overrun:
// its own watchdog): that exited 3, the status of a sandbox that failed,
// so a script read a program that ran too long remotely as a broken
// sandbox. Both close codes now exit as the local limit does, on one line
// that names the limit.
func TestRunRemoteTimeLimitExitsAsALocalOne(t *testing.T) {
	_, errs, local := runCLI(t, "", "run", "--max-duration", "0.2", "-c", "while True:\n    pass")
	if local != 1 || !strings.Contains(errs, "TimeoutError") {
		t.Fatalf("local --max-duration: exit %d, stderr %q; want 1 and a TimeoutError", local, errs)
	}

	turn := startServe(t, nil, "--turn-timeout", "0.5")
	_, errs, code := runCLI(t, "", "run", "--remote", turn.url, "-c", "while True:\n    pass")
	if code != local || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "montygo run: ") || !strings.Contains(errs, "close code 4002: turn timeout") {
		t.Errorf("the server's --turn-timeout: exit %d, stderr %q; want %d (as locally) on one line naming close code 4002", code, errs, local)
	}

	// A worker that stops answering mid-frame: only the server's watchdog
	// ends the turn, past the max_duration the server clamped the
	// session's to (the client's own watchdog waits for its 60 s).
	silent := startServe(t, nil, "--worker", hostileWorker(t, "prefix_then_silence"), "--max-duration", "0.2")
	_, errs, code = runCLI(t, "", "run", "--remote", silent.url, "-c", "1")
	if code != local || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "montygo run: ") || !strings.Contains(errs, "close code 4004: max_duration overrun") {
		t.Errorf("the server's watchdog: exit %d, stderr %q; want %d (as locally) on one line naming close code 4004", code, errs, local)
	}
}

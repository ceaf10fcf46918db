//go:build unix

package conform_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/conform"
)

// waitForFile polls for path to exist, failing after a generous deadline.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A run canceled (montygo's Ctrl-C) while a rule waits on its worker
// reported that rule as "no verdict within 30s", the rule timeout, after
// far less: the report must say that the run was canceled.
func TestCanceledRunSaysCanceled(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	target := conform.Target{Binary: "/bin/sh", Args: []string{"-c", "touch " + started + "; exec sleep 1000"}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *conform.Report, 1)
	go func() {
		rep, err := conform.Run(ctx, target, conform.Options{Protocol: 2, Parallel: 1,
			Match: regexp.MustCompile(`^feed\.(complete-value|globals-persist)$`), RuleTimeout: time.Hour})
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	waitForFile(t, started)
	cancel()
	requireCanceled(t, <-done, "no verdict within")
}

// The same for the parent judge: a canceled run reported the running
// scenario's parent as "had not ended after 30s", and the scenarios still
// queued ran one by one, each killed at once.
func TestCanceledParentRunSaysCanceled(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *conform.Report, 1)
	go func() {
		rep, err := conform.RunParent(ctx, []string{"/bin/sh", "-c", "touch " + started + "; exec sleep 1000"},
			conform.ParentOptions{Parallel: 1, Match: regexp.MustCompile(`^(normal|slow_start|never_reads)$`), Timeout: time.Hour})
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	waitForFile(t, started)
	cancel()
	requireCanceled(t, <-done, "had not ended")
}

// requireCanceled requires every rule of rep to have failed for the
// cancellation, and none to say timeout (a detail holding timedOut).
func requireCanceled(t *testing.T, rep *conform.Report, timedOut string) {
	t.Helper()
	logReport(t, rep)
	for _, r := range rep.Rules {
		if r.Status != conform.Fail || !strings.Contains(r.Detail, "canceled") || strings.Contains(r.Detail, timedOut) {
			t.Errorf("%s: %s %q, want a failure saying the run was canceled", r.ID, r.Status, r.Detail)
		}
	}
}

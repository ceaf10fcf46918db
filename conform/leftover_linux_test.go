//go:build unix

package conform_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gomonty/monty/conform"
	"github.com/gomonty/monty/internal/testenv"
)

// A worker under test that leaves a process of its own behind (here a
// sleep it starts in the background before it execs the real worker) is
// cleaned up with the session: the kit killed the worker's process group
// only when the worker had to be killed, so a worker that exited on its
// own left its helpers running after the kit ended.
func TestWorkerHelpersDoNotOutliveTheKit(t *testing.T) {
	bin := testenv.Worker(t)
	pids := filepath.Join(t.TempDir(), "pids")
	script := fmt.Sprintf("/bin/sleep 1000 </dev/null >/dev/null 2>&1 & echo $! >>%s; exec %s subprocess", pids, bin)
	rep := run(t, conform.Target{Binary: "/bin/sh", Args: []string{"-c", script}}, 2, []string{"feed.complete-value", "feed.globals-persist"})
	logReport(t, rep)
	if rep.Summary.Pass != 2 {
		t.Fatalf("want the 2 rules to pass: %+v", rep.Summary)
	}
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(b))
	if len(lines) == 0 {
		t.Fatal("no helper started")
	}
	for _, l := range lines {
		pid, err := strconv.Atoi(l)
		if err != nil {
			t.Fatal(err)
		}
		// A SIGKILL takes effect a moment after kill(2) returns.
		deadline := time.Now().Add(10 * time.Second)
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("helper %d of a worker under test still runs after the kit ended", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// A rule whose worker overruns the rule timeout ends even when something
// out of the worker's process group holds the worker's stdout: killing the
// group did not end the rule's read of that pipe, and the kit waited for
// the rule, past --rule-timeout, for as long as that process lived.
func TestRuleTimeoutEndsAReadFromAnEscapedHolder(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(string(b)); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	target := conform.Target{Binary: self, Env: []string{"CONFORM_MUTANT=escapee", "CONFORM_ESCAPEE_PIDFILE=" + pidFile}}
	done := make(chan *conform.Report, 1)
	go func() {
		rep, err := conform.Run(context.Background(), target, conform.Options{Protocol: 2,
			Match: regexp.MustCompile(`^feed\.complete-value$`), RuleTimeout: time.Second})
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	select {
	case rep := <-done:
		if rep == nil || len(rep.Rules) != 1 || rep.Rules[0].Status != conform.Fail || !strings.Contains(rep.Rules[0].Detail, "no verdict within") {
			t.Fatalf("report %+v; want the rule failed for its timeout", rep)
		}
	case <-time.After(time.Minute):
		t.Fatal("the kit is still waiting for the rule a minute after its 1 s timeout")
	}
}

// A process out of the worker's process group (a session of its own) that
// holds the worker's stderr kept the kit's stderr reader running after Run
// returned, for as long as that process lived: a goroutine of a finished
// run leaked. The reader stops once the worker's exit is reported.
func TestEscapedStderrHolderDoesNotOutliveTheRun(t *testing.T) {
	bin := testenv.Worker(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	script := fmt.Sprintf("/usr/bin/setsid /bin/sleep 300 </dev/null >/dev/null & echo $! >%s; exec %s subprocess", pidFile, bin)
	ignore := goleak.IgnoreCurrent()
	rep := run(t, conform.Target{Binary: "/bin/sh", Args: []string{"-c", script}}, 2, []string{"feed.complete-value"})
	if rep.Summary.Pass != 1 {
		logReport(t, rep)
		t.Fatalf("want the rule to pass: %+v", rep.Summary)
	}
	if err := goleak.Find(ignore); err != nil {
		t.Fatalf("after Run returned: %v", err)
	}
}

//go:build unix

package conform_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/conform"
)

// kitMain runs when the test binary is started as a conformance kit
// (CONFORM_KIT=PIDFILE): it judges a parent that writes its pid to
// PIDFILE and never ends, and waits for it.
func kitMain(pidFile string) int {
	_, _ = conform.RunParent(context.Background(),
		[]string{"/bin/sh", "-c", "echo $$ >" + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + " && exec sleep 1000"},
		conform.ParentOptions{Match: regexp.MustCompile(`^normal$`), Timeout: time.Hour})
	return 0
}

// A parent under test was started without a parent-death signal: when
// the kit died (a CI job's timeout kills it), a parent that never ends
// ran on, and the scripted children it held with it.
func TestParentDoesNotOutliveTheKit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	kit := exec.Command(self)
	kit.Env = append(os.Environ(), "CONFORM_KIT="+pidFile)
	if err := kit.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kit.Process.Kill(); kit.Wait() })
	waitForFile(t, pidFile)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := kit.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = kit.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the parent under test (pid %d) outlived the kit", pid)
	}
}

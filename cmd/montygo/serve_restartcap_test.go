//go:build unix

package main

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// --max-restarts and --restart-window (here through its environment
// twin) set the worker pool's restart cap: with --max-restarts 1, the
// second worker killed while idle trips it (the default, 10, would take
// eleven), and /readyz then answers 503 with a Retry-After from the
// 5-minute window (the default window is one minute). Before, serve had
// no flags for the cap, which the library could set.
func TestServeRestartCapFlags(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	var out, errb strings.Builder
	mainArgs([]string{"serve", "-h"}, strings.NewReader(""), &out, &errb)
	for _, f := range []string{"  -max-restarts int\n", "  -restart-window DURATION\n"} {
		if !strings.Contains(out.String(), f) {
			t.Errorf("serve -h lacks %q:\n%s", f, out.String())
		}
	}
	p := startServe(t, []string{"MONTY_SERVER_RESTART_WINDOW=5m"}, "--max-restarts", "1")
	killed := map[int]bool{}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(p.http + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err != nil || ra <= 60 || ra > 300 {
				t.Fatalf("/readyz Retry-After %q, want more than the default window's 60 s, up to 300", resp.Header.Get("Retry-After"))
			}
			break
		}
		if len(killed) > 2 {
			t.Fatalf("%d workers killed and the server is still ready: --max-restarts 1 not applied", len(killed))
		}
		if time.Now().After(deadline) {
			t.Fatalf("never unhealthy after killing %d workers\n%s", len(killed), p.stderr.String())
		}
		for _, pid := range childrenOf(p.cmd.Process.Pid) {
			if !killed[pid] {
				killed[pid] = true
				syscall.Kill(pid, syscall.SIGKILL)
				break // one at a time: each kill is one failure
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

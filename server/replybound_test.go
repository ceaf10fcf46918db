//go:build unix

package server

import (
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/pool"
)

// A worker that stops answering during a Dump is killed by its session's
// reply bound (session.LimitReply), not by the max_duration watchdog: no
// code ran and no max_duration was overrun. The server ends the session as
// a failed worker (1011, worker_failed), not as a duration backstop (4004).
// The worker is frozen with SIGSTOP right before the Dump is sent, so it
// never reads it.
func TestWorkerSilentAtDumpIsAWorkerFailure(t *testing.T) {
	checkedOut := make(chan int, 8)
	ts := startServer(t, func(c *Config) {
		c.MaxSessions = 1
		// The reply bound is max(this, the session's StartTimeout) plus
		// the watchdog grace: about 11 s with the defaults.
		c.MaxDuration = 200 * time.Millisecond
		c.pool = func(pc *pool.Config) {
			pc.Metrics = func(ev pool.Event) {
				if ev.Kind == pool.EventCheckout {
					checkedOut <- ev.Pid
				}
			}
		}
	})
	c := dialConfigured(t, ts.URL, 4)
	if got := repr(t, c, "x = 1\nx + 1"); got != "2" {
		t.Fatalf("feed: %s", got)
	}
	var pid int
	select {
	case pid = <-checkedOut:
	case <-time.After(30 * time.Second):
		t.Fatal("no checkout event")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %d: %v", pid, err)
	}
	if err := c.Conn.WriteFrame(encodeRequest(t, 4, &message.Dump{})); err != nil {
		t.Fatal(err)
	}
	if code := closeCode(t, c); code != CloseWorkerFailed {
		t.Fatalf("close code %d, want %d (worker_failed)", code, CloseWorkerFailed)
	}
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="worker_failed"} 1`)
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="duration_backstop"} 0`)
	// The frozen worker was killed and replaced: the next session runs.
	if got := repr(t, dialConfigured(t, ts.URL, 4), "2 * 21"); got != "42" {
		t.Fatalf("next session: %s", got)
	}
}

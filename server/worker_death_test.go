package server

import (
	"testing"
	"time"

	"github.com/gomonty/monty/internal/hostile/hostilebuild"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/worker"
)

// hostileServer runs the server over the hostile worker playing scenario.
func hostileServer(t *testing.T, scenario string, mutate func(*Config)) *testServer {
	t.Helper()
	bin := hostilebuild.Build(t)
	return startServer(t, func(c *Config) {
		c.Worker = worker.Config{Binary: bin, Env: []string{"HOSTILE_SCENARIO=" + scenario, "HOSTILE_LIFETIME=60s"}}
		if mutate != nil {
			mutate(c)
		}
	})
}

func TestWorkerDeathCloseCodes(t *testing.T) {
	for _, c := range []struct {
		scenario string
		mutate   func(*Config)
		code     int
		outcome  string
	}{
		{"oom_exit", nil, CloseMemoryLimit, OutcomeMemory},
		{"exit_4", nil, CloseWorkerFailed, OutcomeWorkerFailed},
		// The worker goes silent mid-frame: the duration backstop (the
		// session's watchdog, max_duration plus its grace) kills it.
		{"prefix_then_silence", func(c *Config) { c.MaxDuration = 200 * time.Millisecond }, CloseDurationBackstop, OutcomeDuration},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			ts := hostileServer(t, c.scenario, c.mutate)
			cl := dialConfigured(t, ts.URL, 2)
			if err := cl.Conn.WriteFrame(encodeRequest(t, 2, &message.Feed{Code: "1 + 2"})); err != nil {
				t.Fatal(err)
			}
			if code := closeCode(t, cl); code != c.code {
				t.Fatalf("close code %d, want %d", code, c.code)
			}
			waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="`+c.outcome+`"} 1`)
		})
	}
}

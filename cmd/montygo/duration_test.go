//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
)

// capturingWorker wraps the real worker in a script that copies what
// montygo sends each worker it starts into a file of dir.
func capturingWorker(t *testing.T, dir string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "worker.sh")
	body := fmt.Sprintf("#!/bin/sh\ntee %s/in.$$ | %s \"$@\"\n", strconv.Quote(dir), strconv.Quote(testenv.Worker(t)))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// sentLimits returns the limits of every Configure in the captured input
// of dir, decoded at the version each one names.
func sentLimits(t *testing.T, dir string) []*message.ResourceLimits {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "in.*"))
	var out []*message.ResourceLimits
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		body, err := frame.NewReader(bytes.NewReader(b), 0).ReadFrame()
		if err != nil {
			continue // a worker that got nothing
		}
		found := false
		for _, v := range codec.Versions() {
			c, _ := codec.ForVersion(v)
			req, err := c.DecodeRequest(body, codec.Limits{})
			if err != nil {
				continue
			}
			if cfg, ok := req.Body.(*message.Configure); ok && cfg.ProtocolVersion == v {
				out = append(out, cfg.Limits)
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("%s: the first frame is no Configure", f)
		}
	}
	if len(out) == 0 {
		t.Fatal("no Configure captured")
	}
	return out
}

// montygo run without --max-duration sends the session's default budget,
// 60 s (as max_duration at 4 and 2, as the per-feed limit at 5);
// --max-duration none sends no duration limit; a number sends itself.
// Before, the flag left out meant no limit, and none was a usage error.
func TestRunMaxDurationDefaultAndNone(t *testing.T) {
	t.Setenv("MONTYGO_LOG", "")
	for _, c := range []struct {
		flags []string
		want  uint64 // microseconds; 0 for none sent
	}{
		{nil, 60_000_000},
		{[]string{"--max-duration", "none"}, 0},
		{[]string{"--max-duration", "2.5"}, 2_500_000},
	} {
		dir := t.TempDir()
		args := append([]string{"run", "--worker", capturingWorker(t, dir)}, c.flags...)
		out, errs, rc := runCLI(t, "", append(args, "-c", "1 + 1")...)
		if rc != 0 || out != "2\n" {
			t.Fatalf("%v: rc %d stdout %q stderr %q", c.flags, rc, out, errs)
		}
		for _, l := range sentLimits(t, dir) {
			var got *uint64
			if l != nil {
				got = l.MaxDurationMicros
				if l.MaxFeedDurationMicros != nil {
					if got != nil {
						t.Fatalf("%v: both max_duration and max_feed_duration sent: %+v", c.flags, l)
					}
					got = l.MaxFeedDurationMicros
				}
			}
			switch {
			case c.want == 0 && got != nil:
				t.Errorf("%v: sent a duration limit of %d µs, want none", c.flags, *got)
			case c.want != 0 && (got == nil || *got != c.want):
				t.Errorf("%v: sent %v, want %d µs", c.flags, l, c.want)
			}
		}
	}
}

//go:build unix

package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gomonty/monty/internal/testenv"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var resultLine = regexp.MustCompile(`^results: (\d+) ok, (\d+) lost, (\d+) wrong$`)

func TestRunWithKills(t *testing.T) {
	testenv.Worker(t)
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"-sessions", "40", "-workers", "2", "-kill-every", "5", "-work", "5000"}, &out, &errs)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	t.Logf("%s", out.String())
	m := resultLine.FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("last line %q; stderr:\n%s", last, errs.String())
	}
	if code != 0 || m[2] != "0" || m[3] != "0" {
		t.Fatalf("exit %d, %q; stderr:\n%s", code, last, errs.String())
	}
	if n, _ := strconv.Atoi(m[1]); n < 1 {
		t.Fatalf("no session succeeded: %q", last)
	}
	if !strings.Contains(out.String(), " kills, ") || strings.Contains(out.String(), " 0 kills, ") {
		t.Fatalf("no worker was killed:\n%s", out.String())
	}
}

func TestRunWithoutKills(t *testing.T) {
	testenv.Worker(t)
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-sessions", "10", "-workers", "1", "-kill-every", "0"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out.String(), errs.String())
	}
	if !strings.HasSuffix(strings.TrimSpace(out.String()), "results: 10 ok, 0 lost, 0 wrong") {
		t.Fatalf("output:\n%s", out.String())
	}
}

func TestBadFlags(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-sessions", "0"}, &out, &errs); code != 2 {
		t.Fatalf("exit %d", code)
	}
}

package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gomonty/monty/internal/testenv"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var resultLine = regexp.MustCompile(`^results: (\d+) ok, (\d+) lost, (\d+) wrong$`)

func TestRemoteWithDrains(t *testing.T) {
	worker := testenv.Worker(t)
	bin := filepath.Join(t.TempDir(), "montygo")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/montygo").CombinedOutput(); err != nil {
		t.Fatalf("build montygo: %v\n%s", err, out)
	}
	var out, errs bytes.Buffer
	code := run(context.Background(), []string{"-servers", "3", "-sessions", "60", "-drain-every", "10",
		"-concurrency", "6", "-montygo", bin, "-worker", worker}, &out, &errs)
	t.Logf("%s", out.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if m := resultLine.FindStringSubmatch(lines[len(lines)-1]); m == nil || code != 0 || m[1] != "60" {
		t.Fatalf("exit %d, output:\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
	if !strings.Contains(out.String(), "5 drains") {
		t.Fatalf("want 5 drains:\n%s", out.String())
	}
}

func TestBadFlags(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-sessions", "0"}, &out, &errs); code != 2 {
		t.Fatalf("exit %d", code)
	}
}

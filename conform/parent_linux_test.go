//go:build unix

package conform

import (
	"context"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/hostile"
	"github.com/gomonty/monty/message"
)

// The parent judge signals the parent's process group by the parent's
// pid, which names the group only while the parent is unreaped. It killed
// the group after the checks, long after the parent had been reaped, so
// with pid reuse it could signal an unrelated group.
func TestParentGroupIsSignalledOnlyWhileTheParentIsUnreaped(t *testing.T) {
	groupKills := recordGroupKills(t)
	for name, c := range map[string]struct {
		command []string
		timeout time.Duration
	}{
		"exited":    {[]string{"/bin/sh", "-c", "exit 0"}, 30 * time.Second},
		"timed-out": {[]string{"/bin/sh", "-c", "exec sleep 1000"}, 200 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			groupKills() // forget the earlier cases' kills
			rep, err := RunParent(context.Background(), c.command, ParentOptions{Match: regexp.MustCompile(`^normal$`), Timeout: c.timeout})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Rules) != 1 || rep.Rules[0].Status != Fail {
				t.Fatalf("report %+v, want normal failed (the parent never spawns the child)", rep.Rules)
			}
			requireKilledUnreaped(t, groupKills(), "parent")
		})
	}
}

// The reaping check took every pid a scripted child had recorded for a
// child still running, and killed it: a pid recorded by a child that has
// since exited may name an unrelated process by then, which was reported
// as an orphan of the parent and killed.
func TestReapingCheckLeavesARecycledPidAlone(t *testing.T) {
	other := exec.Command("/bin/sleep", "1000")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	// The pid recorded by a scripted child of another control file (the
	// child exited, its pid reused by other).
	log := []string{"spawn " + strconv.Itoa(other.Process.Pid) + " subprocess"}
	if orphans := orphanPids(log, nil, "/tmp/no-such-dir/control"); len(orphans) != 0 {
		t.Errorf("orphans %v, want none: the pid is not a scripted child of this scenario", orphans)
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil || !running(other.Process.Pid) {
		t.Errorf("the unrelated process was killed")
	}
}

// call_id_reused accepts a sandbox error: a parent that does not track
// call ids answers each repeated call until max_suspensions, aborts and
// reports the Error. That path sends many requests after the first
// ResumeCall, and the silence check failed it although the scenario
// accepts it (upstream's Rust parent takes it); the time check is what
// keeps that loop bounded.
func TestSilenceCheckSparesAnAcceptedSandboxError(t *testing.T) {
	var sc hostile.Scenario
	for _, s := range hostile.Scenarios() {
		if s.Name == "call_id_reused" {
			sc = s
		}
	}
	if !sc.Expect.Allows(hostile.SandboxError) {
		t.Fatalf("call_id_reused expects %+v; this test assumes it accepts a sandbox error", sc.Expect)
	}
	log := []string{"spawn 7 subprocess", "request 7 1 10", "request 7 2 10"}
	for range 1000 {
		log = append(log, "request 7 "+strconv.Itoa(int(message.KindResumeCall))+" 10")
	}
	log = append(log, "request 7 "+strconv.Itoa(int(message.KindAbortFeed))+" 10")
	if msg := silenceProblem(sc, log); msg != "" {
		t.Errorf("silence: %s", msg)
	}
	// A scenario that accepts no such path still counts.
	for _, s := range hostile.Scenarios() {
		if s.Name == "abort_answered_with_call" {
			sc = s
		}
	}
	log = []string{"spawn 7 subprocess", "request 7 " + strconv.Itoa(int(message.KindAbortFeed)) + " 10", "request 7 " + strconv.Itoa(int(message.KindAbortFeed)) + " 10"}
	if msg := silenceProblem(sc, log); msg == "" {
		t.Error("abort_answered_with_call: a second AbortFeed passed the silence check")
	}
}

// The detail quotes the end of the parent's stderr, where its error is;
// the kit kept only the first 16 KiB of it, so a parent that logged more
// than that before failing was quoted from the middle of its log.
func TestParentDetailQuotesTheEndOfALongStderr(t *testing.T) {
	rep, err := RunParent(context.Background(),
		[]string{"/bin/sh", "-c", `i=0; while [ $i -lt 2000 ]; do echo "log line $i of a chatty parent" >&2; i=$((i+1)); done; echo "the parent's error" >&2; exit 1`},
		ParentOptions{Match: regexp.MustCompile(`^normal$`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rules) != 1 || !strings.Contains(rep.Rules[0].Detail, "the parent's error") {
		t.Fatalf("report %+v, want the detail to quote the parent's last stderr line", rep.Rules)
	}
}

func TestLimitedBufferKeepsHeadAndTail(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"abc", "abc"},
		{"abcdefgh", "abcdefgh"},
		{"abcdefghij", "abcd\n…\nghij"},
		{strings.Repeat("x", 4) + strings.Repeat("y", 100) + "zzzz", "xxxx\n…\nzzzz"},
	} {
		for _, step := range []int{1, 3, len(c.in)} {
			l := &limitedBuffer{n: 4}
			for i := 0; i < len(c.in); i += step {
				l.Write([]byte(c.in[i:min(i+step, len(c.in))]))
			}
			if got := l.String(); got != c.want {
				t.Errorf("%q in writes of %d: %q, want %q", c.in, step, got, c.want)
			}
		}
	}
}

// growKit makes this process's resident set n bytes larger for the rest of
// the test.
func growKit(t *testing.T, n int) {
	b := make([]byte, n)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	t.Cleanup(func() { runtime.KeepAlive(b) })
}

// A child forked by a Go program takes over the program's peak resident
// set when it executes its binary (Linux records the old address space's
// high-water mark, here the kit's, as the new program's peak), so the
// memory check, reading the parent's peak from its rusage, measured the
// kit: a parent run by a large kit (a test binary, a harness embedding
// RunParent) failed "memory: peak RSS" whatever it used itself.
func TestMemoryCheckMeasuresTheParentNotTheKit(t *testing.T) {
	growKit(t, 256<<20)
	r := runParent(context.Background(), []string{"/bin/sh", "-c", "exit 0"}, "/nonexistent", 30*time.Second, 64<<20, nil)
	r.finish()
	if r.exit != 0 {
		t.Fatalf("exit %d: %s", r.exit, r.stderr)
	}
	if r.maxRSS > 64<<20 {
		t.Errorf("a shell that exits at once measured at a peak of %d MiB, want its own few MiB", r.maxRSS>>20)
	}
	// A parent's own growth still counts when the kit is larger than it
	// (it is sampled while the parent runs; this one holds its 128 MB
	// for a moment before it exits).
	r = runParent(context.Background(), []string{"/bin/sh", "-c", `x=$(head -c 128000000 /dev/zero | tr '\0' a); sleep 0.5; echo ${#x}`}, "/nonexistent", 30*time.Second, 64<<20, nil)
	r.finish()
	if r.exit != 0 || strings.TrimSpace(r.stdout) != "128000000" {
		t.Fatalf("exit %d, stdout %q: %s", r.exit, r.stdout, r.stderr)
	}
	if r.maxRSS < 100<<20 {
		t.Errorf("a shell holding a 128 MB string measured at a peak of %d MiB", r.maxRSS>>20)
	}
}

// The memory check read ru_maxrss as kibibytes everywhere; Darwin's counts
// bytes, so on macOS every parent measured 1024 times its peak and failed
// the check.
func TestRSSUnits(t *testing.T) {
	for _, c := range []struct {
		goos string
		want int64
	}{{"linux", 5 << 20}, {"freebsd", 5 << 20}, {"darwin", 5 << 10}} {
		if got := rssBytes(5<<10, c.goos); got != c.want {
			t.Errorf("%s: ru_maxrss 5120 is %d bytes, want %d", c.goos, got, c.want)
		}
	}
}

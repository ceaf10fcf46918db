//go:build unix

package conform_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
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

	"github.com/gomonty/monty/codec"
	codecv2 "github.com/gomonty/monty/codec/codecv2"
	codecv4 "github.com/gomonty/monty/codec/codecv4"
	"github.com/gomonty/monty/conform"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/hostile"
	"github.com/gomonty/monty/message"
)

// heldUntilExit keeps the late-MODE parent's end of its helper's stdin
// reachable (a collected File is closed) until the process exits.
var heldUntilExit *os.File

// badParentMain runs when the test binary is started as a deliberately
// broken parent (`TESTBINARY badparent MODE CODE`): it spawns $MONTY_BIN
// like a parent, then misbehaves according to mode. It returns the exit
// status.
//
//   - liar: runs Configure and the Feed, ignores every error and exits 0;
//   - chatty: exits 1 on any error, but sends one more request first;
//   - orphan: configures the child, then exits leaving it running (the
//     child holds its own stdin open, so it never sees EOF);
//   - orphan-stderr=PIDFILE: orphan, with the child writing to this
//     process's own stderr (as a parent that passes os.Stderr on does), so
//     the child holds the kit's pipe open after this process has exited;
//     it also leaves a helper of its own running (a sleep, its pid written
//     to PIDFILE);
//   - sleepy: never ends;
//   - hog: touches 64 MiB, then behaves like chatty without the extra request;
//   - absent: exits 0 without ever starting the worker;
//   - v2: an honest parent that speaks protocol 2 only (as upstream's
//     Rust parent does): exits 1 on any error, sending nothing more;
//   - v4: the same at protocol 4 only;
//   - v0: the same with no version in its Configure (a broken parent);
//   - closefds-orphan: starts the child without the descriptors it
//     inherited (as Python's close_fds does) and exits at once, leaving it
//     running;
//   - late-MODE: v2, and before exiting it starts a helper (this binary
//     in after-exit-MODE) that outlives it;
//   - after-exit-MODE: waits for EOF on its stdin (the late-MODE parent
//     that holds the other end has exited), then 300 ms more, past the
//     200 ms the judge once waited for spawn records, then behaves as MODE
//     (orphan: a child left running; chatty: a request after a violation).
func badParentMain(mode, code string) int {
	if inner, ok := strings.CutPrefix(mode, "late-"); ok {
		status := badParentMain("v2", code)
		helper := exec.Command(os.Args[0], "badparent", "after-exit-"+inner, code)
		r, w, err := os.Pipe()
		if err != nil {
			return 2
		}
		helper.Stdin = r
		if helper.Start() != nil {
			return 2
		}
		r.Close()
		heldUntilExit = w // close-on-exec: only this process holds it
		return status
	}
	if inner, ok := strings.CutPrefix(mode, "after-exit-"); ok {
		_, _ = io.Copy(io.Discard, os.Stdin)
		time.Sleep(300 * time.Millisecond)
		return badParentMain(inner, code)
	}
	mode, pidFile, _ := strings.Cut(mode, "=")
	switch mode {
	case "sleepy":
		time.Sleep(time.Hour)
	case "absent":
		return 0 // never runs $MONTY_BIN
	}
	cmd := exec.Command(os.Getenv("MONTY_BIN"), "subprocess")
	cmd.Env = []string{}
	var win io.WriteCloser
	orphan := mode == "orphan" || mode == "orphan-stderr" || mode == "closefds-orphan"
	if mode == "closefds-orphan" {
		for fd := 3; fd < 64; fd++ {
			syscall.CloseOnExec(fd)
		}
	}
	if mode == "orphan-stderr" {
		cmd.Stderr = os.Stderr
		helper := exec.Command("/bin/sleep", "1000")
		if helper.Start() != nil || os.WriteFile(pidFile, []byte(strconv.Itoa(helper.Process.Pid)), 0o644) != nil {
			return 2
		}
	}
	if orphan {
		r, w, err := os.Pipe()
		if err != nil {
			return 2
		}
		cmd.Stdin = r
		cmd.ExtraFiles = []*os.File{w} // the child holds its own stdin open: no EOF when we exit
		win = w
	} else {
		win, _ = cmd.StdinPipe()
	}
	if mode == "hog" {
		// One byte a page makes each page resident: touching every byte
		// took the race-built binary past the scenario's 30 s on a
		// loaded machine, before it ever spawned the child.
		b := make([]byte, 64<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = byte(i>>12) | 1
		}
		defer fmt.Fprint(io.Discard, b[len(b)-1])
	}
	wout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return 2
	}
	if !orphan {
		defer func() { win.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	}
	if mode == "closefds-orphan" {
		return 0 // gone before the child has recorded its spawn
	}
	w, r := frame.NewWriter(win, 0), frame.NewReader(wout, 0)
	cd, version := codec.Codec(codecv2.Codec), uint32(2)
	switch mode {
	case "v4":
		cd, version = codecv4.Codec, 4
	case "v0":
		version = 0
	}
	send := func(req message.Request) error {
		b, err := cd.AppendRequest(nil, &message.ParentRequest{Body: req})
		if err != nil {
			return err
		}
		return w.WriteFrame(b)
	}
	turn := func() error {
		for {
			b, err := r.ReadFrame()
			if err != nil {
				return err
			}
			ev, err := cd.DecodeEvent(b, codec.Limits{})
			if err != nil {
				return err
			}
			switch ev.Body.(type) {
			case *message.Print:
				continue
			case *message.Complete, *message.Ok:
				return nil
			default:
				return fmt.Errorf("got %s", ev.Body.EventKind())
			}
		}
	}
	fail := func() int {
		if mode == "liar" {
			return 0
		}
		if mode == "chatty" {
			_ = send(&message.Reset{})
			time.Sleep(100 * time.Millisecond) // let the child record it
		}
		return 1
	}
	if send(&message.Configure{ProtocolVersion: version}) != nil || turn() != nil {
		return fail()
	}
	if orphan {
		return 0 // leave the configured child running
	}
	if send(&message.Feed{Code: code}) != nil || turn() != nil {
		return fail()
	}
	return 0
}

// TestParentJudgeCatchesBadParents shows that each judgement of `conform
// parent` can fail: broken parents (this test binary in badparent mode)
// are caught by the check each one breaks.
func TestParentJudgeCatchesBadParents(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := []string{montygo(t), "conform", conform.ChildCommand}
	helperPid := filepath.Join(t.TempDir(), "helper.pid")
	cases := []struct {
		mode, scenarios, check string
		opts                   conform.ParentOptions
	}{
		// The parent exits at once; its child, left running, holds the
		// parent's stderr: the kit waited for that pipe to close, until the
		// scenario's time ran out, and blamed the parent ("time: the parent
		// had not ended") instead of its leftover child.
		// Nothing the parent left behind outlives the scenario.
		{"orphan-stderr=" + helperPid, "^normal$", "reaping:", conform.ParentOptions{Timeout: 10 * time.Second}},
		{"liar", "^(garbage_body|oversize_prefix|sigkill)$", "verdict:", conform.ParentOptions{}},
		{"chatty", "^(garbage_body|error_no_exception)$", "silence:", conform.ParentOptions{}},
		{"orphan", "^normal$", "reaping:", conform.ParentOptions{}},
		{"sleepy", "^normal$", "time:", conform.ParentOptions{Timeout: time.Second}},
		{"hog", "^normal$", "memory:", conform.ParentOptions{DecodeBudget: 1 << 20, MemorySlack: 16 << 20}},
		{"absent", "^normal$", "spawn:", conform.ParentOptions{}},
		// The parent itself is honest, but a helper it leaves behind
		// starts a child after the parent has exited and leaves it
		// running, or sends it a request after it broke the protocol. The
		// judge read the children's records 200 ms after the parent's
		// exit and never saw that child: both passed.
		{"late-orphan", "^normal$", "reaping:", conform.ParentOptions{}},
		{"late-chatty", "^garbage_body$", "silence:", conform.ParentOptions{}},
		// The parent's child never had the judge's pipe, and the parent
		// exits before the child (slowed by a wrapper) records its spawn:
		// only its arguments, naming the scenario's control file, tell the
		// judge it is there.
		{"closefds-orphan", "^normal$", "reaping:", conform.ParentOptions{
			Child: append([]string{"/bin/sh", "-c", `sleep 0.5; exec "$0" "$@"`}, child...)}},
	}
	for _, c := range cases {
		name, _, _ := strings.Cut(c.mode, "=")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts := c.opts
			if opts.Child == nil {
				opts.Child = child
			}
			opts.Match = regexp.MustCompile(c.scenarios)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rep, err := conform.RunParent(ctx, []string{self, "badparent", c.mode, conform.CodePlaceholder}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Rules) == 0 {
				t.Fatal("no scenario selected")
			}
			for _, r := range rep.Rules {
				if r.Status != conform.Fail || !strings.Contains(r.Detail, c.check) ||
					(c.mode != "sleepy" && strings.Contains(r.Detail, "time:")) {
					t.Errorf("%s: %s %q, want a failure of the %s check", r.ID, r.Status, r.Detail, strings.TrimSuffix(c.check, ":"))
				} else {
					t.Logf("%s fails as it must: %s", r.ID, r.Detail)
				}
			}
			if name == "orphan-stderr" {
				b, err := os.ReadFile(helperPid)
				if err != nil {
					t.Fatal(err)
				}
				pid, _ := strconv.Atoi(string(b))
				// A SIGKILL takes effect a moment after kill(2) returns.
				deadline := time.Now().Add(10 * time.Second)
				for alive(pid) && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if alive(pid) {
					t.Errorf("the bad parent's helper %d outlived the scenario", pid)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

// alive reports whether pid names a process that is neither gone nor a
// zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		// No /proc (not Linux): a signal 0 tells.
		return runtime.GOOS != "linux" && syscall.Kill(pid, 0) == nil
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// A parent that speaks protocol 2 only (upstream's Rust parent) was judged
// on the scenarios defined only at protocol 4: the scripted child, claiming
// 4, refused its Configure, and the parent's failure to start was held
// against it ("verdict: expected success") or counted as the error the
// scenario wanted (a vacuous pass). Such a scenario is skipped, saying
// which version the parent offered; the scenarios at 2 are judged as ever.
func TestParentScenarioAtAVersionTheParentDoesNotOfferIsSkipped(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := []string{montygo(t), "conform", conform.ChildCommand}
	for _, v := range []uint32{2, 4} {
		t.Run(fmt.Sprint("v", v), func(t *testing.T) {
			t.Parallel()
			// The scenarios defined without v, and two defined at both
			// versions (the child claims 2 by default: a parent at 4
			// only gets the scenario again with the child claiming 4).
			names := []string{"normal", "garbage_body"}
			for _, sc := range hostile.Scenarios() {
				if !sc.Supports(v) {
					names = append(names, regexp.QuoteMeta(sc.Name))
				}
			}
			if len(names) == 2 {
				t.Fatalf("no scenario is defined without protocol %d", v)
			}
			opts := conform.ParentOptions{Child: child, Match: regexp.MustCompile("^(" + strings.Join(names, "|") + ")$")}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rep, err := conform.RunParent(ctx, []string{self, "badparent", fmt.Sprint("v", v), conform.CodePlaceholder}, opts)
			if err != nil {
				t.Fatal(err)
			}
			offered := fmt.Sprint("offered protocol ", v, ";")
			for _, r := range rep.Rules {
				sc, _ := hostile.Lookup(strings.TrimPrefix(r.ID, "parent."))
				switch {
				case sc.Supports(v) && r.Status != conform.Pass:
					t.Errorf("%s: %s %q, want a pass", r.ID, r.Status, r.Detail)
				case !sc.Supports(v) && (r.Status != conform.Skip || !strings.Contains(r.Detail, offered)):
					t.Errorf("%s: %s %q, want a skip saying the parent %s", r.ID, r.Status, r.Detail, offered)
				default:
					t.Logf("%s: %s %s", r.ID, r.Status, r.Detail)
				}
			}
		})
	}
}

// A scenario that answers Configure its own way (a wrong reply, garbage)
// still refuses a version its child does not claim. A parent that
// negotiates (montygo run: 5 first, then the refusal's range) sends the
// claimed version after that refusal; the child recorded only the refusal,
// since the scenario's own answer bypassed the record, and the scenario was
// skipped as needing a version the parent did not offer.
func TestParentScenarioAnsweringConfigureItselfIsJudgedAfterANegotiation(t *testing.T) {
	t.Parallel()
	bin := montygo(t)
	opts := conform.ParentOptions{
		Child: []string{bin, "conform", conform.ChildCommand},
		Match: regexp.MustCompile(`^configure_(unexpected|garbage)_reply$`),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := conform.RunParent(ctx, []string{bin, "run", conform.FilePlaceholder}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rules) != 2 {
		t.Fatalf("%d scenarios selected, want 2", len(rep.Rules))
	}
	for _, r := range rep.Rules {
		if r.Status != conform.Pass {
			t.Errorf("%s: %s %q, want a pass", r.ID, r.Status, r.Detail)
		}
	}
}

// A Configure without a version (0) is refused by every worker: the
// parent that sends it is broken, not one that speaks another version,
// and the scenario is judged (it fails), not skipped.
func TestParentOfferingNoVersionIsJudged(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := conform.ParentOptions{Child: []string{montygo(t), "conform", conform.ChildCommand}, Match: regexp.MustCompile(`^normal$`)}
	rep, err := conform.RunParent(context.Background(), []string{self, "badparent", "v0", conform.CodePlaceholder}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Rules[0]; r.Status != conform.Fail || !strings.Contains(r.Detail, "verdict:") {
		t.Errorf("%s: %s %q, want a failed verdict", r.ID, r.Status, r.Detail)
	}
}

//go:build unix

package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// realWorker returns the installed worker binary, skipping the test when
// it is missing (failing instead under CI=true).
func realWorker(t *testing.T) string {
	t.Helper()
	bin, err := ResolveBinary("")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("worker binary required under CI: %v", err)
		}
		t.Skipf("no worker binary: %v", err)
	}
	return bin
}

// Hand-written protocol-2 frames, so these tests need no codec.
var configureV2 = []byte{0x0a, 0x0b, 0x0a, 0x07, 'm', 'a', 'i', 'n', '.', 'p', 'y', 0x48, 0x02}

func configureFrame(version uint64) []byte {
	inner := protowire.AppendTag(nil, 9, protowire.VarintType)
	inner = protowire.AppendVarint(inner, version)
	return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), inner)
}

func feedFrame(code string) []byte {
	inner := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), code)
	return protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), inner)
}

// eventArm returns the oneof arm number of a ChildEvent frame.
func eventArm(t *testing.T, b []byte) protowire.Number {
	t.Helper()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad event frame %x", b)
		}
		b = b[n:]
		if num >= 1 && num <= 19 {
			return num
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			t.Fatalf("bad event frame %x", b)
		}
		b = b[m:]
	}
	t.Fatalf("event frame has no arm")
	return 0
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// hangBound bounds the waits below whose wrong behaviour lasts far longer:
// a Close that never kills a busy worker, or a kill that only lands when
// a 300 s sleep ends. Done right they take milliseconds (or a 50 ms grace),
// but on two CI cores busy with -race builds a process exit or a timer can
// come seconds late, so the bound sits far from both.
const hangBound = 20 * time.Second

func start(t *testing.T, cfg Config) *Process {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	p, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

func roundTrip(t *testing.T, p *Process, req []byte) []byte {
	t.Helper()
	if err := p.WriteFrame(req); err != nil {
		t.Fatal(err)
	}
	for {
		b, err := p.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if eventArm(t, b) != 1 { // skip Print
			return b
		}
	}
}

func TestRealWorkerRoundTripAndCleanClose(t *testing.T) {
	bin := realWorker(t)
	p := start(t, Config{Binary: bin})
	if p.Pid() <= 0 || p.Binary() != bin {
		t.Fatalf("pid %d binary %q", p.Pid(), p.Binary())
	}
	if got := eventArm(t, roundTrip(t, p, configureV2)); got != 10 {
		t.Fatalf("Configure answered with arm %d, want Ok (10)", got)
	}
	got := roundTrip(t, p, feedFrame("1 + 2"))
	if eventArm(t, got) != 6 {
		t.Fatalf("feed answered with %x, want Complete", got)
	}
	// Complete{value: int(5) zigzag 3 = 6}
	if !strings.Contains(string(got), "\x0a\x02\x28\x06") {
		t.Fatalf("Complete %x does not hold int 3", got)
	}
	start := time.Now()
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	exit, ok := p.Exit()
	if !ok || exit.Code != 0 {
		t.Fatalf("exit %v after stdin closed, want status 0", exit)
	}
	if d := time.Since(start); d > hangBound {
		t.Fatalf("clean close took %v", d)
	}
	// Idempotent.
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestRealWorkerVersionRefusalIsAnnounced(t *testing.T) {
	p := start(t, Config{Binary: realWorker(t)})
	b := roundTrip(t, p, configureFrame(4))
	if eventArm(t, b) != 11 {
		t.Fatalf("got %x, want FatalError", b)
	}
	msg := string(b)
	if !strings.Contains(msg, "unsupported protocol version 4") {
		t.Fatalf("FatalError %q", msg)
	}
	err := p.Lost(transport.Loss{Announced: true, Message: "unsupported protocol version 4"})
	var ce *CrashError
	if !errors.As(err, &ce) || ce.Reason != Announced || ce.Exit.Code != 4 {
		t.Fatalf("got %#v, want an announced crash with exit status 4", err)
	}
	if !errors.Is(err, ErrCrashed) || err.(*CrashError).SessionSurvives() {
		t.Fatalf("classification of %v", err)
	}
}

func TestRealWorkerKilledMidTurnVanishes(t *testing.T) {
	p := start(t, Config{Binary: realWorker(t)})
	roundTrip(t, p, configureV2)
	if err := p.WriteFrame(feedFrame("while True: pass")); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, func() { syscall.Kill(p.Pid(), syscall.SIGKILL) })
	_, err := p.ReadFrame()
	if err != io.EOF {
		t.Fatalf("read after kill: %v, want io.EOF", err)
	}
	err = p.Lost(transport.Loss{Op: ContextWaiting, Err: err})
	var ce *CrashError
	if !errors.As(err, &ce) || ce.Reason != Vanished || ce.Exit.Signal != syscall.SIGKILL || ce.Context != ContextWaiting {
		t.Fatalf("got %#v", err)
	}
	if !strings.Contains(err.Error(), "waiting for a reply") || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("text %q", err)
	}
}

func TestRealWorkerAllocatorCeilingIsMemoryLimit(t *testing.T) {
	p := start(t, Config{Binary: realWorker(t)})
	roundTrip(t, p, configureV2)
	if err := p.WriteFrame(feedFrame("'x' * 10**13")); err != nil {
		t.Fatal(err)
	}
	_, err := p.ReadFrame()
	if err != io.EOF {
		t.Fatalf("read: %v, want io.EOF (no frame)", err)
	}
	err = p.Lost(transport.Loss{Op: ContextWaiting, Err: err})
	var me *MemoryLimitError
	if !errors.As(err, &me) || !errors.Is(err, ErrMemoryLimit) || me.Exit.Code != 65 {
		t.Fatalf("got %#v, want a memory-limit error", err)
	}
	if err.Error() != "the worker exceeded its memory limit and was terminated" {
		t.Fatalf("text %q", err)
	}
	if !strings.Contains(me.Stderr, "allocation") {
		t.Fatalf("stderr tail %q does not name the allocation", me.Stderr)
	}
}

func TestRealWorkerFramingErrorCapturesStderr(t *testing.T) {
	p := start(t, Config{Binary: realWorker(t)})
	// A prefix over the cap: FatalError, then exit 76 with a stderr line.
	if err := p.Conn().WriteFrame(nil); err != nil {
		t.Fatal(err)
	}
	b, err := p.ReadFrame() // answer to the empty request: "no kind"
	if err != nil || eventArm(t, b) != 7 {
		t.Fatalf("empty request: %x %v", b, err)
	}
	if _, err := p.stdin.Write([]byte{0xff, 0xff, 0xff, 0xff}); err != nil {
		t.Fatal(err)
	}
	b, err = p.ReadFrame()
	if err != nil || eventArm(t, b) != 11 {
		t.Fatalf("oversize prefix: %x %v", b, err)
	}
	ce := p.Lost(transport.Loss{Announced: true, Message: "malformed request frame"}).(*CrashError)
	if ce.Exit.Code != 76 {
		t.Fatalf("exit %v, want 76", ce.Exit)
	}
	p.Close(context.Background())
	if !strings.Contains(p.Stderr(), "malformed request frame") {
		t.Fatalf("stderr %q", p.Stderr())
	}
}

func TestCloseKillsBusyWorkerAfterGrace(t *testing.T) {
	// A reader blocked on the busy worker must be released by Close.
	p, readErr := busyRead(t, Config{Binary: realWorker(t), KillGrace: 50 * time.Millisecond})
	time.Sleep(20 * time.Millisecond)
	t0 := time.Now()
	p.Close(context.Background())
	if d := time.Since(t0); d > hangBound {
		t.Fatalf("Close took %v", d)
	}
	if exit, _ := p.Exit(); exit.Signal != syscall.SIGKILL {
		t.Fatalf("exit %v, want SIGKILL", exit)
	}
	select {
	case err := <-readErr:
		if err == nil {
			t.Fatal("read succeeded on a killed worker")
		}
	case <-time.After(hangBound):
		t.Fatal("blocked read was not released")
	}
}

func TestCloseWithDoneContextKillsAtOnce(t *testing.T) {
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", "trap '' TERM; exec sleep 300"}, KillGrace: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	t0 := time.Now()
	p.Close(ctx)
	if d := time.Since(t0); d > hangBound {
		t.Fatalf("Close took %v", d)
	}
}

func TestKillIsImmediateAndIdempotent(t *testing.T) {
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", "exec sleep 300"}})
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-time.After(hangBound):
		t.Fatal("not reaped after Kill")
	}
	if err := p.Kill(); err != nil {
		t.Fatalf("second Kill: %v", err)
	}
	exit, _ := p.Wait(context.Background())
	if exit.Signal != syscall.SIGKILL || exit.Code != -1 {
		t.Fatalf("exit %v", exit)
	}
}

func TestEnvironmentIsEmptyByDefault(t *testing.T) {
	t.Setenv("GOMONTY_SECRET", "leak")
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", "env >&2"}})
	p.Wait(context.Background())
	p.Close(context.Background())
	if strings.Contains(p.Stderr(), "GOMONTY_SECRET") {
		t.Fatalf("host environment leaked: %q", p.Stderr())
	}
	q := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", "env >&2"}, Env: []string{"A=1"}})
	q.Wait(context.Background())
	q.Close(context.Background())
	if !strings.Contains(q.Stderr(), "A=1") {
		t.Fatalf("explicit env missing: %q", q.Stderr())
	}
}

func TestStderrRingKeepsTheTail(t *testing.T) {
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c",
		"i=0; while [ $i -lt 3000 ]; do echo line$i >&2; i=$((i+1)); done; echo last >&2"}, StderrLimit: 1024})
	p.Wait(context.Background())
	p.Close(context.Background())
	tail := p.Stderr()
	if len(tail) != 1024 || !strings.HasSuffix(tail, "line2999\nlast\n") {
		t.Fatalf("tail (%d bytes) %q", len(tail), tail)
	}
	if p.tail.Total() <= 1024 {
		t.Fatalf("total %d", p.tail.Total())
	}
}

func TestVanishedOnEOFWithoutFatal(t *testing.T) {
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", "echo boom >&2; exit 9"}})
	_, err := p.ReadFrame()
	if err != io.EOF {
		t.Fatalf("read %v", err)
	}
	err = p.Lost(transport.Loss{Op: ContextWaiting, Err: err})
	var ce *CrashError
	if !errors.As(err, &ce) || ce.Exit.Code != 9 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %#v", err)
	}
	p.Close(context.Background())
	if !strings.Contains(ce.Error(), "exit status 9") {
		t.Fatalf("text %q", ce.Error())
	}
}

func TestWriteToDeadChildIsStreamEnd(t *testing.T) {
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", "exit 0"}})
	p.Wait(context.Background())
	err := p.WriteFrame(make([]byte, 1<<17))
	if err == nil || !IsStreamEnd(err) {
		t.Fatalf("write to a dead child: %v", err)
	}
}

func TestReadFrameTooLargeIsNotStreamEnd(t *testing.T) {
	p := start(t, Config{Binary: "/bin/sh", Args: []string{"-c", "printf '\\377\\377\\377\\377'"}, MaxFrameLen: 1024})
	_, err := p.ReadFrame()
	if !errors.Is(err, frame.ErrTooLarge) || IsStreamEnd(err) {
		t.Fatalf("got %v", err)
	}
}

func TestResolveBinary(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "monty")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	noexec := filepath.Join(dir, "plain")
	os.WriteFile(noexec, nil, 0o644)

	got, err := ResolveBinary(exe)
	if err != nil || got != exe {
		t.Fatalf("explicit: %q %v", got, err)
	}
	_, err = ResolveBinary(noexec)
	var nf *BinaryNotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, ErrBinaryNotFound) || len(nf.Tried) != 1 {
		t.Fatalf("non-executable explicit: %v", err)
	}
	// The named binary is told by fields a caller can word for itself
	// (the CLI names its --worker flag), and the candidate's text does not
	// assume which setting named it.
	if nf.Named != noexec || nf.FromEnv || !errors.Is(err, fs.ErrPermission) || nf.Tried[0] != noexec+": "+nf.Err.Error() {
		t.Fatalf("non-executable explicit: %+v", nf)
	}
	// The advice names the setting a library user has (there is no
	// Config of package pool or server with a Binary field: it is
	// worker.Config's, their Worker field) and where the install script
	// puts the worker, since it is not in the user's own repository.
	for _, w := range []string{"worker.Config.Binary", "pool.Config", "$" + EnvBinary, "scripts/install-worker.sh", "$" + EnvInstallDir + "/bin/monty"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %s", err, w)
		}
	}

	t.Setenv(EnvBinary, exe)
	if got, err := ResolveBinary(""); err != nil || got != exe {
		t.Fatalf("$MONTY_BIN: %q %v", got, err)
	}
	t.Setenv(EnvBinary, filepath.Join(dir, "missing"))
	_, err = ResolveBinary("")
	if !errors.Is(err, ErrBinaryNotFound) {
		t.Fatalf("bad $MONTY_BIN must not fall back: %v", err)
	}
	if !errors.As(err, &nf) || nf.Named != filepath.Join(dir, "missing") || !nf.FromEnv || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("bad $MONTY_BIN: %+v", nf)
	}
	t.Setenv(EnvBinary, "")

	// Walking up from the working directory.
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".monty", "bin"), 0o755)
	installed := filepath.Join(root, ".monty", "bin", "monty")
	os.WriteFile(installed, []byte("#!/bin/sh\n"), 0o755)
	deep := filepath.Join(root, "a", "b", "c")
	os.MkdirAll(deep, 0o755)
	t.Chdir(deep)
	if got, err := ResolveBinary(""); err != nil || got != installed {
		t.Fatalf("walk up: %q %v", got, err)
	}

	// Nothing anywhere: every candidate is listed.
	t.Chdir(t.TempDir())
	t.Setenv("PATH", t.TempDir())
	_, err = ResolveBinary("")
	if !errors.As(err, &nf) {
		// The test binary's own directory may sit below a project with an
		// installed worker; then resolution legitimately succeeds.
		t.Skipf("a worker is reachable from the test binary: %v", err)
	}
	if !strings.Contains(err.Error(), "$PATH") || len(nf.Tried) < 2 {
		t.Fatalf("error %q", err)
	}
}

func TestRing(t *testing.T) {
	r := newRing(8)
	r.Write([]byte("abc"))
	if r.String() != "abc" {
		t.Fatal(r.String())
	}
	r.Write([]byte("defgh"))
	if r.String() != "abcdefgh" {
		t.Fatal(r.String())
	}
	r.Write([]byte("ij"))
	if r.String() != "cdefghij" {
		t.Fatal(r.String())
	}
	r.Write([]byte("0123456789"))
	if r.String() != "23456789" {
		t.Fatal(r.String())
	}
	r.Write([]byte("xyz"))
	if r.String() != "56789xyz" {
		t.Fatal(r.String())
	}
	if r.Total() != 23 {
		t.Fatal(r.Total())
	}
	z := newRing(0)
	z.Write([]byte("abc"))
	if z.String() != "" {
		t.Fatal(z.String())
	}
}

func TestErrorClassification(t *testing.T) {
	cases := []struct {
		name string
		err  interface {
			error
			SessionSurvives() bool
		}
		is error
	}{
		{"crash", &CrashError{Reason: Vanished, Context: ContextSending}, ErrCrashed},
		{"memory", &MemoryLimitError{}, ErrMemoryLimit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err.SessionSurvives() {
				t.Errorf("%v survives", c.err)
			}
			if !errors.Is(c.err, c.is) {
				t.Errorf("%v does not match %v", c.err, c.is)
			}
		})
	}
}

// busyRead starts a worker with cfg, configures it, feeds it an endless
// loop and reads its answer on a goroutine, whose error arrives on the
// channel once the read ends.
func busyRead(t *testing.T, cfg Config) (*Process, <-chan error) {
	t.Helper()
	p := start(t, cfg)
	roundTrip(t, p, configureV2)
	if err := p.WriteFrame(feedFrame("while True: pass")); err != nil {
		t.Fatal(err)
	}
	readErr := make(chan error, 1)
	go func() {
		_, err := p.ReadFrame()
		readErr <- err
	}()
	return p, readErr
}

// A binary that exists but cannot be executed because its interpreter (a
// script's shebang, an ELF binary's dynamic loader, such as a glibc build
// in a musl container) is missing fails with ENOENT from exec; the error
// says so instead of only "no such file or directory" about a file that
// is there. Nor does a missing working directory pass for a missing
// binary.
func TestStartNamesAMissingInterpreter(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "monty")
	if err := os.WriteFile(bin, []byte("#!/nonexistent/interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), Config{Binary: bin, Logger: quiet})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "interpreter") {
		t.Fatalf("got %v", err)
	}
	// A missing working directory is reported the same way by exec.
	missing := filepath.Join(t.TempDir(), "gone")
	_, err = Start(context.Background(), Config{Binary: "/bin/sh", Dir: missing, Logger: quiet})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "working directory "+missing) {
		t.Fatalf("missing Dir: %v", err)
	}
}

// A worker started through a wrapper (here unshare, entering a new
// network namespace) is the wrapper's exec: the pid is the worker's, it
// speaks the protocol, and it runs in the namespace the wrapper entered,
// which the calling thread's own setns would not give it (see the
// package doc: every fork runs on the spawner's thread).
func TestWrapperBinaryStartsTheWorkerInANamespace(t *testing.T) {
	bin := realWorker(t)
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare:", err)
	}
	if err := exec.Command(unshare, "-Urn", "true").Run(); err != nil {
		t.Skip("user and network namespaces not permitted here:", err)
	}
	p := start(t, Config{Binary: unshare, Args: []string{"-Urn", bin, "subprocess"}})
	if got := eventArm(t, roundTrip(t, p, configureV2)); got != 10 {
		t.Fatalf("Configure answered with arm %d, want Ok (10)", got)
	}
	if got := roundTrip(t, p, feedFrame("1 + 2")); eventArm(t, got) != 6 {
		t.Fatalf("feed answered with %x, want Complete", got)
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(bin); exe != want {
		t.Fatalf("pid %d runs %s, want the worker %s", p.Pid(), exe, want)
	}
	ours, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", p.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	if theirs == ours {
		t.Fatalf("worker shares our network namespace %s", ours)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if exit, ok := p.Exit(); !ok || exit.Code != 0 {
		t.Fatalf("exit %v after stdin closed, want status 0", exit)
	}
}

//go:build unix

package conform

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gomonty/monty/internal/hostile"
	"github.com/gomonty/monty/internal/spawn"
	"github.com/gomonty/monty/message"
)

// ParentOptions configure [RunParent]. The zero value runs every scenario
// with a 30 s limit each. They are plain data, safe to share.
type ParentOptions struct {
	// Child is the argv prefix that starts the scripted child (a program
	// that runs [ServeChild] on the remaining arguments); nil means this
	// executable followed by "conform" and [ChildCommand], which is right
	// for montygo.
	Child []string
	// Match selects scenarios by name; nil runs them all.
	Match *regexp.Regexp
	// Parallel bounds how many scenarios run at once; 0 means
	// max(2, GOMAXPROCS).
	Parallel int
	// Timeout is the time the parent gets per scenario; 0 means 30 s (a
	// parent without a start timeout then survives slow_start even when it
	// spawns twice to negotiate the version).
	Timeout time.Duration
	// Protocol is the version the scripted child claims; 0 means the
	// scenario's default (2 where the scenario is defined for it), or the
	// version the parent offered when it offered only another one the
	// scenario is defined at. A scenario whose child refused every version
	// the parent offered is skipped.
	Protocol uint32
	// DecodeBudget is the per-frame decode budget the parent is known to
	// use; 0 means the protocol default, 1 GiB.
	DecodeBudget int64
	// MemorySlack is what the parent may use beyond the decode budget and
	// twice the largest frame it must read; 0 means 384 MiB.
	MemorySlack int64
}

// Placeholders a parent command may use; they are replaced per scenario.
const (
	// CodePlaceholder becomes the scenario's snippet.
	CodePlaceholder = "{code}"
	// FilePlaceholder becomes the path of a file holding the snippet.
	FilePlaceholder = "{file}"
)

// RunParent runs the parent command once per hostile-child scenario with
// MONTY_BIN pointing at a per-scenario launcher that starts the scripted
// child, and judges what the parent did from the process and from what the
// child recorded:
//
//   - time: the parent ended within the limit;
//   - verdict: it exited 0 where the scenario must succeed and non-zero
//     where it must report an error;
//   - silence: after a child broke the protocol (and the parent reported
//     it), no further request reached that child;
//   - reaping: no child process outlived the parent (the parent gets a
//     pipe as file descriptor 3, which every scripted child it starts
//     closes once recorded: the judge waits for every copy to close, so a
//     child started after the parent's exit is judged too);
//   - memory: the parent's peak RSS stayed within the decode budget, twice
//     the largest frame it must read, and a slack.
//
// Upstream parents spawn the worker with an empty environment and only a
// "subprocess" argument, so the scenario travels in the launcher: an
// executable script in a per-scenario temporary directory that execs the
// child with the scenario and the control file as arguments. The parent
// command runs in the current working directory.
//
// Arguments equal to [CodePlaceholder] or [FilePlaceholder] are replaced by
// the scenario's snippet or a file holding it. Each scenario is one rule
// "parent.NAME" of the report.
func RunParent(ctx context.Context, command []string, opts ParentOptions) (*Report, error) {
	if len(command) == 0 {
		return nil, fmt.Errorf("conform: no parent command")
	}
	child := opts.Child
	if child == nil {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("conform: locating the scripted child: %w", err)
		}
		child = []string{self, "conform", ChildCommand}
	}
	par := opts.Parallel
	if par <= 0 {
		par = max(2, runtime.GOMAXPROCS(0))
	}
	limit := opts.Timeout
	if limit <= 0 {
		limit = 30 * time.Second
	}
	slack := opts.MemorySlack
	if slack <= 0 {
		slack = 384 << 20
	}
	if opts.DecodeBudget > 0 {
		slack += opts.DecodeBudget
	} else {
		slack += 1 << 30
	}
	rep := &Report{Target: strings.Join(command, " "), Protocol: opts.Protocol}
	var scs []hostile.Scenario
	for _, sc := range hostile.Scenarios() {
		if opts.Match != nil && !opts.Match.MatchString(sc.Name) {
			continue
		}
		scs = append(scs, sc)
	}
	rep.Rules = make([]Result, len(scs))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, sc := range scs {
		rep.Rules[i] = Result{ID: "parent." + sc.Name, Title: sc.Description}
		if opts.Protocol != 0 && !sc.Supports(opts.Protocol) {
			rep.Rules[i].Status = Skip
			rep.Rules[i].Detail = fmt.Sprintf("scenario not defined at protocol %d", opts.Protocol)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := acquire(ctx, sem); err != nil {
				rep.Rules[i].Status, rep.Rules[i].Detail = Fail, "not run: "+err.Error()
				return
			}
			defer func() { <-sem }()
			st, detail, retry := judge(ctx, command, child, sc, opts.Protocol, limit, slack)
			if retry != 0 && ctx.Err() == nil {
				// The parent offered only a version the scenario is
				// defined at but its child did not claim by default:
				// the scenario runs again with the child claiming it.
				st, detail, _ = judge(ctx, command, child, sc, retry, limit, slack)
			}
			rep.Rules[i].Status, rep.Rules[i].Detail = st, detail
		}()
	}
	wg.Wait()
	rep.count()
	return rep, nil
}

// run is what one scenario's parent did.
type run struct {
	exit     int // -1 when killed
	timedOut bool
	canceled error // the run's context ended before the parent did
	maxRSS   int64 // bytes: the parent's own peak (see peakRSS)
	kitRSS   int64 // bytes: the kit's peak once the parent had started (Linux)
	hwm      int64 // bytes: the parent's peak as last sampled while it ran
	stderr   string
	stdout   string
	log      []string

	cmd    *exec.Cmd // nil when the parent did not start
	outBuf limitedBuffer
	errBuf limitedBuffer

	group  *spawn.Group // the parent's process group
	reaped bool
}

// killGroup kills the parent's process group, unless the parent may have
// been reaped, and the parent itself.
func (r *run) killGroup() {
	r.group.Kill()
	_ = r.cmd.Process.Kill()
}

// reap reaps the parent, once, and releases the spawner's thread.
func (r *run) reap() {
	if r.reaped {
		return
	}
	r.reaped = true
	_ = r.cmd.Wait()
	spawn.Done()
}

// finish kills whatever is left in the parent's process group, reaps the
// parent and reads its exit status, peak RSS and output. It returns at
// once when it has been called before.
func (r *run) finish() {
	if r.cmd == nil {
		return
	}
	r.group.Exited(true) // a no-op when the parent may have been reaped
	r.reap()
	r.stderr, r.stdout = r.errBuf.String(), r.outBuf.String()
	if st := r.cmd.ProcessState; st != nil {
		r.exit = st.ExitCode()
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			r.maxRSS = r.peakRSS(rssBytes(ru.Maxrss, runtime.GOOS))
		}
	}
}

// rssBytes converts a peak resident set as rusage's ru_maxrss reports it
// on goos to bytes: Darwin counts bytes, Linux and the BSDs kibibytes.
func rssBytes(maxrss int64, goos string) int64 {
	if goos == "darwin" || goos == "ios" {
		return maxrss
	}
	return maxrss << 10
}

// peakRSS returns the parent's own peak resident set from the peak its
// rusage reports. On Linux that is at least the kit's own peak when the
// parent started: executing its binary, a child forked by a Go program
// (sharing the program's address space until then) records the program's
// high-water mark as its own. A figure above the kit's peak is the
// parent's; one within it says only that the parent's was no larger, and
// the peak sampled from /proc while it ran stands instead (sampled only
// when the kit's peak exceeds the bound the parent is held to: below it
// the rusage figure decides).
func (r *run) peakRSS(reported int64) int64 {
	if reported > r.kitRSS {
		return reported
	}
	return r.hwm
}

// judge runs one scenario with the child claiming proto (0: the
// scenario's default); mem is the memory the parent may use beyond twice
// the scenario's largest frame. A parent that offered its children only
// versions they did not claim is not judged on the scenario (the scenario
// is skipped: it needs a version the parent does not speak); retry is then
// a version the parent offered at which the scenario is defined, when
// proto was 0 and there is one, for the caller to run it again at.
func judge(ctx context.Context, command, child []string, sc hostile.Scenario, proto uint32, limit time.Duration, mem int64) (_ Status, _ string, retry uint32) {
	dir, err := os.MkdirTemp("", "montygo-conform-parent-")
	if err != nil {
		return Fail, "setting up: " + err.Error(), 0
	}
	defer os.RemoveAll(dir)
	control := filepath.Join(dir, "control")
	launcher := filepath.Join(dir, "monty")
	// The token (token.go): held by the parent and what it starts, let go
	// by each scripted child once its spawn is recorded.
	tokR, tokW, err := os.Pipe()
	if err != nil {
		return Fail, "setting up: " + err.Error(), 0
	}
	id, err := tokenID(tokW)
	if err != nil {
		tokR.Close()
		tokW.Close()
		return Fail, "setting up: " + err.Error(), 0
	}
	argv := append(slices.Clone(child), "--scenario", sc.Name, "--control", control,
		"--lifetime", (2*limit + 10*time.Second).String(), "--token", id)
	if proto != 0 {
		argv = append(argv, "--protocol", strconv.Itoa(int(proto)))
	}
	script := "#!/bin/sh\nexec"
	for _, a := range argv {
		script += " " + shellQuote(a)
	}
	script += " \"$@\"\n"
	codeFile := filepath.Join(dir, "snippet.py")
	err = os.WriteFile(launcher, []byte(script), 0o755)
	if err == nil {
		err = os.WriteFile(codeFile, []byte(sc.Code+"\n"), 0o644)
	}
	if err != nil {
		tokR.Close()
		tokW.Close()
		return Fail, "setting up: " + err.Error(), 0
	}
	args := make([]string, len(command))
	for i, a := range command {
		switch a {
		case CodePlaceholder:
			a = sc.Code
		case FilePlaceholder:
			a = codeFile
		}
		args[i] = a
	}
	bound := 2*sc.MaxFrame + mem
	r := runParent(ctx, args, launcher, limit, bound, tokW)
	// A child the parent (or something it left behind) started may still
	// be on its way to recording its spawn, or may not be started yet:
	// wait until everything that holds the token has let it go. Only a
	// process the parent left running holds it for long (its children
	// let it go as soon as they are recorded); the scenario's limit
	// bounds that wait.
	released := awaitRelease(ctx, tokR, limit)
	r.log = readLines(control)
	// The reaping check looks before the parent's group is killed: a child
	// left in it is still the parent's failure to reap. A child whose
	// parent closed inherited descriptors never had the token: one whose
	// launcher already runs is found by its arguments.
	orphans := orphanPids(r.log, inFlight(launcher, control), launcher, control)
	// Every child the log names has now ended (orphanPids waits for each,
	// and kills one still running at its deadline), so its records are
	// complete: read them again, or a request a busy machine let a child
	// record only after the first read would escape the silence check.
	r.log = readLines(control)
	// Whatever the parent left in its process group goes with the
	// scenario; then the parent is reaped, its status and usage read.
	r.finish()
	if r.canceled != nil {
		return Fail, fmt.Sprintf("not finished: %v (the parent was killed)", r.canceled), 0
	}
	// A parent whose every Configure was refused as a version the child
	// does not claim never reached the scenario: what it did next says
	// nothing about it (verdict and silence are not judged), only the
	// checks that hold whatever the version (time, reaping, memory).
	offered := refusedOnly(r.log)
	var problems []string
	if !slices.ContainsFunc(r.log, func(l string) bool { return strings.HasPrefix(l, "spawn ") }) {
		problems = append(problems, "spawn: the parent never started the scripted child (does it run $MONTY_BIN?)"+tailNote(r.stderr))
	}
	if r.timedOut {
		problems = append(problems, fmt.Sprintf("time: the parent had not ended after %v and was killed", limit))
	}
	ok := r.exit == 0
	// complete_before_feed writes its stray frame right after the Ok; when
	// it reaches the pipe only after the parent has looked and sent the
	// Feed, it is indistinguishable from the answer to that Feed (a child
	// can always lie about a result). That race, visible as the stray
	// value in the parent's output, is not held against the parent.
	raced := sc.Name == "complete_before_feed" && ok && strings.Contains(r.stdout, hostile.UnsolicitedValue)
	// huge_int's value is legal, but a parent that prints it must refuse
	// the decimal conversion as CPython does; that refusal is not a wrong
	// verdict.
	refusedRender := sc.Name == "huge_int" && !ok && strings.Contains(r.stderr, "Exceeds the limit")
	switch {
	case r.timedOut, raced, refusedRender, offered != nil:
	case sc.Expect.Outcome == hostile.OK && !ok:
		problems = append(problems, fmt.Sprintf("verdict: expected success (%s), got exit status %d%s", sc.Expect.Note, r.exit, tailNote(r.stderr)))
	case sc.Expect.Outcome != hostile.OK && !sc.Expect.Allows(hostile.OK) && ok:
		problems = append(problems, fmt.Sprintf("verdict: expected an error (%s), got exit status 0", sc.Expect.Outcome))
	}
	if !ok && !r.timedOut && !sc.Expect.WorkerSurvives && offered == nil {
		if msg := silenceProblem(sc, r.log); msg != "" {
			problems = append(problems, msg)
		}
	}
	if len(orphans) > 0 {
		problems = append(problems, fmt.Sprintf("reaping: child process(es) %v still running after the parent exited", orphans))
	}
	if !released && r.canceled == nil {
		problems = append(problems, fmt.Sprintf("reaping: a process the parent started still held the descriptor the kit passed it (fd 3) %v after the parent exited", limit))
	}
	if r.maxRSS > bound {
		problems = append(problems, fmt.Sprintf("memory: peak RSS %d MiB exceeds %d MiB", r.maxRSS>>20, bound>>20))
	}
	if len(problems) > 0 {
		return Fail, strings.Join(problems, "; "), 0
	}
	if offered != nil {
		if proto == 0 {
			for _, v := range offered {
				if sc.Supports(v) {
					return Skip, "", v
				}
			}
			return Skip, fmt.Sprintf("the parent offered protocol %s; the scenario is defined at protocol %s",
				versionList(offered), versionList(sc.Protocols)), 0
		}
		return Skip, fmt.Sprintf("the parent offered protocol %s; the scenario was asked for at protocol %d",
			versionList(offered), proto), 0
	}
	return Pass, "", 0
}

// refusedOnly returns the protocol versions the parent offered in
// Configure, in the order first offered, when the children the log records
// refused every one of them (none was accepted); nil otherwise, or when no
// Configure was answered by version at all. A Configure without a version
// (0), which every worker refuses, is a broken parent's, not a version it
// speaks: nil then too. So is a log where the parent, after a refusal,
// started another child that never read a Configure: the parent went past
// the refusal (it downgraded) and the scenario played out on that child
// (slow_start's second child, still asleep when the parent's start
// timeout fires), so the run is judged, not skipped.
func refusedOnly(log []string) []uint32 {
	var offered []uint32
	var late []string // children started after a refusal
	configured := map[string]bool{}
	for _, l := range log {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "spawn" && len(offered) > 0 {
			late = append(late, f[1])
		}
		if len(f) != 4 || f[0] != "configure" {
			continue
		}
		configured[f[1]] = true
		v, err := strconv.ParseUint(f[2], 10, 32)
		if f[3] != "refused" || err != nil || v == 0 {
			return nil
		}
		if !slices.Contains(offered, uint32(v)) {
			offered = append(offered, uint32(v))
		}
	}
	for _, pid := range late {
		if !configured[pid] {
			return nil
		}
	}
	return offered
}

// runParent starts the parent command and returns once it has exited (or
// was killed at the limit), leaving it unreaped where the platform allows
// (Linux): its process group's id stays reserved until finish kills the
// group and reaps it. Where the kit's own peak resident set exceeds
// bound, the parent's is sampled while it runs (see peakRSS).
//
// token, when not nil, is passed to the parent as file descriptor 3 and
// closed here once the parent has started (or failed to).
func runParent(runCtx context.Context, args []string, launcher string, limit time.Duration, bound int64, token *os.File) *run {
	ctx, cancel := context.WithTimeout(runCtx, limit)
	defer cancel()
	// The parent runs in the kit's working directory, so that relative
	// paths in the command (bin/montygo, my_parent.py) mean what they say.
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "MONTY_BIN="+launcher)
	if token != nil {
		cmd.ExtraFiles = []*os.File{token}
	}
	r := &run{exit: -1}
	r.errBuf.n, r.outBuf.n = 16<<10, 16<<10
	cmd.Stderr, cmd.Stdout = &r.errBuf, &r.outBuf
	// Its own process group, and on Linux a parent-death signal: a kit
	// that dies (a CI job's timeout) takes the parent under test along.
	cmd.SysProcAttr = childProcAttr()
	// A child the parent left running may hold the parent's stdout or
	// stderr (a parent that passes its own stderr on): Wait then returns
	// once the parent has exited and its output had a moment to drain, not
	// when that child ends, which would blame the parent's time for it
	// (the reaping check catches the child).
	cmd.WaitDelay = time.Second
	// Forked on the spawner's thread: the parent-death signal follows the
	// forking thread, which the runtime may end (see internal/spawn).
	err := spawn.Start(cmd.Start)
	if token != nil {
		// The parent has its copy: the kit's would hold the pipe open.
		token.Close()
	}
	if err != nil {
		r.stderr = err.Error()
		return r
	}
	r.cmd = cmd
	r.group = spawn.NewGroup(cmd.Process.Pid)
	exited := make(chan struct{})
	stopped := make(chan struct{})
	sampled := make(chan struct{})
	// The parent has executed its binary: the peak it took over from the
	// kit is within the kit's own by now.
	if r.kitRSS = kitPeakRSS(); r.kitRSS > bound {
		go func() {
			defer close(sampled)
			r.hwm = sampleHWM(cmd.Process.Pid, exited)
		}()
	} else {
		close(sampled)
	}
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
			if err := runCtx.Err(); err != nil {
				r.canceled = err
			} else {
				r.timedOut = true
			}
			r.killGroup()
		case <-exited:
		}
	}()
	if !spawn.AwaitExit(cmd.Process.Pid) {
		// Off Linux the exit cannot be awaited without reaping: the
		// group is not signalled once the parent may have been reaped.
		r.group.Exited(false)
		r.reap()
	}
	close(exited)
	<-stopped
	<-sampled
	return r
}

// silenceProblem checks that no request reached a child after the request
// that triggered its misbehaviour (one more is allowed when the violation
// can only be seen at the next read: an event sent unasked; none is
// counted where the scenario accepts a sandbox error, whose parent goes
// on).
func silenceProblem(sc hostile.Scenario, log []string) string {
	var trigger message.RequestKind
	allowed := 0
	switch sc.Trigger {
	case hostile.AtConfigure:
		trigger = message.KindConfigure
	case hostile.AfterConfigure:
		trigger, allowed = message.KindConfigure, 1
	case hostile.AtFeed:
		trigger = message.KindFeed
	case hostile.AtResume:
		trigger = message.KindResumeCall
	case hostile.AtAbort:
		trigger = message.KindAbortFeed
	default:
		return "" // at spawn: nothing was answered, nothing to count
	}
	if sc.Expect.AfterOK != "" || sc.Expect.Allows(hostile.OK) {
		allowed = 1
	}
	if sc.Expect.Allows(hostile.SandboxError) {
		// That accepted outcome is the path of a parent that saw no
		// violation and talked on (call_id_reused: it answers every
		// repeated call until max_suspensions, then aborts): the time
		// check is what bounds it.
		return ""
	}
	seen := map[string]int{} // pid → requests after the trigger (-1: not yet triggered)
	for _, l := range log {
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != "request" {
			continue
		}
		pid := f[1]
		n, ok := seen[pid]
		if !ok {
			n = -1
		}
		if n >= 0 {
			n++
		} else if k, err := strconv.Atoi(f[2]); err == nil && message.RequestKind(k) == trigger {
			n = 0
		}
		seen[pid] = n
	}
	for pid, n := range seen {
		if n > allowed {
			return fmt.Sprintf("silence: child %s got %d more request(s) after it broke the protocol at its first %s", pid, n, trigger)
		}
	}
	return ""
}

// orphanPids returns the children still running, after a short grace,
// and kills them: those the log records and the extra pids. A pid counts
// only while it names a scripted child of this scenario (one whose
// arguments name one of marks, the launcher or the control file): the
// child that recorded it may have exited and its pid been reused since.
func orphanPids(log []string, extra []int, marks ...string) []int {
	var pids []int
	for _, l := range log {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "spawn" {
			if pid, err := strconv.Atoi(f[1]); err == nil && !slices.Contains(pids, pid) {
				pids = append(pids, pid)
			}
		}
	}
	for _, pid := range extra {
		if !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	var alive []int
	deadline := time.Now().Add(2 * time.Second)
	for _, pid := range pids {
		c, ok := pinChild(pid, marks...)
		if !ok {
			continue
		}
		for c.Running() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if c.Running() {
			alive = append(alive, pid)
			_ = c.Kill()
		}
		c.Release()
	}
	return alive
}

// running reports whether pid is a live (not zombie) process.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil && runtime.GOOS != "linux"
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	return s[i+2] != 'Z' && s[i+2] != 'X'
}

func readLines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func tailNote(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > 200 {
		s = "…" + strings.ToValidUTF8(s[len(s)-200:], "") // the cut may split a character
	}
	return "; stderr: " + oneLine(s)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// limitedBuffer keeps the first n bytes written and the last n: a
// parent's output is quoted from its end (where its error is) and
// searched in both.
type limitedBuffer struct {
	n    int
	head []byte
	tail []byte // what came after the head; its last n bytes count
	cut  bool   // bytes were dropped between the head and the tail
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	total := len(p)
	if room := l.n - len(l.head); room > 0 {
		k := min(len(p), room)
		l.head = append(l.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 {
		l.tail = append(l.tail, p...)
		if len(l.tail) > 2*l.n { // trimmed at twice the size: linear work
			l.cut = true
			l.tail = append(l.tail[:0], l.tail[len(l.tail)-l.n:]...)
		}
	}
	return total, nil
}

// String returns the head and the tail, with an ellipsis line where bytes
// were dropped between them.
func (l *limitedBuffer) String() string {
	tail, cut := l.tail, l.cut
	if len(tail) > l.n {
		tail, cut = tail[len(tail)-l.n:], true
	}
	if cut {
		return string(l.head) + "\n…\n" + string(tail)
	}
	return string(l.head) + string(tail)
}

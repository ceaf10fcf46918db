//go:build unix

package conform

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gomonty/monty/internal/spawn"
)

// childProcAttr puts a worker under test in its own process group and
// has the kernel kill it if the kit dies first. The signal follows the
// thread that forked the worker, so startProc forks on the spawner's
// thread (internal/spawn).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// pinnedChild is a scripted child held by a pidfd, so that a recycled pid
// is never mistaken for it.
type pinnedChild = spawn.Pinned

// pinChild returns a handle on process pid when it is a scripted child
// whose arguments name one of marks (the control file; the launcher,
// which a shell running it names).
func pinChild(pid int, marks ...string) (pinnedChild, bool) {
	c, ok := spawn.Pin(pid)
	if !ok {
		return c, false
	}
	// Pinned: if pid is still this process, it stays so.
	if !namesOneOf(pid, marks) || !c.Running() {
		// (Not running: the cmdline read may have been of a successor.)
		c.Release()
		return c, false
	}
	return c, true
}

// namesOneOf reports whether one of process pid's arguments is one of
// marks.
func namesOneOf(pid int, marks []string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	return slices.ContainsFunc(strings.Split(string(b), "\x00"), func(a string) bool { return slices.Contains(marks, a) })
}

// inFlight returns the processes whose arguments name one of marks: the
// scripted children of a scenario, from the moment the launcher runs,
// whether or not they have recorded their spawn yet.
func inFlight(marks ...string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && namesOneOf(pid, marks) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// kitPeakRSS returns this process's peak resident set in bytes: at least
// what a child it forks takes over as its own peak when it executes its
// binary (see run.peakRSS).
func kitPeakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return rssBytes(ru.Maxrss, "linux")
}

// hwmInterval is how often sampleHWM reads a parent's peak.
const hwmInterval = 10 * time.Millisecond

// sampleHWM reads the peak resident set of process pid (VmHWM: its own
// address space's, since it executed its binary) every hwmInterval until
// done is closed or the process has exited, and returns the last figure
// read, in bytes. The caller keeps pid unreaped meanwhile, so the pid
// cannot name another process. A peak reached in the last moments before
// the exit may be missed.
func sampleHWM(pid int, done <-chan struct{}) int64 {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	var hwm int64
	t := time.NewTicker(hwmInterval)
	defer t.Stop()
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			return hwm
		}
		_, rest, ok := bytes.Cut(b, []byte("\nVmHWM:"))
		if !ok {
			return hwm // a zombie has no address space left
		}
		line, _, _ := bytes.Cut(rest, []byte("\n"))
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(line)), " kB"), 10, 64)
		if err == nil {
			hwm = max(hwm, kb<<10)
		}
		select {
		case <-done:
			return hwm
		case <-t.C:
		}
	}
}

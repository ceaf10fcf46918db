package testenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ChildState returns the state letter (R, S, T, Z, ...) of pid from
// /proc/PID/stat when pid is a live or unreaped child of this test binary,
// and "" otherwise. Once a worker is reaped its pid may be reused by
// anything, so every signal a test sends should be guarded by it.
func ChildState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	state, ppid, ok := statFields(string(b))
	if !ok || ppid != strconv.Itoa(os.Getpid()) {
		return ""
	}
	return state
}

// IsChild reports whether pid is a live or unreaped child of this test
// binary.
func IsChild(pid int) bool { return ChildState(pid) != "" }

// statFields returns the state and parent pid of a /proc/PID/stat line.
// The command name may contain spaces and parentheses, so the fields are
// read after the last ')'.
func statFields(s string) (state, ppid string, ok bool) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return "", "", false
	}
	return f[0], f[1], true
}

// Children lists the live (or unreaped) child processes of this test
// binary as "pid (comm) state".
func Children() []string {
	var out []string
	eachChild(func(stat, state string) {
		out = append(out, stat[:strings.LastIndexByte(stat, ')')+1]+" "+state)
	})
	return out
}

// eachChild calls f with the /proc stat line and the state of each child
// process of this test binary (live or unreaped).
func eachChild(f func(stat, state string)) {
	me := strconv.Itoa(os.Getpid())
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		if state, ppid, ok := statFields(s); ok && ppid == me {
			f(s, state)
		}
	}
}

// WaitChildState polls until pid is our child in one of the given states,
// stop is closed, or d passes; it reports whether the state was reached.
// It is the barrier for "the worker is computing" (state R) or "the worker
// is blocked reading" (state S): a test waits for what it needs instead of
// sleeping a guessed time.
func WaitChildState(pid int, d time.Duration, stop <-chan struct{}, states ...string) bool {
	deadline := time.Now().Add(d)
	for {
		st := ChildState(pid)
		for _, want := range states {
			if st == want {
				return true
			}
		}
		if st == "" || time.Now().After(deadline) {
			return false
		}
		select {
		case <-stop:
			return false
		case <-time.After(time.Millisecond):
		}
	}
}

// WaitReaped waits up to d for pid to stop being our child (neither running
// nor a zombie) and fails the test if it does not.
func WaitReaped(t testing.TB, pid int, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); IsChild(pid); {
		if time.Now().After(deadline) {
			t.Errorf("worker %d left behind (state %s)", pid, ChildState(pid))
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ChildPids returns the pids of this test binary's children whose command
// name is comm and that have not exited (zombies are left out): the
// workers a chaos test may signal. Guard each signal with ChildState, as
// a pid may be reaped and reused meanwhile.
func ChildPids(comm string) []int {
	var out []int
	eachChild(func(s, state string) {
		open := strings.IndexByte(s, '(')
		if state == "Z" || open < 0 || s[open+1:strings.LastIndexByte(s, ')')] != comm {
			return
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(s[:open])); err == nil {
			out = append(out, pid)
		}
	})
	return out
}

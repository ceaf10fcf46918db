package spawn

import "sync"

// Group is the process group a child leads (one started with Setpgid).
// Its id is the child's pid, which names the group only until the child is
// reaped: after that it may name an unrelated group. So the group is
// signalled only until the leader's exit is recorded (Exited), which comes
// before the leader is reaped. Off Linux it is never signalled.
type Group struct {
	mu   sync.Mutex
	pgid int
	gone bool // Exited was called
}

// NewGroup returns the process group that the child pid leads.
func NewGroup(pid int) *Group { return &Group{pgid: pid} }

// Kill sends SIGKILL to every process in the group, unless the leader's
// exit has been recorded.
func (g *Group) Kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.gone {
		killGroup(g.pgid)
	}
}

// Exited records the leader's exit; the group is not signalled after it.
// Call it before reaping the leader. unreaped says that the leader's exit
// was seen and it is not reaped yet (AwaitExit returned true): what is
// left in the group (a helper the leader started) is killed then.
func (g *Group) Exited(unreaped bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if unreaped && !g.gone {
		killGroup(g.pgid)
	}
	g.gone = true
}

// ObserveGroupKills has f called, for a test, before each signal to a
// group (with the group's id) until the returned function is called.
func ObserveGroupKills(f func(pgid int)) (stop func()) {
	orig := killGroup
	killGroup = func(pgid int) {
		f(pgid)
		orig(pgid)
	}
	return func() { killGroup = orig }
}

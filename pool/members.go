package pool

// This file holds the members of the pool and their states: idle (on the
// stack), busy (checked out), gone (dropped); every transition happens
// under Pool.mu.

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

type memberState uint8

const (
	stIdle memberState = iota + 1
	stBusy             // checked out (or being configured for a checkout)
	stGone             // dropped by the pool; its process is being or has been stopped
)

// member is one worker of the pool.
type member struct {
	id      uint64
	proc    *worker.Process
	pid     int
	retired chan struct{} // closed when the pool drops the member; stops its watcher
	uses    atomic.Int64  // checkouts so far
	sess    atomic.Pointer[session.Session]

	// Guarded by Pool.mu.
	state     memberState
	dead      bool // the process exited while checked out
	idleSince time.Time
}

func exited(p *worker.Process) bool {
	select {
	case <-p.Exited():
		return true
	default:
		return false
	}
}

// markBusyLocked hands m to a checkout.
func (p *Pool) markBusyLocked(m *member) {
	m.state = stBusy
	p.busy[m] = struct{}{}
	p.busyAlive++
}

// putLocked makes m available: to the first waiting checkout, else idle.
// spawned says m was just started (rather than returned by a session).
func (p *Pool) putLocked(m *member, spawned bool) {
	if len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters[0] = nil
		p.waiters = p.waiters[1:]
		p.markBusyLocked(m)
		w.ch <- handoff{m: m, spawned: spawned}
		return
	}
	m.state = stIdle
	m.idleSince = time.Now()
	p.idle = append(p.idle, m)
}

// dropLocked removes m from the pool. It reports false if it was gone
// already.
func (p *Pool) dropLocked(m *member) bool {
	switch m.state {
	case stIdle:
		for i, x := range p.idle {
			if x == m {
				p.idle = append(p.idle[:i], p.idle[i+1:]...)
				break
			}
		}
	case stBusy:
		delete(p.busy, m)
		if !m.dead {
			p.busyAlive--
		}
		p.drainedLocked()
	case stGone:
		return false
	}
	m.state = stGone
	close(m.retired)
	return true
}

// adoptLocked makes a started worker a member and watches its exit.
func (p *Pool) adoptLocked(proc *worker.Process) *member {
	p.nextID++
	m := &member{id: p.nextID, proc: proc, pid: proc.Pid(), retired: make(chan struct{})}
	p.wg.Add(1)
	go p.watch(m)
	return m
}

// watch notices the exit of a member's process at once: an idle worker is
// removed and replaced, a busy one stops counting as live (and is replaced)
// while its session learns of the loss on its own.
func (p *Pool) watch(m *member) {
	defer p.wg.Done()
	select {
	case <-m.proc.Exited():
	case <-m.retired:
		return
	}
	var a after
	p.mu.Lock()
	switch m.state {
	case stIdle:
		p.lostIdleLocked(m, &a)
	case stBusy:
		if !m.dead {
			m.dead = true
			p.busyAlive--
			p.owed++
			a.kick = true
		}
	}
	p.mu.Unlock()
	p.finish(&a)
}

// lostIdleLocked handles a worker found dead while idle: a crash and a
// failure toward the restart cap.
func (p *Pool) lostIdleLocked(m *member, a *after) {
	p.dropLocked(m)
	err := newIdleExitError(m, "")
	p.crashLocked(m, exitReason(m.proc), err, a)
	p.failLocked(time.Now(), err, a)
	p.owed++
	a.kick = true
	a.procs = append(a.procs, m.proc)
}

func (p *Pool) crashLocked(m *member, reason Reason, err error, a *after) {
	p.st.crashes[reason]++
	a.evs = append(a.evs, Event{Kind: EventCrash, WorkerID: m.id, Pid: m.pid, Reason: reason, Err: err})
	a.logs = append(a.logs, func() {
		p.log.Info("monty pool: worker lost", slog.Uint64("id", m.id), slog.Int("pid", m.pid),
			slog.String("reason", string(reason)), slog.Any("error", err))
	})
}

func (p *Pool) destroyedLocked(m *member, reason Reason, a *after) {
	p.st.destroyed++
	a.evs = append(a.evs, Event{Kind: EventDestroy, WorkerID: m.id, Pid: m.pid, Reason: reason})
}

// drainedLocked tells a closing pool waiting for its checkouts that none
// is left (local or remote).
func (p *Pool) drainedLocked() {
	if p.drained != nil && len(p.busy) == 0 && len(p.remote) == 0 {
		close(p.drained)
		p.drained = nil
	}
}

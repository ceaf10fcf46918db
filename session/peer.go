package session

import (
	"context"

	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/worker"
)

// Lifecycle is what a session needs from whatever runs its worker besides
// the frames: a way to stop it at once, a way to stop it gracefully, and
// the classification of a lost connection into a typed error. A process
// ([*worker.Process]), a WebSocket connection or an in-process Go child
// each implement it in their own terms.
//
// Implementations must allow Kill and Close from any goroutine at any
// time, including while a ReadFrame on the connection is blocked.
type Lifecycle interface {
	// Kill stops the worker at once; a blocked ReadFrame must then return.
	Kill() error
	// Close stops the worker gracefully (bounded by ctx) and releases the
	// connection. It is idempotent.
	Close(ctx context.Context) error
	// Lost classifies the end of the connection, waiting briefly for the
	// worker to finish going away. The error should say whether the
	// session survives (a SessionSurvives method), which for a lost
	// worker is false. For a process it is a *worker.CrashError or a
	// *worker.MemoryLimitError.
	Lost(l transport.Loss) error
}

// Peer is one worker as a session sees it: a frame connection and its
// lifecycle. [*worker.Process] is a Peer; so is anything else that speaks
// the protocol over a [transport.Conn].
//
// A Peer may also have a Pid() int method (a local process); the session
// reports it from [Session.Pid].
//
// A session uses its Conn from the goroutine running the turn, one call
// at a time, and calls Kill and Close from any goroutine (see Lifecycle).
type Peer interface {
	Conn() transport.Conn
	Lifecycle
}

// Launcher starts workers for [Start] and [Negotiate]: one per call, ready
// to be configured. A negotiation that downgrades starts a second one.
//
// Launchers must be safe for concurrent use.
type Launcher interface {
	Launch(ctx context.Context) (Peer, error)
}

// LauncherFunc adapts a function to a Launcher.
//
// It must be safe for concurrent use, as every Launcher.
type LauncherFunc func(ctx context.Context) (Peer, error)

// Launch calls f.
func (f LauncherFunc) Launch(ctx context.Context) (Peer, error) { return f(ctx) }

// ProcessLauncher starts `monty subprocess` children with worker.Start.
// Negotiated versions are cached per binary (its path, size and
// modification time).
//
// A ProcessLauncher is plain data, safe for concurrent use.
type ProcessLauncher struct {
	// Worker configures each child (binary, environment, stderr capture,
	// kill grace, frame cap).
	Worker worker.Config
}

// Binary returns the configured worker executable (empty: resolved by
// worker.ResolveBinary when Start uses the launcher).
func (l ProcessLauncher) Binary() string { return l.Worker.Binary }

// Launch starts one child.
func (l ProcessLauncher) Launch(ctx context.Context) (Peer, error) {
	p, err := worker.Start(ctx, l.Worker)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Launch says how [Start] and [Negotiate] get a worker: the launch
// settings, apart from the sandbox options of [Config] (which Attach and
// pool checkouts take alone). The zero value starts the resolved worker
// binary and negotiates the protocol version.
//
// A Launch is plain data, safe to share when its Launcher is.
type Launch struct {
	// Launcher starts the workers; nil means ProcessLauncher{}.
	Launcher Launcher
	// ProtocolVersion pins the protocol version; 0 negotiates (the highest
	// version both sides speak, remembered per binary for processes).
	ProtocolVersion uint32
}

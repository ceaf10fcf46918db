package remoteclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport/ws"
)

// ErrNotResumed reports a ShutdownDump that could not be resumed: no dump,
// a Load the new replica refused, or a restored worker that did not
// re-announce the interrupted suspension.
var ErrNotResumed = errors.New("remoteclient: session not resumed after ShutdownDump")

// Resuming is a session that survives server drains: when a request is
// answered with a ShutdownDump carrying a dump (the request did not run),
// it dials another replica, sends the same Configure, Loads the dump,
// checks that a suspended session re-announced the same call, and re-sends
// the request there.
//
// A Resuming session is used by one goroutine at a time.
type Resuming struct {
	// Pick returns the URL of a replica to dial (called for every dial).
	Pick func() string
	// Version is the protocol version spoken.
	Version uint32
	// Configure is sent first on every connection.
	Configure *message.Configure
	// Dial configures the WebSocket dials.
	Dial ws.DialOptions
	// DialAttempts bounds the dials of one (re)connection; 0 means 100.
	DialAttempts int

	// Resumed counts successful resumes.
	Resumed int

	c    *Client
	last message.Event // the last turn-ending event (a suspension to re-announce)
}

// Open dials a replica and configures the session.
func (r *Resuming) Open(ctx context.Context) error {
	for {
		if err := r.connect(ctx); err != nil {
			return err
		}
		turn, err := r.c.Do(ctx, r.Configure)
		if err != nil {
			return err
		}
		switch b := turn.Event.Body.(type) {
		case *message.Ok:
			return nil
		case *message.ShutdownDump:
			r.c.Close() // draining before we configured: go elsewhere
			continue
		default:
			return fmt.Errorf("remoteclient: Configure answered %s", b.EventKind())
		}
	}
}

// connect dials replicas until one accepts, backing off on refusals.
func (r *Resuming) connect(ctx context.Context) error {
	if r.c != nil {
		r.c.Close()
		r.c = nil
	}
	attempts := r.DialAttempts
	if attempts <= 0 {
		attempts = 100
	}
	wait := 10 * time.Millisecond
	var err error
	for range attempts {
		var c *Client
		c, err = Dial(ctx, r.Pick(), r.Version, r.Dial)
		if err == nil {
			r.c = c
			return nil
		}
		var de *ws.DialError
		if !errors.As(err, &de) || ctx.Err() != nil {
			return err
		}
		if de.StatusCode == 401 || de.StatusCode == 403 {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, 500*time.Millisecond)
	}
	return err
}

// Do sends req, resuming on another replica after a ShutdownDump.
func (r *Resuming) Do(ctx context.Context, req message.Request) (*Turn, error) {
	for {
		turn, err := r.c.Do(ctx, req)
		if err != nil {
			return nil, err
		}
		sd, ok := turn.Event.Body.(*message.ShutdownDump)
		if !ok {
			r.last = turn.Event.Body
			return turn, nil
		}
		if sd.Dump == nil {
			return nil, fmt.Errorf("%w: the ShutdownDump carries no dump", ErrNotResumed)
		}
		if err := r.restore(ctx, *sd.Dump); err != nil {
			return nil, err
		}
		r.Resumed++
	}
}

// restore moves the session to another replica.
func (r *Resuming) restore(ctx context.Context, dump []byte) error {
	if err := r.Open(ctx); err != nil {
		return err
	}
	turn, err := r.c.Do(ctx, &message.Load{State: dump})
	if err != nil {
		return err
	}
	ev := turn.Event.Body
	if e, ok := ev.(*message.Error); ok {
		return fmt.Errorf("%w: Load refused: %s", ErrNotResumed, e.Exception.Msg())
	}
	if !sameSuspension(r.last, ev) {
		return fmt.Errorf("%w: the restored worker answered %s, not the interrupted suspension", ErrNotResumed, ev.EventKind())
	}
	return nil
}

// sameSuspension reports whether the Load reply matches the session's
// state before the drain: the same call re-announced, or idle.
func sameSuspension(before, after message.Event) bool {
	switch b := before.(type) {
	case *message.FunctionCall:
		a, ok := after.(*message.FunctionCall)
		return ok && a.CallID == b.CallID && a.FunctionName == b.FunctionName
	case *message.OsCall:
		a, ok := after.(*message.OsCall)
		return ok && a.CallID == b.CallID && a.Op == b.Op
	case *message.NameLookup:
		a, ok := after.(*message.NameLookup)
		return ok && a.Name == b.Name
	case *message.ResolveFutures:
		_, ok := after.(*message.ResolveFutures)
		return ok
	}
	_, idle := after.(*message.Ok)
	return idle
}

// Close ends the session.
func (r *Resuming) Close() error {
	if r.c == nil {
		return nil
	}
	return r.c.Close()
}

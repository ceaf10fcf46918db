package child

import (
	"context"
	"errors"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// versioned is a scripted engine that stands in for a worker of one
// protocol version.
type versioned struct {
	*scripted
	v     uint32
	err   error
	calls int
	state string // the state InitialVersion was given
}

func (e *versioned) InitialVersion(_ context.Context, state []byte) (uint32, error) {
	e.calls++
	e.state = string(state)
	return e.v, e.err
}

func startVersioned(t *testing.T, parentVersion, engineVersion uint32, err error, opts Options) (*parent, *versioned) {
	t.Helper()
	conn := newChanConn()
	eng := &versioned{scripted: &scripted{gate: make(chan struct{})}, v: engineVersion, err: err}
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), conn, eng, opts) }()
	t.Cleanup(func() { conn.Close(); <-done })
	return &parent{t: t, conn: conn, eng: eng.scripted, codec: mustCodec(t, parentVersion), result: done}, eng
}

// A Load before any Configure is answered in the version of the worker the
// engine stands in for, so a protocol-2 parent can read the reply of a
// two-version child relaying to a protocol-2 worker.
func TestInitialVersionBeforeConfigure(t *testing.T) {
	for _, v := range []uint32{protocol.Version2, protocol.Version} {
		p, eng := startVersioned(t, v, v, nil, Options{})
		ev := p.do(&message.Load{State: []byte("dump:")})
		mustKind(t, ev, message.KindOk)
		if ev.RestoredScriptName == nil || *ev.RestoredScriptName != "restored.py" {
			t.Fatalf("v%d: restored script name %v", v, ev.RestoredScriptName)
		}
		if ev.MaxSuspensions == nil || *ev.MaxSuspensions != 7 {
			t.Fatalf("v%d: max_suspensions %v", v, ev.MaxSuspensions)
		}
		// Settled once: later requests keep the version.
		if got := describe(p.feed("x")); got != "Complete" {
			t.Fatalf("v%d: feed after Load: %s", v, got)
		}
		if eng.calls != 1 || eng.state != "dump:" {
			t.Fatalf("v%d: InitialVersion called %d times, last with %q", v, eng.calls, eng.state)
		}
	}
}

// Configure settles the version: InitialVersion is not asked.
func TestInitialVersionNotAskedAfterConfigure(t *testing.T) {
	p, eng := startVersioned(t, protocol.Version2, protocol.Version, nil, Options{})
	p.configure()
	mustKind(t, p.do(&message.Reset{}), message.KindOk)
	ev := p.do(&message.Load{State: []byte("dump:")})
	mustKind(t, ev, message.KindOk)
	if eng.calls != 0 {
		t.Fatalf("InitialVersion called %d times after Configure", eng.calls)
	}
}

// A version the child does not serve, or an engine error, leaves the
// default (the highest served version).
func TestInitialVersionFallback(t *testing.T) {
	p, eng := startVersioned(t, protocol.Version, protocol.Version2, nil, Options{Versions: []uint32{protocol.Version}})
	mustKind(t, p.do(&message.Load{State: []byte("dump:")}), message.KindOk)
	if eng.calls != 1 {
		t.Fatalf("InitialVersion called %d times", eng.calls)
	}
	p, _ = startVersioned(t, protocol.Version, protocol.Version2, errors.New("no worker"), Options{})
	mustKind(t, p.do(&message.Load{State: []byte("dump:")}), message.KindOk)
}

// A Load that carries an unknown field at a number reserved for arms
// decodes as a Load (decoders skip unknown fields) and settles the version
// like any first Load. pickInitial classified the frame with peek.Request,
// which calls such a frame opaque: the version stayed unsettled, replies
// went out in the default version, and a later Load would have switched
// the codec mid-session.
func TestInitialVersionSeesTheDecodedLoad(t *testing.T) {
	p, eng := startVersioned(t, protocol.Version2, protocol.Version2, nil, Options{})
	body, err := p.codec.AppendRequest(nil, &message.ParentRequest{Body: &message.Load{State: []byte("dump:")}})
	if err != nil {
		t.Fatal(err)
	}
	body = append(body, 0x62, 0x00) // field 12, length-delimited, empty
	mustKind(t, p.raw(body), message.KindOk)
	if eng.calls != 1 {
		t.Fatalf("InitialVersion called %d times for the first Load", eng.calls)
	}
	mustKind(t, p.do(&message.Reset{}), message.KindOk)
	mustKind(t, p.do(&message.Load{State: []byte("dump:")}), message.KindOk)
	if eng.calls != 1 {
		t.Fatalf("InitialVersion called %d times after the second Load", eng.calls)
	}
}

package server

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gomonty/monty/message"
)

func TestSigner(t *testing.T) {
	if _, err := NewSigner([]byte("short"), nil); err == nil {
		t.Fatal("a 5-byte key was accepted")
	}
	if _, err := NewSigner(testKey, []byte("short")); err == nil {
		t.Fatal("a 5-byte previous key was accepted")
	}
	oldKey := []byte("old-key-0123456789")
	old, _ := NewSigner(oldKey, nil)
	cur, _ := NewSigner(testKey, oldKey)
	dump := []byte("MONTY\x00\x01 some state")
	lim := DumpLimits{MaxDurationMicros: 1, MaxMemoryBytes: 2, MaxRecursionDepth: 3}
	env := old.Sign(dump, lim)
	if len(env) != headerLen+len(dump) || !bytes.HasPrefix(env, []byte("MONTYSIG\x02")) {
		t.Fatalf("envelope %q", env)
	}
	for _, s := range []*Signer{old, cur} {
		got, gotLim, err := s.Open(env)
		if err != nil || !bytes.Equal(got, dump) || gotLim != lim {
			t.Fatalf("Open: %q %+v %v", got, gotLim, err)
		}
	}
	if _, _, err := old.Open(cur.Sign(dump, lim)); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("a dump signed by a newer key: %v", err)
	}
	// Every byte is covered, the limits too.
	for i := range env {
		bad := bytes.Clone(env)
		bad[i] ^= 0x20
		if _, _, err := cur.Open(bad); err == nil {
			t.Fatalf("flipping byte %d went unnoticed", i)
		}
	}
	for _, bad := range [][]byte{nil, dump, env[:headerLen-1], append([]byte("MONTYSIG\x01"), env[9:]...), append([]byte("MONTYSIG\x03"), env[9:]...)} {
		if _, _, err := cur.Open(bad); !errors.Is(err, ErrUnsigned) {
			t.Fatalf("%q: %v, want ErrUnsigned", bad, err)
		}
	}
	// An empty dump still carries a MAC.
	if got, _, err := cur.Open(cur.Sign(nil, lim)); err != nil || len(got) != 0 {
		t.Fatalf("empty dump: %q %v", got, err)
	}
}

func TestDumpLimitsWithin(t *testing.T) {
	ceil := DumpLimits{MaxDurationMicros: 10, MaxMemoryBytes: 10, MaxRecursionDepth: 10}
	for _, c := range []struct {
		l    DumpLimits
		want bool
	}{
		{ceil, true},
		{DumpLimits{1, 1, 1}, true},
		{DumpLimits{11, 1, 1}, false},
		{DumpLimits{1, 11, 1}, false},
		{DumpLimits{1, 1, 11}, false},
		{DumpLimits{0, 1, 1}, false}, // 0: no limit
		{DumpLimits{}, false},
	} {
		if got := c.l.Within(ceil); got != c.want {
			t.Errorf("%+v within %+v: %v", c.l, ceil, got)
		}
	}
}

func TestAdmission(t *testing.T) {
	a := newAdmission(3, 2)
	r1, _ := a.acquire("x")
	r2, _ := a.acquire("x")
	if _, why := a.acquire("x"); why != ReasonClientQuota {
		t.Fatalf("third x: %q", why)
	}
	r3, _ := a.acquire("y")
	if _, why := a.acquire("z"); why != ReasonCapacity {
		t.Fatalf("fourth session: %q", why)
	}
	r1.done()
	r1.done() // idempotent
	if n, clients := a.count(); n != 2 || clients != 2 {
		t.Fatalf("count %d %d", n, clients)
	}
	done := a.drain()
	if _, why := a.acquire("z"); why != ReasonDraining {
		t.Fatalf("while draining: %q", why)
	}
	r2.done()
	// A freed slot gives its quota back at once, but the drain waits for
	// its handler.
	r3.free()
	r3.free()
	if n, clients := a.count(); n != 0 || clients != 0 {
		t.Fatalf("count after free %d %d", n, clients)
	}
	select {
	case <-done:
		t.Fatal("drained with a handler left")
	default:
	}
	r3.done()
	<-done
	if a2 := newAdmission(-1, -1); a2.max >= 0 {
		t.Fatal("no cap")
	} else {
		for range 1000 {
			if _, why := a2.acquire("x"); why != "" {
				t.Fatal(why)
			}
		}
	}
}

func TestRefusalTable(t *testing.T) {
	for _, c := range []struct {
		k                 message.RequestKind
		known, configured bool
		refused           bool
	}{
		{message.KindConfigure, true, false, false},
		{message.KindFeed, true, false, false}, // the child refuses it with the worker's text
		{message.KindLoad, true, false, false}, // the policy refuses it
		{0, false, false, false},
		{message.KindConfigure, true, true, true},
		{message.KindReset, true, false, true},
		{message.KindReset, true, true, true},
		{message.KindShutdown, true, false, true},
		{message.KindShutdown, true, true, true},
		{message.KindFeed, true, true, false},
		{message.KindLoad, true, true, false},
		{message.KindDump, true, true, false},
		{message.KindAbortFeed, true, true, false},
		{0, false, true, false}, // the child answers "request has no kind" itself
	} {
		if got := refusal(c.k, c.known, c.configured) != ""; got != c.refused {
			t.Errorf("%v known=%v configured=%v: refused %v", c.k, c.known, c.configured, got)
		}
	}
}

package relay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/codec/codecv5"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
)

// envelope5 is a relay protocol-5 dump as dump5 writes it, around inner.
func envelope5(tb testing.TB, c *message.Configure, feedMicros uint64, inner []byte) []byte {
	b, err := codecv5.AppendRequest(nil, &message.ParentRequest{Body: c})
	if err != nil {
		tb.Fatal(err)
	}
	out := append([]byte(nil), dumpMagic5...)
	out = binary.AppendUvarint(out, uint64(len(b)))
	out = append(out, b...)
	out = binary.AppendUvarint(out, feedMicros)
	return append(out, inner...)
}

// FuzzSplit5 reads a Load's state as the relay does before any worker
// sees it: the state is the parent's to craft. split5 never panics; it
// fails only with a *child.Violation; a state without the relay's magic
// comes back unchanged; settings it returns have limits and a policy that
// passes Validate, and the clock they ask for builds or is refused with a
// *child.Violation.
func FuzzSplit5(f *testing.F) {
	us := uint64(1500)
	name := "X"
	for _, c := range []*message.Configure{
		{ProtocolVersion: protocol.Version5, Limits: &message.ResourceLimits{MaxFeedDurationMicros: &us}},
		{ProtocolVersion: protocol.Version5, Limits: &message.ResourceLimits{MaxTotalSleepMicros: &us},
			OsPolicy: &message.OsPolicy{Clock: message.ClockFixed, Fixed: message.FixedDateTime{UnixSeconds: 1 << 40, Microsecond: 7},
				TimeZone: &message.SandboxTimeZone{Kind: message.ZoneFixed, Fixed: value.TimeZone{Offset: -3600, Name: &name}}}},
		{ProtocolVersion: protocol.Version5, Limits: &message.ResourceLimits{},
			OsPolicy: &message.OsPolicy{TimeZone: &message.SandboxTimeZone{Kind: message.ZoneNamed, Name: "Europe/Paris"}}},
		{ProtocolVersion: protocol.Version5, Limits: &message.ResourceLimits{},
			OsPolicy: &message.OsPolicy{TimeZone: &message.SandboxTimeZone{Kind: message.ZoneNamed, Name: "../../etc/passwd"}}},
	} {
		env := envelope5(f, c, 1<<63, []byte("MONTY\x00\x01\x00"))
		f.Add(env)
		f.Add(bytes.Replace(env, dumpMagic5, dumpMagic5Old, 1))
	}
	f.Add([]byte("MONTY\x00\x01\x00"))
	f.Add(append(append([]byte(nil), dumpMagic5...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01))
	f.Fuzz(func(t *testing.T, state []byte) {
		inner, saved, err := split5(state)
		if err != nil {
			var v *child.Violation
			if !errors.As(err, &v) || inner != nil || saved != nil {
				t.Fatalf("split5 = %q, %v, %T %v", inner, saved, err, err)
			}
			return
		}
		if saved == nil {
			if !bytes.Equal(inner, state) {
				t.Fatalf("a state without settings came back changed")
			}
			return
		}
		if !bytes.HasPrefix(state, dumpMagic5) && !bytes.HasPrefix(state, dumpMagic5Old) {
			t.Fatalf("settings read from a state without the magic")
		}
		if !bytes.HasSuffix(state, inner) {
			t.Fatalf("the inner dump is not the state's tail")
		}
		if saved.Limits == nil || saved.OsPolicy.Validate() != nil || saved.feed < 0 {
			t.Fatalf("settings %+v, feed %v", saved.Configure, saved.feed)
		}
		clock, err := clock5(saved.OsPolicy)
		if err != nil {
			var v *child.Violation
			if !errors.As(err, &v) {
				t.Fatalf("clock5: %T %v", err, err)
			}
			return
		}
		if clock != nil {
			clock.Close()
		}
	})
}

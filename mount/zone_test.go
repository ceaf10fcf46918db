package mount

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// TestZoneLocationForNaiveNow: under a protocol-5 OsPolicy with
// datetime=call_host the worker sends naive datetime.now() and
// date.today() to the parent, and the sandbox's local zone is the
// policy's timezone (absent: UTC). ZoneLocation turns that zone into the
// Options.Location the answers use, so a Tokyo sandbox sees Tokyo's wall
// clock whoever reads the clock; names the child would refuse are errors.
func TestZoneLocationForNaiveNow(t *testing.T) {
	at := time.Date(2025, 1, 2, 23, 4, 5, 0, time.UTC)
	naive := func(z *message.SandboxTimeZone) (value.Date, uint32) {
		t.Helper()
		loc, err := ZoneLocation(z)
		if err != nil {
			t.Fatalf("ZoneLocation(%+v): %v", z, err)
		}
		tbl := envTable(t, Options{Clock: FixedClock(at), Location: loc})
		dt := rootOf(t, doCall(t, tbl, &message.OsCall{Op: message.OpDateTimeNow})).Ext().(*value.DateTime)
		if dt.Offset != nil || dt.TZName != nil {
			t.Fatalf("naive now carries a zone: %+v", dt)
		}
		d := rootOf(t, doCall(t, tbl, &message.OsCall{Op: message.OpDateToday})).Ext().(*value.Date)
		if d.Day != dt.Day {
			t.Fatalf("today %+v and now %+v disagree", d, dt)
		}
		return *d, dt.Hour
	}
	name := "X"
	for _, c := range []struct {
		z    *message.SandboxTimeZone
		day  uint32
		hour uint32
	}{
		{nil, 2, 23},
		{&message.SandboxTimeZone{}, 2, 23},
		{&message.SandboxTimeZone{Kind: message.ZoneUTC}, 2, 23},
		{&message.SandboxTimeZone{Kind: message.ZoneNamed, Name: "Asia/Tokyo"}, 3, 8},
		{&message.SandboxTimeZone{Kind: message.ZoneFixed, Fixed: value.TimeZone{Offset: -5 * 3600, Name: &name}}, 2, 18},
	} {
		if d, h := naive(c.z); d.Day != c.day || h != c.hour {
			t.Errorf("zone %+v: day %d hour %d, want %d %d", c.z, d.Day, h, c.day, c.hour)
		}
	}
	for _, z := range []*message.SandboxTimeZone{
		{Kind: message.ZoneNamed, Name: "No/Such_Zone"},
		{Kind: message.ZoneNamed, Name: ""},
		{Kind: message.ZoneNamed, Name: "Local"},
		{Kind: message.ZoneNamed, Name: "localtime"},
		{Kind: message.ZoneNamed, Name: "right/UTC"},
		{Kind: message.ZoneFixed, Fixed: value.TimeZone{Offset: 86400}},
		{Kind: 9},
	} {
		if loc, err := ZoneLocation(z); err == nil || !errors.Is(err, message.ErrInvalidPolicy) {
			t.Errorf("ZoneLocation(%+v) = %v, %v; want an ErrInvalidPolicy", z, loc, err)
		}
	}
}

// TestNaiveNowTakesTheSessionsZone: a table with no Options.Location
// answers naive datetime.now() and date.today() in the zone of the
// OsPolicy its call's context carries (a session passes its own), so one
// table shared by a Tokyo session and a UTC session answers each in its
// own zone; without a policy it answers in UTC, and an explicit Location
// wins over the context's.
func TestNaiveNowTakesTheSessionsZone(t *testing.T) {
	at := time.Date(2025, 1, 2, 23, 4, 5, 0, time.UTC)
	tokyo := &message.OsPolicy{TimeZone: &message.SandboxTimeZone{Kind: message.ZoneNamed, Name: "Asia/Tokyo"}}
	bad := &message.OsPolicy{TimeZone: &message.SandboxTimeZone{Kind: message.ZoneNamed, Name: "No/Such_Zone"}}
	fixed := &message.OsPolicy{TimeZone: &message.SandboxTimeZone{Kind: message.ZoneFixed, Fixed: value.TimeZone{Offset: 3600}}}
	now := func(tbl *Table, p *message.OsPolicy) (day, hour uint32) {
		t.Helper()
		ctx := message.ContextWithPolicy(context.Background(), p)
		rc, err := tbl.HandleOS(ctx, &message.OsCall{Op: message.OpDateTimeNow})
		if err != nil {
			t.Fatal(err)
		}
		dt := rootOf(t, rc).Ext().(*value.DateTime)
		rc, err = tbl.HandleOS(ctx, &message.OsCall{Op: message.OpDateToday})
		if err != nil {
			t.Fatal(err)
		}
		if d := rootOf(t, rc).Ext().(*value.Date); d.Day != dt.Day || dt.Offset != nil {
			t.Fatalf("today %+v and naive now %+v disagree", d, dt)
		}
		return dt.Day, dt.Hour
	}
	shared := envTable(t, Options{Clock: FixedClock(at)})
	for _, c := range []struct {
		name      string
		tbl       *Table
		p         *message.OsPolicy
		day, hour uint32
	}{
		{"tokyo session", shared, tokyo, 3, 8},
		{"no policy", shared, nil, 2, 23},
		{"tokyo again (cached)", shared, tokyo, 3, 8},
		{"fixed +1", shared, fixed, 3, 0},
		{"a zone no child accepts", shared, bad, 2, 23},
		{"explicit Location wins", envTable(t, Options{Clock: FixedClock(at), Location: time.FixedZone("", -5*3600)}), tokyo, 2, 18},
	} {
		if d, h := now(c.tbl, c.p); d != c.day || h != c.hour {
			t.Errorf("%s: day %d hour %d, want %d %d", c.name, d, h, c.day, c.hour)
		}
	}
}

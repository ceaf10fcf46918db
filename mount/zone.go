package mount

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gomonty/monty/message"
)

// ZoneLocation returns the Location for a protocol-5 session's local
// timezone, its OsPolicy.TimeZone: time.UTC for nil, an unset zone or
// UTC; the IANA zone for a named one; a fixed zone, carrying its name,
// for a fixed offset. Under datetime=call_host the worker sends naive
// datetime.now() and date.today() to the parent, which must answer them
// in that zone (the worker's own clock uses it under the other datetime
// modes). A Table with no Options.Location does so itself, from the
// policy its calls' context carries (a session passes its own).
//
// Names a child refuses are errors matching message.ErrInvalidPolicy: a
// name not in the tz database (the host's, or the one embedded in the
// program with time/tzdata), and the names time.LoadLocation accepts that
// no tz database holds or that mean the host's own zone ("", "Local",
// "localtime", "posixrules", the "posix/" and "right/" trees); so are an
// offset outside a day and an unknown kind.
func ZoneLocation(z *message.SandboxTimeZone) (*time.Location, error) {
	if z == nil {
		return time.UTC, nil
	}
	switch z.Kind {
	case message.ZoneUnset, message.ZoneUTC:
		return time.UTC, nil
	case message.ZoneNamed:
		n := z.Name
		if n == "" || n == "Local" || n == "localtime" || n == "posixrules" ||
			strings.HasPrefix(n, "posix/") || strings.HasPrefix(n, "right/") {
			return nil, fmt.Errorf("mount: %w: timezone %q is not a tz database zone", message.ErrInvalidPolicy, n)
		}
		loc, err := time.LoadLocation(n)
		if err != nil {
			return nil, fmt.Errorf("mount: %w: timezone %q is not in the tz database", message.ErrInvalidPolicy, n)
		}
		return loc, nil
	case message.ZoneFixed:
		if err := (&message.OsPolicy{TimeZone: z}).Validate(); err != nil {
			return nil, fmt.Errorf("mount: %w", err)
		}
		name := ""
		if z.Fixed.Name != nil {
			name = *z.Fixed.Name
		}
		return time.FixedZone(name, int(z.Fixed.Offset)), nil
	}
	return nil, fmt.Errorf("mount: %w: unknown timezone kind %d", message.ErrInvalidPolicy, z.Kind)
}

// zone is the Location of naive dates and datetimes for one call:
// Options.Location when set; else the zone of the OsPolicy ctx carries (a
// session passes its own: message.PolicyFromContext); else UTC. A zone
// ZoneLocation refuses (which no child accepts either) reads as UTC.
func (t *Table) zone(ctx context.Context) *time.Location {
	if t.loc != nil {
		return t.loc
	}
	p := message.PolicyFromContext(ctx)
	if p == nil || p.TimeZone == nil {
		return time.UTC
	}
	z := p.TimeZone
	named := z.Kind == message.ZoneNamed
	if named {
		if loc, ok := namedZones.Load(z.Name); ok {
			return loc.(*time.Location)
		}
	}
	loc, err := ZoneLocation(z)
	if err != nil {
		return time.UTC
	}
	if named {
		// Only names the tz database holds are kept: a few hundred at most.
		namedZones.Store(z.Name, loc)
	}
	return loc
}

// namedZones caches the named zones zone has loaded (time.LoadLocation
// reads the database on every call).
var namedZones sync.Map // string -> *time.Location

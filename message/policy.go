package message

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/value"
)

// SourceRange is where a suspension happened in the sandbox's source
// (protocol 5). Filename is "<python-input-N>" for the Nth feed or
// "<string>" for eval/exec; Start and End are UTF-8 byte offsets into that
// source, End exclusive. A child that does not send a position is reported
// as the empty range at offset 0 (see [PositionOrZero]).
type SourceRange struct {
	Filename string
	Start    uint32
	End      uint32
}

// PositionOrZero returns *p, or the empty range at offset 0 when p is nil.
func PositionOrZero(p *SourceRange) SourceRange {
	if p == nil {
		return SourceRange{}
	}
	return *p
}

// Persistence tells a relay whether to keep a session (protocol 5).
// Children ignore it.
type Persistence uint32

// The persistence modes. Unknown values are kept as they are.
const (
	PersistenceUnspecified Persistence = 0
	// PersistenceEphemeral: never stored, no session id.
	PersistenceEphemeral Persistence = 1
	// PersistenceStored: parked on idle, drain or disconnect, loadable by
	// id.
	PersistenceStored Persistence = 2
)

// ClockSource says where the sandbox's wall clock comes from. The numbers
// are the OsPolicy.datetime arm numbers.
type ClockSource uint8

// The clock sources.
const (
	// ClockDefault: the arm is unset, which means ClockSystem.
	ClockDefault ClockSource = 0
	// ClockSystem: the child's own clock.
	ClockSystem ClockSource = 1
	// ClockCallHost: every clock read suspends on an OS call (the time,
	// date_today and date_time_now arms) that the parent answers.
	ClockCallHost ClockSource = 2
	// ClockFixed: a fixed instant, OsPolicy.Fixed.
	ClockFixed ClockSource = 3
)

// FixedDateTime is a fixed wall-clock instant.
type FixedDateTime struct {
	UnixSeconds int64
	// Microsecond must be at most 999999.
	Microsecond uint32
}

// ZoneKind says which arm of a [SandboxTimeZone] is set.
type ZoneKind uint8

// The timezone kinds; the numbers are the SandboxTimeZone.zone arm numbers.
const (
	ZoneUnset ZoneKind = 0
	ZoneUTC   ZoneKind = 1
	// ZoneNamed: an IANA name resolved from the child's tz database.
	ZoneNamed ZoneKind = 2
	// ZoneFixed: a fixed offset.
	ZoneFixed ZoneKind = 3
)

// SandboxTimeZone is the sandbox's local timezone.
type SandboxTimeZone struct {
	Kind ZoneKind
	// Name is the IANA name (ZoneNamed).
	Name string
	// Fixed is the fixed-offset zone (ZoneFixed); its offset lies in
	// -86399..=86399 seconds.
	Fixed value.TimeZone
}

// SleepKind says how the sandbox's sleeps behave. The numbers are the
// SleepMode.mode arm numbers.
type SleepKind uint8

// The sleep modes.
const (
	// SleepUnset: the arm is unset, which means SleepSystem with the
	// default cap.
	SleepUnset SleepKind = 0
	// SleepSystem: the child caps each delay and suspends on system_sleep;
	// the parent waits and charges the sleep budget.
	SleepSystem SleepKind = 1
	// SleepCallHost: sleeps go to the parent's OS handler, uncapped and
	// uncharged.
	SleepCallHost SleepKind = 2
	// SleepZero: nothing sleeps or suspends.
	SleepZero SleepKind = 3
)

// DefaultMaxSleep is the per-call cap of a system sleep when
// SleepMode.MaxMicros is nil.
const DefaultMaxSleep = 10 * time.Second

// SleepMode is how time.sleep and asyncio.sleep behave.
type SleepMode struct {
	Kind SleepKind
	// MaxMicros caps one system sleep (SleepSystem); nil means
	// DefaultMaxSleep.
	MaxMicros *uint64
}

// RandomSource says where the random module's seed comes from. The numbers
// are the OsPolicy.random_start arm numbers less 5.
type RandomSource uint8

// The random sources.
const (
	// RandomDefault: the arm is unset, which means RandomSystem.
	RandomDefault RandomSource = 0
	// RandomSystem: the child's own entropy.
	RandomSystem RandomSource = 1
	// RandomCallHost: the first draw suspends on an os.urandom call for
	// 2496 bytes.
	RandomCallHost RandomSource = 2
	// RandomSeeded: a fixed seed, OsPolicy.Seed.
	RandomSeeded RandomSource = 3
)

// SeedKind says which arm of a [RandomSeed] is set.
type SeedKind uint8

// The seed kinds; the numbers are the RandomSeed.value arm numbers.
const (
	SeedUnset SeedKind = 0
	// SeedInt: a Python int, Int as signed little-endian two's complement.
	SeedInt SeedKind = 1
	// SeedFloat: Float, which must be finite.
	SeedFloat SeedKind = 2
	SeedStr   SeedKind = 3
	SeedBytes SeedKind = 4
)

// RandomSeed is a seed for the random module.
type RandomSeed struct {
	Kind SeedKind
	// Int is the int seed, signed little-endian two's complement.
	Int   []byte
	Float float64
	Str   string
	Bytes []byte
}

// ProcessTime says what time.process_time() reports. The numbers are the
// OsPolicy.process_time arm numbers less 8.
type ProcessTime uint8

// The process-time modes.
const (
	// ProcessTimeDefault: the arm is unset, which means ProcessTimeZero.
	ProcessTimeDefault ProcessTime = 0
	ProcessTimeZero    ProcessTime = 1
	ProcessTimeElapsed ProcessTime = 2
)

// OsPolicy is how a protocol-5 child answers clocks, sleeps and entropy
// (Configure.OsPolicy). Every unset part means its default: the child's
// clock, UTC, system sleeps capped at 10 s, the child's entropy, and a zero
// process time.
type OsPolicy struct {
	Clock ClockSource
	// Fixed is the instant of ClockFixed.
	Fixed FixedDateTime
	// TimeZone is nil for UTC.
	TimeZone *SandboxTimeZone
	// Sleep is nil for system sleeps with the default cap.
	Sleep       *SleepMode
	Random      RandomSource
	Seed        RandomSeed
	ProcessTime ProcessTime
}

// ErrInvalidPolicy is matched (errors.Is) by every error of
// [OsPolicy.Validate].
var ErrInvalidPolicy = errors.New("invalid os policy")

func policyErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidPolicy, fmt.Sprintf(format, args...))
}

// Validate checks the rules a protocol-5 child applies to a policy on
// Configure: a fixed instant's microsecond at most 999999, a fixed zone's
// offset within a day, a finite float seed, and known kinds.
func (p *OsPolicy) Validate() error {
	if p == nil {
		return nil
	}
	if p.Clock > ClockFixed {
		return policyErr("unknown clock source %d", p.Clock)
	}
	if p.Clock == ClockFixed && p.Fixed.Microsecond > 999999 {
		return policyErr("fixed datetime microsecond %d is above 999999", p.Fixed.Microsecond)
	}
	if z := p.TimeZone; z != nil {
		switch z.Kind {
		case ZoneUnset, ZoneUTC, ZoneNamed:
		case ZoneFixed:
			if z.Fixed.Offset < -86399 || z.Fixed.Offset > 86399 {
				return policyErr("fixed timezone offset %d s is not within a day", z.Fixed.Offset)
			}
		default:
			return policyErr("unknown timezone kind %d", z.Kind)
		}
	}
	if s := p.Sleep; s != nil && s.Kind > SleepZero {
		return policyErr("unknown sleep mode %d", s.Kind)
	}
	if p.Random > RandomSeeded {
		return policyErr("unknown random source %d", p.Random)
	}
	if p.Random == RandomSeeded {
		switch p.Seed.Kind {
		case SeedInt, SeedStr, SeedBytes, SeedUnset:
		case SeedFloat:
			if math.IsNaN(p.Seed.Float) || math.IsInf(p.Seed.Float, 0) {
				return policyErr("float seed %v is not finite", p.Seed.Float)
			}
		default:
			return policyErr("unknown seed kind %d", p.Seed.Kind)
		}
	}
	if p.ProcessTime > ProcessTimeElapsed {
		return policyErr("unknown process time mode %d", p.ProcessTime)
	}
	return nil
}

// maxSleepSeconds is the largest delay that fits int64 nanoseconds.
const maxSleepSeconds = float64(math.MaxInt64) / 1e9

// CheckSleepSeconds checks a sleep delay as protocol 5 requires it on the
// wire: finite, at least 0, and within int64 nanoseconds. The error is a
// *value.InvalidError naming field.
func CheckSleepSeconds(field string, s float64) error {
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return valuecheck.InvalidValue(field, "delay is not finite")
	case s < 0:
		return valuecheck.InvalidValue(field, "delay is negative")
	case s >= maxSleepSeconds:
		return valuecheck.InvalidValue(field, "delay does not fit in int64 nanoseconds")
	}
	return nil
}

// SleepDuration converts a checked sleep delay to a duration, saturating
// at the largest time.Duration.
func SleepDuration(s float64) time.Duration {
	if !(s > 0) {
		return 0
	}
	if s >= maxSleepSeconds {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(s * 1e9)
}

// policyKey is the context key of ContextWithPolicy.
type policyKey struct{}

// ContextWithPolicy returns a copy of ctx carrying p, the OsPolicy in force
// for the OS call being handled. A session passes its own to its OS
// handler this way, so that a handler serving several sessions answers
// each in its sandbox's terms (package mount reads the zone of naive
// datetimes from it). A nil p returns ctx itself.
func ContextWithPolicy(ctx context.Context, p *OsPolicy) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, policyKey{}, p)
}

// PolicyFromContext returns the OsPolicy ctx carries (see
// ContextWithPolicy), or nil. The policy is shared: read it, do not
// modify it.
func PolicyFromContext(ctx context.Context) *OsPolicy {
	p, _ := ctx.Value(policyKey{}).(*OsPolicy)
	return p
}

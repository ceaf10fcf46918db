package codecv4

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/codec/internal/wire"
	"github.com/gomonty/monty/message"
)

// The messages only protocol 5 has: SourceRange, OsPolicy and its helpers,
// and the payloads of the time and sleep OS-call arms. Their inner tags are
// those of protocol 5's schema; only the tags that place them in the shared
// messages live in the dialect.

// f64 reads a double field.
func f64(wt protowire.Type, b []byte, dst *float64) (int, error) {
	v, n, err := wire.Fixed64Field(wt, b)
	if err == nil {
		*dst = math.Float64frombits(v)
	}
	return n, err
}

// position merges one occurrence of a SourceRange field (seg) into *p.
func (d *decoder) position(wt protowire.Type, b []byte, p **message.SourceRange, seg string) (int, error) {
	return d.Sub(wt, b, seg, func(v []byte) error { return d.sourceRange(v, p) })
}

// sourceRange merges a SourceRange message into *p, allocating it when
// absent.
func (d *decoder) sourceRange(b []byte, p **message.SourceRange) error {
	if err := wire.NewAt(&d.Dec, p); err != nil {
		return err
	}
	x := *p
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return d.TextAt(wt, b, &x.Filename, "SourceRange.filename")
		case 2:
			return wire.IntAt(wt, b, &x.Start, "SourceRange.start")
		case 3:
			return wire.IntAt(wt, b, &x.End, "SourceRange.end")
		}
		return -1, nil
	})
}

// osCall5 decodes the payload of a protocol-5 OsCall arm into x.
func (d *decoder) osCall5(b []byte, x *message.OsCall) error {
	switch x.Op {
	case message.OpTime:
		return d.OsFields(b, "TimeCall", func(f protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if f != 1 {
				return -1, nil
			}
			return d.Text(wt, b, &x.Caller)
		}, "caller")
	}
	// Sleep (the time.sleep calls) or AsyncSleep: one float.
	msg, field := "AsyncSleep", "delay"
	if x.Op == message.OpSleep || x.Op == message.OpSystemSleep {
		msg, field = "Sleep", "seconds"
	}
	return d.OsFields(b, msg, func(f protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if f != 1 {
			return -1, nil
		}
		return f64(wt, b, &x.Seconds)
	}, field)
}

// unitArm checks that a oneof arm holding Unit is a message, skipping its
// (unknown) content.
func (d *decoder) unitArm(wt protowire.Type, b []byte, seg string) (int, error) {
	return d.Sub(wt, b, seg, d.SkipMessage)
}

// osPolicy merges an OsPolicy message into x.
func (d *decoder) osPolicy(b []byte, x *message.OsPolicy) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch {
		case num >= 1 && num <= 3:
			const seg = "OsPolicy.datetime"
			if c := message.ClockSource(num); x.Clock != c {
				x.Clock, x.Fixed = c, message.FixedDateTime{}
			}
			if num != 3 {
				return d.unitArm(wt, b, seg)
			}
			return d.Sub(wt, b, seg, func(v []byte) error {
				return d.Walk(v, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
					switch num {
					case 1:
						var u uint64
						n, err := wire.Int(wt, b, &u)
						x.Fixed.UnixSeconds = int64(u)
						return wire.Wrap(n, err, "FixedDateTime.unix_seconds")
					case 2:
						return wire.IntAt(wt, b, &x.Fixed.Microsecond, "FixedDateTime.microsecond")
					}
					return -1, nil
				})
			})
		case num == 4:
			return d.Sub(wt, b, "OsPolicy.timezone", func(v []byte) error {
				if err := wire.NewAt(&d.Dec, &x.TimeZone); err != nil {
					return err
				}
				return d.sandboxTZ(v, x.TimeZone)
			})
		case num == 5:
			return d.Sub(wt, b, "OsPolicy.sleep", func(v []byte) error {
				if err := wire.NewAt(&d.Dec, &x.Sleep); err != nil {
					return err
				}
				return d.sleepMode(v, x.Sleep)
			})
		case num >= 6 && num <= 8:
			const seg = "OsPolicy.random_start"
			if r := message.RandomSource(num - 5); x.Random != r {
				x.Random, x.Seed = r, message.RandomSeed{}
			}
			if num != 8 {
				return d.unitArm(wt, b, seg)
			}
			return d.Sub(wt, b, seg, func(v []byte) error { return d.randomSeed(v, &x.Seed) })
		case num == 9 || num == 10:
			x.ProcessTime = message.ProcessTime(num - 8)
			return d.unitArm(wt, b, "OsPolicy.process_time")
		}
		return -1, nil
	})
}

func (d *decoder) sandboxTZ(b []byte, x *message.SandboxTimeZone) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if num < 1 || num > 3 {
			return -1, nil
		}
		const seg = "SandboxTimeZone.zone"
		if k := message.ZoneKind(num); x.Kind != k {
			*x = message.SandboxTimeZone{Kind: k}
		}
		switch num {
		case 1:
			return d.unitArm(wt, b, seg)
		case 2:
			return d.TextAt(wt, b, &x.Name, seg)
		}
		return d.Sub(wt, b, seg, func(v []byte) error { return d.Fields(v, leaf.TimeZoneFields(&x.Fixed), true, nil) })
	})
}

func (d *decoder) sleepMode(b []byte, x *message.SleepMode) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if num < 1 || num > 3 {
			return -1, nil
		}
		const seg = "SleepMode.mode"
		if k := message.SleepKind(num); x.Kind != k {
			*x = message.SleepMode{Kind: k}
		}
		if num != 1 {
			return d.unitArm(wt, b, seg)
		}
		return d.Sub(wt, b, seg, func(v []byte) error {
			return d.Field1(v, func(wt protowire.Type, b []byte) (int, error) {
				return wire.OptIntAt(&d.Dec, wt, b, &x.MaxMicros, "SystemSleep.max_micros")
			})
		})
	})
}

func (d *decoder) randomSeed(b []byte, x *message.RandomSeed) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if num < 1 || num > 4 {
			return -1, nil
		}
		const seg = "RandomSeed.value"
		if k := message.SeedKind(num); x.Kind != k {
			*x = message.RandomSeed{Kind: k}
		}
		switch num {
		case 1, 4:
			v, n, err := wire.BytesField(wt, b)
			if err == nil {
				dst := &x.Int
				if num == 4 {
					dst = &x.Bytes
				}
				*dst, err = d.Bytes(v)
			}
			return wire.Wrap(n, err, seg)
		case 2:
			n, err := f64(wt, b, &x.Float)
			return wire.Wrap(n, err, seg)
		}
		return d.TextAt(wt, b, &x.Str, seg)
	})
}

// checkPolicy refuses kinds the encoder has no arm for, so that nothing is
// silently left out.
func checkPolicy(p *message.OsPolicy) error {
	switch {
	case p.Clock > message.ClockFixed:
		return kindErr("OsPolicy clock", p.Clock)
	case p.TimeZone != nil && p.TimeZone.Kind > message.ZoneFixed:
		return kindErr("SandboxTimeZone kind", p.TimeZone.Kind)
	case p.Sleep != nil && p.Sleep.Kind > message.SleepZero:
		return kindErr("SleepMode kind", p.Sleep.Kind)
	case p.Random > message.RandomSeeded:
		return kindErr("OsPolicy random source", p.Random)
	case p.Random == message.RandomSeeded && p.Seed.Kind > message.SeedBytes:
		return kindErr("RandomSeed kind", p.Seed.Kind)
	case p.ProcessTime > message.ProcessTimeElapsed:
		return kindErr("OsPolicy process time", p.ProcessTime)
	}
	return nil
}

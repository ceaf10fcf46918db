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

// position merges a SourceRange message into *p, allocating it when absent.
func (d *decoder) position(b []byte, p **message.SourceRange) error {
	if *p == nil {
		var err error
		if *p, err = newObj[message.SourceRange](d); err != nil {
			return err
		}
	}
	x := *p
	return d.walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			n, err := d.text(wt, b, &x.Filename)
			return wire.Wrap(n, err, "SourceRange.filename")
		case 2:
			n, err := wire.Int(wt, b, &x.Start)
			return wire.Wrap(n, err, "SourceRange.start")
		case 3:
			n, err := wire.Int(wt, b, &x.End)
			return wire.Wrap(n, err, "SourceRange.end")
		}
		return -1, nil
	})
}

// osCall5 decodes the payload of a protocol-5 OsCall arm into x.
func (d *decoder) osCall5(b []byte, x *message.OsCall) error {
	switch x.Op {
	case message.OpTime:
		return d.osFields(b, "TimeCall", func(f protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if f != 1 {
				return -1, nil
			}
			return d.text(wt, b, &x.Caller)
		}, "caller")
	case message.OpSleep, message.OpSystemSleep:
		return d.osFields(b, "Sleep", func(f protowire.Number, wt protowire.Type, b []byte) (int, error) {
			if f != 1 {
				return -1, nil
			}
			return f64(wt, b, &x.Seconds)
		}, "seconds")
	}
	return d.osFields(b, "AsyncSleep", func(f protowire.Number, wt protowire.Type, b []byte) (int, error) {
		if f != 1 {
			return -1, nil
		}
		return f64(wt, b, &x.Seconds)
	}, "delay")
}

// unitArm checks that a oneof arm holding Unit is a message, skipping its
// (unknown) content.
func (d *decoder) unitArm(wt protowire.Type, b []byte, seg string) (int, error) {
	return msgField(wt, b, seg, d.skipMessage)
}

// osPolicy merges an OsPolicy message into x.
func (d *decoder) osPolicy(b []byte, x *message.OsPolicy) error {
	return d.walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch {
		case num >= 1 && num <= 3:
			const seg = "OsPolicy.datetime"
			if c := message.ClockSource(num); x.Clock != c {
				x.Clock, x.Fixed = c, message.FixedDateTime{}
			}
			if num != 3 {
				return d.unitArm(wt, b, seg)
			}
			return msgField(wt, b, seg, func(v []byte) error {
				return d.walk(v, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
					switch num {
					case 1:
						var u uint64
						n, err := wire.Int(wt, b, &u)
						x.Fixed.UnixSeconds = int64(u)
						return wire.Wrap(n, err, "FixedDateTime.unix_seconds")
					case 2:
						n, err := wire.Int(wt, b, &x.Fixed.Microsecond)
						return wire.Wrap(n, err, "FixedDateTime.microsecond")
					}
					return -1, nil
				})
			})
		case num == 4:
			return msgField(wt, b, "OsPolicy.timezone", func(v []byte) error {
				if x.TimeZone == nil {
					var err error
					if x.TimeZone, err = newObj[message.SandboxTimeZone](d); err != nil {
						return err
					}
				}
				return d.sandboxTZ(v, x.TimeZone)
			})
		case num == 5:
			return msgField(wt, b, "OsPolicy.sleep", func(v []byte) error {
				if x.Sleep == nil {
					var err error
					if x.Sleep, err = newObj[message.SleepMode](d); err != nil {
						return err
					}
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
			return msgField(wt, b, seg, func(v []byte) error { return d.randomSeed(v, &x.Seed) })
		case num == 9 || num == 10:
			x.ProcessTime = message.ProcessTime(num - 8)
			return d.unitArm(wt, b, "OsPolicy.process_time")
		}
		return -1, nil
	})
}

func (d *decoder) sandboxTZ(b []byte, x *message.SandboxTimeZone) error {
	return d.walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
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
			n, err := d.text(wt, b, &x.Name)
			return wire.Wrap(n, err, seg)
		}
		return msgField(wt, b, seg, func(v []byte) error { return d.fields(v, leaf.TimeZoneFields(&x.Fixed), false, nil) })
	})
}

func (d *decoder) sleepMode(b []byte, x *message.SleepMode) error {
	return d.walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
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
		return msgField(wt, b, seg, func(v []byte) error {
			return d.walk(v, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
				if num != 1 {
					return -1, nil
				}
				n, err := optIntField(d, wt, b, &x.MaxMicros)
				return wire.Wrap(n, err, "SystemSleep.max_micros")
			})
		})
	})
}

func (d *decoder) randomSeed(b []byte, x *message.RandomSeed) error {
	return d.walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
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
				*dst, err = d.bytes(v)
			}
			return wire.Wrap(n, err, seg)
		case 2:
			n, err := f64(wt, b, &x.Float)
			return wire.Wrap(n, err, seg)
		}
		n, err := d.text(wt, b, &x.Str)
		return wire.Wrap(n, err, seg)
	})
}

// ---- encoding ----

// szF64 / apF64 write an implicit-presence double: left out only when its
// bits are all zero (so -0.0 is written, as protobuf does).
func szF64(num protowire.Number, v float64) int {
	if math.Float64bits(v) == 0 {
		return 0
	}
	return leaf.SizeTag(num) + 8
}

func apF64(b []byte, num protowire.Number, v float64) []byte {
	if math.Float64bits(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(v))
}

func positionLen(p *message.SourceRange) int {
	return leaf.SizeS(1, len(p.Filename)) + leaf.SizeU(2, uint64(p.Start)) + leaf.SizeU(3, uint64(p.End))
}

// szPosition is the size of a position field, 0 when p is nil or the
// version has no such field (num 0).
func szPosition(num protowire.Number, p *message.SourceRange) int {
	if p == nil || num == 0 {
		return 0
	}
	return leaf.SizeM(num, positionLen(p))
}

func apPosition(b []byte, num protowire.Number, p *message.SourceRange) []byte {
	if p == nil || num == 0 {
		return b
	}
	b = leaf.AppendM(b, num, positionLen(p))
	b = leaf.AppendS(b, 1, p.Filename)
	b = leaf.AppendU(b, 2, uint64(p.Start))
	return leaf.AppendU(b, 3, uint64(p.End))
}

// osArg5Len is the payload size of a protocol-5 OsCall arm.
func osArg5Len(x *message.OsCall) int {
	if x.Op == message.OpTime {
		return leaf.SizeS(1, len(x.Caller))
	}
	return szF64(1, x.Seconds)
}

func apOsArg5(b []byte, x *message.OsCall) []byte {
	if x.Op == message.OpTime {
		return leaf.AppendS(b, 1, x.Caller)
	}
	return apF64(b, 1, x.Seconds)
}

func fixedLen(f *message.FixedDateTime) int {
	return leaf.SizeU(1, uint64(f.UnixSeconds)) + leaf.SizeU(2, uint64(f.Microsecond))
}

func sandboxTZLen(z *message.SandboxTimeZone) int {
	switch z.Kind {
	case message.ZoneUTC:
		return 2
	case message.ZoneNamed:
		return leaf.SizeM(2, len(z.Name))
	case message.ZoneFixed:
		return leaf.SizeM(3, leaf.TimeZoneSize(&z.Fixed))
	}
	return 0
}

func sleepModeLen(s *message.SleepMode) int {
	switch s.Kind {
	case message.SleepSystem:
		return leaf.SizeM(1, leaf.SizeOptU(1, s.MaxMicros))
	case message.SleepCallHost, message.SleepZero:
		return 2
	}
	return 0
}

func seedLen(s *message.RandomSeed) int {
	switch s.Kind {
	case message.SeedInt:
		return leaf.SizeM(1, len(s.Int))
	case message.SeedFloat:
		return 1 + 8
	case message.SeedStr:
		return leaf.SizeM(3, len(s.Str))
	case message.SeedBytes:
		return leaf.SizeM(4, len(s.Bytes))
	}
	return 0
}

func policyLen(p *message.OsPolicy) int {
	n := 0
	switch p.Clock {
	case message.ClockSystem, message.ClockCallHost:
		n += 2
	case message.ClockFixed:
		n += leaf.SizeM(3, fixedLen(&p.Fixed))
	}
	if p.TimeZone != nil {
		n += leaf.SizeM(4, sandboxTZLen(p.TimeZone))
	}
	if p.Sleep != nil {
		n += leaf.SizeM(5, sleepModeLen(p.Sleep))
	}
	switch p.Random {
	case message.RandomSystem, message.RandomCallHost:
		n += 2
	case message.RandomSeeded:
		n += leaf.SizeM(8, seedLen(&p.Seed))
	}
	if p.ProcessTime == message.ProcessTimeZero || p.ProcessTime == message.ProcessTimeElapsed {
		n += 2
	}
	return n
}

// apUnit appends an empty message field (a Unit arm); num must be below 16.
func apUnit(b []byte, num protowire.Number) []byte {
	return append(b, byte(uint64(num)<<3|uint64(protowire.BytesType)), 0)
}

func apPolicy(b []byte, p *message.OsPolicy) []byte {
	switch p.Clock {
	case message.ClockSystem, message.ClockCallHost:
		b = apUnit(b, protowire.Number(p.Clock))
	case message.ClockFixed:
		b = leaf.AppendM(b, 3, fixedLen(&p.Fixed))
		b = leaf.AppendU(b, 1, uint64(p.Fixed.UnixSeconds))
		b = leaf.AppendU(b, 2, uint64(p.Fixed.Microsecond))
	}
	if z := p.TimeZone; z != nil {
		b = leaf.AppendM(b, 4, sandboxTZLen(z))
		switch z.Kind {
		case message.ZoneUTC:
			b = apUnit(b, 1)
		case message.ZoneNamed:
			b = leaf.AppendSA(b, 2, z.Name)
		case message.ZoneFixed:
			b = leaf.AppendM(b, 3, leaf.TimeZoneSize(&z.Fixed))
			b = leaf.AppendTimeZone(b, &z.Fixed)
		}
	}
	if s := p.Sleep; s != nil {
		b = leaf.AppendM(b, 5, sleepModeLen(s))
		switch s.Kind {
		case message.SleepSystem:
			b = leaf.AppendM(b, 1, leaf.SizeOptU(1, s.MaxMicros))
			b = leaf.AppendOptU(b, 1, s.MaxMicros)
		case message.SleepCallHost, message.SleepZero:
			b = apUnit(b, protowire.Number(s.Kind))
		}
	}
	switch p.Random {
	case message.RandomSystem, message.RandomCallHost:
		b = apUnit(b, protowire.Number(p.Random)+5)
	case message.RandomSeeded:
		s := &p.Seed
		b = leaf.AppendM(b, 8, seedLen(s))
		switch s.Kind {
		case message.SeedInt:
			b = leaf.AppendBytesA(b, 1, s.Int)
		case message.SeedFloat:
			b = protowire.AppendTag(b, 2, protowire.Fixed64Type)
			b = protowire.AppendFixed64(b, math.Float64bits(s.Float))
		case message.SeedStr:
			b = leaf.AppendSA(b, 3, s.Str)
		case message.SeedBytes:
			b = leaf.AppendBytesA(b, 4, s.Bytes)
		}
	}
	if p.ProcessTime == message.ProcessTimeZero || p.ProcessTime == message.ProcessTimeElapsed {
		b = apUnit(b, protowire.Number(p.ProcessTime)+8)
	}
	return b
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

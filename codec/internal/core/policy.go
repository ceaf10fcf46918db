package core

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/message"
)

// Protocol 5's own messages: OsPolicy, SourceRange and the time and sleep
// call arms.

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

// SizePosition is the size of a position field, 0 when p is nil or the
// version has no such field (num 0).
func SizePosition(num protowire.Number, p *message.SourceRange) int {
	if p == nil || num == 0 {
		return 0
	}
	return leaf.SizeM(num, positionLen(p))
}

// AppendPosition writes what SizePosition measures.
func AppendPosition(b []byte, num protowire.Number, p *message.SourceRange) []byte {
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

func appendOsArg5(b []byte, x *message.OsCall) []byte {
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

// PolicyLen is the payload size of an OsPolicy.
func PolicyLen(p *message.OsPolicy) int {
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

// appendUnit appends an empty message field (a Unit arm); num must be below 16.
func appendUnit(b []byte, num protowire.Number) []byte {
	return append(b, byte(uint64(num)<<3|uint64(protowire.BytesType)), 0)
}

// AppendPolicy writes an OsPolicy's payload.
func AppendPolicy(b []byte, p *message.OsPolicy) []byte {
	switch p.Clock {
	case message.ClockSystem, message.ClockCallHost:
		b = appendUnit(b, protowire.Number(p.Clock))
	case message.ClockFixed:
		b = leaf.AppendM(b, 3, fixedLen(&p.Fixed))
		b = leaf.AppendU(b, 1, uint64(p.Fixed.UnixSeconds))
		b = leaf.AppendU(b, 2, uint64(p.Fixed.Microsecond))
	}
	if z := p.TimeZone; z != nil {
		b = leaf.AppendM(b, 4, sandboxTZLen(z))
		switch z.Kind {
		case message.ZoneUTC:
			b = appendUnit(b, 1)
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
			b = appendUnit(b, protowire.Number(s.Kind))
		}
	}
	switch p.Random {
	case message.RandomSystem, message.RandomCallHost:
		b = appendUnit(b, protowire.Number(p.Random)+5)
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
		b = appendUnit(b, protowire.Number(p.ProcessTime)+8)
	}
	return b
}

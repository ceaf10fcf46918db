package codecv4

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gomonty/monty/codec"
	pb5 "github.com/gomonty/monty/internal/pb/montyp5v1"
	pbv "github.com/gomonty/monty/internal/pb/montyv1"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The protocol-5 oracle differential: the generated montyp5v1 types against
// the shared message layer run with dialect5, in both directions.
//
// The oracle messages are built from the domain message field by field for
// everything protocol 5 changed (the envelopes, Configure and its limits and
// policy, the suspensions' positions, OsCall). The messages protocol 5 kept
// unchanged (arena, exceptions, the resumes, Feed, the other event bodies)
// are built with the protocol-4 oracle conversion and carried over by
// protobuf-go itself (marshal as monty.v1, unmarshal as montyp5.v1), so no
// code of ours sits between them.

// carry moves an unchanged message from the protocol-4 oracle to the
// protocol-5 one through protobuf-go's own encoding.
func carry[T proto.Message](t testing.TB, src proto.Message, dst T) T {
	t.Helper()
	b, err := proto.Marshal(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(b, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func pb5Arena(t testing.TB, g *value.Graph) *pb5.Arena {
	a := toPBArena(g)
	if a == nil {
		return nil
	}
	return carry(t, a, &pb5.Arena{})
}

func pb5Position(p *message.SourceRange) *pb5.SourceRange {
	if p == nil {
		return nil
	}
	return &pb5.SourceRange{Filename: p.Filename, Start: p.Start, End: p.End}
}

func pb5Policy(p *message.OsPolicy) *pb5.OsPolicy {
	if p == nil {
		return nil
	}
	o := &pb5.OsPolicy{}
	switch p.Clock {
	case message.ClockSystem:
		o.Datetime = &pb5.OsPolicy_System{System: &pb5.Unit{}}
	case message.ClockCallHost:
		o.Datetime = &pb5.OsPolicy_CallHost{CallHost: &pb5.Unit{}}
	case message.ClockFixed:
		o.Datetime = &pb5.OsPolicy_Fixed{Fixed: &pb5.FixedDateTime{UnixSeconds: p.Fixed.UnixSeconds, Microsecond: p.Fixed.Microsecond}}
	}
	if z := p.TimeZone; z != nil {
		o.Timezone = &pb5.SandboxTimeZone{}
		switch z.Kind {
		case message.ZoneUTC:
			o.Timezone.Zone = &pb5.SandboxTimeZone_Utc{Utc: &pb5.Unit{}}
		case message.ZoneNamed:
			o.Timezone.Zone = &pb5.SandboxTimeZone_Named{Named: z.Name}
		case message.ZoneFixed:
			o.Timezone.Zone = &pb5.SandboxTimeZone_Fixed{Fixed: &pb5.TimeZone{OffsetSeconds: z.Fixed.Offset, Name: z.Fixed.Name}}
		}
	}
	if s := p.Sleep; s != nil {
		o.Sleep = &pb5.SleepMode{}
		switch s.Kind {
		case message.SleepSystem:
			o.Sleep.Mode = &pb5.SleepMode_System{System: &pb5.SystemSleep{MaxMicros: s.MaxMicros}}
		case message.SleepCallHost:
			o.Sleep.Mode = &pb5.SleepMode_CallHost{CallHost: &pb5.Unit{}}
		case message.SleepZero:
			o.Sleep.Mode = &pb5.SleepMode_Zero{Zero: &pb5.Unit{}}
		}
	}
	switch p.Random {
	case message.RandomSystem:
		o.RandomStart = &pb5.OsPolicy_RandomSystem{RandomSystem: &pb5.Unit{}}
	case message.RandomCallHost:
		o.RandomStart = &pb5.OsPolicy_RandomCallHost{RandomCallHost: &pb5.Unit{}}
	case message.RandomSeeded:
		s := &pb5.RandomSeed{}
		switch p.Seed.Kind {
		case message.SeedInt:
			s.Value = &pb5.RandomSeed_Int{Int: p.Seed.Int}
		case message.SeedFloat:
			s.Value = &pb5.RandomSeed_Float{Float: p.Seed.Float}
		case message.SeedStr:
			s.Value = &pb5.RandomSeed_Str{Str: p.Seed.Str}
		case message.SeedBytes:
			s.Value = &pb5.RandomSeed_Bytes{Bytes: p.Seed.Bytes}
		}
		o.RandomStart = &pb5.OsPolicy_Seed{Seed: s}
	}
	switch p.ProcessTime {
	case message.ProcessTimeZero:
		o.ProcessTime = &pb5.OsPolicy_Zero{Zero: &pb5.Unit{}}
	case message.ProcessTimeElapsed:
		o.ProcessTime = &pb5.OsPolicy_Elapsed{Elapsed: &pb5.Unit{}}
	}
	return o
}

func toPB5Request(t testing.TB, r *message.ParentRequest) *pb5.ParentRequest {
	x, ok := r.Body.(*message.Configure)
	if !ok {
		// Every other request is unchanged at 5.
		return carry(t, toPBRequest(r), &pb5.ParentRequest{})
	}
	c := &pb5.Configure{ScriptName: x.ScriptName, TypeCheck: x.TypeCheck, TypeCheckStubs: x.TypeCheckStubs,
		MontyVersion: x.MontyVersion, AssertMessageAnnotations: x.AssertMessageAnnotations,
		TypeCheckFormat: pb5.TypeCheckFormat(int32(x.TypeCheckFormat)), TypeCheckColor: x.TypeCheckColor,
		ProtocolVersion: x.ProtocolVersion, PrintFlushIntervalMs: x.PrintFlushIntervalMs,
		OsPolicy: pb5Policy(x.OsPolicy), Persistence: pb5.Persistence(int32(x.Persistence)), Profile: x.Profile}
	if l := x.Limits; l != nil {
		c.Limits = &pb5.ResourceLimits{MaxMemoryBytes: l.MaxMemoryBytes, GcInterval: l.GCInterval,
			MaxRecursionDepth: l.MaxRecursionDepth, MaxSuspensions: l.MaxSuspensions,
			MaxFeedDurationMicros: l.MaxFeedDurationMicros, MaxTurnDurationMicros: l.MaxTurnDurationMicros,
			MaxTotalSleepMicros: l.MaxTotalSleepMicros}
	}
	return &pb5.ParentRequest{TraceParent: r.TraceParent, Kind: &pb5.ParentRequest_Configure{Configure: c}}
}

func toPB5OsCall(t testing.TB, x *message.OsCall) *pb5.OsCall {
	var o *pb5.OsCall
	if x.Op < message.OpTime {
		// The arms up to urandom are unchanged; carry them without the
		// arena, whose tag moved.
		v4 := *x
		v4.Values = value.Graph{}
		o = carry(t, toPBOsCall(&v4), &pb5.OsCall{})
	} else {
		o = &pb5.OsCall{CallId: x.CallID}
		switch x.Op {
		case message.OpTime:
			o.Call = &pb5.OsCall_Time{Time: &pb5.OsCall_TimeCall{Caller: x.Caller}}
		case message.OpSleep:
			o.Call = &pb5.OsCall_Sleep_{Sleep: &pb5.OsCall_Sleep{Seconds: x.Seconds}}
		case message.OpAsyncSleep:
			o.Call = &pb5.OsCall_AsyncSleep_{AsyncSleep: &pb5.OsCall_AsyncSleep{Delay: x.Seconds}}
		case message.OpSystemSleep:
			o.Call = &pb5.OsCall_SystemSleep{SystemSleep: &pb5.OsCall_Sleep{Seconds: x.Seconds}}
		case message.OpAsyncSystemSleep:
			o.Call = &pb5.OsCall_AsyncSystemSleep{AsyncSystemSleep: &pb5.OsCall_AsyncSleep{Delay: x.Seconds}}
		}
	}
	o.Values = pb5Arena(t, &x.Values)
	o.AllowEagerAwait = x.AllowEagerAwait
	o.Position = pb5Position(x.Position)
	return o
}

func toPB5Event(t testing.TB, e *message.ChildEvent) *pb5.ChildEvent {
	out := &pb5.ChildEvent{TotalExecutionMicros: e.TotalExecutionMicros, MaxSuspensions: e.MaxSuspensions,
		RestoredScriptName: e.RestoredScriptName, FeedExecutionMicros: e.FeedExecutionMicros,
		MaxFeedDurationMicros: e.MaxFeedDurationMicros, MaxTurnDurationMicros: e.MaxTurnDurationMicros,
		MaxTotalSleepMicros: e.MaxTotalSleepMicros, SessionId: e.SessionID}
	if e.Body == nil {
		return out
	}
	switch x := e.Body.(type) {
	case *message.OsCall:
		out.Kind = &pb5.ChildEvent_OsCall{OsCall: toPB5OsCall(t, x)}
		return out
	}
	// The other bodies are unchanged but for the positions: carry the body
	// through an envelope holding only it, then add the position.
	body := carry(t, toPBEvent(&message.ChildEvent{Body: e.Body}), &pb5.ChildEvent{})
	out.Kind = body.Kind
	switch x := e.Body.(type) {
	case *message.FunctionCall:
		out.GetFunctionCall().Position = pb5Position(x.Position)
	case *message.NameLookup:
		out.GetNameLookup().Position = pb5Position(x.Position)
	case *message.ResolveFutures:
		out.GetResolveFutures().Position = pb5Position(x.Position)
	}
	return out
}

func mustEncode5Event(t testing.TB, e *message.ChildEvent) []byte {
	t.Helper()
	b, err := V5().AppendEvent(nil, e)
	if err != nil {
		t.Fatalf("encode v5 event: %v", err)
	}
	return b
}

func mustEncode5Request(t testing.TB, r *message.ParentRequest) []byte {
	t.Helper()
	b, err := V5().AppendRequest(nil, r)
	if err != nil {
		t.Fatalf("encode v5 request: %v", err)
	}
	return b
}

// differential5Event runs the three oracle checks of differentialEvent at
// protocol 5.
func differential5Event(t *testing.T, e *message.ChildEvent) {
	t.Helper()
	differential(t, e, mustEncode5Event(t, e), toPB5Event(t, e), V5().DecodeEvent)
}

func differential5Request(t *testing.T, r *message.ParentRequest) {
	t.Helper()
	differential(t, r, mustEncode5Request(t, r), toPB5Request(t, r), V5().DecodeRequest)
}

// to5 strips the protocol-4-only fields from a corpus message, which
// protocol 5 refuses to encode.
func to5Request(r *message.ParentRequest) *message.ParentRequest {
	if c, ok := r.Body.(*message.Configure); ok && c.Limits != nil && c.Limits.MaxDurationMicros != nil {
		cc, l := *c, *c.Limits
		l.MaxDurationMicros = nil
		cc.Limits = &l
		return &message.ParentRequest{Body: &cc, TraceParent: r.TraceParent}
	}
	return r
}

func to5Event(e *message.ChildEvent) *message.ChildEvent {
	if e.MaxDurationMicros == nil {
		return e
	}
	c := *e
	c.MaxDurationMicros = nil
	return &c
}

func TestOracle5MessageCorpus(t *testing.T) {
	for i, r := range requestCorpus() {
		t.Run(fmt.Sprintf("request%d_%T", i, r.Body), func(t *testing.T) { differential5Request(t, to5Request(r)) })
	}
	for i, e := range eventCorpus() {
		t.Run(fmt.Sprintf("event%d_%T", i, e.Body), func(t *testing.T) { differential5Event(t, to5Event(e)) })
	}
	for i, r := range request5Corpus() {
		t.Run(fmt.Sprintf("v5request%d", i), func(t *testing.T) { differential5Request(t, r) })
	}
	for i, e := range event5Corpus() {
		t.Run(fmt.Sprintf("v5event%d_%T", i, e.Body), func(t *testing.T) { differential5Event(t, e) })
	}
}

func TestOracle5RandomMessages(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 20261202))
	for i := range 400 {
		t.Run(fmt.Sprintf("msg%d", i), func(t *testing.T) {
			differential5Request(t, randomRequest5(r))
			differential5Event(t, randomEvent5(r))
		})
	}
}

// request5Corpus holds the protocol-5 additions to Configure.
func request5Corpus() []*message.ParentRequest {
	u := value.Ptr[uint64]
	return []*message.ParentRequest{
		{Body: &message.Configure{ProtocolVersion: 5, Limits: &message.ResourceLimits{
			MaxFeedDurationMicros: u(0), MaxTurnDurationMicros: u(250000), MaxTotalSleepMicros: u(150000), MaxSuspensions: u(7)}}},
		{Body: &message.Configure{ProtocolVersion: 5, OsPolicy: &message.OsPolicy{}}},
		{Body: &message.Configure{ProtocolVersion: 5, OsPolicy: &message.OsPolicy{
			Clock: message.ClockFixed, Fixed: message.FixedDateTime{UnixSeconds: -1, Microsecond: 999999},
			TimeZone: &message.SandboxTimeZone{Kind: message.ZoneNamed, Name: "Europe/Paris"},
			Sleep:    &message.SleepMode{Kind: message.SleepSystem, MaxMicros: u(0)},
			Random:   message.RandomSeeded, Seed: message.RandomSeed{Kind: message.SeedInt, Int: []byte{0xff, 0x7f}},
			ProcessTime: message.ProcessTimeElapsed}}},
		{Body: &message.Configure{OsPolicy: &message.OsPolicy{Clock: message.ClockCallHost,
			TimeZone: &message.SandboxTimeZone{Kind: message.ZoneFixed, Fixed: value.TimeZone{Offset: -3600, Name: value.Ptr("")}},
			Sleep:    &message.SleepMode{Kind: message.SleepZero}, Random: message.RandomSeeded,
			Seed: message.RandomSeed{Kind: message.SeedFloat, Float: math.Copysign(0, -1)}, ProcessTime: message.ProcessTimeZero},
			Persistence: message.PersistenceStored, Profile: value.Ptr("")}},
		{Body: &message.Configure{OsPolicy: &message.OsPolicy{Clock: message.ClockSystem,
			TimeZone: &message.SandboxTimeZone{}, Sleep: &message.SleepMode{}, Random: message.RandomSeeded},
			Persistence: message.Persistence(77)}},
		{Body: &message.Configure{OsPolicy: &message.OsPolicy{Random: message.RandomCallHost,
			TimeZone: &message.SandboxTimeZone{Kind: message.ZoneUTC}, Sleep: &message.SleepMode{Kind: message.SleepCallHost}}}},
		{Body: &message.Load{State: []byte("session-id-1")}},
	}
}

// event5Corpus holds the protocol-5 additions to events.
func event5Corpus() []*message.ChildEvent {
	u := value.Ptr[uint64]
	pos := &message.SourceRange{Filename: "<python-input-3>", Start: 4, End: 19}
	var g value.Graph
	g.Add(value.None())
	var ops []*message.ChildEvent
	for _, o := range []*message.OsCall{
		{CallID: 1, Op: message.OpTime, Caller: "time.monotonic", Position: pos},
		{CallID: 2, Op: message.OpSleep, Seconds: 0.25},
		{CallID: 3, Op: message.OpAsyncSleep, Seconds: 0, AllowEagerAwait: true, Position: &message.SourceRange{}},
		{CallID: 4, Op: message.OpSystemSleep, Seconds: 9223372036},
		{CallID: 5, Op: message.OpAsyncSystemSleep, Seconds: 1e-9},
		{CallID: 6, Op: message.OpGetenv, Key: "HOME", Default: 0, Values: g, Position: pos},
		{CallID: 7, Op: message.OpUrandom, Size: 2496},
	} {
		ops = append(ops, &message.ChildEvent{Body: o})
	}
	return append(ops,
		&message.ChildEvent{Body: &message.Ok{}, SessionID: []byte("abc"), FeedExecutionMicros: 0},
		&message.ChildEvent{Body: &message.Complete{Value: 0, Values: g}, TotalExecutionMicros: 99, FeedExecutionMicros: 12,
			MaxFeedDurationMicros: u(0), MaxTurnDurationMicros: u(5), MaxTotalSleepMicros: u(1 << 40), MaxSuspensions: u(1000)},
		&message.ChildEvent{Body: &message.FunctionCall{FunctionName: "f", CallID: 1, Position: pos}},
		&message.ChildEvent{Body: &message.NameLookup{Name: "x", Position: pos}},
		&message.ChildEvent{Body: &message.ResolveFutures{PendingCallIDs: []uint32{3, 1}, Position: pos}},
		&message.ChildEvent{Body: &message.ShutdownDump{Dump: value.Ptr([]byte("id-to-load"))}},
	)
}

// ---- random protocol-5 messages ----

func randOpt(r *rand.Rand) *uint64 {
	if r.IntN(2) == 0 {
		return nil
	}
	v := r.Uint64() >> r.IntN(64)
	return &v
}

func randStr(r *rand.Rand) string {
	const alphabet = "ab<>-_ é😀"
	rs := []rune(alphabet)
	n := r.IntN(12)
	out := make([]rune, n)
	for i := range out {
		out[i] = rs[r.IntN(len(rs))]
	}
	return string(out)
}

func randBytes(r *rand.Rand) []byte {
	b := make([]byte, r.IntN(10))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func randPosition(r *rand.Rand) *message.SourceRange {
	if r.IntN(3) == 0 {
		return nil
	}
	return &message.SourceRange{Filename: randStr(r), Start: r.Uint32() >> r.IntN(32), End: r.Uint32() >> r.IntN(32)}
}

func randPolicy(r *rand.Rand) *message.OsPolicy {
	if r.IntN(4) == 0 {
		return nil
	}
	p := &message.OsPolicy{Clock: message.ClockSource(r.IntN(4)), Random: message.RandomSource(r.IntN(4)),
		ProcessTime: message.ProcessTime(r.IntN(3))}
	if p.Clock == message.ClockFixed {
		p.Fixed = message.FixedDateTime{UnixSeconds: int64(r.Uint64()), Microsecond: r.Uint32() >> r.IntN(32)}
	}
	if r.IntN(2) == 0 {
		z := &message.SandboxTimeZone{Kind: message.ZoneKind(r.IntN(4))}
		switch z.Kind {
		case message.ZoneNamed:
			z.Name = randStr(r)
		case message.ZoneFixed:
			z.Fixed.Offset = int32(r.Uint32())
			if r.IntN(2) == 0 {
				z.Fixed.Name = value.Ptr(randStr(r))
			}
		}
		p.TimeZone = z
	}
	if r.IntN(2) == 0 {
		s := &message.SleepMode{Kind: message.SleepKind(r.IntN(4))}
		if s.Kind == message.SleepSystem {
			s.MaxMicros = randOpt(r)
		}
		p.Sleep = s
	}
	if p.Random == message.RandomSeeded {
		s := message.RandomSeed{Kind: message.SeedKind(r.IntN(5))}
		switch s.Kind {
		case message.SeedInt:
			s.Int = randBytes(r)
		case message.SeedFloat:
			s.Float = math.Float64frombits(r.Uint64())
			if math.IsNaN(s.Float) {
				s.Float = 0.5
			}
		case message.SeedStr:
			s.Str = randStr(r)
		case message.SeedBytes:
			s.Bytes = randBytes(r)
		}
		p.Seed = s
	}
	return p
}

func randomRequest5(r *rand.Rand) *message.ParentRequest {
	c := &message.Configure{ScriptName: randStr(r), ProtocolVersion: 5, OsPolicy: randPolicy(r),
		Persistence: message.Persistence(r.IntN(3))}
	if r.IntN(2) == 0 {
		c.Profile = value.Ptr(randStr(r))
	}
	if r.IntN(3) != 0 {
		c.Limits = &message.ResourceLimits{MaxMemoryBytes: randOpt(r), GCInterval: randOpt(r), MaxRecursionDepth: randOpt(r),
			MaxSuspensions: randOpt(r), MaxFeedDurationMicros: randOpt(r), MaxTurnDurationMicros: randOpt(r),
			MaxTotalSleepMicros: randOpt(r)}
	}
	out := &message.ParentRequest{Body: c}
	if r.IntN(3) == 0 {
		out.TraceParent = value.Ptr(randStr(r))
	}
	return out
}

func randomEvent5(r *rand.Rand) *message.ChildEvent {
	e := &message.ChildEvent{TotalExecutionMicros: r.Uint64() >> r.IntN(64), FeedExecutionMicros: r.Uint64() >> r.IntN(64),
		MaxSuspensions: randOpt(r), MaxFeedDurationMicros: randOpt(r), MaxTurnDurationMicros: randOpt(r),
		MaxTotalSleepMicros: randOpt(r)}
	if r.IntN(3) == 0 {
		e.SessionID = randBytes(r)
		if len(e.SessionID) == 0 {
			e.SessionID = []byte{0}
		}
	}
	if r.IntN(4) == 0 {
		e.RestoredScriptName = value.Ptr(randStr(r))
	}
	g, root := randomGraph(r, 1+r.IntN(8))
	switch r.IntN(5) {
	case 0:
		e.Body = &message.FunctionCall{FunctionName: randStr(r), Args: []value.NodeID{root}, CallID: r.Uint32(),
			AllowEagerAwait: r.IntN(2) == 0, Values: g, Position: randPosition(r)}
	case 1:
		e.Body = &message.NameLookup{Name: randStr(r), Position: randPosition(r)}
	case 2:
		e.Body = &message.ResolveFutures{PendingCallIDs: []uint32{r.Uint32(), 1}, Position: randPosition(r)}
	case 3:
		e.Body = &message.Complete{Value: root, Values: g}
	default:
		o := &message.OsCall{CallID: r.Uint32(), Op: message.OsOp(2 + r.IntN(29)), Position: randPosition(r),
			AllowEagerAwait: r.IntN(2) == 0}
		switch {
		case o.Op == message.OpTime:
			o.Caller = randStr(r)
		case o.Op.IsSleep():
			o.Seconds = float64(r.Uint64()>>r.IntN(64)) / 1e9
		case o.Op == message.OpGetenv:
			o.Key, o.Default, o.Values = randStr(r), root, g
		case o.Op == message.OpUrandom:
			o.Size = r.Uint64()
		case o.Op == message.OpOpen:
			o.Path, o.Mode = randStr(r), "rb"
		case o.Op == message.OpRename:
			o.Path, o.Dst = randStr(r), randStr(r)
		case o.Op == message.OpWriteBytes || o.Op == message.OpAppendBytes:
			o.Path, o.Data = randStr(r), randBytes(r)
		case o.Op == message.OpWriteText || o.Op == message.OpAppendText:
			o.Path, o.Text = randStr(r), randStr(r)
		case o.Op == message.OpMkdir:
			o.Path, o.Parents, o.ExistOK = randStr(r), r.IntN(2) == 0, r.IntN(2) == 0
		case o.Op <= message.OpRmdir:
			o.Path = randStr(r)
		}
		e.Body = o
	}
	return e
}

// ---- the version rules ----

// TestVersionFieldsRefused checks that a field one version cannot express
// fails the encode with codec.ErrUnsupported instead of being dropped, in
// both directions.
func TestVersionFieldsRefused(t *testing.T) {
	u := value.Ptr[uint64]
	at4 := []any{
		&message.ParentRequest{Body: &message.Configure{Limits: &message.ResourceLimits{MaxFeedDurationMicros: u(1)}}},
		&message.ParentRequest{Body: &message.Configure{Limits: &message.ResourceLimits{MaxTurnDurationMicros: u(1)}}},
		&message.ParentRequest{Body: &message.Configure{Limits: &message.ResourceLimits{MaxTotalSleepMicros: u(0)}}},
		&message.ParentRequest{Body: &message.Configure{OsPolicy: &message.OsPolicy{}}},
		&message.ParentRequest{Body: &message.Configure{Persistence: message.PersistenceEphemeral}},
		&message.ParentRequest{Body: &message.Configure{Profile: value.Ptr("p")}},
		&message.ChildEvent{FeedExecutionMicros: 1},
		&message.ChildEvent{MaxFeedDurationMicros: u(0)},
		&message.ChildEvent{MaxTurnDurationMicros: u(0)},
		&message.ChildEvent{MaxTotalSleepMicros: u(0)},
		&message.ChildEvent{SessionID: []byte{}},
		&message.ChildEvent{Body: &message.OsCall{Op: message.OpTime}},
		&message.ChildEvent{Body: &message.OsCall{Op: message.OpSystemSleep}},
		&message.ChildEvent{Body: &message.OsCall{Op: message.OpUrandom, AllowEagerAwait: true}},
	}
	at5 := []any{
		&message.ParentRequest{Body: &message.Configure{Limits: &message.ResourceLimits{MaxDurationMicros: u(1)}}},
		&message.ChildEvent{MaxDurationMicros: u(0)},
	}
	encode := func(c Coder, m any) error {
		var err error
		switch x := m.(type) {
		case *message.ParentRequest:
			_, err = c.AppendRequest(nil, x)
		case *message.ChildEvent:
			_, err = c.AppendEvent(nil, x)
		}
		return err
	}
	for i, m := range at4 {
		err := encode(Coder{dialect4}, m)
		var ue *codec.UnsupportedError
		if !errors.Is(err, codec.ErrUnsupported) || !errors.As(err, &ue) || ue.Version != 4 {
			t.Errorf("at 4, %d: err = %v, want ErrUnsupported", i, err)
		}
		if err := encode(V5(), m); err != nil {
			t.Errorf("at 5, %d: %v", i, err)
		}
	}
	for i, m := range at5 {
		if err := encode(V5(), m); !errors.Is(err, codec.ErrUnsupported) {
			t.Errorf("at 5, %d: err = %v, want ErrUnsupported", i, err)
		}
		if err := encode(Coder{dialect4}, m); err != nil {
			t.Errorf("at 4, %d: %v", i, err)
		}
	}
}

// TestPositionsLeftOutAt4 pins the one documented translation: a source
// position is informational, so protocol 4 leaves it out.
func TestPositionsLeftOutAt4(t *testing.T) {
	pos := &message.SourceRange{Filename: "<string>", Start: 1, End: 2}
	for _, body := range []message.Event{
		&message.FunctionCall{FunctionName: "f", Position: pos},
		&message.NameLookup{Name: "x", Position: pos},
		&message.ResolveFutures{PendingCallIDs: []uint32{1}, Position: pos},
		&message.OsCall{Op: message.OpGetEnviron, Position: pos},
	} {
		with := mustEncodeEvent(t, &message.ChildEvent{Body: body})
		got, err := DecodeEvent(with, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		var o pbv.ChildEvent
		if err := proto.Unmarshal(with, &o); err != nil || len(o.ProtoReflect().GetUnknown()) != 0 {
			t.Fatalf("%T: v4 bytes carry something the v4 schema does not know (%v)", body, err)
		}
		if err := checkCanonical(eventDesc, with); err != nil {
			t.Fatalf("%T: %v", body, err)
		}
		var p *message.SourceRange
		switch x := got.Body.(type) {
		case *message.FunctionCall:
			p = x.Position
		case *message.NameLookup:
			p = x.Position
		case *message.ResolveFutures:
			p = x.Position
		case *message.OsCall:
			p = x.Position
		}
		if p != nil {
			t.Fatalf("%T: a position came back at 4", body)
		}
	}
}

// TestSleepDelayChecked checks the protocol-5 rule on sleep delays, on
// decode (a hostile child) and on encode.
func TestSleepDelayChecked(t *testing.T) {
	for _, s := range []float64{math.NaN(), math.Inf(1), -1, 1e10} {
		for _, op := range []message.OsOp{message.OpSleep, message.OpAsyncSleep, message.OpSystemSleep, message.OpAsyncSystemSleep} {
			o := &message.OsCall{Op: op, Seconds: s}
			if _, err := V5().AppendEvent(nil, &message.ChildEvent{Body: o}); err == nil {
				t.Errorf("encode %v(%v): no error", op, s)
			}
			frame, err := proto.Marshal(toPB5Event(t, &message.ChildEvent{Body: o}))
			if err != nil {
				t.Fatal(err)
			}
			_, err = V5().DecodeEvent(frame, codec.Limits{})
			var ie *value.InvalidError
			if !errors.Is(err, codec.ErrMalformed) || !errors.As(err, &ie) {
				t.Errorf("decode %v(%v): err = %v, want a structural invalid value", op, s, err)
			}
		}
	}
}

// TestV4ReadsTag26AsArena is the decoding break the delta describes: the
// same OsCall bytes mean different things at 4 and 5.
func TestV4ReadsTag26AsArena(t *testing.T) {
	frame := mustEncode5Event(t, &message.ChildEvent{Body: &message.OsCall{CallID: 1, Op: message.OpTime, Caller: "time.time"}})
	if _, err := DecodeEvent(frame, codec.Limits{}); err == nil {
		t.Fatal("protocol 4 decoded a protocol-5 time call without complaint")
	}
	got, err := V5().DecodeEvent(frame, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if o := got.Body.(*message.OsCall); o.Op != message.OpTime || o.Caller != "time.time" {
		t.Fatalf("got %+v", o)
	}
}

// TestOracle5MergesLikeUs decodes hand-made protocol-5 frames with repeated
// fields (message fields merge, a different oneof arm replaces, the last
// scalar wins) and checks that what we decoded, re-encoded, is what the
// oracle reads from the original frame.
func TestOracle5MergesLikeUs(t *testing.T) {
	pos := pb(nil).str(1, "<string>").varint(2, 1)
	policy1 := pb(nil).msg(3, pb(nil).varint(1, 1)).msg(5, pb(nil).msg(1, pb(nil).varint(1, 7))).
		msg(8, pb(nil).bytes(1, []byte{1, 2})).msg(4, pb(nil).str(2, "UTC"))
	policy2 := pb(nil).msg(3, pb(nil).varint(2, 5)).msg(5, pb(nil).msg(1, nil)).msg(8, pb(nil).str(3, "s")).
		msg(4, pb(nil).msg(3, pb(nil).varint(1, 60))).msg(9, nil).msg(10, nil)
	requests := []pb{
		pb(nil).msg(1, pb(nil).msg(11, policy1).varint(9, 5).msg(11, policy2).msg(2, pb(nil).varint(6, 1)).msg(2, pb(nil).varint(8, 2).varint(6, 3))),
		pb(nil).msg(1, pb(nil).msg(11, pb(nil).msg(1, nil).msg(3, pb(nil).varint(1, 9)).msg(6, nil).msg(8, nil).msg(7, nil))),
		pb(nil).msg(1, pb(nil).str(13, "a").varint(12, 1).str(13, "b").varint(12, 2)),
	}
	for i, f := range requests {
		var want pb5.ParentRequest
		if err := proto.Unmarshal(f, &want); err != nil {
			t.Fatal(err)
		}
		ours, err := V5().DecodeRequest(f, codec.Limits{})
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		var got pb5.ParentRequest
		if err := proto.Unmarshal(mustEncode5Request(t, ours), &got); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(&got, &want) {
			t.Fatalf("request %d:\n ours   %v\n oracle %v", i, &got, &want)
		}
	}
	events := []pb{
		// getenv with its arena at 50, replaced by the time arm; the arena,
		// eager flag and position survive the replacement.
		pb(nil).msg(3, pb(nil).varint(1, 1).msg(21, pb(nil).str(1, "HOME")).msg(50, append(pb(nil).varint(1, 1), arenaOf(noneNode)...)).msg(52, pos).
			msg(26, pb(nil).str(1, "time.time")).varint(51, 1).msg(52, pb(nil).varint(3, 9))),
		pb(nil).msg(3, pb(nil).msg(29, pb(nil).fixed64(1, 0x3ff0000000000000)).msg(29, pb(nil).fixed64(1, 0x4000000000000000))),
		pb(nil).msg(2, pb(nil).str(1, "f").msg(8, pos).msg(8, pb(nil).str(1, "<python-input-2>").varint(3, 4))),
		pb(nil).msg(4, pb(nil).str(1, "x").msg(3, pos)).msg(4, pb(nil).msg(3, pb(nil).varint(2, 7))),
		pb(nil).msg(5, pb(nil).packed(1, 1).msg(2, pos)).msg(10, nil),
		pb(nil).msg(10, nil).bytes(28, []byte("a")).varint(24, 5).bytes(28, []byte("bc")).varint(24, 6).varint(27, 1).varint(27, 0),
	}
	for i, f := range events {
		var want pb5.ChildEvent
		if err := proto.Unmarshal(f, &want); err != nil {
			t.Fatal(err)
		}
		ours, err := V5().DecodeEvent(f, codec.Limits{})
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		var got pb5.ChildEvent
		if err := proto.Unmarshal(mustEncode5Event(t, ours), &got); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(&got, &want) {
			t.Fatalf("event %d:\n ours   %v\n oracle %v", i, &got, &want)
		}
	}
}

// Package codecv5 is the codec of Monty's protocol 5, the version every 1.x
// upstream worker speaks.
//
// Protocol 5 keeps protocol 4's arena, value nodes, exceptions and request
// and event arms, so this package holds no codec of its own: it registers
// codec/codecv4's codec with protocol 5's tag table (core.Dialect5 in
// codec/internal/core, the one place the protocol-5 numbers live). Decoding is budgeted and validated exactly as in codec/codecv4; see that
// package's documentation for the rules.
//
// What differs from protocol 4 at the API (package message):
//   - ResourceLimits: MaxFeedDurationMicros, MaxTurnDurationMicros and
//     MaxTotalSleepMicros exist; MaxDurationMicros does not, and encoding it
//     fails with codec.ErrUnsupported.
//   - Configure: OsPolicy, Persistence and Profile.
//   - ChildEvent: FeedExecutionMicros, the echoed limits and SessionID;
//     MaxDurationMicros is refused like the limit.
//   - FunctionCall, NameLookup, ResolveFutures and OsCall carry Position.
//   - OsCall: the time and four sleep ops, and AllowEagerAwait (set only on
//     async_sleep); a sleep delay must be finite, at least 0 and within
//     int64 nanoseconds.
//   - ShutdownDump.Dump is the id to Load, not raw dump bytes.
//
// Import it for its side effect of registering version 5 with package
// codec, or use its functions directly.
package codecv5

package protocol

import (
	"strconv"
	"time"
)

// Protocol versions.
const (
	// Version is the protocol version spoken by this module's v4 codec.
	Version = 4
	// MinVersion is the oldest protocol version the v4 codec accepts.
	MinVersion = 4
	// Version2 is the protocol version of the released worker binary.
	Version2 = 2
	// Version5 is the protocol version every 1.x upstream worker speaks
	// (they refuse 4 and below).
	Version5 = 5
)

// Size limits.
const (
	// MaxFrameLen is the largest frame body, in bytes, either side may send
	// or accept (256 MiB). The 4-byte length prefix is not counted.
	MaxFrameLen = 268435456
	// DefaultMaxDecodeBytes is the default budget, in bytes, that decoding
	// one frame may keep resident (1 GiB, four times MaxFrameLen).
	DefaultMaxDecodeBytes = 1 << 30
)

// Print buffering.
const (
	// DefaultPrintFlushInterval is how long a worker may hold buffered
	// print output before emitting a Print event. Zero means line
	// buffering.
	DefaultPrintFlushInterval = 5 * time.Millisecond
	// PrintFlushThreshold is the number of buffered print bytes that
	// forces a Print event regardless of the interval.
	PrintFlushThreshold = 8192
)

// Default execution limits.
const (
	// DefaultMaxRecursionDepth is the default Python recursion limit.
	DefaultMaxRecursionDepth = 1000
	// DefaultMaxSuspensions is the default number of times one feed may
	// suspend for a host call before it is failed.
	DefaultMaxSuspensions = 1000
)

// FatalExitGrace is how long a parent waits for a worker to exit after the
// worker announced a FatalError (or after an I/O failure) before it reaps
// and classifies it.
const FatalExitGrace = 100 * time.Millisecond

// ExitCode is the exit status of a native `monty subprocess` worker.
type ExitCode int

// Worker exit statuses.
const (
	// ExitOK: Shutdown was requested, or stdin reached a clean EOF at a
	// frame boundary.
	ExitOK ExitCode = 0
	// ExitStdoutBroken: writing to stdout failed, so the parent is gone.
	ExitStdoutBroken ExitCode = 3
	// ExitFatal: the worker declared a fatal condition (for example an
	// unsupported protocol version) after sending FatalError.
	ExitFatal ExitCode = 4
	// ExitOOM: the memory limit was exceeded or an allocation failed
	// (EX_DATAERR). The parent reports this as a MemoryError.
	ExitOOM ExitCode = 65
	// ExitProtocol: request framing was desynchronized, or a response
	// could not be sent even in shortened form (EX_PROTOCOL).
	ExitProtocol ExitCode = 76
)

// String returns a short lower-case description of c, or "exit status N"
// for a status without a defined meaning.
func (c ExitCode) String() string {
	switch c {
	case ExitOK:
		return "ok"
	case ExitStdoutBroken:
		return "stdout broken"
	case ExitFatal:
		return "fatal"
	case ExitOOM:
		return "out of memory"
	case ExitProtocol:
		return "protocol error"
	}
	return "exit status " + strconv.Itoa(int(c))
}

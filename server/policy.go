package server

import (
	"time"

	"github.com/gomonty/monty/message"
)

// clampLimits returns the limits a session runs with: each ceiling applies
// when the client asks for more, for nothing, or for zero (which the worker
// would read as "no limit"). max_suspensions is held to its ceiling too,
// but a 0 stays 0: the server enforces that limit itself, and 0 is the
// strictest (no suspension at all), not "no limit". gc_interval passes
// through: it bounds nothing the duration and memory ceilings do not
// (a tiny interval spends the session's own duration budget, a huge one
// or 0 leaves cycles to the memory ceiling; TestGCIntervalIsBounded).
// l is not modified.
func clampLimits(l *message.ResourceLimits, cfg *Config) *message.ResourceLimits {
	out := &message.ResourceLimits{}
	if l != nil {
		*out = *l
	}
	clamp := func(p **uint64, ceiling uint64) {
		v := ceiling
		if *p != nil && **p != 0 && **p < ceiling {
			v = **p
		}
		*p = &v
	}
	// Rounded up: a ceiling under a microsecond must not become 0, a
	// budget the released worker counts as spent before the first
	// instruction (it raises TimeoutError at once).
	us := cfg.MaxDuration / time.Microsecond
	if cfg.MaxDuration%time.Microsecond != 0 {
		us++
	}
	clamp(&out.MaxDurationMicros, uint64(us))
	clamp(&out.MaxMemoryBytes, cfg.MaxMemory)
	clamp(&out.MaxRecursionDepth, cfg.MaxRecursionDepth)
	susp := cfg.MaxSuspensions
	if out.MaxSuspensions != nil {
		susp = min(*out.MaxSuspensions, susp)
	}
	out.MaxSuspensions = &susp
	return out
}

// refusal returns why the gate refuses a request of kind k before the
// child sees it ("" when it passes): Reset and Shutdown (a client could
// reset away the operator's limits or end the worker), and a Configure
// after the session was configured. Everything else reaches the child,
// which answers requests out of place with the worker's own texts.
func refusal(k message.RequestKind, known, configured bool) string {
	if !known {
		return ""
	}
	switch k {
	case message.KindConfigure:
		if configured {
			return "Configure while a session already exists"
		}
	case message.KindReset:
		return "Reset is refused by this server (open a new connection for a new session)"
	case message.KindShutdown:
		return "Shutdown is refused by this server (close the connection to end the session)"
	}
	return ""
}

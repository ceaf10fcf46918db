package server

import (
	"time"

	"github.com/gomonty/monty/message"
)

// clampLimits returns the limits a session runs with: each ceiling applies
// when the client asks for more, for nothing, or for zero (which the worker
// would read as "no limit"). Other fields pass through. l is not modified.
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

package message

import (
	"strconv"
	"strings"
	"time"
)

// RustDuration formats d the way Rust's Duration Debug does, which is how
// the worker's limit messages render durations: the largest unit of s, ms,
// µs and ns that d reaches, with every significant fractional digit
// ("200.116418ms", "625ms", "1.5s", "0ns"). A negative d formats as 0ns.
func RustDuration(d time.Duration) string {
	if d <= 0 {
		return "0ns"
	}
	ns := uint64(d)
	var div uint64
	var unit string
	var digits int
	switch {
	case ns >= 1e9:
		div, unit, digits = 1e9, "s", 9
	case ns >= 1e6:
		div, unit, digits = 1e6, "ms", 6
	case ns >= 1e3:
		div, unit, digits = 1e3, "µs", 3
	default:
		return strconv.FormatUint(ns, 10) + "ns"
	}
	s := strconv.FormatUint(ns/div, 10)
	if frac := ns % div; frac != 0 {
		f := strconv.FormatUint(frac, 10)
		f = strings.Repeat("0", digits-len(f)) + f
		s += "." + strings.TrimRight(f, "0")
	}
	return s + unit
}

package hostile

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseProtocols parses a comma-separated list of protocol versions (the
// versions a scripted child claims); "" means the default claim (nil).
func ParseProtocols(s string) ([]uint32, error) {
	if s == "" {
		return nil, nil
	}
	var out []uint32
	for f := range strings.SplitSeq(s, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(f), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("bad protocol list %q", s)
		}
		out = append(out, uint32(v))
	}
	return out, nil
}

// Exit turns the error of [Run] into the way a child program ends: its
// exit status, or death by the scenario's signal (through [Die], which does
// not return). Any other error is reported on stderr after prog and gives
// status 2.
func Exit(err error, stderr io.Writer, prog string) int {
	var (
		exit *ExitError
		sig  *SignalError
	)
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.Code
	case errors.As(err, &sig):
		Die(sig.Signal)
		return 128 + int(sig.Signal) // not reached
	default:
		fmt.Fprintln(stderr, prog+":", err)
		return 2
	}
}

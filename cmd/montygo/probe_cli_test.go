package main

import (
	"strings"
	"testing"
	"time"
)

// NaN passes every "< 0" and "> max" comparison, so a range check written
// that way let --max-duration NaN through as no limit at all (a negative
// duration after the float-to-int conversion): a runaway loop then ran
// forever. Every seconds flag refuses it.
func TestSecondsFlagsRefuseNaN(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--max-duration", "NaN", "-c", "1"}, "--max-duration"},
		{[]string{"run", "--max-duration", "nan", "-c", "1"}, "--max-duration"},
		{[]string{"run", "--start-timeout", "NaN", "-c", "1"}, "--start-timeout"},
		{[]string{"repl", "--max-duration", "NaN"}, "--max-duration"},
	} {
		_, stderr, code := runCLI(t, "", c.args...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want a failure naming %s", c.args, code, stderr, c.want)
		}
	}
	for _, s := range []string{"NaN", "-NaN", "nan"} {
		f := secondsFlag{new(time.Duration)}
		if err := f.Set(s); err == nil {
			t.Errorf("secondsFlag.Set(%q) = nil, %v; want an error", s, *f.d)
		}
	}
}

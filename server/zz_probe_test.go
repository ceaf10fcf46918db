package server

import (
	"context"
	"testing"

	"github.com/gomonty/monty/message"
)

func TestProbeBigPrint(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxFrameLen = 64 << 10 })
	for _, v := range []uint32{4, 2} {
		c := dialConfigured(t, ts.URL, v)
		turn, err := c.Do(context.Background(), &message.Feed{Code: "print('x' * 100000)\n'done'"})
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		t.Logf("v%d: %s stdout %d", v, describe(turn.Event), len(turn.Stdout))
		turn, err = c.Do(context.Background(), &message.Feed{Code: "'x' * 100000"})
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		t.Logf("v%d: %.100s", v, describe(turn.Event))
	}
}

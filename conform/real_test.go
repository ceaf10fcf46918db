package conform_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomonty/monty/conform"
	"github.com/gomonty/monty/internal/testenv"
)

func TestScratchV2(t *testing.T) {
	bin := testenv.Worker(t)
	start := time.Now()
	rep, err := conform.Run(context.Background(), conform.Target{Binary: bin}, conform.Options{Protocol: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rules {
		if r.Status != conform.Pass {
			t.Logf("%s %s: %s", r.Status, r.ID, r.Detail)
		}
	}
	t.Logf("%+v in %v", rep.Summary, time.Since(start))
}

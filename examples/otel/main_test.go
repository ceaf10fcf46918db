package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gomonty/monty/internal/testenv"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPrintsTheSpanTreeAndMetrics(t *testing.T) {
	testenv.Worker(t)
	var out, errs bytes.Buffer
	if code := run(context.Background(), &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	got := out.String()
	t.Log(got)
	wantTree := "span tree:\nhandle request\n  monty.session\n    monty.run outcome=ok\n      monty.host kind=function_call\n      monty.host kind=function_call\nspans:\n"
	if !strings.Contains(got, "result: 1.25\n") || !strings.Contains(got, wantTree) {
		t.Fatalf("want the result and the tree\n%s", wantTree)
	}
	for _, name := range []string{"monty.run.duration", "monty.turn.duration", "monty.ext.call.duration",
		"monty.pool.checkout.wait", "monty.pool.session.duration", "monty.pool.workers.live", "monty.pool.workers.suspended",
		"monty.wire.frame.bytes", "monty.print.bytes"} {
		if !strings.Contains(got, `"Name": "`+name+`"`) {
			t.Errorf("metric %s not printed", name)
		}
	}
}

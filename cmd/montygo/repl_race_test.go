//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/gomonty/monty/internal/testenv"
)

// A Ctrl-C that reaches eval's watcher as an input ends was flagged in
// `interrupted` by the watcher goroutine, which eval read without waiting
// for the watcher: a data race (go test -race), and the flag could be set
// after eval had decided what to print, so the Ctrl-C was lost. An input
// on a closed session fails at once, so the watcher, with an interrupt
// already queued, first runs after the run is over. Each Ctrl-C must be
// either reported as the input's KeyboardInterrupt or handed back to the
// prompt.
func TestREPLInterruptAsAnInputEnds(t *testing.T) {
	testenv.Worker(t)
	ctx := context.Background()
	var sf sessionFlags
	cfg, _, err := sf.config("<stdin>", os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	launch, err := sf.launch()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	r := &repl{launch: launch, cfg: cfg, stdout: &stdout, stderr: &stderr}
	if err := r.start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { r.close() }()
	for i := 0; i < 20; i++ {
		sigs := make(chan os.Signal, 1)
		sigs <- os.Interrupt
		r.sess.Close()
		stderr.Reset()
		if err := r.eval(ctx, "1", sigs); err != nil {
			t.Fatalf("eval %d: %v", i, err)
		}
		reported := strings.Contains(stderr.String(), "KeyboardInterrupt")
		if handedBack := len(sigs) == 1; reported == handedBack {
			t.Fatalf("eval %d: Ctrl-C reported %v, handed back to the prompt %v; stderr %q", i, reported, handedBack, stderr.String())
		}
	}
}

//go:build unix

package session_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/servertest"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/session"
)

// The negotiation's log lines named a remote session's worker by its
// binary, which a remote launcher does not have: worker="". They name the
// endpoint now, with its secrets masked as in errors.
func TestRemoteNegotiationLogNamesTheEndpoint(t *testing.T) {
	_, url := servertest.Start(t, nil)
	url += "?token=hunter2" // a fresh URL: not negotiated before, so logged at Info
	var buf testenv.Buffer
	cfg := session.Config{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := session.Start(ctx, session.Launch{Launcher: session.RemoteLauncher{URL: url}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	var line string
	for l := range strings.Lines(buf.String()) {
		if strings.Contains(l, "monty protocol negotiated") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no negotiation line in the log:\n%s", buf.String())
	}
	base, _, _ := strings.Cut(url, "?")
	if !strings.Contains(line, `endpoint="`+base+"?token=") || strings.Contains(buf.String(), "hunter2") ||
		strings.Contains(line, `worker=""`) {
		t.Errorf("negotiation line %q: want the endpoint %s named, its token masked", line, base)
	}
}

//go:build unix

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// montygo run and repl over --remote, against montygo serve with bearer
// tokens: the token travels as a --header.
func TestRunAndReplRemote(t *testing.T) {
	tokens := writeFile(t, "tokens", "alice:tok-alice-0123456789\n")
	p := startServe(t, nil, "--tokens", tokens)
	ctx := context.Background()
	auth := "Authorization: Bearer tok-alice-0123456789"

	var out, errb bytes.Buffer
	err := runCmd(ctx, []string{"--remote", p.url, "--header", auth, "--protocol", "4", "-c", "print('remote', 6 * 7)"}, nil, &out, &errb)
	if err != nil || out.String() != "remote 42\n" {
		t.Fatalf("run --remote: %v, out %q, err %q", err, out.String(), errb.String())
	}

	out.Reset()
	errb.Reset()
	err = runCmd(ctx, []string{"--remote", p.url, "--protocol", "4", "-c", "1"}, nil, &out, &errb)
	if err == nil || !strings.Contains(err.Error()+errb.String(), "HTTP 401") {
		t.Fatalf("run --remote without the token: %v, stderr %q", err, errb.String())
	}

	out.Reset()
	errb.Reset()
	err = runCmd(ctx, []string{"--remote", p.url, "--header", "Bad Name: x", "-c", "1"}, nil, &out, &errb)
	if err == nil || !strings.Contains(errb.String(), "--header") {
		t.Fatalf("a bad --header: %v, stderr %q", err, errb.String())
	}
	err = runCmd(ctx, []string{"--header", auth, "-c", "1"}, nil, &out, &errb)
	if err == nil || !strings.Contains(errb.String(), "--header needs --remote") {
		t.Fatalf("--header without --remote: %v, stderr %q", err, errb.String())
	}

	out.Reset()
	errb.Reset()
	err = replCmd(ctx, []string{"--remote", p.url, "--header", auth, "--protocol", "4"}, strings.NewReader("x = 20\nx + 22\n"), &out, &errb)
	if err != nil || !strings.Contains(out.String(), "42") {
		t.Fatalf("repl --remote: %v, out %q, err %q", err, out.String(), errb.String())
	}
}

// Several --remote endpoints are tried in order: a dead one and one that
// refuses are passed over for the one that starts the session; when none
// does, the error names each endpoint's failure.
func TestRunRemoteFailover(t *testing.T) {
	tokens := writeFile(t, "tokens", "alice:tok-alice-0123456789\n")
	p := startServe(t, nil, "--tokens", tokens)
	other := writeFile(t, "other-tokens", "bob:tok-bob-000000000000000\n")
	refusing := startServe(t, nil, "--tokens", other)
	dead := "ws://127.0.0.1:1/"
	ctx := context.Background()
	auth := "Authorization: Bearer tok-alice-0123456789"

	var out, errb bytes.Buffer
	err := runCmd(ctx, []string{"--remote", dead, "--remote", refusing.url, "--remote", p.url, "--header", auth,
		"--protocol", "4", "-c", "print('failover', 6 * 7)"}, nil, &out, &errb)
	if err != nil || out.String() != "failover 42\n" {
		t.Fatalf("run over a dead, a refusing and a good endpoint: %v, out %q, err %q", err, out.String(), errb.String())
	}

	out.Reset()
	errb.Reset()
	err = runCmd(ctx, []string{"--remote", dead, "--remote", refusing.url, "--header", auth, "--protocol", "4", "-c", "1"}, nil, &out, &errb)
	msg := ""
	if err != nil {
		msg = err.Error() + errb.String()
	}
	if err == nil || !strings.Contains(msg, "no remote endpoint started the session") || !strings.Contains(msg, dead+": ") ||
		!strings.Contains(msg, refusing.url+": ") || !strings.Contains(msg, "HTTP 401") {
		t.Fatalf("no endpoint starts: %v, stderr %q", err, errb.String())
	}
}

//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeSIGHUPWithFIFOTokens: a --tokens path that became a FIFO made
// the SIGHUP reload block in open, and with it the signal loop (SIGTERM
// no longer drained). The reload now refuses the FIFO and keeps the
// previous tokens.
func TestServeSIGHUPWithFIFOTokens(t *testing.T) {
	tokens := writeFile(t, "tokens", "alice:tok-alice-0123456789\n")
	p := startServe(t, nil, "--tokens", tokens)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if err := os.Rename(fifo, tokens); err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGHUP)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(p.stderr.String(), "tokens not reloaded"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			// Let the blocked open go, so the process can end.
			if f, err := os.OpenFile(tokens, os.O_WRONLY, 0); err == nil {
				f.Close()
			}
			t.Fatalf("no reload failure logged\n%s", p.stderr.String())
		}
	}
	if !strings.Contains(p.stderr.String(), "not a regular file") {
		t.Errorf("reload failure does not say why\n%s", p.stderr.String())
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
}

// TestServeSIGHUPWithFIFOTLSFile: a TLS file turned FIFO made the SIGHUP
// reload block in open, with the signal loop; the reload refuses it and
// keeps the previous certificate.
func TestServeSIGHUPWithFIFOTLSFile(t *testing.T) {
	_, certFile, keyFile, _ := pemPKI(t)
	p := startServe(t, nil, "--tls-cert", certFile, "--tls-key", keyFile)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if err := os.Rename(fifo, certFile); err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGHUP)
	waitLog(t, p, "TLS files not reloaded")
	if !strings.Contains(p.stderr.String(), "not a regular file") {
		t.Errorf("reload failure does not say why\n%s", p.stderr.String())
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
}

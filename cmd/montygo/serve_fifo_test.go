//go:build unix

package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
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

// TestServeSIGTERMWhileStarting: a SIGTERM while the worker pool starts
// (here, a worker that never answers) stops montygo serve there and then
// (exit 0, nothing was served); it was queued until the pool's start
// timeout, and the start failure then ended the process with exit 1.
func TestServeSIGTERMWhileStarting(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "started")
	worker := filepath.Join(dir, "worker")
	if err := os.WriteFile(worker, []byte("#!/bin/sh\ntouch '"+mark+"'\nexec sleep 600\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	key := writeFile(t, "key", "0123456789abcdef0123")
	cmd := exec.Command(montygo(t), "serve", "--listen", "127.0.0.1:0", "--dump-key", key, "--worker", worker, "--prewarm", "1")
	errb := &testenv.Buffer{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker never started\n%s", errb.String())
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := <-exited
	exited <- err
	if code := cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(errb.String(), "stopped") {
		t.Fatalf("exit %d (%v)\n%s", code, err, errb.String())
	}
}

// TestServeSIGHUPWhileReadingFlags: a SIGHUP (a `systemctl reload` just
// after the start) that arrives while montygo serve still reads its
// files is kept for the reload loop; it killed the process (SIGHUP's
// default action) until the server's signal handling was set up.
func TestServeSIGHUPWhileReadingFlags(t *testing.T) {
	bin := testenv.Worker(t)
	fifo := filepath.Join(t.TempDir(), "key")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(montygo(t), "serve", "--listen", "127.0.0.1:0", "--dump-key", fifo, "--worker", bin, "--prewarm", "1")
	errb := &testenv.Buffer{}
	cmd.Stderr = errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	// The open returns once montygo serve opened the key to read it.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGHUP)
	w.WriteString("0123456789abcdef0123")
	w.Close()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ws://127.0.0.1:") {
		t.Fatalf("URL line %q (%v)\n%s", line, err, errb.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err = <-exited
	exited <- err
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d (%v)\n%s", code, err, errb.String())
	}
}

// TestServeTokensFromAPipeAtStart: at start --tokens may name a pipe
// (`--tokens <(vault kv get ...)`, a FIFO), read once to its end, so that
// tokens need not rest in a file; only a reload wants a regular file.
func TestServeTokensFromAPipeAtStart(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "tokens")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	const tok = "tok-alice-0123456789"
	go func() {
		// The open returns once montygo serve opened the pipe to read it.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.WriteString("alice:" + tok + "\n")
			w.Close()
		}
	}()
	// Should montygo serve read the pipe twice, its second open would
	// wait for a writer for ever: one comes after a minute, with nothing
	// to say, and the test fails instead of hanging.
	guard := time.AfterFunc(time.Minute, func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
	})
	defer guard.Stop()
	p := startServe(t, nil, "--tokens", fifo)
	for _, c := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer " + tok, http.StatusOK}} {
		req, err := http.NewRequest("GET", p.http+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("/metrics with %q: %d, want %d", c.auth, resp.StatusCode, c.want)
		}
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
}

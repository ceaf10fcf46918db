//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/server"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
)

type serveProc struct {
	cmd    *exec.Cmd
	url    string
	http   string
	stderr *testenv.Buffer
	exited chan error
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// serveDefaults returns the flag-value pairs of defs whose flag args does
// not give: serve refuses a flag given twice, so a test's own --listen or
// --dump-key replaces the helper's instead of following it.
func serveDefaults(args []string, defs ...string) []string {
	var out []string
	for i := 0; i+1 < len(defs); i += 2 {
		name := strings.TrimLeft(defs[i], "-")
		given := false
		for _, a := range args {
			a, _, _ = strings.Cut(strings.TrimLeft(a, "-"), "=")
			given = given || a == name
		}
		if !given {
			out = append(out, defs[i], defs[i+1])
		}
	}
	return out
}

// startServe runs montygo serve and reads the bound URL from stdout.
func startServe(t *testing.T, env []string, args ...string) *serveProc {
	t.Helper()
	bin := testenv.Worker(t)
	key := writeFile(t, "key", "0123456789abcdef0123")
	defs := []string{"--dump-key", key, "--worker", bin, "--prewarm", "1"}
	if len(serveDefaults(args, "--host", "", "--port", "")) == 4 {
		// --listen goes with neither --host nor --port.
		defs = append(defs, "--listen", "127.0.0.1:0")
	}
	all := append(append([]string{"serve"}, serveDefaults(args, defs...)...), args...)
	cmd := exec.Command(montygo(t), all...)
	cmd.Env = append(os.Environ(), env...)
	errb := &testenv.Buffer{}
	cmd.Stderr = errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, stderr: errb, exited: make(chan error, 1)}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no URL line: %v\n%s", err, errb.String())
	}
	p.url = strings.TrimSpace(line)
	p.http = "http://" + strings.TrimSuffix(strings.TrimPrefix(p.url, "ws://"), "/")
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	return p
}

func (p *serveProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(60 * time.Second):
		t.Fatalf("montygo serve did not exit\n%s", p.stderr.String())
	}
	return -1
}

func serveInfo(t *testing.T, p *serveProc) server.Info {
	t.Helper()
	resp, err := http.Get(p.http + "/info")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var in server.Info
	if err := json.NewDecoder(resp.Body).Decode(&in); err != nil {
		t.Fatal(err)
	}
	return in
}

// serveSession starts a session on the server at url through the public
// API (session.RemoteLauncher, resumption off so a drain is seen as is).
func serveSession(t *testing.T, url string, h http.Header) *session.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := session.RemoteLauncher{URL: url, Dial: ws.DialOptions{Header: h}, NoResume: true}
	s, err := session.Start(ctx, session.Launch{Launcher: l, ProtocolVersion: 4}, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func feed(t *testing.T, s *session.Session, code string) (*message.ChildEvent, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.Feed(ctx, code)
}

func TestServeFlagsEnvTwinsAndSIGTERM(t *testing.T) {
	p := startServe(t, []string{
		"MONTY_SERVER_MAX_SESSIONS=9", // the flag beats it
		"MONTY_SERVER_MAX_SESSIONS_PER_CLIENT=3",
		"MONTY_SERVER_MAX_DURATION=2.5",
		"MONTY_SERVER_MAX_MEMORY_MIB=32",
		"MONTY_SERVER_MAX_RECURSION_DEPTH=77",
		"MONTY_SERVER_TURN_TIMEOUT=7",
		"MONTY_SERVER_IDLE_TIMEOUT=8s",
		"MONTY_SERVER_SESSION_TIMEOUT=9m",
		"MONTY_SERVER_MAX_SUSPENSIONS=33",
		"MONTY_SERVER_MAX_CONNECTIONS_PER_CLIENT=0",
	}, "--max-sessions", "5", "--drain-grace", "1h", "--max-connections", "400", "--max-header-kib", "16")
	if !strings.HasPrefix(p.url, "ws://127.0.0.1:") {
		t.Fatalf("URL line %q", p.url)
	}
	in := serveInfo(t, p)
	if in.MaxSessions != 5 || in.MaxSessionsPerClient != 3 || in.Ceilings.MaxDurationSeconds != 2.5 ||
		in.Ceilings.MaxMemoryBytes != 32<<20 || in.Ceilings.MaxRecursionDepth != 77 || in.TurnTimeoutSeconds != 7 ||
		in.IdleTimeoutSeconds != 8 || in.SessionTimeoutSeconds != 540 || in.Ceilings.MaxSuspensions != 33 ||
		in.MaxConnections != 400 || in.MaxConnectionsPerClient != -1 || in.MaxHeaderBytes != 16<<10 || in.DrainGraceSeconds != 3600 {
		t.Fatalf("/info: %+v", in)
	}
	c := serveSession(t, p.url, nil)
	if ev, err := feed(t, c, "x = 1\nx + 1"); err != nil || ev.Body.EventKind() != message.KindComplete {
		t.Fatalf("feed: %v %v", ev, err)
	}
	// SIGTERM: the next request is answered with a ShutdownDump, and the
	// server exits once that last session has ended (long before the grace).
	p.cmd.Process.Signal(syscall.SIGTERM)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(p.http + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("/readyz did not turn 503")
		}
	}
	_, err := feed(t, c, "x")
	var se *session.ShutdownError
	if !errors.As(err, &se) || !strings.HasPrefix(string(se.Dump), "MONTYSIG") {
		t.Fatalf("during the drain: %v", err)
	}
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
	logs := p.stderr.String()
	for _, want := range []string{`"msg":"session open"`, `"conn":"`, `"outcome":"drained"`, `"msg":"draining"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "x + 1") {
		t.Errorf("code reached the logs:\n%s", logs)
	}
}

func TestServeSecondSIGTERMEndsAtOnce(t *testing.T) {
	p := startServe(t, nil, "--drain-grace", "1h")
	serveSession(t, p.url, nil) // silent: would be kept for the grace
	p.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.stderr.String())
	}
}

func TestServeSIGHUPReloadsTokens(t *testing.T) {
	tokens := writeFile(t, "tokens", "alice:tok-alice-0123456789\n")
	p := startServe(t, nil, "--tokens", tokens)
	if in := serveInfo(t, p); in.Auth != "bearer" {
		t.Fatalf("auth %q", in.Auth)
	}
	alice := http.Header{"Authorization": {"Bearer tok-alice-0123456789"}}
	serveSession(t, p.url, alice)
	if err := os.WriteFile(tokens, []byte("bob:tok-bob-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGHUP)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := ws.Dial(ctx, p.url, ws.DialOptions{Header: alice})
		cancel()
		var de *ws.DialError
		if errors.As(err, &de) && de.StatusCode == http.StatusUnauthorized {
			break
		}
		if c != nil {
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatal("alice's token still works after SIGHUP")
		}
	}
	serveSession(t, p.url, http.Header{"Authorization": {"Bearer tok-bob-0123456789"}})
}

func TestServeRefusesUnsafeStarts(t *testing.T) {
	testenv.Worker(t)
	key := writeFile(t, "key", "0123456789abcdef0123")
	short := writeFile(t, "short", "tooshort")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "127.0.0.1:0"}, "--dump-key FILE is required"},
		{[]string{"--listen", "127.0.0.1:0", "--dump-key", short}, "at least 16 bytes"},
		{[]string{"--listen", "0.0.0.0:0", "--dump-key", key}, "without --tokens"},
		{[]string{"--listen", ":0", "--dump-key", key}, "without --tokens"},
		{[]string{"--listen", "127.0.0.1:0", "--dump-key", key, "--tls-cert", key}, "go together"},
		{[]string{"--listen", "127.0.0.1:0", "--dump-key", key, "--client-ca", key}, "--client-ca needs"},
		{[]string{"--listen", "127.0.0.1:0", "--dump-key", key, "--max-memory-mib", "0"}, "--max-memory-mib"},
		{[]string{"--listen", "127.0.0.1:0", "--dump-key", key, "--turn-timeout", "soon"}, "not a duration"},
	} {
		_, stderr, code := runCLI(t, "", append([]string{"serve"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	// An environment twin with a bad value is reported by its name.
	cmd := exec.Command(montygo(t), "serve", "--dump-key", key)
	cmd.Env = append(os.Environ(), "MONTY_SERVER_IDLE_TIMEOUT=never")
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(out), "MONTY_SERVER_IDLE_TIMEOUT") {
		t.Errorf("bad env twin: exit %d, %s", cmd.ProcessState.ExitCode(), out)
	}
}

func TestServeHostAndPortFlags(t *testing.T) {
	bin := testenv.Worker(t)
	key := writeFile(t, "key", "0123456789abcdef0123")
	cmd := exec.Command(montygo(t), "serve", "--host", "127.0.0.1", "--dump-key", key, "--worker", bin, "--prewarm", "1")
	cmd.Env = append(os.Environ(), "MONTY_SERVER_PORT=0") // upstream's twins
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Signal(syscall.SIGTERM)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ws://127.0.0.1:") || strings.HasPrefix(line, "ws://127.0.0.1:8000/") {
		t.Fatalf("URL line %q (%v)", line, err)
	}
	// A non-loopback --host without tokens is refused like --listen.
	_, stderr, code := runCLI(t, "", "serve", "--host", "0.0.0.0", "--port", "0", "--dump-key", key)
	if code != 2 || !strings.Contains(stderr, "without --tokens") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// TestServeLoopbackNamesAsTheServerDoes: the listen check without tokens
// and the server's Host check share one notion of "loopback": a
// LOCALHOST listen address binds the loopback and is accepted (it was
// refused while Host: LOCALHOST was served).
func TestServeLoopbackNamesAsTheServerDoes(t *testing.T) {
	p := startServe(t, nil, "--listen", "LOCALHOST:0")
	if !strings.HasPrefix(p.url, "ws://127.0.0.1:") {
		t.Fatalf("URL %q", p.url)
	}
}

// TestBoundLoopback: whatever name the listen host was, the address bound
// is what decides: a name that passes the check but resolves elsewhere
// (a *.localhost name goes to DNS) is refused after listening.
func TestBoundLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "127.3.2.1:1": true,
		"0.0.0.0:80": false, "[::]:80": false, "10.1.2.3:80": false, "[2001:db8::1]:80": false} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := boundLoopback(a); got != want {
			t.Errorf("boundLoopback(%s) = %v", addr, got)
		}
	}
}

// TestServeRefusesShortTokens: a tokens file with a token under 16 bytes
// is a configuration error (exit 2) that names the rule, not the token.
func TestServeRefusesShortTokens(t *testing.T) {
	key := writeFile(t, "key", "0123456789abcdef0123")
	tokens := writeFile(t, "tokens", "alice:hunter2\n")
	_, stderr, code := runCLI(t, "", "serve", "--listen", "127.0.0.1:0", "--dump-key", key, "--tokens", tokens)
	if code != 2 || !strings.Contains(stderr, "16 bytes") || strings.Contains(stderr, "hunter2") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// TestServeMetricsWantATokenWithTokens: with --tokens, /metrics wants a
// token unless --metrics-no-auth; MONTY_SERVER_MAX_AUTH_FAILURES bounds
// failed logins (429 past it).
func TestServeMetricsWantATokenWithTokens(t *testing.T) {
	tokens := writeFile(t, "tokens", "alice:tok-alice-0123456789\n")
	status := func(url, tok string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	p := startServe(t, []string{"MONTY_SERVER_MAX_AUTH_FAILURES=1"}, "--tokens", tokens)
	if code := status(p.http+"/metrics", "tok-alice-0123456789"); code != http.StatusOK {
		t.Fatalf("/metrics with the token: %d", code)
	}
	if code := status(p.http+"/metrics", ""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics without a token: %d", code)
	}
	if code := status(p.http+"/metrics", "tok-alice-0123456789"); code != http.StatusTooManyRequests {
		t.Fatalf("/metrics past --max-auth-failures: %d", code)
	}
	open := startServe(t, nil, "--tokens", tokens, "--metrics-no-auth")
	if code := status(open.http+"/metrics", ""); code != http.StatusOK {
		t.Fatalf("--metrics-no-auth: /metrics without a token: %d", code)
	}
}

// TestServeMaxFrameFlag: --max-frame-mib lowers the frame cap (a server
// holds up to three frames of a session that sends without waiting, so
// the cap is part of its memory bound): /info reports it and a larger
// frame ends the session with 1009.
func TestServeMaxFrameFlag(t *testing.T) {
	p := startServe(t, []string{"MONTY_SERVER_MAX_FRAME_MIB=1"})
	if in := serveInfo(t, p); in.MaxFrameBytes != 1<<20 {
		t.Fatalf("/info max_frame_bytes %d, want %d", in.MaxFrameBytes, 1<<20)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := ws.Dial(ctx, p.url, ws.DialOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The server refuses the frame at its header: the Close can cut the
	// write short (then WriteFrame reports it) or come after it.
	if err = c.WriteFrame(make([]byte, 2<<20)); err == nil {
		_, err = c.ReadFrame()
	}
	var ce *ws.CloseError
	if !errors.As(err, &ce) || ce.Code != 1009 {
		t.Fatalf("a 2 MiB frame: %v, want close 1009", err)
	}
	key := writeFile(t, "key", "0123456789abcdef0123")
	for _, v := range []string{"0", "257", "-1"} {
		_, stderr, code := runCLI(t, "", "serve", "--listen", "127.0.0.1:0", "--dump-key", key, "--max-frame-mib", v)
		if code != 2 || !strings.Contains(stderr, "max-frame-mib") {
			t.Errorf("--max-frame-mib %s: exit %d, %s", v, code, stderr)
		}
	}
}

// TestServeMaxHeaderFlag: --max-header-kib (here its environment twin)
// caps a request's headers: past it the server answers 431; a value
// outside 1 to 1024 is a usage error.
func TestServeMaxHeaderFlag(t *testing.T) {
	p := startServe(t, []string{"MONTY_SERVER_MAX_HEADER_KIB=4"})
	for _, c := range []struct{ pad, want int }{{2 << 10, http.StatusOK}, {16 << 10, http.StatusRequestHeaderFieldsTooLarge}} {
		req, err := http.NewRequest("GET", p.http+"/healthz", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Pad", strings.Repeat("a", c.pad))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%d bytes of header under --max-header-kib 4: %d, want %d", c.pad, resp.StatusCode, c.want)
		}
	}
	key := writeFile(t, "key", "0123456789abcdef0123")
	for _, v := range []string{"0", "1025", "-1"} {
		_, stderr, code := runCLI(t, "", "serve", "--listen", "127.0.0.1:0", "--dump-key", key, "--max-header-kib", v)
		if code != 2 || !strings.Contains(stderr, "max-header-kib") {
			t.Errorf("--max-header-kib %s: exit %d, %s", v, code, stderr)
		}
	}
}

// TestServeConnectionCapFlags: --max-connections-per-client (here its
// environment twin) caps one address's open connections (idle ones
// included): the next is answered 503 too_many_connections (a health
// probe aside); a negative count is a usage error.
func TestServeConnectionCapFlags(t *testing.T) {
	p := startServe(t, []string{"MONTY_SERVER_MAX_CONNECTIONS_PER_CLIENT=2"})
	addr := strings.TrimPrefix(p.http, "http://")
	for range 2 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(nc, "GET /info HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "too_many_connections") {
		t.Fatalf("a third connection: %d %q, want 503 too_many_connections", resp.StatusCode, body)
	}
	key := writeFile(t, "key", "0123456789abcdef0123")
	for _, f := range []string{"--max-connections", "--max-connections-per-client"} {
		_, stderr, code := runCLI(t, "", "serve", "--listen", "127.0.0.1:0", "--dump-key", key, f, "-1")
		if code != 2 || !strings.Contains(stderr, f) {
			t.Errorf("%s -1: exit %d, %s", f, code, stderr)
		}
	}
}

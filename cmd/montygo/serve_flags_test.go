//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
)

// runServeBounded runs montygo serve and kills it if it is still running
// after a generous bound (a flag it should refuse made it serve).
func runServeBounded(t *testing.T, env []string, args ...string) (stderr string, code int) {
	t.Helper()
	bin := testenv.Worker(t)
	montygoBin := montygo(t) // built before the bound starts: a first build is slow
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, montygoBin, append(append([]string{"serve"}, serveDefaults(args, "--worker", bin, "--prewarm", "1")...), args...)...)
	cmd.Env = append(os.Environ(), env...)
	var errb strings.Builder
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		return errb.String(), -1
	}
	return errb.String(), cmd.ProcessState.ExitCode()
}

// TestServeBracketedIPv6Host: --host [::1] (the bracketed form of a URL)
// listens on ::1, as --host ::1 does; it failed with "[[::1]]".
func TestServeBracketedIPv6Host(t *testing.T) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	l.Close()
	for _, host := range []string{"[::1]", "::1"} {
		p := startServe(t, nil, "--host", host, "--port", "0")
		if !strings.HasPrefix(p.url, "ws://[::1]:") {
			t.Errorf("--host %s: URL %q", host, p.url)
		}
	}
}

// TestServeRefusesHostWithPort: a --host holding a port (or brackets
// around a name) is refused by name instead of being joined into an
// address no one can read.
func TestServeRefusesHostWithPort(t *testing.T) {
	key := writeFile(t, "key", "0123456789abcdef0123")
	for _, host := range []string{"127.0.0.1:8000", "[127.0.0.1]:8000", "[localhost]", "[::1"} {
		stderr, code := runServeBounded(t, nil, "--host", host, "--port", "0", "--dump-key", key)
		if code != 2 || !strings.Contains(stderr, "--host") {
			t.Errorf("--host %s: exit %d, %s", host, code, stderr)
		}
	}
}

// TestServeRefusesCountsThatMeanSomethingElse: a count flag whose value
// server.Config would read as something else (0 as the default, a
// negative as "no cap") is refused; 0 spells "no cap" where the help
// says so.
func TestServeRefusesCountsThatMeanSomethingElse(t *testing.T) {
	key := writeFile(t, "key", "0123456789abcdef0123")
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--max-recursion-depth", "0"}, "--max-recursion-depth"},
		{nil, []string{"--max-suspensions", "0"}, "--max-suspensions"},
		{nil, []string{"--max-sessions", "-1"}, "--max-sessions"},
		{nil, []string{"--max-sessions-per-client", "-3"}, "--max-sessions-per-client"},
		{nil, []string{"--max-auth-failures", "-1"}, "--max-auth-failures"},
		{[]string{"MONTY_SERVER_MAX_SESSIONS=-1"}, nil, "--max-sessions"},
		{nil, []string{"--max-restarts", "-1"}, "--max-restarts"},
		{nil, []string{"--restart-window", "0"}, "restart-window"},
		{[]string{"MONTY_SERVER_RESTART_WINDOW=-1m"}, nil, "RESTART_WINDOW"},
	} {
		stderr, code := runServeBounded(t, c.env, append([]string{"--listen", "127.0.0.1:0", "--dump-key", key}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v %v: exit %d, stderr %q, want 2 and %q", c.env, c.args, code, stderr, c.want)
		}
	}
}

// serve's duration flags showed their argument as "value", and only
// --turn-timeout said it takes seconds or a Go duration (--max-duration
// said "(seconds)" alone though it takes both); a negative Go duration was
// "not a duration".
func TestServeDurationFlagsSayWhatTheyTake(t *testing.T) {
	var out, errb strings.Builder
	mainArgs([]string{"serve", "-h"}, strings.NewReader(""), &out, &errb)
	for _, name := range []string{"turn-timeout", "idle-timeout", "session-timeout", "max-duration", "drain-grace", "read-header-timeout", "restart-window"} {
		if !strings.Contains(out.String(), "  -"+name+" DURATION\n") {
			t.Errorf("serve -h: -%s does not name its DURATION:\n%s", name, out.String())
		}
	}
	if n := strings.Count(out.String(), "seconds, as 90, or a Go duration, as 1m30s"); n != 7 {
		t.Errorf("serve -h: %d duration flags say what they take, want 7", n)
	}
	errb.Reset()
	if code := mainArgs([]string{"serve", "--turn-timeout", "-5s"}, strings.NewReader(""), &out, &errb); code != 2 || !strings.Contains(errb.String(), `"-5s" is negative`) {
		t.Errorf("serve --turn-timeout -5s: exit %d, stderr %q; want 2 and that it is negative", code, errb.String())
	}
}

// --listen with --host or --port (or their MONTY_SERVER_ twins) was
// combined without a word: --host and --port replaced --listen's parts,
// so `--listen 0.0.0.0:9000 --port 8080` served on 0.0.0.0:8080, an
// address neither flag named. Two ways of giving one address are now a
// usage mistake (exit 2) naming both, as each was given; --host and
// --port without --listen still work (TestServeBracketedIPv6Host).
func TestServeListenWithHostOrPortIsAUsageError(t *testing.T) {
	key := writeFile(t, "key", "0123456789abcdef0123")
	for _, c := range []struct {
		env          []string
		args         []string
		want1, want2 string
	}{
		{nil, []string{"--listen", "127.0.0.1:0", "--port", "0"}, "--listen", "--port"},
		{nil, []string{"--listen", "127.0.0.1:0", "--host", "127.0.0.1"}, "--listen", "--host"},
		{nil, []string{"--port", "0", "--listen=127.0.0.1:0"}, "--listen", "--port"},
		{[]string{"MONTY_SERVER_LISTEN=127.0.0.1:0"}, []string{"--port", "0"}, "MONTY_SERVER_LISTEN", "--port"},
		{[]string{"MONTY_SERVER_HOST=127.0.0.1"}, []string{"--listen", "127.0.0.1:0"}, "--listen", "MONTY_SERVER_HOST"},
	} {
		stderr, code := runServeBounded(t, c.env, append([]string{"--dump-key", key}, c.args...)...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "montygo serve: ") ||
			!strings.Contains(stderr, c.want1+" and "+c.want2) {
			t.Errorf("%v %v: exit %d, stderr %q; want 2 and one line naming %s and %s", c.env, c.args, code, stderr, c.want1, c.want2)
		}
	}
}

// serve's errors about the files its flags name did not say which flag:
// "open /x: no such file or directory" for --dump-key, --dump-key-previous
// and --tokens alike, "TLS key pair: open /x: ..." for either TLS file;
// --log-level's carried slog's package tag ("slog: level string ...");
// and a --listen port past 65535 came back from net.Listen as "listen
// tcp: address 99999: invalid port", naming no flag. Each names its flag
// (and file) now, on one line, exit 2 as before.
func TestServeFlagErrorsNameTheFlag(t *testing.T) {
	key := writeFile(t, "key", "0123456789abcdef0123")
	missing := t.TempDir() + "/missing"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dump-key", missing}, "--dump-key " + missing + ": no such file or directory"},
		{[]string{"--dump-key", key, "--dump-key-previous", missing}, "--dump-key-previous " + missing + ": no such file or directory"},
		{[]string{"--dump-key", key, "--tokens", missing}, "--tokens " + missing + ": no such file or directory"},
		{[]string{"--dump-key", key, "--tls-cert", missing, "--tls-key", key}, "--tls-cert " + missing + ": no such file or directory"},
		{[]string{"--dump-key", key, "--tls-cert", key, "--tls-key", missing}, "--tls-key " + missing + ": no such file or directory"},
		{[]string{"--dump-key", key, "--tls-cert", key, "--tls-key", key}, "--tls-cert " + key + " and --tls-key " + key + ": "},
		{[]string{"--dump-key", key, "--log-level", "loud"}, `--log-level "loud": want debug, info, warn or error`},
		{[]string{"--dump-key", key, "--listen", "127.0.0.1:99999"}, `--listen "127.0.0.1:99999": port "99999" is not a port number`},
	} {
		stderr, code := runServeBounded(t, nil, append([]string{"--listen", "127.0.0.1:0"}[:serveListenDefault(c.args)], c.args...)...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "montygo serve: "+c.want) ||
			strings.Contains(stderr, "slog: ") || strings.Contains(stderr, "tls: ") || strings.Contains(stderr, "open ") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line starting %q", c.args, code, stderr, "montygo serve: "+c.want)
		}
	}
}

// serveListenDefault is how many of "--listen 127.0.0.1:0" to put before
// args: none when args give --listen.
func serveListenDefault(args []string) int {
	if len(serveDefaults(args, "--listen", "")) == 0 {
		return 0
	}
	return 2
}

// A --prewarm above --max-sessions was cut down to it without a word
// (server.Config clamps it: idle workers past the cap on open sessions
// would never be used), so the server kept fewer workers ready than
// asked for. Asking for both is now a usage error naming both; a
// --max-sessions under the default --prewarm still just lowers it.
func TestServePrewarmAboveMaxSessionsIsAUsageError(t *testing.T) {
	key := writeFile(t, "key", "0123456789abcdef0123")
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--prewarm", "3", "--max-sessions", "2"}, "--prewarm 3 is more than --max-sessions 2"},
		{[]string{"MONTY_SERVER_MAX_SESSIONS=2"}, []string{"--prewarm", "3"}, "--prewarm 3 is more than MONTY_SERVER_MAX_SESSIONS 2"},
		{nil, []string{"--prewarm", "65"}, "--prewarm 65 is more than --max-sessions 64 (its default)"},
	} {
		stderr, code := runServeBounded(t, c.env, append([]string{"--listen", "127.0.0.1:0", "--dump-key", key}, c.args...)...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "montygo serve: "+c.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want 2 and one line starting %q", c.env, c.args, code, stderr, c.want)
		}
	}
	// No --prewarm: the default (2) follows --max-sessions 1 down.
	cmd := exec.Command(montygo(t), "serve", "--listen", "127.0.0.1:0", "--dump-key", key, "--worker", testenv.Worker(t), "--max-sessions", "1")
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "ws://127.0.0.1:") {
		t.Errorf("--max-sessions 1 without --prewarm: URL line %q (%v); stderr %q", line, err, errb.String())
	}
}

// serveOutcome runs montygo serve with args until it exits or prints its
// URL (it then serves, and is killed): the exit status (-1 when it
// served), what it wrote to stderr, and the URL line.
func serveOutcome(t *testing.T, args ...string) (code int, stderr, url string) {
	t.Helper()
	cmd := exec.Command(montygo(t), append(append([]string{"serve"}, serveDefaults(args, "--worker", testenv.Worker(t), "--prewarm", "1", "--log-level", "error")...), args...)...)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "" {
		cmd.Process.Kill()
		cmd.Wait()
		return -1, errb.String(), strings.TrimSpace(line)
	}
	cmd.Wait()
	return cmd.ProcessState.ExitCode(), errb.String(), ""
}

// A flag given with an empty value was taken as left out: `--tls-cert
// "$CERT" --tls-key "$KEY"` with the variables unset served plain ws://
// (bearer tokens in the clear) where TLS was asked for, and an empty
// --tokens, --host or --port took the defaults the same way. Every serve
// flag that names a file, an address or a level now refuses "".
func TestServeEmptyFlagValuesAreUsageErrors(t *testing.T) {
	key := writeFile(t, "key", "0123456789abcdef0123")
	tokens := writeFile(t, "tokens", "alice:tok-alice-0123456789\n")
	for _, args := range [][]string{
		{"--tls-cert", "", "--tls-key", "", "--tokens", tokens},
		{"--tokens", ""},
		{"--client-ca", ""},
		{"--dump-key-previous", ""},
		{"--worker", ""},
		{"--host", ""},
		{"--port", ""},
	} {
		all := append([]string{"--dump-key", key}, args...)
		if !slices.Contains(args, "--host") && !slices.Contains(args, "--port") {
			all = append(all, "--listen", "127.0.0.1:0")
		}
		code, stderr, url := serveOutcome(t, all...)
		if want := `montygo serve: ` + args[0] + ` "": `; code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, want) {
			t.Errorf("serve %q: exit %d (URL %q), stderr %q; want 2 and one line starting %q", args, code, url, stderr, want)
		}
	}
}

// A --max-connections below --max-sessions capped the sessions at the
// connections without a word (each session holds a connection), so the
// session cap the server reported (/info) was one it could never reach.
// The pair is a usage error naming both.
func TestServeMaxConnectionsBelowMaxSessionsIsAUsageError(t *testing.T) {
	key := writeFile(t, "key", "0123456789abcdef0123")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-connections", "3", "--max-sessions", "4", "--prewarm", "1"}, "--max-connections 3 is less than --max-sessions 4"},
		{[]string{"--max-connections", "10"}, "--max-connections 10 is less than --max-sessions 64 (its default)"},
	} {
		code, stderr, url := serveOutcome(t, append([]string{"--listen", "127.0.0.1:0", "--dump-key", key}, c.args...)...)
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "montygo serve: "+c.want) {
			t.Errorf("serve %q: exit %d (URL %q), stderr %q; want 2 and one line starting %q", c.args, code, url, stderr, c.want)
		}
	}
	// Equal, or no cap on sessions, is no conflict.
	for _, args := range [][]string{{"--max-connections", "4", "--max-sessions", "4"}, {"--max-connections", "4", "--max-sessions", "0"}} {
		if code, stderr, _ := serveOutcome(t, append([]string{"--listen", "127.0.0.1:0", "--dump-key", key}, args...)...); code != -1 {
			t.Errorf("serve %q: exit %d, stderr %q; want it to serve", args, code, stderr)
		}
	}
}

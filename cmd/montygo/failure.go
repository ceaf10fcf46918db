//go:build unix

package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/gomonty/monty/internal/redact"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
)

// exitSandboxFailed is the exit status of run and repl when the program
// could not be run to its end for a reason that is not the program's: no
// worker was found or it did not start, it died or broke the protocol, or
// the remote server could not be reached or was lost. A Python exception
// exits 1 and a usage mistake 2, so a script can tell the three apart.
const exitSandboxFailed = 3

// exitStatusTable is the exit statuses of every command, shown by
// `montygo help`; each number means one kind of end whichever command
// ends with it.
const exitStatusTable = `Exit status (every command): 0 success, or help asked for; 1 the work failed: run's
program raised or ran past a time limit (a remote server's too), decode met a frame
it could not decode, conform found a check that failed, serve could not listen
(the address is taken) or stopped serving on an error; 2 a usage mistake, one line
on stderr (a flag the parser refuses adds a pointer to -h), a --listen host that
does not resolve included; 3 the sandbox failed: no worker was found, it did not start, died or broke the
protocol, or the remote server could not be reached or was lost (run, repl, serve;
conform worker, for a worker or --remote endpoint it cannot find or reach); 130
Ctrl-C, 143 SIGTERM. subprocess, being a worker, exits as a worker does (montygo
help subprocess).
`

// exitStatusHelp ends the usage of run.
const exitStatusHelp = `Exit status: 0 success; 1 the program raised (a Python traceback on stderr,
TimeoutError and MemoryError for the limits) or a remote server ended it at a
time limit (close code 4002 or 4004); 2 a usage mistake; 3 the sandbox failed (no
worker found, it did not start, died or broke the protocol, or the remote server
was lost); 130 Ctrl-C, 143 SIGTERM.
`

// replExitStatusHelp ends the usage of repl, whose inputs' exceptions do
// not end it.
const replExitStatusHelp = `Exit status: 0 at the end of input; 2 a usage mistake; 3 the sandbox failed
(no worker found, it could not be started again after it died, or the remote
server was lost); 143 SIGTERM.
`

// sandboxFailed marks err, a failure of the worker or of the connection
// to it, for exitSandboxFailed. The watchdog's timeout enforces
// --max-duration as the worker's own TimeoutError does, so it exits 1 as
// that exception does; so does a remote server's end of a turn for
// running too long (close code 4002, its --turn-timeout, or 4004, its
// own watchdog past max_duration), a time limit the server enforced on
// the program, as a local one is, and no sign of a failed sandbox. The
// reply bound (session.LimitReply: a worker that never answered a turn
// running no code) is the worker's failure.
func sandboxFailed(err error) error {
	var te *session.TimeoutError
	var dc *session.DisconnectedError
	var big *session.RequestTooLargeError
	var bad *session.InvalidRequestError
	if errors.As(err, &te) && te.Watchdog && te.Limit != session.LimitReply ||
		errors.As(err, &dc) && errors.Is(dc, session.ErrTimeout) ||
		errors.As(err, &big) || errors.As(err, &bad) {
		// The program's own limit, or a program (with its inputs) that
		// could not be sent: not the sandbox's failure.
		return err
	}
	return exitError{exitSandboxFailed, err}
}

// startFailed words a failure to start the session of run or repl for the
// command line, and marks it for exitSandboxFailed.
func (f *sessionFlags) startFailed(err error) error {
	var st *session.StartTimeoutError
	if errors.As(err, &st) && len(f.remotes) == 0 {
		// The library speaks of its Configure handshake; the user set,
		// or left at its default, --start-timeout.
		return sandboxFailed(fmt.Errorf("the worker did not start within %v (--start-timeout) and was killed", st.Timeout))
	}
	var vm *session.VersionMismatchError
	if errors.As(err, &vm) && f.protocol != 0 && vm.Unusable == nil {
		// The user pinned a version this worker does not speak: a usage
		// mistake, told in terms of the flag.
		return exitError{2, fmt.Errorf("--protocol %d: the worker does not speak it (%w); leave --protocol out to negotiate", f.protocol, err)}
	}
	if len(f.remotes) == 0 {
		err = workerNotFound(err, "--worker")
		if bin, rerr := worker.ResolveBinary(f.worker); rerr == nil {
			err = notAWorker(err, bin)
		}
	}
	return sandboxFailed(err)
}

// workerNotFound words a *worker.BinaryNotFoundError for the command
// line from its fields: the library's text advises Config.Binary, which a
// CLI user never set, and an install script by its path in the source
// tree. flag is how the user named the binary ("--worker", "$MONTY_BIN"),
// shown before a named binary that could not be used; other errors are
// returned as they are. The advice names --worker, which version lacks
// (workerNotFoundNoFlag).
func workerNotFound(err error, flag string) error {
	return wordNotFound(err, flag, "--worker PATH or $"+worker.EnvBinary)
}

// workerNotFoundNoFlag is workerNotFound for a command without --worker.
func workerNotFoundNoFlag(err error) error {
	return wordNotFound(err, "", "$"+worker.EnvBinary)
}

func wordNotFound(err error, flag, how string) error {
	var nf *worker.BinaryNotFoundError
	if !errors.As(err, &nf) {
		return err
	}
	tried := strings.Join(nf.Tried, "; ")
	if nf.Named != "" && nf.Err != nil {
		if nf.FromEnv {
			flag = "$" + worker.EnvBinary
		}
		tried = strings.TrimPrefix(flag+" "+nf.Named+": "+nf.Err.Error(), " ")
	}
	return fmt.Errorf("%w (tried: %s); name one with %s (make worker installs the released one in .monty/bin)",
		worker.ErrBinaryNotFound, tried, how)
}

// notAWorker adds to err, a failure to start a worker, the question a
// user should ask when the binary ran but did not speak the protocol (it
// exited, or wrote something that is not a frame): bin may not be a monty
// worker at all. Other errors are returned as they are.
func notAWorker(err error, bin string) error {
	var crash *worker.CrashError
	var pe *session.ProtocolError
	if bin == "" || !(errors.As(err, &crash) && crash.Reason != worker.Announced) && !errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%w (is %s a monty worker? it is run as '%s subprocess')", err, bin, bin)
}

// subprocessExitStatusHelp ends the usage of subprocess, which exits as a
// worker does.
const subprocessExitStatusHelp = `Exit status, as a worker's: 0 the parent closed the session; 2 a usage mistake;
3 standard output broke (the parent went away); 4 fatal (no inner worker found,
a protocol version refused); 65 out of memory; 76 a broken frame stream. An inner
worker that dies ends montygo the same way (its status, or its signal).
`

// decodeExitStatusHelp ends the usage of decode.
const decodeExitStatusHelp = `Exit status: 0 every frame decoded; 1 a frame did not decode (or the stream broke
off); 2 a usage mistake.
`

// conformExitStatusHelp ends the usage of conform worker and parent.
const conformExitStatusHelp = `Exit status: 0 every selected check passed (for conform worker, also: exactly
the --expect-fail rules failed); 1 a check failed; 2 a usage mistake (a parent
command that cannot be run included); 3 (conform worker) no worker was found, or
the --remote endpoint could not be reached.
`

// serveExitStatusHelp ends the usage of serve.
const serveExitStatusHelp = `Exit status: 0 drained after SIGTERM (or stopped while starting); 1 it could not
listen or stopped serving on an error; 2 a usage mistake (a flag, a variable or a
file it reads); 3 the worker pool did not start (no worker found, the first worker
did not start, died or broke the protocol).
`

// untagged is err told without the package tag its text begins with
// (tag, such as "ws: "), for a line that names the flag already.
type untagged struct {
	err error
	tag string
}

func (u untagged) Error() string { return strings.TrimPrefix(u.err.Error(), u.tag) }

func (u untagged) Unwrap() error { return u.err }

// libraryTags are the package names the library's error texts begin
// with, and begin again with at each layer that adds its context
// ("server: worker pool: monty pool: first worker: ..."). A line that
// already starts "montygo CMD:" does not need them.
var libraryTags = []string{"monty session: ", "monty pool: ", "server: "}

// cliText is err as the CLI prints it: one line (errors.Join's lines,
// as several endpoints' failures, are joined with "; "), without the
// library's package tags where a text or one of its ": "-separated parts
// begins with one. The error itself is unchanged; errors.Is and As on it
// still work.
func cliText(err error) string {
	s := err.Error()
	for _, de := range dialErrors(err, nil) {
		s = strings.ReplaceAll(s, de.Error(), dialText(de))
	}
	s = strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "; ")
	var b strings.Builder
	for {
		// s starts a part: drop the tags it begins with.
		for stripped := true; stripped; {
			stripped = false
			for _, tag := range libraryTags {
				if rest, ok := strings.CutPrefix(s, tag); ok {
					s, stripped = rest, true
				}
			}
		}
		i := strings.Index(s, ": ")
		if j := strings.Index(s, "; "); j >= 0 && (i < 0 || j < i) {
			i = j
		}
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+2])
		s = s[i+2:]
	}
}

// workerStartCause finds, in a failure of the worker pool to start, why
// its first worker did not start (a *worker.BinaryNotFoundError, a crash,
// a start timeout, a refused protocol version, a protocol error), without
// the server's and the pool's layers of context around it; nil if err
// holds none of those.
func workerStartCause(err error) error {
	var (
		nf    *worker.BinaryNotFoundError
		crash *worker.CrashError
		mem   *worker.MemoryLimitError
		st    *session.StartTimeoutError
		vm    *session.VersionMismatchError
		pe    *session.ProtocolError
	)
	switch {
	case errors.As(err, &nf):
		return nf
	case errors.As(err, &vm):
		return vm
	case errors.As(err, &st):
		return st
	case errors.As(err, &mem):
		return mem
	case errors.As(err, &crash):
		return crash
	case errors.As(err, &pe):
		return pe
	}
	return nil
}

// dialErrors appends to des the WebSocket dial failures in err's tree
// (several --remote endpoints' failures are joined).
func dialErrors(err error, des []*ws.DialError) []*ws.DialError {
	switch e := err.(type) {
	case nil:
		return des
	case *ws.DialError:
		return append(des, e)
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			des = dialErrors(inner, des)
		}
		return des
	}
	return dialErrors(errors.Unwrap(err), des)
}

// dialText is a WebSocket dial's failure as the CLI says it: the endpoint
// (secrets masked) and the cause, without the layers of the libraries
// under the dial, which repeat the URL and the failure ("failed to
// WebSocket dial: failed to send handshake request: Get \"http://...\":
// dial tcp 127.0.0.1:1: connect: connection refused", or "expected
// handshake response status code 101 but got 401" after a status the text
// has named already).
func dialText(de *ws.DialError) string {
	endpoint := redact.URL(de.URL)
	if de.StatusCode != 0 {
		s := fmt.Sprintf("%s: upgrade refused with HTTP %d", endpoint, de.StatusCode)
		if de.Reason != "" {
			s += " (" + de.Reason + ")"
		}
		return s
	}
	var (
		errno syscall.Errno
		dns   *net.DNSError
		op    *net.OpError
		ue    *url.Error
		cause string
	)
	switch {
	case errors.As(de.Err, &dns):
		cause = "lookup " + dns.Name + ": " + dns.Err
	case errors.As(de.Err, &errno):
		cause = errno.Error()
	case errors.As(de.Err, &op) && op.Err != nil:
		cause = op.Err.Error() // an i/o timeout, say
	case errors.As(de.Err, &ue):
		// net/http's words (a TLS handshake, a plain HTTP answer to
		// wss://), without its "Get URL: " and package tags.
		cause = ue.Err.Error()
		for _, tag := range []string{"http: ", "tls: "} {
			cause = strings.TrimPrefix(cause, tag)
		}
	case de.Err != nil:
		return de.Error()
	}
	return endpoint + ": cannot connect: " + redact.Text(cause, de.URL)
}

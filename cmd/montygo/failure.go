//go:build unix

package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// exitSandboxFailed is the exit status of run and repl when the program
// could not be run to its end for a reason that is not the program's: no
// worker was found or it did not start, it died or broke the protocol, or
// the remote server could not be reached or was lost. A Python exception
// exits 1 and a usage mistake 2, so a script can tell the three apart.
const exitSandboxFailed = 3

// exitStatusHelp ends the usage of run.
const exitStatusHelp = `Exit status: 0 success; 1 the program raised (a Python traceback on stderr,
TimeoutError and MemoryError for the limits); 2 a usage mistake; 3 the sandbox
failed (no worker found, it did not start, died or broke the protocol, or the
remote server was lost); 130 Ctrl-C, 143 SIGTERM.
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
// that exception does.
func sandboxFailed(err error) error {
	var te *session.TimeoutError
	var big *session.RequestTooLargeError
	var bad *session.InvalidRequestError
	if errors.As(err, &te) && te.Watchdog || errors.As(err, &big) || errors.As(err, &bad) {
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

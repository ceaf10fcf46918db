//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gomonty/monty/mount"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/value"
)

// repl is an interactive session: one worker, globals persisting between
// inputs. After every input the session is dumped, so that when Ctrl-C has
// to kill a running input's worker, a fresh worker is loaded with the state
// from before that input and the REPL carries on.
type repl struct {
	flags  *sessionFlags
	launch []session.Launch
	cfg    session.Config
	table  *mount.Table
	sess   *session.Session
	dump   []byte
	slept  time.Duration // the sleep charged when dump was taken (protocol 5)
	stdout io.Writer
	stderr io.Writer
}

func replCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("repl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf sessionFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: montygo repl [flags]   (globals persist between inputs; Ctrl-C interrupts an input, Ctrl-D exits)")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), replExitStatusHelp)
	}
	var pos []string
	if err := parseArgs(fs, stdout, stderr, func() (err error) { pos, err = parseInterspersed(fs, args); return err }); err != nil {
		return err
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "montygo repl: unexpected argument %q (run a file with montygo run FILE)\n", pos[0])
		return exitError{code: 2}
	}
	cfg, table, err := sf.config("<stdin>", stderr)
	if err != nil {
		// A flag value (or $MONTYGO_LOG) that cannot be used: a usage
		// mistake, told apart from a program's exception (exit 1).
		fmt.Fprintf(stderr, "montygo repl: %v\n", err)
		return exitError{code: 2}
	}
	slog.SetDefault(cfg.Logger)
	if table != nil {
		defer table.Close()
	}
	launch, err := sf.launch()
	if err != nil {
		fmt.Fprintln(stderr, "montygo repl:", err)
		return exitError{code: 2}
	}
	r := &repl{flags: &sf, launch: launch, cfg: cfg, table: table, stdout: stdout, stderr: stderr}
	if err := r.start(ctx); err != nil {
		return err
	}
	defer func() { r.close() }()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)

	// As python3 -i does, the REPL's own text (banner, prompts, the
	// newline at the end of input, an interrupted prompt) goes to standard
	// error, so that standard output holds only what the inputs print and
	// their results' reprs when either is piped; a terminal's line editor
	// draws its prompts on the terminal.
	lr := newLineReader(stdin, stdout, stderr)
	defer lr.close()
	restore := onForcedExit(lr.close) // leave the terminal as it was found
	defer restore()
	edit, _ := lr.(*editReader)

	// readLine blocks; it runs on its own goroutine so that a signal or
	// the end of ctx is seen while it waits.
	type prompt struct{ text, suggestion string }
	type result struct {
		line string
		err  error
	}
	prompts := make(chan prompt)
	results := make(chan result, 1)
	go func() {
		for p := range prompts {
			line, err := lr.readLine(p.text, p.suggestion)
			results <- result{line, err}
		}
	}()
	defer close(prompts)

	fmt.Fprintf(stderr, "%s via gomonty (protocol %d). Ctrl-D exits, Ctrl-C interrupts.\n", r.workerVersion(ctx), r.sess.Version())
	var buf []string
	bufLen := 0   // the bytes of buf's lines, each with its newline
	var blk block // the block check over buf's lines, each scanned once
	waiting := false
	for {
		ps := ">>> "
		if len(buf) > 0 {
			ps = "... "
		}
		if !waiting {
			p := prompt{text: ps}
			if edit != nil && len(buf) > 0 {
				p.suggestion = edit.suggest(buf)
			}
			prompts <- p
			waiting = true
		}
		select {
		case <-ctx.Done():
			return nil
		case <-sigs:
			// Ctrl-C while a plain reader waits (a terminal in edit mode
			// reads Ctrl-C as a key instead).
			fmt.Fprint(stderr, "\nKeyboardInterrupt\n>>> ")
			buf, bufLen, blk = buf[:0], 0, block{}
		case res := <-results:
			waiting = false
			switch {
			case errors.Is(res.err, errPromptAborted):
				fmt.Fprintln(stderr, "KeyboardInterrupt")
				buf, bufLen, blk = buf[:0], 0, block{}
				continue
			case errors.Is(res.err, errInputTooLong):
				fmt.Fprintf(stderr, "montygo: the input is over %d bytes (what one frame can carry); dropped\n", maxInputLen)
				buf, bufLen, blk = buf[:0], 0, block{}
				continue
			case res.err != nil:
				fmt.Fprintln(stderr)
				// The end of the input ends a block left open (no blank
				// line after it, an unclosed bracket): it is run, as
				// python3 -i runs it, not dropped.
				if src := strings.Join(buf, "\n"); strings.TrimSpace(src) != "" {
					lr.remember(buf)
					if err := r.eval(ctx, src, sigs); err != nil && ctx.Err() == nil {
						return err
					}
				}
				return nil
			}
			buf = append(buf, res.line)
			bufLen += len(res.line) + 1
			if bufLen > maxInputLen {
				// A block that outgrew a frame (an unclosed bracket fed
				// for ever) is dropped, as an over-long line is.
				fmt.Fprintf(stderr, "montygo: the input is over %d bytes (what one frame can carry); dropped\n", maxInputLen)
				buf, bufLen, blk = buf[:0], 0, block{}
				continue
			}
			if !blk.add(res.line) {
				continue
			}
			src := strings.Join(buf, "\n")
			lr.remember(buf)
			buf, bufLen, blk = buf[:0], 0, block{}
			if strings.TrimSpace(src) == "" {
				continue
			}
			if err := r.eval(ctx, src, sigs); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

func (r *repl) workerVersion(ctx context.Context) string {
	if v := workerVersion(ctx, r.sess.Binary()); v != "" {
		return v
	}
	return "worker"
}

// close stops the session's worker.
func (r *repl) close() {
	r.sess.Close()
	liveSessions.remove(r.sess)
}

func (r *repl) start(ctx context.Context) error {
	cfg := r.cfg
	cfg.Print = session.Writers(r.stdout, r.stderr)
	s, err := startSession(ctx, r.launch, cfg)
	if err != nil {
		return r.flags.startFailed(err)
	}
	r.sess = s
	liveSessions.add(s)
	if r.dump != nil {
		if _, err := s.LoadWith(ctx, r.dump, session.LoadOptions{TotalSleep: r.slept}); err != nil {
			return sandboxFailed(fmt.Errorf("restoring the session: %w", err))
		}
	}
	return nil
}

// eval runs one input. Ctrl-C while it runs kills the worker; the REPL then
// restarts from the dump taken after the previous input.
func (r *repl) eval(ctx context.Context, src string, sigs chan os.Signal) error {
	if i := invalidUTF8(src); i >= 0 {
		// Said as run says it (the protocol carries only UTF-8); the
		// REPL carries on.
		fmt.Fprintf(r.stderr, "montygo: the input is not valid UTF-8 (byte %d)\n", i)
		return nil
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	signalled := make(chan bool, 1) // the watcher's verdict, once it has ended
	go func() {
		select {
		case <-sigs:
			cancel()
			signalled <- true
		case <-done:
			signalled <- false
		}
	}()
	var opts []session.RunOption
	if r.table != nil {
		opts = append(opts, session.WithOS(r.table))
	}
	res, err := r.sess.Run(runCtx, src, opts...)
	close(done)
	// The watcher may still take a Ctrl-C that came as the run ended (both
	// its channels ready): wait for its verdict before reading it.
	sawSignal := <-signalled
	cancel()
	// The input was interrupted only if the run was cut short; a Ctrl-C
	// that came after the run had ended is handed back to the prompt,
	// which reports it there, rather than being lost or blamed for the
	// input's own outcome.
	interrupted := sawSignal && errors.Is(err, context.Canceled)
	if sawSignal && !interrupted {
		select {
		case sigs <- os.Interrupt:
		default:
		}
	}
	if err != nil && ctx.Err() != nil {
		// The REPL itself is ending (SIGTERM): the run was cut short on
		// purpose, and there is nothing to report or restart.
		return ctx.Err()
	}
	switch {
	case err == nil:
		s, rerr := resultRepr(res)
		var de *value.IntStrDigitsError
		switch {
		case errors.As(rerr, &de):
			fmt.Fprintf(r.stderr, "%s: %s\n", de.PythonType(), de.Error())
		case rerr != nil:
			fmt.Fprintf(r.stderr, "montygo: %s\n", cliText(rerr))
		case s != "None":
			fmt.Fprintln(r.stdout, s)
		}
	case interrupted:
		fmt.Fprintln(r.stderr, "KeyboardInterrupt")
	default:
		var pe *session.PythonError
		var te *session.TypeCheckError
		switch {
		case errors.As(err, &pe):
			fmt.Fprint(r.stderr, tracebackText(pe.Exception, "<stdin>", src))
		case errors.As(err, &te):
			fmt.Fprintln(r.stderr, strings.TrimRight(te.Diagnostics, "\n"))
		default:
			fmt.Fprintf(r.stderr, "montygo: %s\n", cliText(err))
		}
	}
	if err != nil && !session.Survives(err) {
		r.close()
		if interrupted {
			fmt.Fprintln(r.stderr, "(worker restarted; globals restored from before the interrupted input)")
		} else {
			fmt.Fprintln(r.stderr, "(worker lost; restarted with the globals from before this input)")
		}
		return r.start(ctx)
	}
	d, derr := r.sess.Dump(ctx)
	switch {
	case derr == nil:
		r.dump, r.slept = d, r.sess.Stamps().TotalSleep
	case ctx.Err() != nil:
		return ctx.Err()
	case !session.Survives(derr):
		// The worker died saving the session (a dump can need more memory
		// than the input did): replace it now, or the next input would
		// meet a dead session and be lost to the restart.
		fmt.Fprintf(r.stderr, "montygo: saving the session: %s\n", cliText(derr))
		fmt.Fprintln(r.stderr, "(worker lost; restarted with the globals from before this input)")
		r.close()
		return r.start(ctx)
	}
	return nil
}

// blockScanned counts the bytes the block check has scanned, for the test
// that holds it linear in the input.
var blockScanned atomic.Int64

// complete reports whether the lines typed so far form a whole input: no
// open bracket or triple-quoted string, no trailing backslash, and — for a
// block (a first line ending in ':') — a final blank line.
func complete(lines []string) bool {
	var b block
	done := false
	for _, line := range lines {
		done = b.add(line)
	}
	return done
}

// block is the state of the block check over the lines typed so far, so
// that each new line is scanned once (complete's answer for the lines
// added). The zero value is an empty block.
type block struct {
	depth  int    // open brackets
	triple string // the quotes of an open triple-quoted string
	first  string // the first line's code (without its comment), trimmed
	lines  int
}

// add scans the next line and reports whether the lines added so far
// form a whole input.
func (b *block) add(line string) bool {
	blockScanned.Add(int64(len(line)) + 1)
	// code is the line without its comment: a '#' outside a string, as
	// the scan below finds it (a '#' in a string is no comment).
	code := line
	inStr := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if b.triple != "" {
			if c == '\\' {
				i++ // an escaped quote does not close the string
			} else if strings.HasPrefix(line[i:], b.triple) {
				i += 2
				b.triple = ""
			}
			continue
		}
		if inStr != 0 {
			if c == '\\' {
				i++
			} else if c == inStr {
				inStr = 0
			}
			continue
		}
		switch c {
		case '#':
			code = line[:i]
			i = len(line)
		case '"', '\'':
			if strings.HasPrefix(line[i:], strings.Repeat(string(c), 3)) {
				b.triple = strings.Repeat(string(c), 3)
				i += 2
			} else {
				inStr = c
			}
		case '(', '[', '{':
			b.depth++
		case ')', ']', '}':
			b.depth--
		}
	}
	if b.lines == 0 {
		b.first = strings.TrimSpace(code)
	}
	b.lines++
	if b.depth > 0 || b.triple != "" {
		return false
	}
	last := strings.TrimRight(line, " \t")
	// A backslash continues the line only outside a comment.
	if strings.HasSuffix(strings.TrimRight(code, " \t"), "\\") {
		return false
	}
	if strings.HasSuffix(strings.TrimSpace(code), ":") {
		return false
	}
	// A compound statement (or a decorated one) ends with a blank line.
	if strings.HasSuffix(b.first, ":") || strings.HasPrefix(b.first, "@") {
		return b.lines > 1 && strings.TrimSpace(last) == ""
	}
	return true
}

//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/pyident"
	"github.com/gomonty/monty/internal/redact"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/mount"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// sessionFlags are the flags shared by run and repl.
type sessionFlags struct {
	worker      string
	maxDuration string
	maxMemory   string
	startTime   string
	mounts      multiFlag
	protocol    versionFlag
	typeCheck   bool
	verbose     bool
	remotes     multiFlag
	headers     multiFlag
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }
func (m *multiFlag) repeatable()        {}

func (f *sessionFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.worker, "worker", "", "`PATH` of the monty worker binary (default: $MONTY_BIN, the project's .monty/bin/monty, then PATH)")
	fs.StringVar(&f.maxDuration, "max-duration", "", "limit on the session's total execution time in `SECONDS` (fractional, e.g. 0.5); in the REPL it spans every input; default 60, none for no limit")
	fs.StringVar(&f.maxMemory, "max-memory", "", "limit on sandbox memory in `BYTES` (suffixes: KB, MB, GB, KiB, MiB, GiB); default 256MiB, none for no limit")
	fs.StringVar(&f.startTime, "start-timeout", "", "bound on the worker's start (Configure handshake) in `SECONDS` (default 10)")
	fs.Var(&f.mounts, "mount", "expose a host directory, `HOST::VIRTUAL[::MODE]`, MODE being ro (the default), rw or overlay (repeatable)")
	fs.Var(&f.protocol, "protocol", "pin the protocol `version` (default: negotiate)")
	fs.BoolVar(&f.typeCheck, "type-check", false, "type-check each snippet before running it")
	fs.Var(&f.remotes, "remote", "run on a remote Monty server at this ws:// or wss:// `URL` instead of a local worker (repeatable: tried in order at the start, the others used to resume after a drain)")
	fs.Var(&f.headers, "header", "extra upgrade `HEADER` for --remote, 'Name: value' (repeatable)")
	fs.BoolVar(&f.verbose, "verbose", false, "log diagnostics (worker lifecycle, stderr, protocol errors) to stderr; see also $MONTYGO_LOG")
}

// launch builds the launch settings: the worker binary, or one per
// --remote endpoint with its headers (each resuming after a drain on the
// next endpoint in the list), and the pinned protocol version.
func (f *sessionFlags) launch() ([]session.Launch, error) {
	if _, ok := codec.ForVersion(uint32(f.protocol)); f.protocol != 0 && !ok {
		return nil, fmt.Errorf("--protocol %d: gomonty speaks protocols %v", f.protocol, codec.Versions())
	}
	if len(f.remotes) > 0 && f.worker != "" {
		// A remote session runs on the server's workers: --worker would
		// be silently ignored.
		return nil, errors.New("--worker and --remote are exclusive (a remote session runs on the server's workers)")
	}
	for _, u := range f.remotes {
		if err := pool.CheckEndpointURL(u); err != nil {
			return nil, fmt.Errorf("--remote %w", err)
		}
	}
	l := session.Launch{
		Launcher:        session.ProcessLauncher{Worker: worker.Config{Binary: f.worker}},
		ProtocolVersion: uint32(f.protocol),
	}
	if len(f.remotes) == 0 {
		if len(f.headers) > 0 {
			return nil, errors.New("--header needs --remote")
		}
		return []session.Launch{l}, nil
	}
	h := http.Header{}
	for _, line := range f.headers {
		name, value, err := ws.ParseHeader(line)
		if err != nil {
			return nil, fmt.Errorf("--header %q: %w", line, untagged{err, "ws: "})
		}
		h.Set(name, value)
	}
	urls := slices.Clone([]string(f.remotes))
	ls := make([]session.Launch, len(urls))
	for i, u := range urls {
		rl := session.RemoteLauncher{URL: u, Dial: ws.DialOptions{Header: h}}
		if len(urls) > 1 {
			// Each redial tries the next endpoint after the last one tried.
			var tries atomic.Uint32
			rl.Pick = func() string { return urls[(i+int(tries.Add(1)))%len(urls)] }
		}
		l.Launcher = rl
		ls[i] = l
	}
	return ls, nil
}

// startSession starts a session with the first of launches that starts
// (the remote endpoints in --remote order); a done ctx stops the tries.
// With several endpoints the error names each one's failure.
func startSession(ctx context.Context, launches []session.Launch, cfg session.Config) (*session.Session, error) {
	var errs []error
	for _, l := range launches {
		s, err := session.Start(ctx, l, cfg)
		if err == nil {
			return s, nil
		}
		if len(launches) == 1 || ctx.Err() != nil {
			return nil, err
		}
		url := l.Launcher.(session.RemoteLauncher).URL
		shown := redact.URL(url)
		cfg.Logger.Warn("montygo: remote endpoint did not start the session; trying the next", slog.String("url", shown), slog.Any("error", err))
		if !strings.Contains(err.Error(), shown) {
			err = fmt.Errorf("%s: %w", shown, err) // the dial errors name it already
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no remote endpoint started the session: %w", errors.Join(errs...))
}

// config builds the session configuration and the OS handler. Diagnostics
// go to stderr through the logger of newLogger.
func (f *sessionFlags) config(scriptName string, stderr io.Writer) (session.Config, *mount.Table, error) {
	logger, err := newLogger(stderr, f.verbose, os.Getenv("MONTYGO_LOG"))
	if err != nil {
		return session.Config{}, nil, err
	}
	cfg := session.Config{
		ScriptName: scriptName,
		TypeCheck:  f.typeCheck,
		Logger:     logger,
	}
	switch f.maxDuration {
	case "":
		// session.DefaultMaxDuration.
	case "none":
		cfg.Limits.MaxDuration = session.NoDurationLimit
	default:
		secs, err := strconv.ParseFloat(f.maxDuration, 64)
		switch {
		case err == nil && secs == 0:
			// A zero limit is not "no limit" (none is): it would stop
			// every program at its first instruction.
			return cfg, nil, errors.New("--max-duration 0 would stop every program at once (none lifts the limit)")
		case err != nil || !inSecondsRange(secs):
			return cfg, nil, fmt.Errorf("--max-duration: %q is not a number of seconds from 0 to 1e9 (fractional, e.g. 0.5), or none", f.maxDuration)
		}
		cfg.Limits.MaxDuration = time.Duration(secs * float64(time.Second))
		if cfg.Limits.MaxDuration == 0 {
			cfg.Limits.MaxDuration = time.Microsecond
		}
	}
	if f.startTime != "" {
		secs, err := strconv.ParseFloat(f.startTime, 64)
		cfg.StartTimeout = time.Duration(secs * float64(time.Second))
		// Under a nanosecond the Duration is 0, which the session reads
		// as its default of 10 s.
		if err != nil || !inSecondsRange(secs) || cfg.StartTimeout <= 0 {
			return cfg, nil, fmt.Errorf("--start-timeout: %q is not a positive number of seconds", f.startTime)
		}
	}
	switch f.maxMemory {
	case "":
	case "none":
		cfg.Limits.MaxMemory = session.NoMemoryLimit
	default:
		n, err := parseBytes(f.maxMemory)
		if err == nil && n == 0 {
			err = errors.New("0 bytes would fail every allocation (none lifts the limit)")
			if m := bytesRE.FindStringSubmatch(f.maxMemory); m != nil && strings.Trim(m[1], "0.") != "" {
				// Not 0 as written: a fraction of a byte, rounded down.
				err = fmt.Errorf("%q is under one byte (none lifts the limit)", f.maxMemory)
			}
		}
		if err != nil {
			return cfg, nil, fmt.Errorf("--max-memory: %w", err)
		}
		cfg.Limits.MaxMemory = n
	}
	var table *mount.Table
	if len(f.mounts) > 0 {
		var ms []mount.Mount
		for _, spec := range f.mounts {
			m, err := mount.ParseSpec(spec)
			if err != nil {
				// Named by the flag's value, as mountError names it,
				// without the library's "mount spec SPEC: " before it.
				return cfg, nil, fmt.Errorf("--mount %s: %w", mountName(spec), untagged{err, fmt.Sprintf("mount spec %q: ", spec)})
			}
			ms = append(ms, m)
		}
		t, err := mount.New(ms, mount.Options{})
		if err != nil {
			return cfg, nil, mountError(err, f.mounts)
		}
		table = t
	}
	return cfg, table, nil
}

// mountRE matches the start of mount.New's errors, which name a mount by
// its index in the list ("mount 0 (/data): ...").
var mountRE = regexp.MustCompile(`^mount ([0-9]+)(?: \([^)]*\))?: `)

// mountError names the --mount flag a mount.New error is about by the
// value the user gave, not by the library's zero-based index.
func mountError(err error, specs []string) error {
	m := mountRE.FindStringSubmatchIndex(err.Error())
	if m == nil {
		return fmt.Errorf("--mount: %w", err)
	}
	i, convErr := strconv.Atoi(err.Error()[m[2]:m[3]])
	if convErr != nil || i >= len(specs) {
		return fmt.Errorf("--mount: %w", err)
	}
	return fmt.Errorf("--mount %s: %s", mountName(specs[i]), err.Error()[m[1]:])
}

// mountName is a --mount value as an error names it: as given, or "" when
// empty.
func mountName(spec string) string {
	if spec == "" {
		return `""`
	}
	return spec
}

// newLogger returns the CLI's logger. A CLI speaks through one channel:
// errors are printed once, by the command, and diagnostics stay silent
// unless asked for, with --verbose (debug) or MONTYGO_LOG=debug|info|warn|error.
// They then go to stderr as slog text lines.
func newLogger(stderr io.Writer, verbose bool, env string) (*slog.Logger, error) {
	var level slog.Level
	switch strings.ToLower(strings.TrimSpace(env)) {
	case "":
		if !verbose {
			return slog.New(slog.DiscardHandler), nil
		}
		level = slog.LevelDebug
	case "debug":
		level = slog.LevelDebug
	case "info":
		level = slog.LevelInfo
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		return nil, fmt.Errorf("MONTYGO_LOG=%q: want debug, info, warn or error", env)
	}
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})), nil
}

// inSecondsRange reports whether secs is a usable number of seconds for a
// flag: 0 to 1e9. It is written so that NaN, which fails every comparison,
// is out of range (a NaN converted to a time.Duration is negative).
func inSecondsRange(secs float64) bool { return secs >= 0 && secs <= 1e9 }

var bytesRE = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$`)

// parseBytes parses a byte count with an optional decimal (KB, MB, GB) or
// binary (KiB, MiB, GiB) suffix.
func parseBytes(s string) (uint64, error) {
	m := bytesRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a byte count", s)
	}
	mult := map[string]float64{
		"": 1, "b": 1,
		"k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
		"ki": 1 << 10, "kib": 1 << 10, "mi": 1 << 20, "mib": 1 << 20, "gi": 1 << 30, "gib": 1 << 30, "tib": 1 << 40,
	}[strings.ToLower(m[2])]
	if mult == 0 {
		return 0, fmt.Errorf("%q has an unknown unit %q", s, m[2])
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a byte count", s)
	}
	v := f * mult
	if v > float64(1<<63) {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return uint64(v), nil
}

// parseInterspersed parses flags that may come before or after positional
// arguments, as `montygo run FILE --max-duration 1` expects.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func runCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sf sessionFlags
	sf.register(fs)
	code := fs.String("c", "", "the program, as a string of `CODE`")
	jsonOut := fs.Bool("json", false, "print the result as JSON, as json.dumps(x, ensure_ascii=False) writes it (null for None), instead of its repr; NaN and infinities (not JSON) fail, exit 1")
	var inputs multiFlag
	fs.Var(&inputs, "input", "bind a global to the value of JSON text, as json.loads reads it, `NAME=JSON` (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: montygo run FILE | - | -c CODE [flags]   (- reads the program from standard input)")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), exitStatusHelp)
	}
	var pos []string
	if err := parseArgs(fs, stdout, stderr, func() (err error) { pos, err = parseInterspersed(fs, args); return err }); err != nil {
		return err
	}
	var src, script string
	cSet := false
	fs.Visit(func(f *flag.Flag) { cSet = cSet || f.Name == "c" })
	switch {
	case cSet && len(pos) == 0:
		src, script = *code, "<string>"
	case !cSet && len(pos) == 1 && pos[0] == "-":
		// As python -: the program is standard input, named <stdin> in
		// tracebacks; bounded by what one frame can carry.
		b, err := readProgram(stdin, -1)
		if errors.Is(err, errProgramTooLarge) {
			fmt.Fprintf(stderr, "montygo run: the program on standard input is %v\n", err)
			return exitError{code: 2}
		}
		if err != nil {
			return fmt.Errorf("reading the program from standard input: %w", err)
		}
		src, script = string(b), "<stdin>"
	case !cSet && len(pos) == 1:
		b, err := readProgramFile(pos[0])
		if errors.Is(err, errProgramTooLarge) {
			fmt.Fprintf(stderr, "montygo run: %s is %v\n", pos[0], err)
			return exitError{code: 2}
		}
		if err != nil {
			// As python3: a program file it cannot open (missing, a
			// directory, unreadable) is a usage mistake, exit 2.
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			fmt.Fprintf(stderr, "montygo run: can't open file '%s': %v\n", pos[0], err)
			return exitError{code: 2}
		}
		src, script = string(b), pos[0]
	default:
		// Say what is wrong, as the other subcommands do for a stray
		// argument; the usage alone left it to be guessed.
		// Arguments after the program (`montygo run x.py a b`, as python3
		// takes them for sys.argv) cannot reach it: the sandbox's sys has
		// no argv, and none can be set. Say so, and what does pass values.
		const noArgv = "; the sandbox has no sys.argv to pass arguments in: bind values with --input NAME=JSON"
		switch {
		case len(pos) == 0:
			fmt.Fprintln(stderr, "montygo run: no program: give a FILE, - (standard input) or -c CODE")
		case cSet:
			fmt.Fprintf(stderr, "montygo run: unexpected argument %q (the program is -c's)%s\n", pos[0], noArgv)
		default:
			fmt.Fprintf(stderr, "montygo run: unexpected argument %q (one program FILE)%s\n", pos[1], noArgv)
		}
		fmt.Fprintln(stderr, "Run 'montygo run -h' for usage.")
		return exitError{code: 2}
	}
	if i := invalidUTF8(src); i >= 0 {
		what := script
		switch {
		case cSet:
			what = "the -c program"
		case script == "<stdin>":
			what = "the program on standard input"
		}
		fmt.Fprintf(stderr, "montygo run: %s is not valid UTF-8 (byte %d)\n", what, i)
		return exitError{code: 1}
	}
	bound, err := jsonInputs(inputs)
	if err != nil {
		fmt.Fprintln(stderr, "montygo run:", err)
		return exitError{code: 2}
	}
	cfg, table, err := sf.config(script, stderr)
	if err != nil {
		// A flag value (or $MONTYGO_LOG) that cannot be used: a usage
		// mistake, told apart from a program's exception (exit 1).
		fmt.Fprintf(stderr, "montygo run: %v\n", err)
		return exitError{code: 2}
	}
	slog.SetDefault(cfg.Logger)
	if table != nil {
		defer table.Close()
	}
	// A write that fails (a full disk) fails the command once the run
	// is over, as it fails python3: the output is lost.
	out := &stickyWriter{w: stdout}
	stdout = out
	defer func() {
		if out.err != nil {
			fmt.Fprintf(stderr, "montygo run: writing standard output: %v\n", out.err)
			if err == nil {
				err = exitError{code: 1}
			}
		}
	}()
	cfg.Print = session.Writers(stdout, stderr)
	launch, err := sf.launch()
	if err != nil {
		fmt.Fprintln(stderr, "montygo run:", err)
		return exitError{code: 2}
	}
	sess, err := startSession(ctx, launch, cfg)
	if err != nil {
		return sf.startFailed(err)
	}
	liveSessions.add(sess)
	defer func() {
		sess.Close()
		liveSessions.remove(sess)
	}()

	opts := []session.RunOption{session.WithInputs(bound...)}
	if table != nil {
		opts = append(opts, session.WithOS(table))
	}
	res, err := sess.Run(ctx, src, opts...)
	if err != nil {
		return reportRunError(err, script, src, stderr)
	}
	if *jsonOut {
		text, err := res.MarshalJSON()
		if err != nil {
			fmt.Fprintln(stderr, "montygo run: the result has no JSON form:", noJSONReason(err))
			return exitError{code: 1}
		}
		fmt.Fprintf(stdout, "%s\n", dumpsSpacing(text))
		return nil
	}
	s, err := resultRepr(res)
	if err != nil {
		return reportReprError(err, stderr)
	}
	if s != "None" {
		fmt.Fprintln(stdout, s)
	}
	return nil
}

// stickyWriter writes to w until a write fails, then keeps that error and
// discards what follows.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}

// WriteString passes a print's text on without copying it to a []byte
// (a print can be a frame's worth: 256 MiB).
func (s *stickyWriter) WriteString(t string) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := io.WriteString(s.w, t)
	if err != nil {
		s.err = err
	}
	return n, err
}

// errProgramTooLarge reports a program over what one frame can carry.
var errProgramTooLarge = fmt.Errorf("over %d bytes", protocol.MaxFrameLen)

// readProgram reads a program from r, bounded by what one frame can carry:
// an endless source (/dev/zero) fails after MaxFrameLen+1 bytes instead of
// exhausting memory. size is r's length when known (a regular file's), -1
// otherwise.
func readProgram(r io.Reader, size int64) ([]byte, error) {
	if size > protocol.MaxFrameLen {
		return nil, errProgramTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(r, protocol.MaxFrameLen+1))
	if err != nil {
		return nil, err
	}
	if len(b) > protocol.MaxFrameLen {
		return nil, errProgramTooLarge
	}
	return b, nil
}

// readProgramFile reads the program file at path with readProgram's bound.
func readProgramFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return readProgram(f, size)
}

// invalidUTF8 returns the offset of the first byte of s that is not
// UTF-8, or -1 when s is valid.
func invalidUTF8(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return i
			}
		}
	}
	return -1
}

// jsonInputs parses --input flags (NAME=JSON) into inputs, checking the
// text before a worker is started.
func jsonInputs(flags []string) ([]session.Input, error) {
	var in []session.Input
	seen := map[string]bool{}
	for _, f := range flags {
		name, text, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--input %q: want NAME=JSON", f)
		}
		// The session's rule (session.Input, pyident.Global): the name
		// as the sandbox reads it, NFKC-normalized (ｘ is x, x² is x2),
		// must be an identifier, and two names that read the same are one
		// global; the session refuses either, but only once a worker has
		// started.
		bound, ok := pyident.Global(name)
		if !ok {
			return nil, fmt.Errorf("--input %s: the name is not a Python identifier", name)
		}
		if seen[bound] {
			return nil, fmt.Errorf("--input %s given twice", name)
		}
		seen[bound] = true
		var g value.Graph
		if _, err := value.FromJSON(&g, []byte(text)); err != nil {
			var ce *value.ConversionError
			if errors.As(err, &ce) {
				err = errors.New(ce.Reason)
			}
			return nil, fmt.Errorf("--input %s: %w", name, err)
		}
		in = append(in, session.Input{Name: name, Value: json.RawMessage(text)})
	}
	return in, nil
}

// resultRepr renders a feed's value as CPython's repr() would, failing as
// it would on an int past the digit limit (see value.Graph.ReprChecked).
func resultRepr(res *session.Result) (string, error) {
	if res.Graph == nil || int(res.Root) >= res.Graph.Len() {
		return "<no value>", nil
	}
	return res.Graph.ReprChecked(res.Root)
}

// reportReprError prints the ValueError CPython raises for an int past the
// digit limit (exit 1, as for any Python exception) and returns other
// errors for main to print.
func reportReprError(err error, stderr io.Writer) error {
	var de *value.IntStrDigitsError
	if errors.As(err, &de) {
		fmt.Fprintf(stderr, "%s: %s\n", de.PythonType(), de.Error())
		return exitError{code: 1}
	}
	return err
}

// reportRunError prints a Python exception as a traceback (exit 1) and
// returns other errors for main to print.
func reportRunError(err error, script, src string, stderr io.Writer) error {
	var pe *session.PythonError
	if errors.As(err, &pe) {
		fmt.Fprint(stderr, tracebackText(pe.Exception, script, src))
		return exitError{code: 1}
	}
	var te *session.TypeCheckError
	if errors.As(err, &te) {
		fmt.Fprintln(stderr, strings.TrimRight(te.Diagnostics, "\n"))
		return exitError{code: 1}
	}
	return sandboxFailed(err)
}

// tracebackText renders exc as the worker's CLI does, naming the script in
// the frames instead of the worker's "<python-input-N>"; src is the code
// that raised.
func tracebackText(exc *message.RaisedException, script, src string) string {
	return string(exc.AppendTracebackWith(nil, message.TracebackOptions{Filename: script, Source: src}))
}

// dumpsSpacing rewrites compact JSON text (no whitespace outside strings,
// as value.AppendJSON writes it) with json.dumps's default separators:
// ", " between items and ": " after a key. One pass, linear.
func dumpsSpacing(compact []byte) []byte {
	out := make([]byte, 0, len(compact)+len(compact)/4)
	inStr, esc := false, false
	for _, c := range compact {
		out = append(out, c)
		switch {
		case esc:
			esc = false
		case inStr:
			switch c {
			case '\\':
				esc = true
			case '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == ',' || c == ':':
			out = append(out, ' ')
		}
	}
	return out
}

// noJSONReason words a result's JSON failure for the user: where the value
// sits and why (json.dumps's words for NaN and the infinities), not the Go
// conversion it failed in.
func noJSONReason(err error) string {
	var ce *value.ConversionError
	if !errors.As(err, &ce) || (ce.Reason == "" && ce.Err == nil) {
		return err.Error()
	}
	why := ce.Reason
	switch {
	case why == "":
		why = ce.Err.Error()
	case why == "no JSON form" && ce.Kind != value.KindInvalid:
		why = ce.Kind.String() + " has no JSON form" // name what it is
	}
	if ce.Path == "" {
		return why
	}
	return "at " + ce.Path + ": " + why
}

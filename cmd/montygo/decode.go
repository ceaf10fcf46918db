//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gomonty/monty/codec"
	_ "github.com/gomonty/monty/codec/codecv2"
	_ "github.com/gomonty/monty/codec/codecv4"
	_ "github.com/gomonty/monty/codec/codecv5"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/message"
)

func decodeCmd(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("decode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	proto := versionVar(fs, "protocol", 4, "protocol `version` of the stream (5, 4 or 2)")
	from := fs.String("from", "child", "who wrote the stream: child (events) or parent (requests)")
	hexIn := fs.Bool("hex", false, "read one hex-encoded message (no length prefix) per line instead of length-prefixed frames")
	maxDecode := fs.Int64("max-decode-bytes", 0, "per-frame decode budget in bytes (0 = the 1 GiB default)")
	record := fs.String("record", "", "render `FILE`, written by 'montygo subprocess --record FILE' (both directions), instead")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: montygo decode [--protocol 5|4|2] [--from child|parent] [--hex] [--max-decode-bytes N] < stream | --record FILE")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), decodeExitStatusHelp)
	}
	if err := parseArgs(fs, stdout, stderr, func() error { return fs.Parse(args) }); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "montygo decode: unexpected argument %q (the stream is read from standard input; a recording is --record FILE)\n", fs.Arg(0))
		return exitError{code: 2}
	}
	c, ok := codec.ForVersion(*proto)
	if !ok {
		fmt.Fprintf(stderr, "montygo decode: no codec for protocol %d (supported: %v)\n", *proto, codec.Versions())
		return exitError{code: 2}
	}
	if *from != "child" && *from != "parent" {
		fmt.Fprintf(stderr, "montygo decode: --from must be child or parent, not %q\n", *from)
		return exitError{code: 2}
	}
	if *maxDecode < 0 {
		// codec.Limits reads a negative budget as the default, the
		// loosest: the opposite of what was asked for.
		fmt.Fprintf(stderr, "montygo decode: --max-decode-bytes %d: want a byte count (0 for the 1 GiB default)\n", *maxDecode)
		return exitError{code: 2}
	}
	if *record != "" {
		// A recording holds both directions, framed: --from and --hex
		// would be silently ignored.
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for _, name := range []string{"from", "hex"} {
			if set[name] {
				fmt.Fprintf(stderr, "montygo decode: --%s does not go with --record (a recording holds both directions, framed)\n", name)
				return exitError{code: 2}
			}
		}
	}
	lim := codec.Limits{MaxDecodeBytes: *maxDecode}
	if *record != "" {
		return decodeRecord(*record, *proto, lim, stdout, stderr)
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)

	next := frameSource(stdin, *hexIn, lim.FrameLen())
	for n := 0; ; n++ {
		body, err := next()
		if errors.Is(err, io.EOF) {
			return flushOutput(out)
		}
		if err != nil {
			out.Flush()
			fmt.Fprintf(stderr, "montygo decode: message %d: %v\n", n, err)
			return exitError{code: 1}
		}
		var doc any
		if *from == "child" {
			ev, err := c.DecodeEvent(body, lim)
			if err != nil {
				out.Flush()
				fmt.Fprintf(stderr, "montygo decode: message %d: %v\n", n, err)
				return exitError{code: 1}
			}
			doc = eventJSON(ev)
		} else {
			req, err := c.DecodeRequest(body, lim)
			if err != nil {
				out.Flush()
				fmt.Fprintf(stderr, "montygo decode: message %d: %v\n", n, err)
				return exitError{code: 1}
			}
			doc = requestJSON(req)
		}
		if err := enc.Encode(doc); err != nil {
			return fmt.Errorf("writing standard output: %w", err)
		}
	}
}

// flushOutput flushes the decoded lines, failing the command when they
// could not be written (a full disk) instead of exiting 0 without them.
func flushOutput(out *bufio.Writer) error {
	if err := out.Flush(); err != nil {
		return fmt.Errorf("writing standard output: %w", err)
	}
	return nil
}

// frameSource yields message bodies from a length-prefixed stream or from
// hex lines.
func frameSource(r io.Reader, hexLines bool, limit int) func() ([]byte, error) {
	if !hexLines {
		fr := frame.NewReader(r, limit)
		return fr.ReadFrame
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 2*limit+2)
	return func() ([]byte, error) {
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			b, err := hex.DecodeString(line)
			if err != nil {
				return nil, fmt.Errorf("invalid hex: %w", untagged{err, "encoding/hex: "})
			}
			if err := frame.CheckMessage(b, limit); err != nil {
				return nil, err
			}
			return b, nil
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
}

func requestJSON(r *message.ParentRequest) map[string]any {
	m := map[string]any{}
	if r.Body == nil {
		m["kind"] = nil
	} else {
		m["kind"] = r.Body.RequestKind().String()
		m["body"] = r.Body
	}
	if r.TraceParent != nil {
		m["trace_parent"] = *r.TraceParent
	}
	return m
}

func eventJSON(e *message.ChildEvent) map[string]any {
	m := map[string]any{}
	if e.Body == nil {
		m["kind"] = nil
	} else {
		m["kind"] = e.Body.EventKind().String()
		m["body"] = e.Body
		switch b := e.Body.(type) {
		case *message.Complete:
			m["repr"] = b.Values.Repr(b.Value)
		case *message.FunctionCall:
			args := make([]string, len(b.Args))
			for i, a := range b.Args {
				args[i] = b.Values.Repr(a)
			}
			m["args_repr"] = args
		case *message.Error:
			if b.Exception != nil {
				m["exception"] = b.Exception.Error()
			}
		}
	}
	if e.TotalExecutionMicros != 0 {
		m["total_execution_micros"] = e.TotalExecutionMicros
	}
	if e.MaxDurationMicros != nil {
		m["max_duration_micros"] = *e.MaxDurationMicros
	}
	if e.MaxSuspensions != nil {
		m["max_suspensions"] = *e.MaxSuspensions
	}
	if e.RestoredScriptName != nil {
		m["restored_script_name"] = *e.RestoredScriptName
	}
	if e.FeedExecutionMicros != 0 {
		m["feed_execution_micros"] = e.FeedExecutionMicros
	}
	for name, p := range map[string]*uint64{"max_feed_duration_micros": e.MaxFeedDurationMicros,
		"max_turn_duration_micros": e.MaxTurnDurationMicros, "max_total_sleep_micros": e.MaxTotalSleepMicros} {
		if p != nil {
			m[name] = *p
		}
	}
	if e.SessionID != nil {
		m["session_id_hex"] = hex.EncodeToString(e.SessionID)
	}
	return m
}

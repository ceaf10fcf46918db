//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/hex"
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
		fmt.Fprint(fs.Output(), decodeShapeHelp)
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
	r := renderer{proto: *proto}

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
		r.buf = r.buf[:0]
		r.begin(len(body))
		if *from == "child" {
			ev, err := c.DecodeEvent(body, lim)
			if err != nil {
				out.Flush()
				fmt.Fprintf(stderr, "montygo decode: message %d: %v\n", n, err)
				return exitError{code: 1}
			}
			r.event(ev)
		} else {
			req, err := c.DecodeRequest(body, lim)
			if err != nil {
				out.Flush()
				fmt.Fprintf(stderr, "montygo decode: message %d: %v\n", n, err)
				return exitError{code: 1}
			}
			r.request(req)
		}
		r.buf = append(r.buf, '\n')
		if _, err := out.Write(r.buf); err != nil {
			return fmt.Errorf("writing standard output: %w", err)
		}
	}
}

// decodeShapeHelp tells the JSON shape of decode's lines (docs/PROTOCOL.md,
// "Reading a capture", says it in full; render.go writes it).
const decodeShapeHelp = `Output: one JSON line per message, in the names of the schema of the version
decoded (proto/*/v1/*.proto): every key is a field or oneof name, in field
order. A oneof is its name with the arm's name as value, then the arm under
its own name: {"kind":"complete","complete":{...},"total_execution_micros":9};
{"call_id":1,"call":"read_text","read_text":"/x"}. Optional and message
fields are left out when absent, other fields always written. Enums are value
names (PRINT_STREAM_STDOUT); bytes are lowercase hex; uuids canonical text.
Values are trees whatever the wire form (arenas are not shown): a node is
{"kind":K,K:payload}, e.g. {"kind":"int","int":3}, lists of nodes, dicts of
{"key":node,"value":node}; each root also has "repr", its Python repr. NaN and
infinities are "nan", "inf", "-inf"; bigints are decimal strings. A root too
large to show (sharing) or a branch more than 48 containers deep is
{"kind":"repr","repr":...}. With --record, each line is {"n","time","bytes",
"protocol","dir","request"|"event"|"error"}.
`

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

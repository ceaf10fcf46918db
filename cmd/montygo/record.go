//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/gomonty/monty/child/tap"
	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
)

// decodeRecord renders a `montygo subprocess --record` file as JSON lines:
// direction, time, size and the decoded frame. The protocol version starts
// at proto (the version a child speaks before any Configure) and follows
// each accepted Configure's protocol_version.
func decodeRecord(path string, proto uint32, lim codec.Limits, stdout, stderr io.Writer) error {
	f, err := os.Open(path)
	if err == nil {
		if fi, serr := f.Stat(); serr == nil && fi.IsDir() {
			f.Close()
			err = syscall.EISDIR
		}
	}
	if err != nil {
		// A file the flag names that cannot be read is a usage mistake,
		// as run's program file is.
		fmt.Fprintf(stderr, "montygo decode: --record %s: %v\n", path, pathErrorCause(err))
		return exitError{code: 2}
	}
	defer f.Close()
	r, err := tap.NewReader(f, lim.FrameLen())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	c, ok := codec.ForVersion(proto)
	if !ok {
		return fmt.Errorf("no codec for protocol %d", proto)
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	var pending uint32
	for n := 0; ; n++ {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return flushOutput(out)
		}
		if err != nil {
			out.Flush()
			fmt.Fprintf(stderr, "montygo decode: record %d: %v\n", n, err)
			return exitError{code: 1}
		}
		doc := map[string]any{"n": n, "time": rec.Time.UTC().Format(time.RFC3339Nano), "bytes": len(rec.Body)}
		if rec.Dir == tap.In {
			doc["dir"] = "parent->child"
			req, err := c.DecodeRequest(rec.Body, lim)
			if err != nil {
				doc["error"] = err.Error()
			} else {
				doc["request"] = requestJSON(req)
				if cf, ok := req.Body.(*message.Configure); ok {
					pending = cf.ProtocolVersion
				}
			}
		} else {
			doc["dir"] = "child->parent"
			ev, err := c.DecodeEvent(rec.Body, lim)
			if err != nil {
				doc["error"] = err.Error()
			} else {
				doc["event"] = eventJSON(ev)
				// The Configure took effect when the child accepted it.
				if _, ok := ev.Body.(*message.Ok); ok && pending != 0 {
					if nc, ok := codec.ForVersion(pending); ok {
						c = nc
					}
				}
				if ev.Body != nil && ev.Body.EventKind().EndsTurn() {
					pending = 0
				}
			}
		}
		if err := enc.Encode(doc); err != nil {
			return fmt.Errorf("writing standard output: %w", err)
		}
	}
}

// pathErrorCause is err without an *os.PathError's operation and path
// ("open /x: no such file or directory" is "no such file or directory"),
// for a message that names the file already.
func pathErrorCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

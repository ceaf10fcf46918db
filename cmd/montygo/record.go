//go:build unix

package main

import (
	"bufio"
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
	var pending uint32
	rd := renderer{proto: proto}
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
		rd.buf = rd.buf[:0]
		rd.begin(len(rec.Body))
		rd.open('{')
		rd.keyUint("n", uint64(n))
		rd.keyStr("time", rec.Time.UTC().Format(time.RFC3339Nano))
		rd.keyUint("bytes", uint64(len(rec.Body)))
		// The version whose schema names the fields of this record.
		rd.keyUint("protocol", uint64(rd.proto))
		if rec.Dir == tap.In {
			rd.keyStr("dir", "parent->child")
			req, err := c.DecodeRequest(rec.Body, lim)
			if err != nil {
				rd.keyStr("error", err.Error())
			} else {
				rd.key("request")
				rd.request(req)
				if cf, ok := req.Body.(*message.Configure); ok {
					pending = cf.ProtocolVersion
				}
			}
		} else {
			rd.keyStr("dir", "child->parent")
			ev, err := c.DecodeEvent(rec.Body, lim)
			if err != nil {
				rd.keyStr("error", err.Error())
			} else {
				rd.key("event")
				rd.event(ev)
				// The Configure took effect when the child accepted it.
				if _, ok := ev.Body.(*message.Ok); ok && pending != 0 {
					if nc, ok := codec.ForVersion(pending); ok {
						c, rd.proto = nc, pending
					}
				}
				if ev.Body != nil && ev.Body.EventKind().EndsTurn() {
					pending = 0
				}
			}
		}
		rd.close('}')
		rd.buf = append(rd.buf, '\n')
		if _, err := out.Write(rd.buf); err != nil {
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

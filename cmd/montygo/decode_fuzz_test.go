//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	codecv4 "github.com/gomonty/monty/codec/codecv4"
	codecv5 "github.com/gomonty/monty/codec/codecv5"
	"github.com/gomonty/monty/internal/codectest"
	"github.com/gomonty/monty/message"
)

// FuzzDecode runs montygo decode on arbitrary standard input, at each
// protocol, from either side, framed or as hex lines. It renders every
// message it decodes as one JSON line, and ends with status 0 at the end
// of the stream or 1 with the message's error on standard error; nothing
// else (no panic, no failure to render a decoded message). Each line is a
// JSON object whose kind is null or an arm of the side's envelope written
// under its name, with snake_case keys only, and a clean end wrote one
// line per message.
//
// Input: a byte choosing the protocol (5, 4, 2), the side and the hex
// mode, then the stream.
func FuzzDecode(f *testing.F) {
	for i, name := range []string{"print_before_suspension", "extcall_empty_result", "error_chained", "oscall_datetime_now_tz_not_handled", "cycle_instance", "input_bigint_small_value"} {
		v := loadVector(f, name)
		f.Add(append([]byte{byte(2 << 2)}, framed(f, v.Requests)...))
		f.Add(append([]byte{byte(2<<2 | 1)}, framed(f, v.Responses)...))
		f.Add(append([]byte{byte(2<<2 | 2 | i&1)}, strings.Join(v.Responses, "\n")...))
	}
	// Every value shape in a Complete, at 4 and at 5.
	g, root := codectest.EveryShape()
	ev := &message.ChildEvent{Body: &message.Complete{Value: root, Values: g}}
	for _, c := range []struct {
		proto  byte
		append func([]byte, *message.ChildEvent) ([]byte, error)
	}{{4, codecv4.AppendEvent}, {5, codecv5.AppendEvent}} {
		b, err := c.append(nil, ev)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append([]byte{c.proto<<2 | 1, byte(len(b)), byte(len(b) >> 8), 0, 0}, b...))
	}
	f.Add([]byte{4<<2 | 1, 3, 0, 0, 0, 0x52, 0x01, 0x00})
	f.Add([]byte{5<<2 | 3, '#', '\n', '0', 'a', '0', '0'})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		proto := []string{"5", "4", "2"}[int(in[0]>>2)%3]
		args := []string{"--protocol", proto, "--max-decode-bytes", fmt.Sprint(1 << 20)}
		if in[0]&1 == 0 {
			args = append(args, "--from", "parent")
		}
		if in[0]&2 != 0 {
			args = append(args, "--hex")
		}
		var out, errb bytes.Buffer
		err := decodeCmd(context.Background(), args, bytes.NewReader(in[1:]), &out, &errb)
		var ee exitError
		switch {
		case err == nil:
			if errb.Len() != 0 {
				t.Fatalf("status 0 with %q on standard error", errb.String())
			}
		case errors.As(err, &ee) && ee.code == 1 && ee.err == nil:
			if !strings.HasPrefix(errb.String(), "montygo decode: message ") {
				t.Fatalf("status 1 with %q on standard error", errb.String())
			}
		default:
			t.Fatalf("%v (%q)", err, errb.String())
		}
		arms := eventArms
		if in[0]&1 == 0 {
			arms = requestArms
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if out.Len() == 0 {
			lines = nil
		}
		for _, line := range lines {
			var doc map[string]any
			if err := json.Unmarshal([]byte(line), &doc); err != nil {
				t.Fatalf("output line is not a JSON object (%v): %q", err, line)
			}
			if k, ok := doc["kind"]; !ok {
				t.Fatalf("no kind: %q", line)
			} else if name, _ := k.(string); k != nil && (!slices.Contains(arms, name) || doc[name] == nil) {
				t.Fatalf("kind %v is not an arm written under its name: %q", k, line)
			}
			jsonKeys(doc, func(key string) {
				if !snakeCase.MatchString(key) {
					t.Fatalf("key %q is not snake_case: %q", key, line)
				}
			})
		}
		// One line per message: a clean end wrote a line for every
		// message of the stream, a failure fewer.
		if n, ok := countMessages(in[1:], in[0]&2 != 0); ok {
			if (err == nil && len(lines) != n) || (err != nil && len(lines) >= n) {
				t.Fatalf("%d lines for %d messages (%v)", len(lines), n, err)
			}
		}
	})
}

// countMessages counts the messages of a decode input: length-prefixed
// frames, or the hex lines that are neither blank nor comments. It
// reports false when the count is unclear (a cut or oversized prefix, a
// line the scanner would refuse).
func countMessages(b []byte, hexLines bool) (int, bool) {
	n := 0
	if hexLines {
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !strings.HasPrefix(line, "#") {
				n++
			}
		}
		return n, len(b) < 64<<10
	}
	for len(b) > 0 {
		if len(b) < 4 {
			return 0, false
		}
		l := int(b[0]) | int(b[1])<<8 | int(b[2])<<16 | int(b[3])<<24
		if l < 0 || l > len(b)-4 {
			return 0, false
		}
		b = b[4+l:]
		n++
	}
	return n, true
}
